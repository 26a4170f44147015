#!/usr/bin/python3
"""Fused element-wise chains against the unfused program (tidal-fuse-elementwise).

    /usr/bin/python3 bench/fusion.py [--zoo a,b] [--real a,b] [--threads 2]
        [--steps 60] [--rounds 9] [--markdown] [--json OUT] [--tidalc PATH]
        [--workdir DIR]

For each model: compiles the cpu-target training executable twice, with
`--fuse-elementwise on` (the default) and `off`, counts the fused ops and
the element-wise ops they replaced (`--emit mlir --stop-after
tidal-fuse-elementwise`), the arena bytes and kernel calls of both plans
(`--emit plan`),
checks that both executables give the same losses bit for bit, then runs
them alternately `--rounds` times for `--steps` steps each at `--threads`
and reports each one's median step time (steps after the first tenth; the
fastest round's, since step times here move between runs of the same
executable by up to 2x) and the ratio fused / unfused (the median over the
rounds of each round's ratio: both run back to back in every round). The peer is the
unfused program of the same compiler on the same machine in the same run.

Zoo models are tidal.training's cases (their batch, data and optimizer);
real models are tidal.real_models' (`--size small`, SGD with momentum, the
suite's batch). See bench/README.md, "Fused element-wise chains".
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))

from tidal import training  # noqa: E402

ZOO = "resnet20_momentum,mobilenet_mini14_momentum,transformer13_adamw,activation_mlp_adamw"
REAL = "lstm,gru,gpt2,transformer_encoder,bert,vit,mobilenet_v2,resnet18,efficientnet_b0,convnext_tiny"


def prepare_zoo(name, work):
    case = training.CASES_BY_NAME[name]
    model = os.path.join(work, "model.onnx")
    training.export_case(case, model)
    return model, training.tidalc_flags(case), training.write_inputs(case, work)


def prepare_real(name, work, steps):
    from tidal import real_models, real_training
    import onnx
    model = os.path.join(work, "model.onnx")
    proto = real_models.export(name, model)
    c = real_training.case(name, "sgd", steps)
    flags = training.tidalc_flags(c)
    freeze = real_training.freeze_list(name, proto, real_training.onnx_name_map(name, proto))
    if freeze:
        flags += ["--freeze", ",".join(freeze)]
    inputs = real_training.write_data(name, work, c.batch * steps)
    del onnx
    return model, flags, inputs


def run(argv, timeout=900):
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])} ...: exit {proc.returncode}: {proc.stderr.strip()[-400:]}")
    return proc


def fusion_counts(tidalc, model, flags):
    text = run([tidalc, model, "--emit", "mlir", "--stop-after", "tidal-fuse-elementwise"] + flags).stdout
    programs = re.findall(r"tidal\.fused_elementwise [^{]*\{outputs = array<i64: [^>]*>, program = array<i64: ([^>]*)>",
                          text)
    return len(programs), sum(len(p.split(",")) // 4 for p in programs)


def plan_figures(tidalc, model, flags, mode, work):
    """The plan's arena bytes and kernel calls per step."""
    out = os.path.join(work, f"plan-{mode}.json")
    run([tidalc, model, "-o", out, "--emit", "plan", "--fuse-elementwise", mode] + flags)
    with open(out) as f:
        plan = json.load(f)
    arena = plan["predicted"]["peak_device_bytes"] or plan["predicted"]["peak_host_bytes"]
    return arena, sum(1 for op in plan["schedule"] if op.get("kernel"))


def train(exe, inputs, steps, threads, log):
    if os.path.exists(log):
        os.remove(log)
    run([exe] + inputs + ["--steps", str(steps), "--threads", str(threads), "--log", log, "--quiet"])
    with open(log) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    return [l["loss"] for l in lines], [float(l["step_ms"]) for l in lines]


