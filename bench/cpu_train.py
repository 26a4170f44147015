#!/usr/bin/python3
"""CPU training benchmark: tidal's generated executable against PyTorch.

    /usr/bin/python3 bench/cpu_train.py [--models lenet,vgg_bn,resnet20]
        [--batch 32] [--threads N] [--steps 30] [--warmup 5] [--batches 32]
        [--isa default|avx2|default,avx2] [--repeat R] [--wait-idle S]
        [--profile] [--json OUT] [--workdir DIR] [--tidalc PATH]

For each zoo model: export it to ONNX (tidal.export, training mode), write a
synthetic data set (fixed seed: `--batches` batches of standard-normal
images and uniform labels), compile it with tidalc (cross-entropy, SGD with
momentum 0.9, lr 0.01), run the executable as a subprocess and, in another
subprocess, the same model in PyTorch (same initial weights, optimizer,
hyper-parameters, batches and thread count; a plain loop: zero_grad,
forward, cross-entropy, backward, step). Per-step time is the median over the
steps after `--warmup` (ours: the driver's `step_ms` from --log; PyTorch:
wall time of one loop iteration, loss.item() included); with --repeat, the
fastest of the per-run medians. Peak RSS is each child's ru_maxrss from
os.wait4, taken by a small launcher process (see `launcher`).

RSS above baseline: PyTorch's baseline is the child's VmRSS just before the
first step (after imports, model and optimizer construction and data
loading). Ours is the peak RSS of the same executable run with the same
inputs but stopped before the program is loaded: it gets `--save
<missing dir>/x.onnx`, which the driver rejects right after reading the
data and before it allocates the arenas or loads the weights.

--profile adds, per model, the time per step of every oneDNN primitive kind
on both sides (ONEDNN_VERBOSE exec lines) and PyTorch's autograd-profiler
top ops. See bench/README.md for results and their reading.

This is a benchmark, not a test: nothing here runs in the test suite.
"""

import argparse
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))

DEFAULT_MODELS = ["lenet", "vgg_bn", "resnet20"]
LR = 0.01
MOMENTUM = 0.9
DATA_SEED = 1234
# --isa NAME -> environment for both children. oneDNN 2.6 reads both the
# ONEDNN_ and the older DNNL_ spelling; ATEN_CPU_CAPABILITY caps PyTorch's own
# vectorised kernels (this Debian build already stops at AVX2).
ISA_ENV = {
    "default": {},
    "avx2": {"ONEDNN_MAX_CPU_ISA": "AVX2", "DNNL_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"},
}


def case_for(model: str, batch: int, steps: int):
    """The training.Case describing the benchmark's training setup."""
    from tidal import training

    return training.Case(f"bench_{model}", model, "synthetic", "cross-entropy", "sgd",
                         {"lr": LR, "momentum": MOMENTUM}, batch=batch, steps=steps)


def vm_rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


# --- the PyTorch child ----------------------------------------------------------------


def torch_child(args) -> int:
    """Runs in its own process: trains the zoo model, writes a JSON result."""
    import numpy as np
    import torch

    torch.set_num_threads(args.threads)
    from tidal import training, zoo

    case = case_for(args.model, args.batch, args.steps)
    model = zoo.build(args.model)  # seeded, train mode: the exported weights
    opt = training.make_optimizer(case, model.parameters())
    x = torch.from_numpy(np.load(os.path.join(args.data, "input.npy")))
    y = torch.from_numpy(np.load(os.path.join(args.data, "label.npy")))
    rows = list(training.batch_rows(len(y), args.batch, args.steps))
    baseline_kib = vm_rss_kib()
    baseline_max_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    step_ms, losses = [], []
    for r in rows:
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = training.loss_fn(case, model(x[r]), y[r])
        loss.backward()
        opt.step()
        value = loss.item()
        step_ms.append((time.perf_counter() - t0) * 1e3)
        losses.append(value)
    ops = None
    if args.profile_ops:
        # Per-op self CPU time over a few more steps (not timed above).
        with torch.autograd.profiler.profile() as prof:
            for r in rows[: args.profile_ops]:
                opt.zero_grad()
                loss = training.loss_fn(case, model(x[r]), y[r])
                loss.backward()
                opt.step()
                loss.item()
        ops = sorted(([e.key, e.self_cpu_time_total / 1e3 / args.profile_ops, e.count / args.profile_ops]
                      for e in prof.key_averages()), key=lambda e: -e[1])
    result = {
        "step_ms": step_ms,
        "losses": losses,
        "ops": ops,
        "baseline_rss_kib": baseline_kib,
        "baseline_maxrss_kib": baseline_max_kib,
        "final_rss_kib": vm_rss_kib(),
        "torch_threads": torch.get_num_threads(),
        "torch_version": torch.__version__,
    }
    with open(args.result, "w") as f:
        json.dump(result, f)
    return 0


