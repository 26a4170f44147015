#!/usr/bin/python3
"""The real-model suite: which models PyTorch users bring tidal trains, and how well.

    /usr/bin/python3 bench/real_models.py [--models a,b,...] [--size small|full]
        [--opset 13] [--steps 5] [--threads 2] [--coverage]
        [--markdown [OUT.md]] [--json OUT.json] [--workdir DIR] [--tidalc PATH]
        [--wait-idle S]

For each model of python/tidal/real_models.py (torchvision's classification
families, VisionTransformer, Swin Transformer, nn.Transformer*, GPT-2- and
LLaMA-style LMs, a mixture of experts, a BERT-style encoder, a U-Net, LSTM
and GRU classifiers; `--size small` by default):

1. exports it (tidal.real_models.export: training mode, no constant
   folding, symbolic batch, `--opset`);
2. compiles it with tidalc (timed; on failure the one-line error, shortened
   to "operator X (opset N)" for an unsupported op), with the model's loss
   form and, for each optimizer, SGD (lr 0.01, momentum 0.9) and AdamW (lr
   0.001, weight decay 0.01) (tidal.real_training.OPTIMIZERS);
3. where it compiles, trains `--steps` steps in tidal (`--threads T`) and in
   PyTorch float32, float64 and (image models) float32 channels-last, from
   the same weights and mini-batches, and compares the per-step losses and
   the final weights, BatchNorm statistics and optimizer state with
   tidal.training.compare: tidal's deviation from PyTorch float32 may not
   exceed 10x PyTorch's own spread (at least 1e-4);
4. times a step (the median after the first) of tidal's executable at
   `--threads T` and of PyTorch at torch.set_num_threads(T) in a child
   process (same model, data, optimizer), and takes both processes' peak
   RSS (ru_maxrss through bench/cpu_train.py's launcher).

`--coverage` only exports and compiles every model: per model, compiled or
the error; then the ONNX ops that block the suite and how many models each
blocks (first blocker: tidalc's error; "uses": the export's op types outside
tidal.ops.SUPPORTED_OPS). Output: a markdown table on stdout (or to
--markdown OUT.md), everything in --json. See bench/README.md "Real models".

This is a benchmark, not a test (python/test/test_real_models.py is the test).
"""

import argparse
import collections
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "bench"))

import cpu_train  # noqa: E402  (the launcher, child runner, machine info)


def _quiet():
    # The exporter and torchvision warn about tracing, num_batches_tracked
    # and init defaults on every model; none changes the exported graph.
    warnings.filterwarnings("ignore")


# --- the PyTorch timing child ------------------------------------------------------------


def torch_child(args) -> int:
    """Trains one model in float32 with `--threads` threads; writes per-step
    times, losses and the RSS before the first step as JSON."""
    _quiet()
    import torch

    torch.set_num_threads(args.threads)
    from tidal import real_models, real_training, training

    c = real_training.case(args.model, args.optimizer, args.steps, opset=args.opset)
    model = real_models.build(args.model, args.size)
    opt = training.make_optimizer(c, model.parameters())
    samples = c.batch * c.steps
    data, label = real_models.dataset(args.model, samples, args.size)
    rows = list(training.batch_rows(samples, c.batch, c.steps))
    baseline = cpu_train.vm_rss_kib()
    step_ms, losses = [], []
    for r in rows:
        t0 = time.perf_counter()
        xs = real_training._tensors(args.model, data, r, torch.float32, False, args.size)
        opt.zero_grad()
        loss = real_training.loss_of(c, model(*xs), None if label is None else torch.from_numpy(label[r]))
        loss.backward()
        opt.step()
        losses.append(loss.item())
        step_ms.append((time.perf_counter() - t0) * 1e3)
    with open(args.result, "w") as f:
        json.dump({"step_ms": step_ms, "losses": losses, "baseline_rss_kib": baseline,
                   "torch_threads": torch.get_num_threads(), "torch_version": torch.__version__}, f)
    return 0


