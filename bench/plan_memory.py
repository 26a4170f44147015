#!/usr/bin/python3
"""Memory-plan benchmark: tidalc's planned peak against no reuse, the lower bound and PyTorch.

    /usr/bin/python3 bench/plan_memory.py [--models mlp,lenet,...] [--batch 32]
        [--threads N] [--steps 3] [--out results.json] [--markdown [FILE]]
        [--trace] [--workdir DIR] [--tidalc PATH] [--no-torch] [--validate]

For each zoo model (default: mlp, lenet, vgg_bn, resnet20, resnet56,
resnet110, resnet1202, transformer_block), with cross-entropy and SGD (lr
0.01, momentum 0.9, as bench/cpu_train.py):

1. exports it (tidal.export, training mode, symbolic batch; cached under
   the work directory, keyed on export.py, the model's zoo classes and
   initial weights, the torch version and the opset) and runs `tidalc M.onnx -o plan.json --emit plan --batch-size B
   --loss cross-entropy --optimizer sgd --lr 0.01 --momentum 0.9
   [--trace trace.json]`, timing the tidalc process ("plan time");
2. reads from the plan: `baseline.peak_host_bytes` (no reuse: every tensor
   its own bytes), `lower_bound_bytes`, `predicted.peak_host_bytes` (the
   plan), the tensor and op counts and the strategy fields;
3. measures PyTorch's peak for the same training step, each in a fresh
   child process: the seeded zoo model, torch.optim.SGD(lr=0.01,
   momentum=0.9), a random batch, `--steps` steps of zero_grad(set_to_none=
   True), forward, F.cross_entropy, backward, step:
   (i) allocator peak: each step profiled on its own with
       torch.autograd.profiler.profile(profile_memory=True); the bytes alive
       before it (parameters, gradients, buffers, optimizer state, input and
       label) plus the running sum of the CPU allocator's memory events in
       time order: the peak of live tensor bytes, the CPU analogue of
       torch.cuda.max_memory_allocated;
   (ii) RSS: VmHWM at the end minus VmRSS after the imports and one tiny
       warm-up op, before the model is built (another child, without the
       profiler);
4. prints a table (markdown with --markdown) and writes everything to --out.

`--validate` checks method (i) on cases whose peak is known by hand.
See bench/README.md for the columns and the caveats. This is a benchmark,
not a test: nothing here runs in the test suite.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, BENCH)

DEFAULT_MODELS = ["mlp", "lenet", "vgg_bn", "resnet20", "resnet56", "resnet110", "resnet1202", "transformer_block"]
LR = 0.01
MOMENTUM = 0.9
DATA_SEED = 1234
MIB = 1 << 20
# The allocator events PyTorch's own profiler counts as CPU memory.
CPU_DEVICE_TYPES = ("DeviceType.CPU", "DeviceType.MKLDNN", "DeviceType.IDEEP")
# A torch child is not started unless MemAvailable exceeds its estimated
# need by this much, and is killed if MemAvailable falls under WATCHDOG_FLOOR.
HEADROOM = 1 << 30
WATCHDOG_FLOOR = 512 * MIB


def meminfo():
    """/proc/meminfo as {key: bytes}."""
    out = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, rest = line.split(":", 1)
            fields = rest.split()
            out[key] = int(fields[0]) * (1024 if len(fields) > 1 else 1)
    return out


def proc_status_bytes(key, pid="self"):
    """VmRSS / VmHWM (bytes) from /proc/PID/status, or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


# --- the allocator-event method -------------------------------------------------------------


