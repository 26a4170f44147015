#!/usr/bin/python3
"""Predicted against measured step time on the cpu target, per model.

    /usr/bin/python3 bench/predicted_time.py [--profile P.json | --calibrate]
        [--threads 2] [--steps 40] [--warmup 5] [--models a,b] [--real all|a,b]
        [--per-kind] [--time-ops]
        [--json OUT] [--workdir DIR]

For each zoo case (python/tidal/training.py), and with `--real` each model
of the real-model suite (python/tidal/real_models.py, small size, AdamW,
with the suite's frozen tensors and data): compile a plan (`--emit plan`)
with the machine profile and the cpu executable, train `--steps` steps at
`--threads` threads, and compare the plan's `predicted.step_time_us` with
the median of the driver's `step_ms` over the steps after `--warmup`.
`--calibrate` runs `tidal-calibrate` first (with the same thread count) and
uses its profile; without a profile the plan uses the uncalibrated default.
`--time-ops` also times each model's own kernel calls
(`tidal-calibrate --ops STEP.mlir --from PROFILE`) and plans with that
profile, whose `host.op_us` table the cost model prefers to its roofline.
`--per-kind` adds, per model, the predicted time by op kind, which shows
where a misprediction comes from.

Prints one row per model: predicted us, measured us, ratio, error. This is
a benchmark, not a test: nothing here runs in the test suite.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))

from tidal import training  # noqa: E402


def run(argv, **kw):
    proc = subprocess.run(argv, capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}\n{proc.stderr}")
    return proc


def real_model(name, model, d, steps):
    """Exports a real-model suite model; returns its data arguments and
    tidalc flags (AdamW, the suite's frozen tensors)."""
    import warnings
    warnings.filterwarnings("ignore")
    from tidal import real_models, real_training
    proto = real_models.export(name, model)
    freeze = real_training.freeze_list(name, proto, real_training.onnx_name_map(name, proto, "small"), "small")
    c = real_training.case(name, "adamw", steps)
    flags = training.tidalc_flags(c) + (["--freeze", ",".join(freeze)] if freeze else [])
    return real_training.write_data(name, d, c.batch * steps), flags


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("TIDAL_BUILD_DIR", os.path.join(REPO, "build")))
    ap.add_argument("--profile")
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--models", default="")
    ap.add_argument("--real", default="", help="real-model suite models (all: every one); no zoo cases unless "
                                              "--models names them")
    ap.add_argument("--per-kind", action="store_true")
    ap.add_argument("--time-ops", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--workdir")
    args = ap.parse_args()
    tidalc = os.path.join(args.build, "bin", "tidalc")
    work = args.workdir or tempfile.mkdtemp(prefix="tidal-predict-")
    os.makedirs(work, exist_ok=True)
    profile = args.profile
    if args.calibrate:
        profile = os.path.join(work, "profile.json")
        run([os.path.join(args.build, "bin", "tidal-calibrate"), "--threads", str(args.threads), "-o", profile])
    names = [n for n in args.models.split(",") if n]
    real = [n for n in args.real.split(",") if n]
    if real == ["all"]:
        from tidal import real_models
        real = list(real_models.MODELS)
    if not names and not real:
        names = [c.name for c in training.CASES]
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    rows = []
    print(f"profile: {profile or 'default (uncalibrated)'}{' + each model' + chr(39) + 's op times' if args.time_ops else ''}; "
          f"threads {args.threads}; "
          f"median of steps {args.warmup + 1}..{args.steps}")
    print(f"{'model':28s} {'batch':>5s} {'predicted_us':>12s} {'measured_us':>12s} {'ratio':>7s} {'error':>7s}")
    for name in names + ["real:" + n for n in real]:
        d = os.path.join(work, name.replace(":", "_"))
        os.makedirs(d, exist_ok=True)
        model = os.path.join(d, "model.onnx")
        if name.startswith("real:"):
            inputs, flags = real_model(name[5:], model, d, args.steps)
        else:
            case = training.CASES_BY_NAME[name]
            training.export_case(case, model)
            flags = training.tidalc_flags(case)
            inputs = None
        model_profile = profile
        if args.time_ops:
            if not profile:
                raise SystemExit("--time-ops needs --profile or --calibrate")
            step = os.path.join(d, "step.mlir")
            run([tidalc, model, "-o", step, "--emit", "mlir", "--stop-after", "tidal-plan-memory"] + flags)
            model_profile = os.path.join(d, "profile_ops.json")
            run([os.path.join(args.build, "bin", "tidal-calibrate"), "--threads", str(args.threads), "--ops", step,
                 "--from", profile, "-o", model_profile], env=env)
        flags += ["--device-profile", model_profile] if model_profile else []
        if inputs is None:
            inputs = training.write_inputs(case, d)
        plan_path = os.path.join(d, "plan.json")
        run([tidalc, model, "-o", plan_path, "--emit", "plan"] + flags)
        with open(plan_path) as f:
            plan = json.load(f)
        exe = os.path.join(d, "train")
        run([tidalc, model, "-o", exe] + flags)
        log = os.path.join(d, "log.jsonl")
        run([exe] + inputs + ["--steps", str(args.steps), "--threads", str(args.threads), "--log", log, "--quiet"],
            env=env, timeout=1800)
        with open(log) as f:
            steps = [json.loads(line) for line in f if line.strip()]
        times = [s["step_ms"] * 1e3 for s in steps if "step_ms" in s and "step" in s][args.warmup:]
        measured = statistics.median(times)
        predicted = plan["predicted"]["step_time_us"]
        batch = flags[flags.index("--batch-size") + 1]
        row = {"model": name, "batch": int(batch), "predicted_us": predicted, "measured_us": measured,
               "ratio": predicted / measured}
        rows.append(row)
        print(f"{name:28s} {batch:>5s} {predicted:12.1f} {measured:12.1f} {predicted / measured:7.2f} "
              f"{(predicted - measured) / measured:+7.1%}", flush=True)
        if args.per_kind:
            kinds = defaultdict(float)
            for op in plan["schedule"]:
                if op["kernel"]:
                    kinds[op["op"].removeprefix("tidal.")] += op["duration_us"]
            row["per_kind_us"] = kinds
            top = sorted(kinds.items(), key=lambda kv: -kv[1])[:8]
            print("    " + ", ".join(f"{k} {v:.0f}" for k, v in top))
    errors = [abs(r["ratio"] - 1) for r in rows]
    print(f"within 10%: {sum(e <= 0.10 for e in errors)}/{len(rows)}; worst {max(errors):.1%}; "
          f"mean |error| {statistics.mean(errors):.1%}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"profile": profile, "threads": args.threads, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