# --- running children ------------------------------------------------------------------


def cpu_jiffies():
    """(busy, total) jiffies of the whole machine from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:9]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


HZ = os.sysconf("SC_CLK_TCK")


def foreign_load(window_s=1.0):
    """The fraction of the machine's CPUs busy over `window_s` (this process idle)."""
    b0, t0 = cpu_jiffies()
    time.sleep(window_s)
    b1, t1 = cpu_jiffies()
    return (b1 - b0) / max(1, t1 - t0)


WAIT_IDLE_S = 0.0
IDLE_BELOW = 0.25


def wait_idle():
    """With --wait-idle, waits (up to that long) for the other work to calm down."""
    deadline = time.monotonic() + WAIT_IDLE_S
    load = None
    while time.monotonic() < deadline:
        load = foreign_load()
        if load < IDLE_BELOW:
            break
    return load


# A child forked from this process would inherit its peak RSS (Linux keeps
# the high-water mark of the pre-exec image in ru_maxrss, and this process
# holds PyTorch: ~230 MiB), so children start from a small launcher that
# forks, execs and reports the grandchild's os.wait4 rusage. GNU time's floor
# is ~1 MiB; the fallback Python launcher's (python3 -S) ~5 MiB.
_PY_LAUNCHER = """
import os, sys
out, argv = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    try:
        os.execv(argv[0], argv)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
with open(out, "w") as f:
    f.write("%d %f %f\\n" % (ru.ru_maxrss, ru.ru_utime, ru.ru_stime))
sys.exit(os.waitstatus_to_exitcode(status) & 255)
"""


def launcher(usage_file):
    if os.access("/usr/bin/time", os.X_OK):
        return ["/usr/bin/time", "-f", "%M %U %S", "-o", usage_file]
    return [sys.executable, "-S", "-c", _PY_LAUNCHER, usage_file]


def run_child(cmd, env, log_prefix, timed=True):
    """Runs cmd; returns (exit status, peak RSS KiB, wall s, stderr text, other load).

    `other load`: the fraction of the machine's CPU time that went to other
    processes while the child ran (busy jiffies minus the child's own CPU
    time, over wall time x CPUs): a noise indicator.
    """
    if timed:
        wait_idle()
    usage_file = log_prefix + ".rusage"
    with open(log_prefix + ".out", "w") as out, open(log_prefix + ".err", "w") as err:
        b0, j0 = cpu_jiffies()
        t0 = time.perf_counter()
        rc = subprocess.run(launcher(usage_file) + list(cmd), env=env, stdout=out, stderr=err).returncode
        wall = time.perf_counter() - t0
        b1, j1 = cpu_jiffies()
    with open(log_prefix + ".err") as f:
        err_text = f.read()
    with open(usage_file) as f:
        # GNU time prefixes "Command exited with non-zero status N" lines.
        maxrss, utime, stime = f.read().split()[-3:]
    own = float(utime) + float(stime)
    other = max(0.0, ((b1 - b0) / HZ - own) / max(1e-9, (j1 - j0) / HZ)) if j1 > j0 else None
    return rc, int(maxrss), wall, err_text, other


def child_env(threads, isa):
    env = dict(os.environ)
    for key in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY", "OMP_NUM_THREADS"):
        env.pop(key, None)
    env.update(ISA_ENV[isa])
    env["OMP_NUM_THREADS"] = str(threads)
    return env


def median_after(values, warmup):
    tail = values[warmup:] if len(values) > warmup else values
    return statistics.median(tail) if tail else float("nan")


