#!/usr/bin/env python3
"""Step time against device budget on the simulated device (issue 6).

For each zoo model: the no-swap device peak and the smallest budget the
planner reaches (from its error for a 1-byte budget), then N budgets from
the one to the other. At each budget: the plan's predicted step time, copy
stalls and bytes swapped (tidalc --emit plan --target sim), and the sim
executable's measured step time, device peak and bytes moved (from --log),
over a throttled link (TIDAL_SIM_LINK_GBPS). The same run's cpu-target step
time is the reference for the slowdown.

    /usr/bin/python3 bench/sim_budget.py [--models lenet,resnet20] [--batch 32]
        [--points 5] [--steps 12] [--link-gbps 16] [--threads 2] [--markdown]
        [--tidalc-flag=--planner=milp] [--tidalc-flag=--recompute=off]
"""

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))


def run(argv, env=None, check=True):
    proc = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    if check and proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr}")
    return proc


def train(exe, data, steps, threads, env=None):
    log = exe + ".log.jsonl"
    run([exe, "--input", f"input={data[0]}", "--input", f"label={data[1]}", "--steps", str(steps),
         "--threads", str(threads), "--log", log, "--quiet"], env=env)
    with open(log) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    warm = lines[2:] or lines
    return {"step_ms": statistics.median(l["step_ms"] for l in warm),
            "device_peak": max(l["device_peak_bytes"] for l in lines),
            "to_host": lines[-1]["bytes_to_host"], "losses": [l["loss"] for l in lines]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="lenet,vgg_bn,resnet20")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--points", type=int, default=5)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--link-gbps", type=float, default=16.0)
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--tidalc", default=os.path.join(ROOT, "build", "bin", "tidalc"))
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--tidalc-flag", action="append", default=[],
                    help="extra tidalc flag for the sim builds, e.g. --tidalc-flag=--planner=milp "
                         "or --tidalc-flag=--recompute=off (repeatable)")
    args = ap.parse_args(argv)
    import numpy as np
    from tidal import export, zoo

    work = tempfile.mkdtemp(prefix="tidal-sim-budget-")
    env = {"TIDAL_SIM_LINK_GBPS": str(args.link_gbps)}
    rows = []
    for name in args.models.split(","):
        model = os.path.join(work, f"{name}.onnx")
        export.export(name, model)
        entry = zoo.MODELS[name]
        rng = np.random.default_rng(0)
        shape = (args.batch * 4,) + entry.inputs[0][1]
        data = (os.path.join(work, f"{name}_x.npy"), os.path.join(work, f"{name}_y.npy"))
        np.save(data[0], rng.standard_normal(shape).astype(np.float32))
        # Cross-entropy labels: class indices shaped like the output without
        # its class dimension (dim 1), e.g. one per token for the transformer.
        import torch
        with torch.no_grad():
            out_shape = tuple(entry.build()(torch.zeros((1,) + entry.inputs[0][1])).shape)
        classes, label_shape = out_shape[1], out_shape[2:]
        np.save(data[1], rng.integers(0, classes, (args.batch * 4,) + label_shape).astype(np.int64))
        flags = ["--batch-size", str(args.batch), "--loss", "cross-entropy", "--optimizer", "sgd", "--lr", "0.01",
                 "--momentum", "0.9", "--link-gbps", str(args.link_gbps)]
        cpu = os.path.join(work, f"{name}_cpu")
        run([args.tidalc, model, "-o", cpu] + flags)
        flags += args.tidalc_flag
        base = train(cpu, data, args.steps, args.threads)
        plan = os.path.join(work, f"{name}.plan.json")
        run([args.tidalc, model, "-o", plan, "--emit", "plan", "--target", "sim"] + flags)
        with open(plan) as f:
            peak = json.load(f)["predicted"]["peak_device_bytes"]
        proc = run([args.tidalc, model, "-o", plan, "--emit", "plan", "--target", "sim", "--device-memory", "1",
                    "--host-layers", "off"]
                   + flags, check=False)
        smallest = int(re.search(r"reaches is (\d+) bytes", proc.stderr).group(1))
        for k in range(args.points):
            budget = peak - (peak - smallest) * k // max(args.points - 1, 1)
            run([args.tidalc, model, "-o", plan, "--emit", "plan", "--target", "sim", "--device-memory", str(budget)]
                + flags)
            with open(plan) as f:
                p = json.load(f)
            swaps = sum(len(t["swaps"]) for t in p["tensors"])
            recomputed = len({r["position"] for t in p["tensors"] for r in t["recomputations"]})
            exe = os.path.join(work, f"{name}_sim_{budget}")
            run([args.tidalc, model, "-o", exe, "--target", "sim", "--device-memory", str(budget)] + flags)
            sim = train(exe, data, args.steps, args.threads, env)
            rows.append({
                "model": name, "budget_mib": budget / 2**20, "budget_vs_peak": budget / peak, "swaps": swaps,
                "recomputed": recomputed,
                "predicted_ms": p["predicted"]["step_time_us"] / 1e3,
                "predicted_stall_ms": p["predicted"]["copy_stall_us"] / 1e3,
                "sim_ms": sim["step_ms"], "cpu_ms": base["step_ms"], "slowdown": sim["step_ms"] / base["step_ms"],
                "device_peak_mib": sim["device_peak"] / 2**20, "swapped_mib": sim["to_host"] / 2**20,
                "same_losses": sim["losses"] == base["losses"],
            })
            print(f"# {name} {budget} B: {rows[-1]}", file=sys.stderr)
    head = ["model", "budget MiB", "budget/peak", "swaps", "recomputed ops", "predicted ms", "predicted stall ms", "sim ms", "cpu ms",
            "sim/cpu", "device peak MiB", "swapped MiB/step", "losses = cpu"]
    print(f"- machine: {platform.processor() or platform.machine()}, {len(os.sched_getaffinity(0))} cores; "
          f"batch {args.batch}, threads {args.threads}, link {args.link_gbps} GB/s (TIDAL_SIM_LINK_GBPS), "
          f"{args.steps} steps (median after 2); extra tidalc flags: {' '.join(args.tidalc_flag) or 'none'}")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print(f"| {r['model']} | {r['budget_mib']:.2f} | {r['budget_vs_peak']:.2f} | {r['swaps']} | "
              f"{r['recomputed']} | "
              f"{r['predicted_ms']:.2f} | {r['predicted_stall_ms']:.2f} | {r['sim_ms']:.2f} | {r['cpu_ms']:.2f} | "
              f"{r['slowdown']:.2f} | {r['device_peak_mib']:.2f} | {r['swapped_mib']:.2f} | "
              f"{'yes' if r['same_losses'] else 'NO'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
