#!/usr/bin/env python3
"""Host layers by cost on the simulated device (issue 18, item 1).

For each zoo case and budget (a fraction of the case's no-swap device peak),
compiles the sim executable twice: `--host-layers on` (the default: kernels
move to the host where the plan would otherwise swap or recompute their
results and the cost model predicts the step faster) and `--host-layers
fit` (host layers only to fit a budget nothing else fits; the plan before
this change). Reports both plans' predicted step time, the kernels moved by
cost, and the measured median step time of each executable, trained in
alternating rounds over a throttled link (TIDAL_SIM_LINK_GBPS) so that a
machine's drift hits both. The losses of the two runs must be bitwise
equal (host kernels are the cpu target's).

    /usr/bin/python3 bench/host_layers.py [--cases lenet_momentum:0.7,...]
        [--steps 50] [--rounds 3] [--link-gbps 16] [--threads 2] [--json OUT] [--plans-only]
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

DEFAULT_CASES = ("mlp_digits_sgd:0.6,mlp_digits_nesterov:0.9,regressor_adam:0.8,lenet_momentum:0.8,"
                 "lenet_momentum:0.6,resnet20_momentum:0.37,transformer13_adamw:0.6")


TARGET = "sim"


def run(argv, env=None):
    proc = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr}")
    return proc


def plan(tidalc, model, flags, work):
    out = os.path.join(work, "plan.json")
    run([tidalc, model, "-o", out, "--emit", "plan", "--target", TARGET] + flags)
    with open(out) as f:
        return json.load(f)


def train(exe, inputs, steps, threads, env):
    log = exe + ".jsonl"
    run([exe] + inputs + ["--steps", str(steps), "--threads", str(threads), "--log", log, "--quiet"], env=env)
    with open(log) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    return lines


def parse_args(doc, argv, cases, steps, link_gbps):
    """The options this benchmark and bench/milp_placement.py share; sets
    TARGET."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--cases", default=cases, help="name:fraction of the no-swap peak, comma separated")
    ap.add_argument("--steps", type=int, default=steps)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--link-gbps", type=float, default=link_gbps)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tidalc", default=os.path.join(ROOT, "build", "bin", "tidalc"))
    ap.add_argument("--json")
    ap.add_argument("--plans-only", action="store_true", help="predicted times only: compile plans, train nothing")
    ap.add_argument("--target", default="sim", help="sim, or cuda with --plans-only (the H100 default profile)")
    args = ap.parse_args(argv)
    global TARGET
    TARGET = args.target
    if TARGET != "sim" and not args.plans_only:
        ap.error("--target other than sim needs --plans-only (no GPU is assumed)")
    return args


def budget_cases(args, tmp):
    """Per item name:fraction of --cases, its model and data written under
    `tmp` and its budget (the fraction of the no-swap device peak): (item,
    name, fraction, budget, model, flags, inputs, work)."""
    from tidal import training
    for item in args.cases.split(","):
        name, fraction = item.split(":")
        work = os.path.join(tmp, item.replace(":", "_"))
        _, model, flags, inputs = training.prepare_case(name, work)
        peak = plan(args.tidalc, model, ["--placement", "device"] + flags, work)["predicted"]["peak_device_bytes"]
        yield item, name, fraction, int(peak * float(fraction)), model, flags, inputs, work


def main(argv=None):
    args = parse_args(__doc__, argv, DEFAULT_CASES, 50, 16.0)

    env = {"TIDAL_SIM_LINK_GBPS": str(args.link_gbps)}
    print(f"# {platform.node()}, {os.cpu_count()} CPUs, {args.threads} threads, link {args.link_gbps} GB/s, "
          f"median of steps 3-{args.steps}, best round of {args.rounds}")
    print("| case | budget | on: predicted us | fit: predicted us | layers by cost | on: measured us | "
          "fit: measured us | on / fit measured |")
    print("|---|---|---|---|---|---|---|---|")
    results = []
    with tempfile.TemporaryDirectory(prefix="tidal-host-layers-") as tmp:
        for item, name, fraction, budget, model, flags, inputs, work in budget_cases(args, tmp):
            row = {"case": name, "fraction": float(fraction), "budget": budget}
            exes = {}
            for mode in ("on", "fit"):
                mflags = ["--device-memory", str(budget), "--host-layers", mode] + flags
                try:
                    p = plan(args.tidalc, model, mflags, work)
                except SystemExit as e:
                    if "too small" not in str(e):
                        raise
                    print(f"| {name} | {fraction} ({budget} B) | does not fit | | | | | |", flush=True)
                    row = None
                    break
                row[f"{mode}_predicted_us"] = p["predicted"]["step_time_us"]
                if mode == "on":
                    row["layers_by_cost"] = p.get("host_layers_by_cost", {}).get("layers", 0)
                exes[mode] = os.path.join(work, f"train_{mode}")
                if not args.plans_only:
                    run([args.tidalc, model, "-o", exes[mode], "--target", "sim"] + mflags)
            if row is None:
                continue
            if args.plans_only:
                results.append(row)
                print(f"| {name} | {fraction} ({budget} B) | {row['on_predicted_us']:.1f} | "
                      f"{row['fit_predicted_us']:.1f} | {row['layers_by_cost']} | | | |", flush=True)
                continue
            times = {"on": [], "fit": []}
            losses = {}
            for _ in range(args.rounds):
                for mode in ("on", "fit"):
                    lines = train(exes[mode], inputs, args.steps, args.threads, env)
                    times[mode].append(statistics.median(l["step_ms"] for l in lines[2:]) * 1000)
                    losses[mode] = [l["loss"] for l in lines]
            if losses["on"] != losses["fit"]:
                raise SystemExit(f"{item}: the losses differ between --host-layers on and fit")
            for mode in ("on", "fit"):
                row[f"{mode}_measured_us"] = min(times[mode])
            results.append(row)
            print(f"| {name} | {fraction} ({budget} B) | {row['on_predicted_us']:.1f} | {row['fit_predicted_us']:.1f} | "
                  f"{row['layers_by_cost']} | {row['on_measured_us']:.1f} | {row['fit_measured_us']:.1f} | "
                  f"{row['on_measured_us'] / row['fit_measured_us']:.2f} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