def memory_events(prof):
    """[(start_us, nbytes)] of the CPU allocator's events, in recording order.

    torch 1.13 (kineto) keeps each allocation and free as an event named
    "[memory]" with nbytes() > 0 (allocation) or < 0 (free). The raw list,
    `prof.kineto_results.events()`, comes in time order, including the
    order of events within the same microsecond (checked: --validate's
    peaks match the figures worked out by hand, and every model's steps
    close to the byte, see alloc_peaks). `prof.function_events` instead
    folds every event inside an op into that op's cpu_memory_usage and
    loses the order within it, so it cannot give a peak. If the list ever
    came unsorted at microsecond resolution, it is stable-sorted here
    (`resorted` reports it).
    """
    evs = [(e.start_us(), e.nbytes()) for e in prof.kineto_results.events()
           if e.name() == "[memory]" and str(e.device_type()) in CPU_DEVICE_TYPES]
    resorted = any(evs[i][0] > evs[i + 1][0] for i in range(len(evs) - 1))
    if resorted:
        evs.sort(key=lambda e: e[0])
    return evs, resorted


def peak_live_bytes(events, alive_before):
    """{"peak", "final", "min"} of alive_before + the running sum of `events`.

    `min` under alive_before would mean frees of memory that alive_before
    did not count.
    """
    live = peak = low = alive_before
    for _, nbytes in events:
        live += nbytes
        peak = max(peak, live)
        low = min(low, live)
    return {"peak": peak, "final": live, "min": low}


def storage_bytes(tensors):
    """Bytes of the distinct storages behind `tensors` (views counted once)."""
    seen, total = set(), 0
    for t in tensors:
        if t is None:
            continue
        storage = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        key = storage.data_ptr()
        if key in seen or storage.nbytes() == 0:
            continue
        seen.add(key)
        total += storage.nbytes()
    return total


def held_tensors(model, opt, inputs):
    """What lives between steps: parameters, their gradients, buffers, optimizer state, the batch."""
    import torch

    grads = [p.grad for p in model.parameters() if p.grad is not None]
    state = [v for st in opt.state.values() for v in st.values() if isinstance(v, torch.Tensor)]
    return list(model.parameters()) + grads + list(model.buffers()) + state + list(inputs)


def alloc_peaks(step, model, opt, inputs, steps):
    """Method (i): the peak of live CPU-allocator bytes in each of `steps` calls of step().

    Each step is profiled on its own (torch.autograd.profiler.profile with
    profile_memory=True); its live bytes start at what is alive before it
    (held_tensors: parameters, gradients, buffers, optimizer state, batch)
    and follow the allocator's events. After the step, that start plus the
    events must equal what held_tensors counts again: `unaccounted` is the
    difference (0 when every byte is seen). Returns per-step dicts.
    """
    from torch.autograd import profiler

    out = []
    for _ in range(steps):
        before = storage_bytes(held_tensors(model, opt, inputs))
        with profiler.profile(profile_memory=True) as prof:
            loss = step()
        events, resorted = memory_events(prof)
        got = peak_live_bytes(events, before)
        after = storage_bytes(held_tensors(model, opt, inputs))
        out.append({"alive_before": before, "peak": got["peak"], "min": got["min"], "alive_after": after,
                    "unaccounted": got["final"] - after, "events": len(events), "resorted": resorted,
                    "loss": loss})
    return out


# --- the PyTorch child ---------------------------------------------------------------------


def torch_child(args) -> int:
    """Runs in its own process: `args.child` steps, one measurement; writes JSON to args.result."""
    import torch
    import torch.nn.functional as F

    from tidal import training, zoo  # imported before the baseline: not training memory

    torch.set_num_threads(args.threads)
    float((torch.ones(16) * 2).sum())  # the warm-up op: first-use allocations of the runtime
    base_rss = proc_status_bytes("VmRSS")
    base_hwm = proc_status_bytes("VmHWM")

    model = zoo.build(args.model)
    opt = training.make_optimizer(case_for(args.model, args.batch), model.parameters())
    (_, shape, _), = zoo.MODELS[args.model].inputs
    gen = torch.Generator().manual_seed(DATA_SEED)
    x = torch.randn((args.batch,) + tuple(shape), generator=gen)
    label_shape = (args.batch,) + tuple(json.loads(args.label_shape))
    y = torch.randint(0, args.classes, label_shape, generator=gen, dtype=torch.int64)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return float(loss)

    result = {"model": args.model, "mode": args.child, "batch": args.batch, "steps": args.steps,
              "threads": torch.get_num_threads(), "torch_version": torch.__version__,
              "baseline_rss_bytes": base_rss, "baseline_hwm_bytes": base_hwm,
              "param_bytes": storage_bytes(model.parameters()), "buffer_bytes": storage_bytes(model.buffers()),
              "batch_bytes": storage_bytes([x, y])}
    t0 = time.perf_counter()
    if args.child == "alloc":
        steps = alloc_peaks(step, model, opt, (x, y), args.steps)
        result.update({"alloc_peak_bytes": max(s["peak"] for s in steps), "alloc_steps": steps,
                       "losses": [s["loss"] for s in steps]})
    else:
        losses = [step() for _ in range(args.steps)]
        hwm = proc_status_bytes("VmHWM")
        result.update({"peak_hwm_bytes": hwm, "final_rss_bytes": proc_status_bytes("VmRSS"),
                       "rss_above_baseline_bytes": hwm - base_rss, "losses": losses})
    result["seconds"] = time.perf_counter() - t0
    with open(args.result, "w") as f:
        json.dump(result, f)
    return 0