def measure(name, kind, args, work):
    os.makedirs(work, exist_ok=True)
    if kind == "zoo":
        model, flags, inputs = prepare_zoo(name, work)
    else:
        model, flags, inputs = prepare_real(name, work, args.steps)
    groups, fused_ops = fusion_counts(args.tidalc, model, flags)
    row = {"model": name, "kind": kind, "groups": groups, "fused_ops": fused_ops}
    exes = {}
    for mode in ("on", "off"):
        exes[mode] = os.path.join(work, f"train-{mode}")
        run([args.tidalc, model, "-o", exes[mode], "--fuse-elementwise", mode] + flags)
        row[f"arena_{mode}"], row[f"calls_{mode}"] = plan_figures(args.tidalc, model, flags, mode, work)
    medians = {"on": [], "off": []}
    losses = {}
    skip = max(1, args.steps // 10)
    for r in range(args.rounds):
        for mode in (("on", "off") if r % 2 == 0 else ("off", "on")):
            loss, ms = train(exes[mode], inputs, args.steps, args.threads, os.path.join(work, f"log-{mode}.jsonl"))
            losses[mode] = loss
            medians[mode].append(statistics.median(ms[skip:]))
    row["same_losses"] = losses["on"] == losses["off"]
    # This machine's step times are bimodal between runs of one executable
    # (bench/README.md): the fastest round's median is the stable figure.
    row["fused_ms"] = min(medians["on"])
    row["unfused_ms"] = min(medians["off"])
    # Each round runs both back to back: the median of the rounds' ratios
    # is robust to the machine drifting between rounds.
    row["ratio"] = statistics.median(a / b for a, b in zip(medians["on"], medians["off"]))
    row["rounds_ms"] = medians
    return row


def markdown(rows):
    out = ["| model | fused ops (ops replaced) | kernel calls fused / unfused | fused ms/step | unfused ms/step | "
           "fused / unfused | arena fused / unfused KiB | losses equal |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['model']} | error: {r['error'][:120]} | | | | | | |")
            continue
        out.append(f"| {r['model']} | {r['groups']} ({r['fused_ops']}) | {r['calls_on']} / {r['calls_off']} | "
                   f"{r['fused_ms']:.3f} | {r['unfused_ms']:.3f} | "
                   f"{r['ratio']:.3f} | {r['arena_on'] / 1024:.0f} / {r['arena_off'] / 1024:.0f} | "
                   f"{'yes' if r['same_losses'] else 'NO'} |")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--zoo", default=ZOO, help=f"tidal.training cases (default {ZOO}); '' for none")
    p.add_argument("--real", default=REAL, help="tidal.real_models names; '' for none")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--json", metavar="OUT")
    p.add_argument("--tidalc", default=os.path.join(REPO, "build", "bin", "tidalc"))
    p.add_argument("--workdir")
    args = p.parse_args(argv)
    work = args.workdir or tempfile.mkdtemp(prefix="tidal-fusion-")
    rows = []
    models = [(n, "zoo") for n in args.zoo.split(",") if n] + [(n, "real") for n in args.real.split(",") if n]
    for name, kind in models:
        try:
            row = measure(name, kind, args, os.path.join(work, name))
        except (RuntimeError, subprocess.TimeoutExpired) as err:
            row = {"model": name, "kind": kind, "error": str(err)}
        rows.append(row)
        if "error" in row:
            print(f"{name}: {row['error']}", file=sys.stderr, flush=True)
        else:
            print(f"{name}: {row['groups']} fused ops ({row['fused_ops']} replaced), fused {row['fused_ms']:.3f} ms, "
                  f"unfused {row['unfused_ms']:.3f} ms, ratio {row['ratio']:.3f}, losses equal {row['same_losses']}",
                  file=sys.stderr, flush=True)
    if args.markdown:
        print(markdown(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "steps": args.steps, "rounds": args.rounds, "rows": rows}, f, indent=1)
    return 0 if all("error" not in r and r["same_losses"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