def run_ours(exe, data_flags, args, isa, workdir, tag, threads=None):
    """`threads`: the --threads value (default: args.threads, a fixed count;
    "auto" adapts to the load up to args.threads)."""
    log = os.path.join(workdir, f"log-{tag}.jsonl")
    if os.path.exists(log):
        os.remove(log)
    cmd = [exe] + data_flags + ["--steps", str(args.steps), "--threads", str(threads or args.threads),
                                "--log", log, "--quiet"]
    env = child_env(args.threads, isa)
    rc, maxrss, wall, err, other = run_child(cmd, env, os.path.join(workdir, f"ours-{tag}"))
    if rc != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({rc}): {err.strip()}")
    with open(log) as f:
        entries = [json.loads(line) for line in f if line.strip()]
    # Baseline: the same run stopped right after the data are read.
    bad_save = os.path.join(workdir, "no-such-dir", "x.onnx")
    base_cmd = [exe] + data_flags + ["--steps", "0", "--threads", str(args.threads), "--save", bad_save, "--quiet"]
    brc, base_rss, _, berr, _ = run_child(base_cmd, env, os.path.join(workdir, f"ours-base-{tag}"), timed=False)
    baseline = base_rss if brc == 1 and "cannot write" in berr else None
    return {
        "cmd": cmd,
        "step_ms": [e["step_ms"] for e in entries],
        "losses": [e["loss"] for e in entries],
        "threads": [e.get("threads", 0) for e in entries],
        "host_peak_bytes": max((e.get("host_peak_bytes", 0) for e in entries), default=0),
        "peak_rss_kib": maxrss,
        "baseline_rss_kib": baseline,
        "wall_s": wall,
        "other_load": other,
    }


def run_torch(data_dir, model, args, isa, workdir, tag, steps=None, extra_env=None, profile_ops=0):
    result = os.path.join(workdir, f"torch-{tag}.json")
    cmd = [sys.executable, os.path.abspath(__file__), "--_torch-child", "--model", model, "--data", data_dir,
           "--batch", str(args.batch), "--steps", str(steps or args.steps), "--threads", str(args.threads),
           "--result", result]
    if profile_ops:
        cmd += ["--profile-ops", str(profile_ops)]
    env = child_env(args.threads, isa)
    env.update(extra_env or {})
    rc, maxrss, wall, err, other = run_child(cmd, env, os.path.join(workdir, f"torch-{tag}"))
    if rc != 0:
        raise RuntimeError(f"PyTorch child for {model} failed ({rc}): {err.strip()}")
    with open(result) as f:
        out = json.load(f)
    out.update({"cmd": cmd, "peak_rss_kib": maxrss, "wall_s": wall, "other_load": other})
    return out


# --- --profile: where the time goes -------------------------------------------------------

VERBOSE_ENV = {"ONEDNN_VERBOSE": "1", "DNNL_VERBOSE": "1"}
PROFILE_STEPS = 5


def onednn_execs(path):
    """(primitive kind, implementation, prop kind, ms) of each oneDNN verbose exec line."""
    out = []
    with open(path) as f:
        for line in f:
            if line.startswith(("onednn_verbose,exec,cpu,", "dnnl_verbose,exec,cpu,")):
                fields = line.rstrip("\n").split(",")
                try:
                    out.append((fields[3], fields[4], fields[5], float(fields[-1])))
                except (IndexError, ValueError):
                    pass
    return out


def onednn_isa(path):
    with open(path) as f:
        for line in f:
            if ",info,cpu,isa:" in line:
                return line.strip().split("isa:", 1)[1]
    return None


def aggregate(execs, per_step, steps):
    """{kind: [ms per step, calls per step, implementations]} over the last `steps` steps.

    Each step runs the same sequence of primitives; every position's time is
    the median over the steps, so one preempted call does not skew the sum.
    """
    if not per_step or len(execs) < per_step * steps:
        return {}
    tail = execs[len(execs) - per_step * steps:]
    agg = {}
    for i in range(per_step):
        kind, impl, prop, _ = tail[i]
        ms = statistics.median(tail[k * per_step + i][3] for k in range(steps))
        key = f"{kind} {prop}" if prop != "undef" else kind
        a = agg.setdefault(key, [0.0, 0, set()])
        a[0] += ms
        a[1] += 1
        a[2].add(impl)
    return {k: [v[0], v[1], sorted(v[2])] for k, v in agg.items()}