def case_for(model, batch):
    from tidal import training

    return training.Case(f"plan_{model}", model, "synthetic", "cross-entropy", "sgd",
                         {"lr": LR, "momentum": MOMENTUM}, batch=batch, steps=1)


def probe_model(model, batch):
    """(label shape without the batch, classes, estimated PyTorch peak bytes) for `model`.

    Runs the model in eval mode on 2 samples (BatchNorm statistics do not
    move) with forward hooks: F.cross_entropy takes class indices shaped
    like the output without dim 1 (the classes), as tidalc's cross-entropy
    does. The estimate (to decide whether the child fits in memory) is
    4 x the parameters (weights, gradients, momentum, slack) plus 1.5 x the
    bytes of every leaf module's output at `batch`, plus 400 MiB for the
    process (ResNet-1202 at batch 32: module outputs 3.4 GiB, allocator
    peak 2.9 GiB, RSS 3.3 GiB above the baseline; estimate 5.8 GiB).
    """
    import torch

    from tidal import zoo

    net = zoo.build(model).eval()
    (_, shape, _), = zoo.MODELS[model].inputs
    outputs = [0]

    def hook(_module, _inputs, out):
        if isinstance(out, torch.Tensor):
            outputs[0] += out.numel() * out.element_size()

    handles = [m.register_forward_hook(hook) for m in net.modules() if not list(m.children())]
    with torch.no_grad():
        out = net(torch.zeros((2,) + tuple(shape)))
    for h in handles:
        h.remove()
    params = sum(p.numel() * p.element_size() for p in net.parameters())
    estimate = 4 * params + 3 * outputs[0] * batch // 4 + 400 * MIB
    return list(out.shape[2:]), int(out.shape[1]), estimate


def _watch(proc, state):
    """Kills `proc` if the machine's MemAvailable falls under WATCHDOG_FLOOR."""
    while proc.poll() is None:
        avail = meminfo().get("MemAvailable", 1 << 62)
        if avail < WATCHDOG_FLOOR:
            state["killed"] = f"MemAvailable fell to {avail / MIB:.0f} MiB"
            proc.kill()
            return
        time.sleep(0.2)


