"""A real model in a fraction of its memory: planned and trained on the sim
device against the cpu target (bench/real_budget.py,
python/test/test_real_budget.py).

For a model of tidal.real_models (SGD with momentum): export it, compile
the cpu executable, plan the step on the sim device with everything on the
device (`--placement device`) for its no-reuse peak (the plan's
`baseline.peak_device_bytes`), then for each fraction of that peak compile
the sim executable with the default planner, train both on the same data
and compare the losses bit for bit: the sim runs the cpu target's kernels,
so a plan that moved, swapped or recomputed anything correctly changes no
value.
"""

import json
import os
import statistics
import subprocess
import time
from typing import Dict, List, Optional, Sequence, Tuple

from tidal import real_training, training


def _run(argv: List[str], env: Optional[Dict[str, str]] = None) -> Tuple[int, str]:
    proc = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    return proc.returncode, proc.stderr.strip()


def _last_line(text: str) -> str:
    return (text.splitlines() or ["?"])[-1]


def plan(tidalc: str, model: str, flags: List[str], out: str):
    """(plan JSON or None, seconds of tidalc, error line or None)."""
    start = time.perf_counter()
    rc, err = _run([tidalc, model, "--target", "sim", "--emit", "plan", "-o", out] + flags)
    seconds = time.perf_counter() - start
    if rc:
        return None, seconds, _last_line(err)
    with open(out) as f:
        return json.load(f), seconds, None


def train(exe: str, inputs: List[str], steps: int, threads: int, env: Optional[Dict[str, str]] = None):
    """(log lines or None, error line or None)."""
    log = exe + ".jsonl"
    rc, err = _run([exe] + inputs + ["--steps", str(steps), "--threads", str(threads), "--log", log, "--quiet"], env)
    if rc:
        return None, _last_line(err)
    return real_training.read_log(log), None


def moved(p: dict) -> Tuple[int, int, int]:
    """What a plan moved: host ops, copies to the device, recomputed ops."""
    schedule = p.get("schedule", [])
    return (sum(1 for op in schedule if op.get("stream") == "host"),
            sum(1 for op in schedule if op.get("op") == "tidal.prefetch"),
            sum(1 for op in schedule if op.get("recompute_of") is not None))


def budget_rows(name: str, tidalc: str, work: str, fractions: Sequence[float], steps: int = 4,
                threads: int = 2, link_gbps: float = 16.0) -> List[dict]:
    """One row per fraction (or one row with `error`): `budget`,
    `no_reuse_peak`, `plan_s`, `predicted_us` and `all_device_us`,
    `host_ops`/`prefetches`/`recomputed`, `sim_ms`/`cpu_ms` (median step
    after the first) and `equal` (the losses bitwise equal); `error` says
    which stage failed."""
    result, _ = real_training.export_and_compile(name, tidalc, work, steps=steps)
    if result.compile_error or result.stage not in ("ok", "numerics"):
        return [{"model": name, "error": f"{result.stage}: {result.reason}"}]
    c = real_training.case(name, "sgd", steps)
    flags = training.tidalc_flags(c) + ["--link-gbps", str(link_gbps)]
    if result.freeze:
        flags += ["--freeze", ",".join(result.freeze)]
    if result.padding:
        flags += ["--embedding-padding", ",".join(result.padding)]
    model = os.path.join(work, "model.onnx")
    inputs = real_training.write_data(name, work, c.batch * steps)
    cpu_lines, err = train(os.path.join(work, "train-sgd"), inputs, steps, threads)
    if cpu_lines is None:
        return [{"model": name, "error": f"cpu: {err}"}]
    base, _, err = plan(tidalc, model, flags + ["--placement", "device"], os.path.join(work, "all.json"))
    if base is None:
        return [{"model": name, "error": f"all-device plan: {err}"}]
    peak = base["baseline"]["peak_device_bytes"]
    env = {"TIDAL_SIM_LINK_GBPS": str(link_gbps)}
    rows = []
    for fraction in fractions:
        budget = int(peak * fraction)
        row = {"model": name, "fraction": fraction, "budget": budget, "no_reuse_peak": peak,
               "all_device_us": base["predicted"]["step_time_us"]}
        rows.append(row)
        p, seconds, err = plan(tidalc, model, flags + ["--device-memory", str(budget)],
                               os.path.join(work, f"plan-{fraction}.json"))
        row["plan_s"] = round(seconds, 2)
        if p is None:
            row["error"] = f"plan: {err}"
            continue
        row["predicted_us"] = p["predicted"]["step_time_us"]
        row["host_ops"], row["prefetches"], row["recomputed"] = moved(p)
        exe = os.path.join(work, f"train-sim-{fraction}")
        rc, err = _run([tidalc, model, "-o", exe, "--target", "sim", "--device-memory", str(budget)] + flags)
        if rc:
            row["error"] = f"sim compile: {_last_line(err)}"
            continue
        sim_lines, err = train(exe, inputs, steps, threads, env)
        if sim_lines is None:
            row["error"] = f"sim: {err}"
            continue
        row["equal"] = [l["loss"] for l in sim_lines] == [l["loss"] for l in cpu_lines]
        row["sim_ms"] = statistics.median(l["step_ms"] for l in sim_lines[1:])
        row["cpu_ms"] = statistics.median(l["step_ms"] for l in cpu_lines[1:])
    return rows
