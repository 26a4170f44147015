#!/usr/bin/env python3
"""The real-model suite in a tenth of its memory: planned and trained on the sim device (issue 18).

For each model of python/tidal/real_models.py (small size, opset 13, SGD
with momentum) and each `--fractions` of its no-reuse peak:
tidal.real_budget.budget_rows (plan with the default planner, train the sim
executable and the cpu one on the same data, compare the losses bit for
bit). Reports the plan time (the wall time of tidalc --emit plan), the
predicted step against the all-device plan's, what the plan moved, and the
measured sim step against the cpu step. Exits 1 if any model fails or
differs.

    /usr/bin/python3 bench/real_budget.py [--models resnet18,gpt2] [--fractions 0.1]
        [--steps 4] [--threads 2] [--link-gbps 16] [--json OUT] [--workdir DIR]

Needs torch and torchvision (Debian's python3-torch, python3-torchvision)
for the export.
"""

import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="", help="comma-separated names (default: all)")
    ap.add_argument("--fractions", default="0.1", help="budgets as fractions of the no-reuse peak")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--link-gbps", type=float, default=16.0, help="the link planned for and simulated")
    ap.add_argument("--tidalc", default=os.path.join(ROOT, "build", "bin", "tidalc"))
    ap.add_argument("--json")
    ap.add_argument("--workdir", help="keep models, data and executables here (default: a temp dir)")
    args = ap.parse_args(argv)

    from tidal import real_budget, real_models

    names = [n for n in args.models.split(",") if n] or real_models.names()
    fractions = [float(f) for f in args.fractions.split(",")]
    print(f"# {os.uname().nodename}, {os.cpu_count()} CPUs, {args.threads} threads, sim link {args.link_gbps} GB/s, "
          f"SGD momentum, {args.steps} steps; times in ms")
    print("| model | budget (of no-reuse peak) | plan s | predicted / all-device | host ops, prefetches, "
          "recomputed | sim ms / cpu ms | losses bitwise equal |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    with tempfile.TemporaryDirectory(prefix="tidal-real-budget-") as tmp:
        for name in names:
            work = os.path.join(args.workdir or tmp, name)
            for row in real_budget.budget_rows(name, args.tidalc, work, fractions, args.steps, args.threads,
                                               args.link_gbps):
                rows.append(row)
                where = f"{row['fraction']} ({row['budget']} B)" if "budget" in row else "-"
                if "error" in row:
                    print(f"| {name} | {where} | {row.get('plan_s', '')} | {row['error']} | | | |", flush=True)
                    continue
                print(f"| {name} | {where} | {row['plan_s']:.1f} | "
                      f"{row['predicted_us'] / row['all_device_us']:.2f} | "
                      f"{row['host_ops']}, {row['prefetches']}, {row['recomputed']} | "
                      f"{row['sim_ms']:.2f} / {row['cpu_ms']:.2f} | {'yes' if row['equal'] else 'NO'} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if any("error" in r or not r.get("equal") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