def run_torch(model, mode, args, probe, workdir):
    """One child measurement; returns its result dict or {"skipped": reason}."""
    label_shape, classes, estimate = probe
    avail = meminfo().get("MemAvailable", 0)
    if avail < estimate + HEADROOM:
        return {"skipped": f"needs ~{estimate / MIB:.0f} MiB (estimate) + {HEADROOM / MIB:.0f} MiB headroom,"
                           f" MemAvailable is {avail / MIB:.0f} MiB"}
    result = os.path.join(workdir, f"torch-{mode}-b{args.batch}.json")
    if os.path.exists(result):
        os.remove(result)
    cmd = [sys.executable, os.path.abspath(__file__), "--_child", mode, "--model", model,
           "--batch", str(args.batch), "--steps", str(args.steps), "--threads", str(args.threads),
           "--label-shape", json.dumps(label_shape), "--classes", str(classes), "--result", result]
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    with open(os.path.join(workdir, f"torch-{mode}-b{args.batch}.err"), "w") as err:
        proc = subprocess.Popen(cmd, env=env, stdout=err, stderr=subprocess.STDOUT)
        state = {}
        watcher = threading.Thread(target=_watch, args=(proc, state), daemon=True)
        watcher.start()
        rc = proc.wait()
        watcher.join()
    if state.get("killed"):
        return {"skipped": f"killed: {state['killed']}"}
    if rc != 0:
        with open(os.path.join(workdir, f"torch-{mode}-b{args.batch}.err")) as f:
            tail = f.read().strip().splitlines()[-3:]
        return {"skipped": f"child failed ({rc}): {' | '.join(tail)}"}
    with open(result) as f:
        out = json.load(f)
    out["estimate_bytes"] = estimate
    return out


# --- export and plan ------------------------------------------------------------------------


def export_key(model, opset):
    """What the export of zoo model `model` depends on, hashed.

    The source of export.py and of every zoo class the model is built from
    (its modules' classes and their bases), the built model's repr and
    initial state, the torch version and the opset; not the rest of zoo.py,
    so that adding a model does not invalidate the cached exports (ResNet-1202's
    export takes minutes).
    """
    import inspect

    import torch

    from tidal import zoo

    net = zoo.build(model)
    h = hashlib.sha256()
    with open(os.path.join(REPO, "python", "tidal", "export.py"), "rb") as f:
        h.update(f.read())
    classes = {c for m in net.modules() for c in type(m).__mro__ if c.__module__ == zoo.__name__}
    for c in sorted(classes, key=lambda c: c.__qualname__):
        h.update(inspect.getsource(c).encode())
    h.update(repr(net).encode())
    for k, v in net.state_dict().items():
        h.update(k.encode())
        h.update(v.detach().contiguous().numpy().tobytes())
    h.update(repr(zoo.MODELS[model]).encode())
    h.update(f"torch {torch.__version__} opset {opset}".encode())
    return h.hexdigest()[:16]


def export_cached(model, mdir, opset):
    """The model's ONNX file under mdir, exported unless a file with the same key is there."""
    from tidal import export

    path = os.path.join(mdir, "model.onnx")
    key_path = path + ".key"
    key = export_key(model, opset)
    if os.path.exists(path) and os.path.exists(key_path):
        with open(key_path) as f:
            if f.read().strip() == key:
                return path, None
    if os.path.exists(key_path):
        os.remove(key_path)
    t0 = time.perf_counter()
    export.export(model, path, opset=opset)
    seconds = time.perf_counter() - t0
    with open(key_path, "w") as f:
        f.write(key + "\n")
    return path, seconds


def plan_flags(model, batch):
    """--batch-size B --loss cross-entropy --optimizer sgd --lr 0.01 --momentum 0.9"""
    from tidal import training

    return training.tidalc_flags(case_for(model, batch))


def run_plan(tidalc, model, onnx_path, mdir, batch, trace, timeout):
    """Runs tidalc --emit plan; returns (plan dict or None, wall seconds, command, error)."""
    out = os.path.join(mdir, f"plan-b{batch}.json")
    if os.path.exists(out):
        os.remove(out)
    cmd = [tidalc, onnx_path, "-o", out, "--emit", "plan"] + plan_flags(model, batch)
    if trace:
        cmd += ["--trace", os.path.join(mdir, f"trace-b{batch}.json")]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - t0, cmd, f"timed out after {timeout} s"
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        err = (proc.stderr.strip().splitlines() or [""])[-1]
        return None, seconds, cmd, f"exit {proc.returncode}: {err}"
    try:
        with open(out) as f:
            return json.load(f), seconds, cmd, None
    except (OSError, ValueError) as e:
        return None, seconds, cmd, f"unreadable plan: {e}"


# How the plan was made (docs/memory-plan.md, "The plan file").
STRATEGY_FIELDS = ("strategy", "schedule_strategy", "in_place", "alignment", "plan_seconds", "budget_bytes", "target")


