"""Predicted (and measured) step time against the device budget.

    python3 -m tidal.budget_curve model.onnx --batch-size 32 --loss cross-entropy [tidalc flags] \\
        -o curve.png [--points 8] [--measure --steps 10 --input NAME=FILE.npy ...]

From the all-device plan's peak down to the smallest budget tidalc can
meet (read from its error at a 1-byte budget), `--points` budgets evenly
spaced; tidalc plans each (`--emit plan`, target sim unless the flags
name another) and the predicted step time is plotted against the budget.
With `--measure`, each budget is also compiled for the sim target and
trained `--steps` steps on the given inputs; the measured median step
time joins the plot. The points are also written as CSV beside the
picture (same name, .csv).
"""

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import List, Optional

from tidal.api import tidalc_path
from tidal.plan import load

SMALLEST = re.compile(r"smallest budget its plan reaches is ([0-9]+) bytes")


class CurveError(RuntimeError):
    pass


def _tidalc(args: List[str]) -> subprocess.CompletedProcess:
    return subprocess.run([tidalc_path()] + args, capture_output=True, text=True)


def _plan(model: str, flags: List[str], work: str, budget: Optional[int]):
    out = os.path.join(work, f"plan_{budget or 'all'}.json")
    args = [model, "--emit", "plan", "-o", out] + flags + (["--device-memory", str(budget)] if budget else [])
    proc = _tidalc(args)
    if proc.returncode != 0:
        return None, proc.stderr.strip()
    return load(out), ""


def _measure(model, flags, work, budget, steps, inputs) -> float:
    exe = os.path.join(work, f"train_{budget}")
    proc = _tidalc([model, "-o", exe] + flags + ["--device-memory", str(budget)])
    if proc.returncode != 0:
        raise CurveError(proc.stderr.strip())
    log = os.path.join(work, f"log_{budget}.jsonl")
    argv = [exe, "--steps", str(steps), "--log", log, "--quiet"]
    for binding in inputs:
        argv += ["--input", binding]
    run = subprocess.run(argv, capture_output=True, text=True)
    if run.returncode != 0:
        raise CurveError(run.stderr.strip())
    with open(log) as f:
        times = sorted(json.loads(line)["step_ms"] for line in f if line.strip())
    later = times[1:] or times  # the first step warms up
    return later[len(later) // 2]


def curve(model: str, flags: List[str], points: int = 8, measure: bool = False, steps: int = 10,
          inputs: List[str] = (), work: Optional[str] = None) -> List[dict]:
    """[{budget_bytes, predicted_ms, device_peak_bytes, swaps,
    recomputations, host_ops[, measured_ms]}], largest budget first."""
    if not any(f == "--target" or f.startswith("--target=") for f in flags):
        flags = flags + ["--target", "sim"]
    own = tempfile.TemporaryDirectory() if work is None else None
    work = work or own.name
    try:
        full, error = _plan(model, flags, work, None)
        if full is None:
            raise CurveError(error)
        probe = _tidalc([model, "--emit", "plan", "-o", os.path.join(work, "probe.json"), "--device-memory", "1"]
                        + flags)
        match = SMALLEST.search(probe.stderr)
        smallest = int(match.group(1)) if match else 1
        largest = full.device_peak
        count = max(points, 2)
        budgets = sorted({int(largest - (largest - smallest) * i / (count - 1)) for i in range(count)}, reverse=True)
        rows = []
        for budget in budgets:
            plan, error = _plan(model, flags, work, budget)
            if plan is None:
                continue  # between two mechanisms' floors: not every budget fits
            row = {"budget_bytes": budget, "predicted_ms": plan.step_time_us / 1e3,
                   "device_peak_bytes": plan.device_peak, "swaps": len(plan.swaps),
                   "recomputations": len(plan.recomputations), "host_ops": len(plan.host_ops)}
            if measure:
                row["measured_ms"] = _measure(model, flags, work, budget, steps, inputs)
            rows.append(row)
        if not rows:
            raise CurveError("no budget between the all-device peak and the smallest one could be planned")
        return rows
    finally:
        if own is not None:
            own.cleanup()


def draw(rows: List[dict], path: str, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    mib = float(1 << 20)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    budgets = [r["budget_bytes"] / mib for r in rows]
    ax.plot(budgets, [r["predicted_ms"] for r in rows], "o-", label="predicted")
    if all("measured_ms" in r for r in rows):
        ax.plot(budgets, [r["measured_ms"] for r in rows], "s--", label="measured (sim, median)")
    ax.set_xlabel("device budget (MiB)")
    ax.set_ylabel("step time (ms)")
    ax.invert_xaxis()
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tidal.budget_curve", description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--points", type=int, default=8)
    parser.add_argument("--measure", action="store_true")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--input", action="append", default=[], help="NAME=FILE.npy, with --measure")
    args, flags = parser.parse_known_args(argv)
    try:
        rows = curve(args.model, flags, args.points, args.measure, args.steps, args.input)
        draw(rows, args.output, f"{os.path.basename(args.model)}: step time against device budget")
        with open(os.path.splitext(args.output)[0] + ".csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    except (CurveError, OSError) as err:
        print(f"{args.model}: error: {str(err).splitlines()[0] if str(err) else err}", file=sys.stderr)
        return 1
    for r in rows:
        line = f"{r['budget_bytes']:>12} B  predicted {r['predicted_ms']:8.2f} ms"
        if "measured_ms" in r:
            line += f"  measured {r['measured_ms']:8.2f} ms"
        print(line + f"  ({r['swaps']} swaps, {r['recomputations']} recomputations, {r['host_ops']} host ops)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
