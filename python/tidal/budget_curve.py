"""Predicted (and measured) step time against the device budget.

    python3 -m tidal.budget_curve model.onnx --batch-size 32 --loss cross-entropy [tidalc flags] \\
        -o curve.png [--points 8] [--measure --steps 10 --input NAME=FILE.npy ...]

The budgets run from the all-device peak (the plan of `--target sim`
without `--device-memory`) down to the smallest budget tidalc can meet:
the one its error states at a 1-byte budget ("the smallest budget its plan
reaches is N bytes"), 1 byte if that compiles (everything can go to the
host), or found by bisection if tidalc fails without stating it.
`--points` budgets are evenly spaced between the two; tidalc plans each
(`--emit plan`, target sim unless the flags name another device target)
and the predicted step time is plotted against the budget. With
`--measure`, each budget is also compiled into an executable, trained
`--steps` steps on the `--input` files with `--log`, and the median
measured step time (the first step left out) joins the plot. The points go
to a CSV beside the picture (same name, .csv). docs/plots.md.
"""

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import List, Optional, Tuple

SMALLEST = re.compile(r"the smallest budget its plan reaches is ([0-9]+) bytes")
FIELDS = ["budget_bytes", "predicted_ms", "measured_ms", "device_peak_bytes", "host_peak_bytes", "copy_stall_ms",
          "swaps", "recomputations", "host_ops", "host_layers", "streamed"]


class CurveError(RuntimeError):
    """A one-line reason the curve cannot be made."""


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    error = [line for line in lines if "error" in line]
    return (error or lines or ["(no output)"])[0]


def _tidalc(args: List[str]) -> subprocess.CompletedProcess:
    from tidal.api import tidalc_path
    try:
        return subprocess.run([tidalc_path()] + args, capture_output=True, text=True)
    except OSError as err:
        raise CurveError(f"cannot run tidalc: {err}") from None


class _Planner:
    def __init__(self, model: str, flags: List[str], work: str):
        self.model, self.flags, self.work = model, flags, work

    def plan(self, budget: Optional[int]):
        """(Plan, "") or (None, tidalc's error line)."""
        from tidal.plan import load
        out = os.path.join(self.work, f"plan_{budget or 'all'}.json")
        extra = ["--device-memory", str(budget)] if budget else []
        proc = _tidalc([self.model, "--emit", "plan", "-o", out] + self.flags + extra)
        if proc.returncode != 0:
            return None, proc.stderr
        return load(out), ""

    def smallest(self, largest: int) -> Tuple[int, str]:
        """The smallest budget that plans, and how it was found."""
        plan, error = self.plan(1)
        if plan is not None:
            return 1, "1 byte plans (everything can run on the host)"
        match = SMALLEST.search(error)
        if match:
            return int(match.group(1)), "stated by tidalc"
        # No stated figure (an older tidalc, another planner): bisect to
        # within 1/256 of the peak.
        lo, hi = 1, largest
        tolerance = max(64, largest // 256)
        while hi - lo > tolerance:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if self.plan(mid)[0] is not None else (mid, hi)
        return hi, f"bisection (within {tolerance} bytes)"


def _measure(planner: _Planner, budget: int, steps: int, inputs: List[str]) -> float:
    exe = os.path.join(planner.work, f"train_{budget}")
    proc = _tidalc([planner.model, "-o", exe] + planner.flags + ["--device-memory", str(budget)])
    if proc.returncode != 0:
        raise CurveError(f"compiling at {budget} bytes: {_first_line(proc.stderr)}")
    log = os.path.join(planner.work, f"log_{budget}.jsonl")
    argv = [exe, "--steps", str(steps), "--log", log, "--quiet"]
    for binding in inputs:
        argv += ["--input", binding]
    run = subprocess.run(argv, capture_output=True, text=True)
    if run.returncode != 0:
        raise CurveError(f"training at {budget} bytes: {_first_line(run.stderr)}")
    with open(log) as f:
        times = sorted(json.loads(line)["step_ms"] for line in list(f)[1:] if line.strip())
    if not times:
        with open(log) as f:  # one step only: it is all there is
            times = [json.loads(line)["step_ms"] for line in f if line.strip()]
    if not times:
        raise CurveError(f"training at {budget} bytes logged no steps")
    middle = len(times) // 2
    return times[middle] if len(times) % 2 else (times[middle - 1] + times[middle]) / 2


def _budgets(largest: int, smallest: int, points: int) -> List[int]:
    count = max(points, 2)
    if largest <= smallest:
        return [largest]
    return sorted({round(largest - (largest - smallest) * i / (count - 1)) for i in range(count)}, reverse=True)


def curve(model: str, flags: List[str], points: int = 8, measure: bool = False, steps: int = 10,
          inputs: List[str] = (), work: Optional[str] = None, notes: Optional[List[str]] = None) -> List[dict]:
    """The curve's points, largest budget first: dicts with FIELDS
    (measured_ms None without `measure`). `notes` collects what the caller
    may want to print: how the smallest budget was found, budgets that did
    not plan."""
    notes = [] if notes is None else notes
    flags = list(flags)
    for flag in flags:
        name = flag.split("=")[0]
        if name in ("--device-memory", "--emit", "-o"):
            raise CurveError(f"{name} is chosen by budget_curve: leave it out of the tidalc flags")
    target = next((flags[i + 1] for i, f in enumerate(flags[:-1]) if f == "--target"), None)
    target = next((f.split("=", 1)[1] for f in flags if f.startswith("--target=")), target)
    if target is None:
        flags += ["--target", "sim"]
    elif target == "cpu":
        raise CurveError("--target cpu has no device budget: use sim (the default) or cuda")
    with tempfile.TemporaryDirectory(prefix="tidal-curve-") as own:
        planner = _Planner(model, flags, work or own)
        full, error = planner.plan(None)
        if full is None:
            raise CurveError(_first_line(error))
        largest = full.device_peak
        smallest, how = planner.smallest(largest)
        notes.append(f"all-device peak {largest} bytes; smallest budget {smallest} bytes ({how})")
        rows = []
        for budget in _budgets(largest, smallest, points):
            plan, error = planner.plan(budget)
            if plan is None:
                # The floors of placement's trials are not monotone: a
                # budget between two of them may not plan.
                notes.append(f"{budget} bytes does not plan: {_first_line(error)}")
                continue
            rows.append({"budget_bytes": budget, "predicted_ms": plan.step_time_us / 1e3,
                         "measured_ms": _measure(planner, budget, steps, inputs) if measure else None,
                         "device_peak_bytes": plan.device_peak, "host_peak_bytes": plan.host_peak,
                         "copy_stall_ms": plan.copy_stall_us / 1e3, "swaps": len(plan.swaps),
                         "recomputations": len(plan.recomputations), "host_ops": len(plan.host_ops),
                         "host_layers": len(plan.host_layers), "streamed": len(plan.streamed)})
        if not rows:
            raise CurveError("no budget between the all-device peak and the smallest one could be planned")
        return rows


def write_csv(rows: List[dict], path: str) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row[k]) for k in FIELDS})