def plan_figures(plan):
    """The figures the table needs, from a tidal-plan JSON (missing fields are None)."""
    baseline = plan.get("baseline") or {}
    predicted = plan.get("predicted") or {}
    strategy = {k: v for k, v in plan.items()
                if k in STRATEGY_FIELDS or k.startswith("plan_strategy")}
    schedule = plan.get("schedule") if isinstance(plan.get("schedule"), list) else None
    return {
        "format": plan.get("format"),
        "version": plan.get("version"),
        "strategy": strategy,
        "tensors": len(plan["tensors"]) if isinstance(plan.get("tensors"), list) else None,
        "ops": len(schedule) if schedule is not None else None,
        "kernels": sum(1 for op in schedule if op.get("kernel", True)) if schedule is not None else None,
        "no_reuse_bytes": baseline.get("peak_host_bytes"),
        "lower_bound_bytes": plan.get("lower_bound_bytes"),
        "plan_bytes": predicted.get("peak_host_bytes"),
        "plan_device_bytes": predicted.get("peak_device_bytes"),
        "step_time_us": predicted.get("step_time_us"),
        "saving_reported": plan.get("saving"),
        "arenas": [{k: v for k, v in a.items()} for a in plan.get("arenas") or []],
    }


# --- reporting ---------------------------------------------------------------------------------


def ratio(a, b):
    return None if a is None or not b else a / b


def row_for(model, fig, plan_s, plan_err, alloc, rss):
    plan_b, lb, base = fig.get("plan_bytes"), fig.get("lower_bound_bytes"), fig.get("no_reuse_bytes")
    torch_peak = alloc.get("alloc_peak_bytes")
    gap = ratio(plan_b, lb)
    save = ratio(plan_b, base)
    return {
        "model": model,
        "tensors": fig.get("tensors"),
        "ops": fig.get("ops"),
        "no_reuse_mib": ratio(base, MIB),
        "lower_bound_mib": ratio(lb, MIB),
        "plan_mib": ratio(plan_b, MIB),
        "gap_to_lower_bound_pct": None if gap is None else (gap - 1) * 100,
        "saving_vs_no_reuse_pct": None if save is None else (1 - save) * 100,
        "torch_alloc_peak_mib": ratio(torch_peak, MIB),
        "torch_rss_mib": ratio(rss.get("rss_above_baseline_bytes"), MIB),
        "plan_over_torch": ratio(plan_b, torch_peak),
        "plan_s": plan_s,
        "plan_error": plan_err,
        "torch_alloc_unaccounted_bytes": max((abs(st["unaccounted"]) for st in alloc.get("alloc_steps", [])),
                                             default=None),
        "torch_alloc_skipped": alloc.get("skipped"),
        "torch_rss_skipped": rss.get("skipped"),
    }


COLUMNS = [
    ("model", "model", "{}"),
    ("tensors", "tensors", "{:d}"),
    ("ops", "ops", "{:d}"),
    ("no_reuse_mib", "no-reuse MiB", "mib"),
    ("lower_bound_mib", "lower bound MiB", "mib"),
    ("plan_mib", "plan MiB", "mib"),
    ("gap_to_lower_bound_pct", "plan/LB - 1", "{:.2f}%"),
    ("saving_vs_no_reuse_pct", "saving vs no-reuse", "{:.1f}%"),
    ("torch_alloc_peak_mib", "torch alloc peak MiB", "mib"),
    ("torch_rss_mib", "torch RSS MiB", "mib"),
    ("plan_over_torch", "plan/torch", "{:.2f}"),
    ("plan_s", "plan time s", "{:.2f}"),
]


def cell(value, spec):
    if value is None:
        return "n/a"
    if spec == "mib":  # three significant digits for small models
        spec = "{:.1f}" if abs(value) >= 10 else "{:.2f}" if abs(value) >= 1 else "{:.3f}"
    try:
        return spec.format(value)
    except (ValueError, TypeError):
        return str(value)