def run_torch(name, optimizer, args, workdir):
    result = os.path.join(workdir, f"torch-{optimizer}.json")
    cmd = [sys.executable, os.path.abspath(__file__), "--_torch-child", "--model", name, "--optimizer", optimizer,
           "--size", args.size, "--opset", str(args.opset), "--steps", str(args.steps), "--threads",
           str(args.threads), "--result", result]
    env = cpu_train.child_env(args.threads, "default")
    rc, maxrss, wall, err, other = cpu_train.run_child(cmd, env, os.path.join(workdir, f"torch-{optimizer}"))
    if rc != 0:
        return {"error": err.strip().splitlines()[-1] if err.strip() else f"exit {rc}"}
    with open(result) as f:
        out = json.load(f)
    out.update({"peak_rss_kib": maxrss, "wall_s": wall, "other_load": other})
    return out


# --- one model -----------------------------------------------------------------------------------


def median_after_first(values):
    tail = values[1:] if len(values) > 1 else values
    return statistics.median(tail) if tail else None


def measure(name, args, workdir):
    from tidal import real_training

    if args.coverage:
        result, _ = real_training.export_and_compile(name, args.tidalc, workdir, args.opset, args.size,
                                                     steps=args.steps)
        return result, {}
    runs = {}
    env = cpu_train.child_env(args.threads, "default")

    def runner(argv, tag):
        rc, maxrss, wall, err, other = cpu_train.run_child(argv, env, os.path.join(workdir, tag))
        runs[tag] = {"peak_rss_kib": maxrss, "wall_s": wall, "other_load": other}
        return rc, err

    result = real_training.evaluate(name, args.tidalc, workdir, steps=args.steps, threads=args.threads,
                                    opset=args.opset, size=args.size, runner=runner)
    perf = {}
    for opt, r in result.optimizers.items():
        if r.stage in ("compile",):
            continue
        ours = runs.get(f"tidal-{opt}", {})
        theirs = run_torch(name, opt, args, workdir)
        perf[opt] = {
            "ours_step_ms": r.step_ms, "ours_ms": median_after_first(r.step_ms),
            "ours_peak_rss_kib": ours.get("peak_rss_kib"), "ours_other_load": ours.get("other_load"),
            "torch_step_ms": theirs.get("step_ms"), "torch_ms": median_after_first(theirs.get("step_ms") or []),
            "torch_peak_rss_kib": theirs.get("peak_rss_kib"), "torch_baseline_rss_kib": theirs.get("baseline_rss_kib"),
            "torch_other_load": theirs.get("other_load"), "torch_losses": theirs.get("losses"),
            "torch_error": theirs.get("error"),
        }
    return result, perf


def result_json(result, perf):
    out = {k: getattr(result, k) for k in ("name", "stage", "reason", "export_s", "compile_s", "compile_error",
                                           "missing_ops", "nodes", "params", "freeze")}
    out["failure"] = result.failure
    out["optimizers"] = {}
    for opt, r in result.optimizers.items():
        o = {"stage": r.stage, "reason": r.reason, "compile_s": r.compile_s, "losses": r.losses,
             "step_ms": r.step_ms}
        cmp = r.comparison
        if r.step1 is not None:
            o.update({"step1_loss_dev": r.step1.loss_dev, "step1_weight_dev": r.step1.weight_dev,
                      "step1_weight_dev_name": r.step1.weight_dev_name, "step1_weight_spread": r.step1.weight_spread,
                      "step1_problems": r.step1.problems})
        if cmp is not None:
            o.update({"loss_dev": cmp.loss_dev, "loss_f64": cmp.loss_f64, "loss_spread": cmp.loss_spread,
                      "weight_dev": cmp.weight_dev, "weight_dev_name": cmp.weight_dev_name,
                      "weight_spread": cmp.weight_spread, "problems": cmp.problems,
                      "loss_dev_steps": r.loss_dev_steps, "loss_f64_steps": r.loss_f64_steps,
                      "loss_spread_steps": r.loss_spread_steps})
        o.update(perf.get(opt, {}))
        out["optimizers"][opt] = o
    return out


# --- reporting ---------------------------------------------------------------------------------------


def e(value):
    return "-" if value is None else f"{value:.1e}"


def f1(value, spec="{:.1f}"):
    return "-" if value is None else spec.format(value)


