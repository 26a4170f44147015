#!/usr/bin/env python3
"""The MILP planner with placement against the greedy planner (issue 18, item 2).

For each zoo case and budget (a fraction of the case's no-swap device peak),
compiles the sim executable three ways: `--planner milp` (one MILP chooses
swaps, recomputations, the optimizer updates on the host and the layers on
the host), `--planner milp --host-layers fit` (the same MILP without layer
candidates, and no host layers by cost after it) and `--planner greedy`.
Reports each plan's predicted step time, what the MILP placed (layers,
updates), which plan tidal-place kept, and the measured median step time
of each executable, trained in alternating rounds over a throttled link
(TIDAL_SIM_LINK_GBPS, and the plans made for that link) so that a
machine's drift hits all three. The three runs' losses must be bitwise
equal (host kernels are the cpu target's).

    /usr/bin/python3 bench/milp_placement.py [--cases mlp_digits_sgd:0.6,...]
        [--steps 60] [--rounds 3] [--link-gbps 1] [--threads 2] [--json OUT] [--plans-only [--target cuda]]
"""

import json
import os
import platform
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

import host_layers  # noqa: E402  (plan, run and train: the same set-up)

DEFAULT_CASES = ("mlp_digits_sgd:0.6,mlp_digits_sgd:0.4,mlp_digits_nesterov:0.6,regressor_adam:0.6,"
                 "lenet_momentum:0.8,transformer13_adamw:0.6,transformer13_adamw:0.4")

PLANNERS = {
    "milp": ["--planner", "milp"],
    "milp_no_layers": ["--planner", "milp", "--host-layers", "fit"],
    "greedy": ["--planner", "greedy"],
}


def main(argv=None):
    args = host_layers.parse_args(__doc__, argv, DEFAULT_CASES, 60, 1.0)

    env = {"TIDAL_SIM_LINK_GBPS": str(args.link_gbps)}
    print(f"# {platform.node()}, {os.cpu_count()} CPUs, target {args.target}, {args.threads} threads, "
          f"link {args.link_gbps} GB/s, "
          f"median of steps 3-{args.steps}, best round of {args.rounds}; us per step, predicted / measured")
    print("| case | budget | MILP | MILP without layers | greedy | MILP placed (layers, updates) | kept | "
          "MILP / greedy measured |")
    print("|---|---|---|---|---|---|---|---|")
    results = []
    with tempfile.TemporaryDirectory(prefix="tidal-milp-placement-") as tmp:
        for item, name, fraction, budget, model, flags, inputs, work in host_layers.budget_cases(args, tmp):
            row = {"case": name, "fraction": float(fraction), "budget": budget}
            exes = {}
            memory = ["--device-memory", str(budget), "--link-gbps", str(args.link_gbps)]
            for key, pflags in PLANNERS.items():
                p = host_layers.plan(args.tidalc, model, memory + pflags + flags, work)
                row[f"{key}_predicted_us"] = p["predicted"]["step_time_us"]
                if key == "milp":
                    planner = p.get("planner", {})
                    milp = planner.get("milp", {})
                    row["kept"] = planner.get("kept", "-")
                    row["milp_layers"] = milp.get("host_layers", 0)
                    row["milp_updates"] = milp.get("host_updates", 0) + milp.get("streamed", 0)
                exes[key] = os.path.join(work, f"train_{key}")
                if not args.plans_only:
                    host_layers.run([args.tidalc, model, "-o", exes[key], "--target", "sim"] + memory + pflags + flags)
            times = {key: [] for key in PLANNERS}
            losses = {}
            for _ in range(0 if args.plans_only else args.rounds):
                for key in PLANNERS:
                    lines = host_layers.train(exes[key], inputs, args.steps, args.threads, env)
                    times[key].append(statistics.median(l["step_ms"] for l in lines[2:]) * 1000)
                    losses[key] = [l["loss"] for l in lines]
            if len({json.dumps(v) for v in losses.values()}) > 1:
                raise SystemExit(f"{item}: the losses differ between the planners")
            cells = []
            for key in PLANNERS:
                cell = f"{row[f'{key}_predicted_us']:.1f}"
                if times[key]:
                    row[f"{key}_measured_us"] = min(times[key])
                    cell += f" / {row[f'{key}_measured_us']:.1f}"
                cells.append(cell)
            ratio = (f"{row['milp_measured_us'] / row['greedy_measured_us']:.2f}"
                     if "milp_measured_us" in row else "")
            results.append(row)
            print(f"| {name} | {fraction} ({budget} B) | " + " | ".join(cells) +
                  f" | {row['milp_layers']}, {row['milp_updates']} | {row['kept']} | {ratio} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