def summary(rows):
    savings = [r["saving_vs_no_reuse_pct"] for r in rows if r["saving_vs_no_reuse_pct"] is not None]
    gaps = [(r["gap_to_lower_bound_pct"], r["model"]) for r in rows if r["gap_to_lower_bound_pct"] is not None]
    worst = max(g for g, _ in gaps) if gaps else None
    at_worst = [m for g, m in gaps if g == worst]
    return {
        "mean_saving_vs_no_reuse_pct": sum(savings) / len(savings) if savings else None,
        "max_gap_to_lower_bound_pct": worst,
        "max_gap_model": (at_worst[0] if len(at_worst) == 1 else
                          f"all {len(at_worst)} models" if len(at_worst) == len(gaps) else
                          f"{len(at_worst)} models") if gaps else None,
        "models_with_plan": len(savings),
    }


def notes(rows):
    out = []
    for r in rows:
        if r["plan_error"]:
            out.append(f"{r['model']}: no plan ({r['plan_error']})")
        if r["torch_alloc_unaccounted_bytes"]:
            out.append(f"{r['model']}: the allocator events leave {r['torch_alloc_unaccounted_bytes']} B unaccounted")
        for what in ("alloc", "rss"):
            if r[f"torch_{what}_skipped"] not in (None, "--no-torch"):
                out.append(f"{r['model']}: torch {what} skipped ({r[f'torch_{what}_skipped']})")
    return out


def header_lines(info):
    return [
        f"machine: {info['cpu']}, {info['cores']} cores ({info['cpu_isa']}), {info['mem_total_gib']:.1f} GiB;"
        f" load average at start {' '.join(f'{x:.2f}' for x in info['loadavg_at_start'])}",
        f"tidal {info['tidal_rev']}, tidalc {info['tidalc']}; PyTorch {info['torch_version']}",
        f"batch {info['batch']}, threads {info['threads']} (PyTorch), {info['steps']} PyTorch steps;"
        f" {info['optimizer']}, cross-entropy",
    ]


def markdown(rows, info, summ):
    lines = [f"- {h}" for h in header_lines(info)] + [""]
    lines.append("| " + " | ".join(title for _, title, _ in COLUMNS) + " |")
    lines.append("|" + "---|" * len(COLUMNS))
    for r in rows:
        lines.append("| " + " | ".join(cell(r[key], spec) for key, _, spec in COLUMNS) + " |")
    lines.append("")
    lines.append(f"Mean saving vs no-reuse: {cell(summ['mean_saving_vs_no_reuse_pct'], '{:.1f}%')};"
                 f" max gap to the lower bound: {cell(summ['max_gap_to_lower_bound_pct'], '{:.2f}%')}"
                 f"{' (' + summ['max_gap_model'] + ')' if summ['max_gap_model'] else ''}"
                 f" ({summ['models_with_plan']} models with a plan).")
    for n in notes(rows):
        lines.append(f"- {n}")
    return "\n".join(lines)