def status_cell(row):
    return f"**{row['stage']}**: {row['reason']}".replace("|", "\\|")


def coverage_table(rows, specs):
    lines = ["| model | family | params | ONNX nodes | export s | compile s | result | ops outside tidal.ops |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        s = specs[r["name"]]
        result = "compiles" if r["stage"] not in ("export", "compile") else status_cell(r)
        lines.append(f"| {r['name']} | {s.family} | {r['params'] / 1e6:.2f}M | {r['nodes']} | {f1(r['export_s'])}"
                     f" | {f1(r['compile_s'])} | {result} | {' '.join(r['missing_ops']) or '-'} |")
    return "\n".join(lines)


def blocker_op(row):
    import re

    m = re.match(r"operator (\S+) \(opset", row["reason"]) if row["stage"] == "compile" else None
    return m.group(1) if m else None


def missing_op_summary(rows):
    first = collections.defaultdict(list)
    uses = collections.defaultdict(list)
    other = []
    for r in rows:
        op = blocker_op(r)
        if op:
            first[op].append(r["name"])
        elif r["stage"] in ("export", "compile"):
            other.append(r)
        if r["stage"] in ("export", "compile"):
            for o in set(r["missing_ops"]) | ({op} if op else set()):
                uses[o].append(r["name"])
    lines = ["| ONNX op | first blocker of | models | also used by (blocked first by another op) |", "|---|---|---|---|"]
    for op in sorted(uses, key=lambda o: (-len(first.get(o, [])), -len(uses[o]), o)):
        firsts = first.get(op, [])
        rest = [m for m in uses[op] if m not in firsts]
        lines.append(f"| {op} | {len(firsts)} | {', '.join(firsts) or '-'} | {', '.join(rest) or '-'} |")
    for r in other:
        lines.append(f"| (not an op) | 1 | {r['name']}: {r['stage']}: {r['reason']} | - |")
    return "\n".join(lines)


def training_table(rows):
    lines = ["| model | optimizer | result | loss dev, max over steps | PyTorch f32 vs f64 | PyTorch spread"
             " | worst tensor: dev / spread | tensor | step 1 alone: worst tensor dev / spread |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for opt, o in r["optimizers"].items():
            result = "ok" if o["stage"] == "ok" else f"**{o['stage']}**: {o['reason']}".replace("|", "\\|")
            if "loss_dev" not in o:
                lines.append(f"| {r['name']} | {opt} | {result} | - | - | - | - | - | - |")
                continue
            step1 = (f"{e(o['step1_weight_dev'])} / {e(o['step1_weight_spread'])} ({o['step1_weight_dev_name']})"
                     if "step1_weight_dev" in o else "-")
            lines.append(f"| {r['name']} | {opt} | {result} | {e(o['loss_dev'])} | {e(o['loss_f64'])}"
                         f" | {e(o['loss_spread'])} | {e(o['weight_dev'])} / {e(o['weight_spread'])}"
                         f" | {o['weight_dev_name']} | {step1} |")
    return "\n".join(lines)


def load(o):
    """Other processes' share of the CPUs while the two timed runs ran (the
    larger): above ~10%, distrust the times (bench/cpu_train.py)."""
    values = [v for v in (o.get("ours_other_load"), o.get("torch_other_load")) if v is not None]
    return f"{max(values) * 100:.0f}%" if values else "-"


def perf_table(rows):
    lines = ["| model | optimizer | compile s | ours ms/step | torch ms/step | ours/torch | ours peak RSS MiB"
             " | torch peak RSS MiB | torch RSS before step 1 MiB | other load |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for opt, o in r["optimizers"].items():
            if "ours_ms" not in o:
                continue
            ratio = o["ours_ms"] / o["torch_ms"] if o.get("ours_ms") and o.get("torch_ms") else None
            mib = lambda k: None if o.get(k) is None else o[k] / 1024.0  # noqa: E731
            lines.append(f"| {r['name']} | {opt} | {f1(o['compile_s'])} | {f1(o['ours_ms'], '{:.2f}')}"
                         f" | {f1(o['torch_ms'], '{:.2f}')} | {f1(ratio, '{:.2f}')} | {f1(mib('ours_peak_rss_kib'))}"
                         f" | {f1(mib('torch_peak_rss_kib'))} | {f1(mib('torch_baseline_rss_kib'))}"
                         f" | {load(o)} |")
    return "\n".join(lines)


def report(rows, info, args):
    from tidal import real_models

    specs = real_models.MODELS
    compiled = [r for r in rows if r["stage"] not in ("export", "compile")]
    parts = [f"Machine: {info['cpu']}, {info['cores']} cores; tidal {info['tidal_rev']}; torch {info['torch']},"
             f" torchvision {info['torchvision']}. Size {args.size}, opset {args.opset}, {args.steps} steps,"
             f" tidal --threads {args.threads}, torch.set_num_threads({args.threads}).",
             "",
             f"{len(compiled)} of {len(rows)} models compile"
             + ("." if args.coverage else
                f"; {sum(1 for r in rows if r['stage'] == 'ok')} train and match PyTorch (both optimizers)."),
             "", coverage_table(rows, specs), "", "Ops that block models:", "", missing_op_summary(rows)]
    if not args.coverage:
        parts += ["", "Numerics (tidal vs PyTorch float32, relative; bound 10x PyTorch's spread, at least 1e-4):", "",
                  training_table(rows), "", "Step time (median after the first step) and peak RSS:", "",
                  perf_table(rows)]
    return "\n".join(parts) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="", help="comma-separated names (default: all)")
    parser.add_argument("--size", choices=("small", "full"), default="small")
    parser.add_argument("--opset", type=int, default=13, help="ONNX opset, 13 (default) to 17")
    parser.add_argument("--steps", type=int, default=5, help="training steps (default 5)")
    parser.add_argument("--threads", type=int, default=2, help="threads for both (default 2)")
    parser.add_argument("--coverage", action="store_true", help="only export and compile every model")
    parser.add_argument("--markdown", nargs="?", const="-", metavar="OUT.md",
                        help="write the markdown report to OUT.md (default: stdout)")
    parser.add_argument("--json", metavar="OUT", help="write every measurement to OUT")
    parser.add_argument("--workdir", help="keep models, data, executables and logs here (default: a temp dir)")
    parser.add_argument("--tidalc", default=os.path.join(REPO, "build", "bin", "tidalc"))
    parser.add_argument("--wait-idle", type=float, default=0.0, metavar="S",
                        help="before each timed run wait up to S seconds for the machine to calm down")
    # The PyTorch child (internal).
    parser.add_argument("--_torch-child", dest="torch_child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--optimizer", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.torch_child:
        return torch_child(args)
    _quiet()
    import torch
    import torchvision

    from tidal import real_models

    models = [m for m in args.models.split(",") if m] or real_models.names()
    unknown = [m for m in models if m not in real_models.MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)} (have: {', '.join(real_models.names())})")
    if not 7 <= args.opset <= 17:
        parser.error("--opset must be within 7..17 (torch 1.13's exporter)")
    if not os.access(args.tidalc, os.X_OK):
        parser.error(f"no tidalc at {args.tidalc} (--tidalc)")
    cpu_train.WAIT_IDLE_S = args.wait_idle
    torch.set_num_threads(args.threads)  # the in-process float32/float64 reference runs
    workdir = args.workdir or tempfile.mkdtemp(prefix="tidal-real-")
    info = cpu_train.machine_info()
    info.update({"torch": torch.__version__, "torchvision": torchvision.__version__, "size": args.size,
                 "opset": args.opset, "steps": args.steps, "threads": args.threads, "coverage": args.coverage})
    rows = []
    try:
        for name in models:
            t0 = time.perf_counter()
            result, perf = measure(name, args, os.path.join(workdir, name))
            row = result_json(result, perf)
            row["wall_s"] = time.perf_counter() - t0
            rows.append(row)
            print(f"# {name}: {row['failure']} ({row['wall_s']:.0f} s)", file=sys.stderr, flush=True)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    info["loadavg_at_end"] = os.getloadavg()
    text = report(rows, info, args)
    if args.markdown and args.markdown != "-":
        with open(args.markdown, "w") as f:
            f.write(text)
    else:
        print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