def profile_model(model, exe, flags, ddir, args, isa, workdir):
    """oneDNN primitive time per step (ONEDNN_VERBOSE) for both, and PyTorch's op profile."""
    steps = args.warmup + PROFILE_STEPS
    tag = f"{model}-{isa}-t{args.threads}-profile"
    env = child_env(args.threads, isa)
    env.update(VERBOSE_ENV)
    counts = {}
    for n in (0, steps):
        prefix = os.path.join(workdir, f"ours-{tag}-{n}")
        cmd = [exe] + flags + ["--steps", str(n), "--threads", str(args.threads), "--quiet"]
        rc, _, _, err, _ = run_child(cmd, env, prefix, timed=(n > 0))
        if rc != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({rc}): {err.strip()}")
        counts[n] = onednn_execs(prefix + ".out")
    ours_per_step = (len(counts[steps]) - len(counts[0])) // steps
    ours = aggregate(counts[steps], ours_per_step, PROFILE_STEPS)
    t = run_torch(ddir, model, args, isa, workdir, tag, steps=steps, extra_env=VERBOSE_ENV,
                  profile_ops=PROFILE_STEPS)
    texecs = onednn_execs(os.path.join(workdir, f"torch-{tag}.out"))
    torch_per_step = len(texecs) // (steps + PROFILE_STEPS)  # the timed steps, then the profiled ones
    theirs = aggregate(texecs, torch_per_step, PROFILE_STEPS)
    return {"model": model, "isa": isa, "ours_onednn": ours, "torch_onednn": theirs,
            "ours_onednn_isa": onednn_isa(os.path.join(workdir, f"ours-{tag}-{steps}.out")),
            "torch_onednn_isa": onednn_isa(os.path.join(workdir, f"torch-{tag}.out")),
            "ours_execs_per_step": ours_per_step, "torch_execs_per_step": torch_per_step,
            "torch_ops": (t.get("ops") or [])[:25]}


def profile_table(prof, row):
    keys = sorted(set(prof["ours_onednn"]) | set(prof["torch_onednn"]),
                  key=lambda k: -max(prof["ours_onednn"].get(k, [0])[0], prof["torch_onednn"].get(k, [0])[0]))
    lines = [f"#### {prof['model']} [{prof['isa']}]: oneDNN primitive time per step (ONEDNN_VERBOSE)", "",
             f"oneDNN ISA: ours {prof['ours_onednn_isa'] or 'oneDNN not used'};"
             f" torch {prof['torch_onednn_isa'] or 'oneDNN not used'}", "",
             "| primitive | ours ms (calls) | torch ms (calls) |", "|---|---|---|"]
    tot = [0.0, 0.0]
    for k in keys:
        o = prof["ours_onednn"].get(k)
        t = prof["torch_onednn"].get(k)
        tot[0] += o[0] if o else 0.0
        tot[1] += t[0] if t else 0.0
        cell = lambda v: "-" if not v else f"{v[0]:.2f} ({v[1]:.0f}) {'/'.join(v[2])}"
        lines.append(f"| {k} | {cell(o)} | {cell(t)} |")
    lines.append(f"| **all oneDNN** | {tot[0]:.2f} | {tot[1]:.2f} |")
    if row:
        lines.append(f"| **rest of the step** (median step - oneDNN) | {row['ours_ms'] - tot[0]:.2f}"
                     f" | {row['torch_ms'] - tot[1]:.2f} |")
    lines += ["", "PyTorch's top ops (self CPU ms per step, autograd profiler):", "",
              "| op | ms | calls |", "|---|---|---|"]
    for name, ms, calls in prof["torch_ops"][:15]:
        lines.append(f"| {name} | {ms:.2f} | {calls:.0f} |")
    return "\n".join(lines)


# --- preparing a model ---------------------------------------------------------------------


def prepare_model(model, args, workdir):
    """Exports, writes the data and compiles; returns (exe, data flags, data dir)."""
    import numpy as np
    from tidal import export, training, zoo

    mdir = os.path.join(workdir, model)
    os.makedirs(mdir, exist_ok=True)
    onnx_path = os.path.join(mdir, "model.onnx")
    if not os.path.exists(onnx_path):
        export.export(model, onnx_path)
    entry = zoo.MODELS[model]
    (name, shape, _), = entry.inputs
    n = args.batches * args.batch
    rng = np.random.default_rng(DATA_SEED)
    x = rng.standard_normal((n,) + tuple(shape), dtype=np.float32)
    y = rng.integers(0, entry.classes, n, dtype=np.int64)
    ddir = os.path.join(mdir, f"data-b{args.batch}")
    os.makedirs(ddir, exist_ok=True)
    np.save(os.path.join(ddir, "input.npy"), x)
    np.save(os.path.join(ddir, "label.npy"), y)
    flags = ["--input", f"{name}={os.path.join(ddir, 'input.npy')}",
             "--input", f"label={os.path.join(ddir, 'label.npy')}"]
    exe = os.path.join(mdir, f"train-b{args.batch}")
    cmd = [args.tidalc, onnx_path, "-o", exe] + training.tidalc_flags(case_for(model, args.batch, args.steps))
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return exe, flags, ddir, cmd, time.perf_counter() - t0