def text_table(rows, info, summ):
    cells = [[title for _, title, _ in COLUMNS]] + [[cell(r[key], spec) for key, _, spec in COLUMNS] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    lines = [f"# {h}" for h in header_lines(info)]
    for k, c in enumerate(cells):
        lines.append("  ".join(v.rjust(w) if i else v.ljust(w) for i, (v, w) in enumerate(zip(c, widths))))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append(f"mean saving vs no-reuse: {cell(summ['mean_saving_vs_no_reuse_pct'], '{:.1f}%')};"
                 f" max gap to the lower bound: {cell(summ['max_gap_to_lower_bound_pct'], '{:.2f}%')}"
                 f"{' (' + summ['max_gap_model'] + ')' if summ['max_gap_model'] else ''}")
    lines += [f"# {n}" for n in notes(rows)]
    return "\n".join(lines)


def machine(args):
    import torch

    from cpu_train import machine_info

    info = machine_info()
    info.update({
        "mem_total_gib": meminfo().get("MemTotal", 0) / (1 << 30),
        "torch_version": torch.__version__,
        "batch": args.batch,
        "threads": args.threads,
        "steps": args.steps,
        "optimizer": f"SGD lr={LR} momentum={MOMENTUM}",
        "tidalc": args.tidalc,
    })
    return info


# --- --validate: the allocator method on cases known by hand --------------------------------------


def validate(threads) -> int:
    """Checks method (i) on two cases whose peak is known by hand."""
    import torch
    import torch.nn.functional as F
    from torch.autograd import profiler

    torch.set_num_threads(threads)
    ok = True
    # Bytes the by-hand figures leave out: 0-d tensors (the loss, nll_loss's
    # total_weight, the backward seed, SGD's scalars: 4-8 B each) and the
    # record_function handle torch.optim allocates around zero_grad() and
    # step() (4 + 288 B, freed at once).
    slack = 512

    # 1. Plain allocations: float32 tensors, 4 bytes an element.
    with profiler.profile(profile_memory=True) as prof:
        a = torch.empty(1000)  # 4,000 alive
        b = torch.empty(2000)  # 12,000
        del a  # 8,000
        c = torch.empty(500)  # 10,000
        d = torch.empty(3000)  # 22,000: the peak
        del b, c, d  # 0
        e = torch.empty(5000)  # 20,000
        del e
    events, _ = memory_events(prof)
    got = peak_live_bytes(events, 0)
    good = got["peak"] == 22000 and got["final"] == 0
    print(f"1. allocation sequence: peak {got['peak']} B (by hand 22000), final {got['final']} B (0):"
          f" {'ok' if good else 'WRONG'}")
    ok &= good

    # 2. Training steps of a bias-free Linear(1024 -> 256), batch 64, float32,
    # cross-entropy, SGD with momentum: W 1 MiB, x 256 KiB, y 512 B
    # (int64), logits and their gradients [64, 256] 64 KiB each.
    # Step 1 (no gradient, no momentum yet): alive before W + x + y =
    # 1,311,232 B. Forward: logits, log_softmax (logits freed once
    # log_softmax has run); backward: nll grad, log_softmax grad (then
    # log_softmax's output and the nll grad are freed), mm writes dW 1 MiB
    # while the log_softmax grad (64 KiB) is alive: +1,114,112 B; the step
    # then clones dW into the momentum buffer while dW lives: W + x + y +
    # dW + buffer = 3,408,384 B, step 1's peak.
    # Step 2 starts from 3,408,384 B; zero_grad(set_to_none) frees dW
    # (2,359,808 B), and the peak is again mm writing dW next to the
    # log_softmax grad: 2,359,808 + 1,048,576 + 65,536 = 3,473,920 B. The
    # momentum update is in place, so that is step 2's and step 3's peak.
    torch.manual_seed(0)
    lin = torch.nn.Linear(1024, 256, bias=False)
    opt = torch.optim.SGD(lin.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(64, 1024)
    y = torch.randint(0, 256, (64,))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(lin(x), y)
        loss.backward()
        opt.step()
        return float(loss)

    steps = alloc_peaks(step, lin, opt, (x, y), 3)
    by_hand = [(1311232, 3408384, 3408384), (3408384, 3473920, 3408384), (3408384, 3473920, 3408384)]
    for k, (st, (before, peak, after)) in enumerate(zip(steps, by_hand)):
        good = (st["alive_before"] == before and st["alive_after"] == after and st["unaccounted"] == 0
                and 0 <= st["peak"] - peak <= slack and st["min"] >= 0)
        print(f"2. training step {k + 1}: alive before {st['alive_before']} B (by hand {before}), peak {st['peak']} B"
              f" (by hand {peak} + up to {slack} of scalars), after {st['alive_after']} B ({after}), unaccounted"
              f" {st['unaccounted']} B, {st['events']} events: {'ok' if good else 'WRONG'}")
        ok &= good
    print("validation", "passed" if ok else "FAILED")
    return 0 if ok else 1


# --- main ----------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS),
                        help=f"comma-separated zoo names (default {','.join(DEFAULT_MODELS)})")
    parser.add_argument("--batch", type=int, default=32, help="batch size (default 32)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="PyTorch's threads (default: all cores this process may use)")
    parser.add_argument("--steps", type=int, default=3, help="PyTorch training steps per measurement (default 3)")
    parser.add_argument("--opset", type=int, default=13, help="ONNX opset of the exports (default 13)")
    parser.add_argument("--out", metavar="JSON", help="write every figure to this file")
    parser.add_argument("--markdown", nargs="?", const="-", metavar="FILE",
                        help="print the table as markdown (to FILE if given, else stdout)")
    parser.add_argument("--trace", action="store_true", help="also pass tidalc --trace (plan trace per model)")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "tidal-plan-memory"),
                        help="exports (cached), plans and child logs (default: %(default)s)")
    parser.add_argument("--tidalc", default=os.path.join(REPO, "build", "bin", "tidalc"),
                        help="the compiler (default build/bin/tidalc)")
    parser.add_argument("--plan-timeout", type=float, default=1800.0, help="seconds per tidalc run (default 1800)")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch measurements")
    parser.add_argument("--validate", action="store_true", help="check the allocator-peak method and exit")
    # The PyTorch child (internal).
    parser.add_argument("--_child", dest="child", choices=("alloc", "rss"), help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--label-shape", help=argparse.SUPPRESS)
    parser.add_argument("--classes", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return torch_child(args)
    if args.validate:
        return validate(args.threads)

    from tidal import zoo

    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in zoo.MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)} (zoo: {', '.join(zoo.MODELS)})")
    multi = [m for m in models if len(zoo.MODELS[m].inputs) != 1]
    if multi:
        parser.error(f"{', '.join(multi)}: only single-input zoo models (the loss is added by tidalc)")
    os.makedirs(args.workdir, exist_ok=True)
    info = machine(args)
    for h in header_lines(info):
        print(f"# {h}", file=sys.stderr, flush=True)

    rows, raw = [], []
    for model in models:
        mdir = os.path.join(args.workdir, model)
        os.makedirs(mdir, exist_ok=True)
        onnx_path, export_s = export_cached(model, mdir, args.opset)
        if export_s is not None:
            print(f"# {model}: exported in {export_s:.1f} s ({os.path.getsize(onnx_path) / 1e6:.1f} MB)",
                  file=sys.stderr, flush=True)
        plan, plan_s, cmd, err = run_plan(args.tidalc, model, onnx_path, mdir, args.batch, args.trace,
                                          args.plan_timeout)
        fig = plan_figures(plan) if plan else {}
        print(f"# {model}: plan {'failed: ' + err if err else 'in %.2f s' % plan_s}", file=sys.stderr, flush=True)
        alloc, rss, probe = {"skipped": "--no-torch"}, {"skipped": "--no-torch"}, None
        if not args.no_torch:
            probe = probe_model(model, args.batch)
            alloc = run_torch(model, "alloc", args, probe, mdir)
            rss = run_torch(model, "rss", args, probe, mdir)
            print(f"# {model}: torch allocator peak {cell(ratio(alloc.get('alloc_peak_bytes'), MIB), 'mib')} MiB,"
                  f" RSS above baseline {cell(ratio(rss.get('rss_above_baseline_bytes'), MIB), 'mib')} MiB",
                  file=sys.stderr, flush=True)
        row = row_for(model, fig, plan_s if plan else None, err, alloc, rss)
        rows.append(row)
        raw.append({"row": row, "plan_cmd": cmd, "plan_wall_s": plan_s, "plan": fig, "export_s": export_s,
                    "onnx_bytes": os.path.getsize(onnx_path), "probe": probe, "torch_alloc": alloc, "torch_rss": rss})

    summ = summary(rows)
    info["loadavg_at_end"] = os.getloadavg()
    if args.markdown:
        md = markdown(rows, info, summ)
        if args.markdown == "-":
            print(md)
        else:
            with open(args.markdown, "w") as f:
                f.write(md + "\n")
            print(text_table(rows, info, summ))
    else:
        print(text_table(rows, info, summ))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"machine": info, "summary": summ, "rows": rows, "runs": raw}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
