#!/usr/bin/env python3
"""Runs training cases on a lent GPU under compute-sanitizer, from
scripts/gpu_pack.sh's recordings (docs/cuda.md, "Running the GPU checks"):

    python3 scripts/gpu_debug.py OUTDIR CASE... [--steps N] [--tool memcheck|none] [--compare]

Each case is compiled through tidalc_replay.py (TIDAL_REPLAY=replay and its
variables set, as scripts/gpu_checks.sh sets them), run for --steps steps
with TIDAL_CUDA_SYNC=1 under `compute-sanitizer --tool TOOL` (or bare with
--tool none), and its output written to OUTDIR/CASE.log; the first lines
of each are printed. --compare instead runs the executable twice with
TIDAL_DUMP_DIR, on the GPU and with TIDAL_DEVICE=sim (the same plan on the
CPU kernels), and writes scripts/compare_dumps.py's op-by-op comparison to
OUTDIR/CASE.log.
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

from tidal import training  # noqa: E402


def compare(argv, work, timeout):
    """Runs `argv` on the GPU and on sim with dumps; the comparison's text."""
    out = []
    for tag, extra in (("gpu", {}), ("sim", {"TIDAL_DEVICE": "sim"})):
        env = dict(os.environ, TIDAL_DUMP_DIR=os.path.join(work, f"dump-{tag}"), **extra)
        run = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
        out.append(f"{tag}: exit {run.returncode} {run.stderr.strip()[:300]}")
    cmp = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "compare_dumps.py"),
                          os.path.join(work, "dump-gpu"), os.path.join(work, "dump-sim"), "--all"],
                         capture_output=True, text=True)
    return "\n".join(out) + "\n" + cmp.stdout + cmp.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("cases", nargs="+")
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--tool", default="memcheck")
    ap.add_argument("--timeout", type=float, default=90)
    ap.add_argument("--compare", action="store_true")
    args = ap.parse_args()
    tidalc = os.path.join(ROOT, ".gpu", "build", "bin", "tidalc")
    for name in args.cases:
        case = training.CASES_BY_NAME[name]
        work = os.path.join("/tmp/gpu-debug", name)
        os.makedirs(work, exist_ok=True)
        model = os.path.join(work, "model.onnx")
        training.export_case(case, model)
        exe = os.path.join(work, "train")
        proc = subprocess.run([tidalc, model, "-o", exe, "--target", "cuda"] + training.tidalc_flags(case),
                              capture_output=True, text=True)
        log = os.path.join(args.out, f"{name}.log")
        with open(log, "w") as f:
            if proc.returncode != 0:
                f.write(proc.stderr)
                print(f"== {name}: tidalc failed: {proc.stderr.strip()[:300]}")
                continue
            argv = [exe] + training.write_inputs(case, work) + ["--steps", str(args.steps), "--quiet"]
            if args.compare:
                text = compare(argv, work, args.timeout)
                f.write(text)
                print(f"== {name}\n" + "\n".join(text.splitlines()[:16]))
                continue
            if args.tool != "none":
                argv = ["compute-sanitizer", "--tool", args.tool, "--print-limit", "4"] + argv
            try:
                run = subprocess.run(argv, capture_output=True, text=True, timeout=args.timeout,
                                     env=dict(os.environ, TIDAL_CUDA_SYNC="1"))
                text = f"exit {run.returncode}\n{run.stdout}\n{run.stderr}"
            except subprocess.TimeoutExpired as e:
                text = f"timed out after {args.timeout} s\n{e.stdout or ''}\n{e.stderr or ''}"
            f.write(text)
        lines = [l for l in text.splitlines() if l.strip()]
        print(f"== {name}\n" + "\n".join(lines[:24]))


if __name__ == "__main__":
    main()