# --- reporting --------------------------------------------------------------------------------------


def machine_info():
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            cpu = m.group(1).strip() if m else cpu
    except OSError:
        pass
    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^flags\s*:\s*(.*)$", f.read(), re.M)
            flags = m.group(1) if m else ""
    except OSError:
        pass
    isa = "avx512" if "avx512f" in flags.split() else ("avx2" if "avx2" in flags.split() else "other")
    rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True)
    return {
        "cpu": cpu,
        "cores": len(os.sched_getaffinity(0)),
        "cpu_isa": isa,
        "kernel": platform.release(),
        "loadavg_at_start": os.getloadavg(),
        "tidal_rev": rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else ""),
    }


def mib(kib):
    return None if kib is None else kib / 1024.0


def fmt(value, spec="{:.1f}"):
    return "n/a" if value is None else spec.format(value)


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def summarise(model, isa, args, ours_runs, torch_runs):
    ours_med = [median_after(r["step_ms"], args.warmup) for r in ours_runs]
    torch_med = [median_after(r["step_ms"], args.warmup) for r in torch_runs]
    ours_peak = min(r["peak_rss_kib"] for r in ours_runs)
    torch_peak = min(r["peak_rss_kib"] for r in torch_runs)
    bases = [r["baseline_rss_kib"] for r in ours_runs if r["baseline_rss_kib"] is not None]
    ours_base = min(bases) if bases else None
    torch_base = min(r["baseline_rss_kib"] for r in torch_runs)
    ours_above = None if ours_base is None else ours_peak - ours_base
    torch_above = torch_peak - torch_base
    o, t = min(ours_med), min(torch_med)
    return {
        "model": model,
        "isa": isa,
        "batch": args.batch,
        "threads": args.threads,
        "ours_ms": o,
        "torch_ms": t,
        "time_ratio": ratio(o, t),
        "ours_ms_repeats": ours_med,
        "torch_ms_repeats": torch_med,
        "ours_peak_mib": mib(ours_peak),
        "torch_peak_mib": mib(torch_peak),
        "rss_ratio": ratio(ours_peak, torch_peak),
        "ours_baseline_mib": mib(ours_base),
        "torch_baseline_mib": mib(torch_base),
        "ours_above_mib": mib(ours_above),
        "torch_above_mib": mib(torch_above),
        "above_ratio": ratio(ours_above, torch_above),
        # The median over the runs: a short run's figure is coarse (jiffies).
        "other_load": statistics.median((r["other_load"] or 0.0) for r in ours_runs + torch_runs),
        "ours_host_peak_bytes_logged": ours_runs[0]["host_peak_bytes"],
        "first_loss_ours": ours_runs[0]["losses"][0] if ours_runs[0]["losses"] else None,
        "first_loss_torch": torch_runs[0]["losses"][0] if torch_runs[0]["losses"] else None,
        "last_loss_ours": ours_runs[0]["losses"][-1] if ours_runs[0]["losses"] else None,
        "last_loss_torch": torch_runs[0]["losses"][-1] if torch_runs[0]["losses"] else None,
    }