def draw(rows: List[dict], path: str, title: str) -> None:
    """Step time (ms) against the budget, largest budget on the left;
    each point labelled with what the planner did there."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    largest = max(r["budget_bytes"] for r in rows)
    unit, scale = next((u, float(b)) for u, b in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("bytes", 1))
                       if largest >= b or b == 1)
    fig, ax = plt.subplots(figsize=(9, 5))
    budgets = [r["budget_bytes"] / scale for r in rows]
    ax.plot(budgets, [r["predicted_ms"] for r in rows], "o-", color="tab:blue", label="predicted (plan)")
    measured = [(b, r["measured_ms"]) for b, r in zip(budgets, rows) if r.get("measured_ms") is not None]
    if measured:
        ax.plot([b for b, _ in measured], [m for _, m in measured], "s--", color="tab:orange",
                label="measured (median step)")
    for b, r in zip(budgets, rows):
        moved = [f"{r[k]}{tag}" for k, tag in (("swaps", "s"), ("recomputations", "r"), ("host_ops", "h"),
                                                 ("streamed", "p")) if r[k]]
        ax.annotate(" ".join(moved) or "all on device", (b, r["predicted_ms"]), xytext=(0, 8),
                    textcoords="offset points", ha="center", fontsize=7, color="0.3")
    ax.axvline(budgets[0], color="0.6", linestyle=":", linewidth=1)
    ax.axvline(budgets[-1], color="tab:red", linestyle=":", linewidth=1, label="smallest budget planned")
    ax.set_xlabel(f"device budget ({unit})")
    ax.set_ylabel("step time (ms)")
    ax.invert_xaxis()  # the budget shrinks to the right
    ax.margins(y=0.2)
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=8, title="s swaps, r recomputations, h host ops, p streamed parameters",
              title_fontsize=7)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tidal.budget_curve", description=__doc__.split("\n\n")[0],
                                     epilog="Other arguments are passed to tidalc.")
    parser.add_argument("model", help="the ONNX model")
    parser.add_argument("-o", "--output", required=True, help="the picture (.png, .svg, .pdf); the CSV goes beside it")
    parser.add_argument("--points", type=int, default=8, help="budgets to plan (default 8)")
    parser.add_argument("--measure", action="store_true", help="also compile, train and time each budget")
    parser.add_argument("--steps", type=int, default=10, help="steps per measured budget (default 10)")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="a data input for --measure (repeat for each)")
    args, flags = parser.parse_known_args(argv)
    if args.points < 2:
        parser.error("--points must be at least 2")
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    if not os.path.isfile(args.model):
        print(f"{args.model}: error: no such file", file=sys.stderr)
        return 1
    notes: List[str] = []
    try:
        rows = curve(args.model, flags, args.points, args.measure, args.steps, args.input, notes=notes)
        draw(rows, args.output, f"{os.path.basename(args.model)}: step time against the device budget")
        table = os.path.splitext(args.output)[0] + ".csv"
        write_csv(rows, table)
    except ImportError as err:
        print(f"error: {err} (the picture needs matplotlib)", file=sys.stderr)
        return 1
    except (CurveError, OSError, ValueError) as err:
        message = _first_line(str(err)) if str(err) else type(err).__name__
        print(message if message.startswith(args.model) else f"{args.model}: error: {message}", file=sys.stderr)
        return 1
    for note in notes:
        print(note)
    for r in rows:
        line = f"{r['budget_bytes']:>12} B  predicted {r['predicted_ms']:9.3f} ms"
        if r["measured_ms"] is not None:
            line += f"  measured {r['measured_ms']:9.3f} ms"
        print(line + f"  ({r['swaps']} swaps, {r['recomputations']} recomputations, {r['host_ops']} host ops, "
                     f"{r['streamed']} streamed)")
    print(f"wrote {args.output} and {table}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