def table(rows):
    head = ("| model | ISA | ours ms/step | torch ms/step | time ours/torch | ours peak RSS MiB | torch peak RSS MiB"
            " | RSS ours/torch | ours above base MiB | torch above base MiB | above-base ours/torch | loss[0] ours / torch"
            " | other load |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['isa']} | {fmt(r['ours_ms'], '{:.2f}')} | {fmt(r['torch_ms'], '{:.2f}')}"
            f" | {fmt(r['time_ratio'], '{:.2f}')} | {fmt(r['ours_peak_mib'])} | {fmt(r['torch_peak_mib'])}"
            f" | {fmt(r['rss_ratio'], '{:.3f}')} | {fmt(r['ours_above_mib'])} | {fmt(r['torch_above_mib'])}"
            f" | {fmt(r['above_ratio'], '{:.2f}')} | {fmt(r['first_loss_ours'], '{:.5f}')}"
            f" / {fmt(r['first_loss_torch'], '{:.5f}')} | {r['other_load'] * 100:.0f}% |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS),
                        help=f"comma-separated zoo names (default {','.join(DEFAULT_MODELS)}; mlp also works)")
    parser.add_argument("--batch", type=int, default=32, help="batch size (default 32)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="threads for both (default: all cores this process may use)")
    parser.add_argument("--steps", type=int, default=30, help="training steps per run (default 30)")
    parser.add_argument("--warmup", type=int, default=5, help="steps left out of the median (default 5)")
    parser.add_argument("--batches", type=int, default=32, help="batches in the synthetic data set (default 32)")
    parser.add_argument("--isa", default="default",
                        help="comma-separated: default, avx2 (ONEDNN_MAX_CPU_ISA=AVX2 for both) (default: default)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each pair this many times, interleaved; report the fastest median (default 1)")
    parser.add_argument("--wait-idle", type=float, default=0.0, metavar="S",
                        help=f"before each run wait up to S seconds until under {IDLE_BELOW * 100:.0f}%% of the CPUs are busy")
    parser.add_argument("--profile", action="store_true",
                        help="also break each step down by oneDNN primitive (ONEDNN_VERBOSE) and PyTorch op")
    parser.add_argument("--json", metavar="OUT", help="write every measurement to OUT")
    parser.add_argument("--workdir", help="keep models, data, executables and logs here (default: a temp dir)")
    parser.add_argument("--tidalc", default=os.path.join(REPO, "build", "bin", "tidalc"),
                        help="the compiler (default build/bin/tidalc)")
    # The PyTorch child (internal).
    parser.add_argument("--_torch-child", dest="torch_child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    parser.add_argument("--profile-ops", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.torch_child:
        return torch_child(args)

    from tidal import zoo

    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in zoo.MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)} (zoo: {', '.join(zoo.MODELS)})")
    isas = [i for i in args.isa.split(",") if i]
    if any(i not in ISA_ENV for i in isas):
        parser.error(f"--isa takes {', '.join(ISA_ENV)}")
    if args.steps <= args.warmup:
        parser.error("--steps must exceed --warmup")
    global WAIT_IDLE_S
    WAIT_IDLE_S = args.wait_idle
    workdir = args.workdir or tempfile.mkdtemp(prefix="tidal-bench-")
    os.makedirs(workdir, exist_ok=True)

    info = machine_info()
    info.update({"threads": args.threads, "batch": args.batch, "steps": args.steps, "warmup": args.warmup,
                 "batches": args.batches, "repeat": args.repeat, "optimizer": f"sgd lr={LR} momentum={MOMENTUM}"})
    print(f"# machine: {info['cpu']}, {info['cores']} cores ({info['cpu_isa']}), load average at start "
          f"{' '.join(f'{x:.2f}' for x in info['loadavg_at_start'])}; tidal {info['tidal_rev']}", flush=True)
    print(f"# batch {args.batch}, threads {args.threads}, {args.steps} steps ({args.warmup} warm-up),"
          f" {info['optimizer']}, cross-entropy, repeat {args.repeat}", flush=True)

    rows, raw, profiles = [], [], []
    try:
        for model in models:
            exe, flags, ddir, compile_cmd, compile_s = prepare_model(model, args, workdir)
            print(f"# {model}: compiled in {compile_s:.1f}s: {' '.join(compile_cmd)}", file=sys.stderr, flush=True)
            for isa in isas:
                ours_runs, torch_runs = [], []
                for k in range(args.repeat):
                    tag = f"{model}-{isa}-t{args.threads}-{k}"
                    ours_runs.append(run_ours(exe, flags, args, isa, os.path.join(workdir, model), tag))
                    torch_runs.append(run_torch(ddir, model, args, isa, os.path.join(workdir, model), tag))
                row = summarise(model, isa, args, ours_runs, torch_runs)
                rows.append(row)
                raw.append({"summary": row, "compile_cmd": compile_cmd, "ours": ours_runs, "torch": torch_runs})
                if args.profile:
                    profiles.append((profile_model(model, exe, flags, ddir, args, isa, os.path.join(workdir, model)),
                                     row))
                print(f"# {model} [{isa}]: ours {row['ours_ms']:.2f} ms/step, torch {row['torch_ms']:.2f} ms/step",
                      file=sys.stderr, flush=True)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)

    print()
    print(table(rows))
    for prof, row in profiles:
        print()
        print(profile_table(prof, row))
    info["loadavg_at_end"] = os.getloadavg()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "rows": rows, "runs": raw, "profiles": [p for p, _ in profiles]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
