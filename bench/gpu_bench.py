#!/usr/bin/python3
"""GPU benchmark: tidal's training executables against PyTorch (issue 7).

    /usr/bin/python3 bench/gpu_bench.py [--models resnet20,vgg_bn,transformer_block,lenet]
        [--batch 128] [--points 5] [--steps 20] [--warmup 3] [--markdown]
        [--json OUT.json] [--target cuda|sim] [--torch-device cuda|cpu]
        [--tidalc PATH] [--tidalc-flag=--FLAG[=V] ...] [--onnx-dir DIR]
        [--threads N] [--time-limit S] [--workdir DIR] [--torch-tf32]

For each zoo model, at one batch size, trained with cross-entropy and
SGD (lr 0.01, momentum 0.9) on the same random data (4 batches, seed 1234,
taken in file order):

- PyTorch, three configurations, each in a fresh child process: plain;
  torch.utils.checkpoint per block (`checkpoint(block, x,
  use_reentrant=False)` around each residual block, conv group or
  transformer sub-layer, the classifier head left out; see
  `checkpoint_segments`); and the whole step under
  torch.autograd.graph.save_on_cpu(pin_memory=True). A step is: copy the
  pinned host batch to the device, zero_grad(set_to_none=True), forward,
  F.cross_entropy, backward, opt.step(), loss.item(). The step time is the
  median over --steps steps after --warmup, each timed between two
  torch.cuda.synchronize() calls; the peak is torch.cuda.max_memory_allocated
  over the timed steps (reset after the warm-up). TF32 is off
  (tidal's kernels compute in float32; --torch-tf32 allows it).
- tidal: `tidalc --target cuda` at the no-swap peak of the plan, at the
  floor (the smallest budget the planner reaches, read from its error for a
  1-byte budget, as bench/sim_budget.py does) and at --points budgets from
  the one to the other. Each executable trains --warmup + --steps steps
  with --log; the median step_ms over the last --steps steps, the largest
  device_peak_bytes, the bytes moved per step (bytes_to_host +
  bytes_to_device), and the achieved copy bandwidth (those bytes over the
  log's copy_seconds, when it has them and they are > 0).
- The machine's pinned copy bandwidth, measured in the same run: a 256 MiB
  pinned host tensor copied to and from the GPU (non_blocking, CUDA events,
  best of 5), each direction, GB/s = 1e9 bytes/s. A tidal row's "of pinned"
  is its achieved bandwidth over what its own mix of bytes in each
  direction would take at the pinned rates.

Smoke mode (no GPU): --target sim --torch-device cpu runs the same steps on
the simulated device and PyTorch's CPU; memory and bandwidth are "n/a".

A configuration that fails (tidalc error, a runtime fault, an exception in
PyTorch such as out of memory, a timeout) is reported in its row with a
one-line error and the benchmark goes on. Each model's table is printed as
soon as the model is done; no new configuration starts after --time-limit
seconds (default 540, under a 10-minute command limit).

Duration: the default list (4 models, 5 budgets each) is 8 tidalc plans, 20
plan + 20 executable compiles, 20 executable runs and 12 PyTorch child
processes. Estimated at 4-6 minutes on an H100 machine with 16 cores (not yet
measured on a GPU); the smoke mode on lenet takes ~20 s on 2 cores.

This is a benchmark, not a test; python/test/test_gpu_bench.py tests its
pieces and runs the smoke mode once.
"""

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

DEFAULT_MODELS = "resnet20,vgg_bn,transformer_block,lenet"
TORCH_CONFIGS = ("plain", "checkpoint", "save_on_cpu")
TORCH_NAMES = {"plain": "torch plain", "checkpoint": "torch checkpoint", "save_on_cpu": "torch save_on_cpu"}
SAMPLES_PER_BATCH_SET = 4  # batches in the data files, cycled in file order
PINNED_BYTES = 256 * 2**20
PINNED_REPEATS = 5
LR, MOMENTUM = 0.01, 0.9
MIB = 2.0**20
RESULT_PREFIX = "RESULT "


# --- pieces that need no GPU (tested in python/test/test_gpu_bench.py) ---------------------


def parse_floor(stderr):
    """The smallest budget in bytes from tidalc's 'budget is too small' error, or None."""
    m = re.search(r"smallest budget its plan reaches is (\d+) bytes", stderr or "")
    return int(m.group(1)) if m else None


def one_line_error(stderr, returncode=None, strip=""):
    """A one-line account of a failed process: its last stderr line that says
    'error' (else its last line), after the exit status or signal."""
    lines = [l.strip() for l in (stderr or "").splitlines() if l.strip()]
    line = next((l for l in reversed(lines) if "error" in l.lower()), lines[-1] if lines else "")
    if strip:
        line = line.replace(strip, "")
    if returncode is not None:
        status = f"signal {-returncode}" if returncode < 0 else f"exit {returncode}"
        line = f"{status}: {line}" if line else status
    return line[:400]


def read_log(path):
    """The JSON objects of an executable's --log file; an unparsable line ends it
    (a run that died mid-write)."""
    lines = []
    with open(path) as f:
        for text in f:
            if not text.strip():
                continue
            try:
                lines.append(json.loads(text))
            except ValueError:
                break
    return lines


def summarize_log(lines, warmup):
    """Per-step figures of a --log: medians over the steps after `warmup`
    (all steps when there are no more), the peak over all steps."""
    if not lines:
        raise ValueError("the log has no steps")
    timed = lines[warmup:] if len(lines) > warmup else lines
    to_host = [int(l.get("bytes_to_host", 0)) for l in timed]
    to_device = [int(l.get("bytes_to_device", 0)) for l in timed]
    out = {
        "steps_logged": len(lines),
        "steps_timed": len(timed),
        "step_ms": statistics.median(float(l["step_ms"]) for l in timed),
        "step_ms_all": [float(l["step_ms"]) for l in lines],
        "device_peak_bytes": max(int(l.get("device_peak_bytes", 0)) for l in lines),
        "host_peak_bytes": max(int(l.get("host_peak_bytes", 0)) for l in lines),
        "bytes_to_host": statistics.median(to_host),
        "bytes_to_device": statistics.median(to_device),
        "bytes_moved": statistics.median(h + d for h, d in zip(to_host, to_device)),
        "loss0": lines[0].get("loss"),
        "copy_seconds": None,
        "copy_gbps": None,
        "copy_note": None,
    }
    if not all("copy_seconds" in l for l in timed):
        out["copy_note"] = "the log has no copy_seconds"
        return out
    seconds = sum(float(l["copy_seconds"]) for l in timed)
    moved = sum(to_host) + sum(to_device)
    out["copy_seconds"] = seconds / len(timed)
    if seconds > 0 and moved > 0:
        out["copy_gbps"] = moved / seconds / 1e9
    else:
        out["copy_note"] = "no copies" if moved == 0 else "copy_seconds is 0"
    return out


def gbps(nbytes, milliseconds):
    """GB/s (1e9 bytes per second) of `nbytes` moved in `milliseconds`."""
    return nbytes / (milliseconds / 1e3) / 1e9 if milliseconds > 0 else None


def pinned_reference_gbps(to_host, to_device, h2d_gbps, d2h_gbps):
    """The bandwidth of moving `to_host` + `to_device` bytes at the pinned
    rates of each direction, one copy after the other: the reference for a
    run's achieved bandwidth over the same mix. None when unknown."""
    total = to_host + to_device
    if total <= 0 or (to_host and not d2h_gbps) or (to_device and not h2d_gbps):
        return None
    seconds = (to_host / (d2h_gbps * 1e9) if to_host else 0.0) + (to_device / (h2d_gbps * 1e9) if to_device else 0.0)
    return total / seconds / 1e9


def budgets(peak, floor, points):
    """`points` budgets from `peak` down to `floor` (both included when
    points >= 2), evenly spaced, duplicates dropped."""
    if points <= 1 or floor is None or floor >= peak:
        return [peak]
    out = []
    for k in range(points):
        b = peak - (peak - floor) * k // (points - 1)
        if b not in out:
            out.append(b)
    return out


def budget_name(budget, peak, floor):
    if budget == peak:
        return f"tidal peak ({budget / MIB:.2f} MiB)"
    if budget == floor:
        return f"tidal floor ({budget / MIB:.2f} MiB)"
    return f"tidal budget {budget / MIB:.2f} MiB"


def failed_row(name, error, kind):
    """The row of a configuration that did not produce figures."""
    return {"name": name, "kind": kind, "error": error}


def fmt(value, spec="{:.2f}"):
    return "n/a" if value is None else spec.format(value)


def ratio(a, b):
    return None if a is None or not b else a / b


COLUMNS = ["configuration", "step ms", "vs torch plain", "peak device MiB", "vs torch plain peak",
           "moved MiB/step", "copy GB/s", "of pinned", "loss[0]", "notes"]


def table_cells(rows):
    """The cells of one model's table: one list per row, in COLUMNS order."""
    plain = next((r for r in rows if r.get("kind") == "torch plain" and not r.get("error")), None)
    plain_ms = plain.get("step_ms") if plain else None
    plain_peak = plain.get("peak_bytes") if plain else None
    cells = []
    for r in rows:
        if r.get("error"):
            cells.append([r["name"]] + ["-"] * 8 + [f"FAILED: {r['error']}"])
            continue
        peak, moved = r.get("peak_bytes"), r.get("bytes_moved")
        loss0 = r.get("loss0")
        cells.append([
            r["name"],
            fmt(r.get("step_ms")),
            fmt(ratio(r.get("step_ms"), plain_ms)),
            fmt(None if peak is None else peak / MIB),
            fmt(ratio(peak, plain_peak)),
            fmt(None if moved is None else moved / MIB),
            fmt(r.get("copy_gbps")),
            fmt(None if r.get("copy_fraction") is None else 100 * r["copy_fraction"], "{:.0f}%"),
            fmt(loss0, "{:.5f}"),
            r.get("notes", ""),
        ])
    return cells


def render(head, cells, markdown):
    """A table as markdown, or as aligned plain text."""
    if markdown:
        def esc(c):
            return str(c).replace("|", "\\|")
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in cells]
        return "\n".join(lines)
    widths = [max(len(str(row[i])) for row in [head] + cells) for i in range(len(head))]
    fmt_row = lambda row: "  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt_row(head), fmt_row(["-" * w for w in widths])] + [fmt_row(r) for r in cells])


def format_model_table(model, rows, markdown, error=None):
    title = f"### {model}" if markdown else f"== {model}"
    parts = [title]
    if error:
        parts.append(f"model error: {error}")
    parts.append(render(COLUMNS, table_cells(rows), markdown))
    return "\n".join(parts) + "\n"


def header_line(info, args):
    pinned = info.get("pinned") or {}
    bw = ("pinned bandwidth host->device {} GB/s, device->host {} GB/s (256 MiB, best of 5)"
          .format(fmt(pinned.get("h2d_gbps")), fmt(pinned.get("d2h_gbps")))
          if pinned.get("h2d_gbps") else f"pinned bandwidth n/a ({pinned.get('note', 'not measured')})")
    return (f"GPU: {info.get('gpu') or 'none'}; CPU: {info.get('cpu')}, {info.get('threads')} threads; "
            f"batch {args.batch}, {args.steps} steps after {args.warmup} warm-up, SGD lr {LR} momentum {MOMENTUM}, "
            f"cross-entropy; tidal --target {args.target} ({info.get('tidal_rev')}), torch on {args.torch_device}; "
            f"python {info.get('python')}, torch {info.get('torch')}, CUDA {info.get('cuda') or 'n/a'}, "
            f"cuDNN {info.get('cudnn') or 'n/a'}; TF32 {'on' if args.torch_tf32 else 'off'}; {bw}; "
            f"extra tidalc flags: {' '.join(args.tidalc_flag) or 'none'}")


# --- the PyTorch side (runs in child processes) -------------------------------------------


def _checkpoint(fn, *args):
    from torch.utils.checkpoint import checkpoint

    return checkpoint(fn, *args, use_reentrant=False)


def checkpoint_segments(name, model):
    """(blocks, head): the model's forward as a chain of blocks that are
    checkpointed one by one, followed by a head that is not (the classifier,
    whose output is consumed at once). Per-block checkpointing, as usual for
    residual nets: one block = one residual block, one conv+BN+ReLU group
    (with its max pool), one transformer sub-layer with its residual add."""
    import torch
    import torch.nn.functional as F

    if name in ("resnet20", "resnet56", "resnet110", "resnet1202"):
        stem = lambda x: F.relu(model.bn1(model.conv1(x)))  # noqa: E731
        head = lambda x: model.fc(torch.flatten(model.pool(x), 1))  # noqa: E731
        return [stem] + list(model.layers), head
    if name == "vgg_bn":
        groups = []
        for layer in model.features:
            if isinstance(layer, torch.nn.Conv2d) or not groups:
                groups.append(torch.nn.Sequential())
            groups[-1].append(layer)
        return groups, model.classifier
    if name == "lenet":
        return ([lambda x: F.max_pool2d(F.relu(model.conv1(x)), 2),
                 lambda x: F.max_pool2d(F.relu(model.conv2(x)), 2)],
                lambda x: model.fc3(F.relu(model.fc2(F.relu(model.fc1(torch.flatten(x, 1)))))))
    if name == "transformer_block":
        return ([lambda x: x + model.attention(model.ln1(x)),
                 lambda x: x + model.fc2(model.gelu(model.fc1(model.ln2(x))))],
                lambda x: x)
    if name == "mlp":
        return ([lambda x: F.relu(model.fc1(x)), lambda x: F.relu(model.fc2(x))], model.fc3)
    raise ValueError(f"no checkpoint segmentation for zoo model '{name}'")


def checkpointed_forward(blocks, head, x):
    for block in blocks:
        x = _checkpoint(block, x)
    return head(x)


def _torch_device_info(torch):
    info = {"torch": torch.__version__, "cuda": torch.version.cuda}
    try:
        info["cudnn"] = torch.backends.cudnn.version()
    except Exception:  # noqa: BLE001 (an odd build: leave it unknown)
        info["cudnn"] = None
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
        info["gpu_memory_bytes"] = torch.cuda.get_device_properties(0).total_memory
    return info


def pinned_bandwidth():
    """{h2d_gbps, d2h_gbps, ...}: a 256 MiB pinned tensor to and from the GPU."""
    import torch

    info = _torch_device_info(torch)
    host = torch.empty(PINNED_BYTES, dtype=torch.uint8, pin_memory=True)
    dev = torch.empty(PINNED_BYTES, dtype=torch.uint8, device="cuda")
    host.fill_(1)
    dev.copy_(host, non_blocking=True)
    host.copy_(dev, non_blocking=True)  # warm-up: both directions once
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for key, dst, src in (("h2d", dev, host), ("d2h", host, dev)):
        times = []
        for _ in range(PINNED_REPEATS):
            start.record()
            dst.copy_(src, non_blocking=True)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        info[f"{key}_ms"] = times
        info[f"{key}_gbps"] = gbps(PINNED_BYTES, min(times))
    info["bytes"] = PINNED_BYTES
    return info


def torch_run(spec):
    """One PyTorch configuration: {step_ms, peak_bytes, bytes_moved, loss0, ...}."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    from tidal import zoo

    name, config, device = spec["model"], spec["config"], torch.device(spec["device"])
    if spec.get("threads"):
        torch.set_num_threads(spec["threads"])
    cuda = device.type == "cuda"
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = bool(spec.get("tf32"))
        torch.backends.cudnn.allow_tf32 = bool(spec.get("tf32"))
    model = zoo.build(name).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    x_all, y_all = np.load(spec["x"]), np.load(spec["y"])
    batch = spec["batch"]
    count = len(x_all) // batch
    batches = []
    for b in range(count):
        xb = torch.from_numpy(x_all[b * batch:(b + 1) * batch].copy())
        yb = torch.from_numpy(y_all[b * batch:(b + 1) * batch].copy())
        batches.append((xb.pin_memory(), yb.pin_memory()) if cuda else (xb, yb))
    notes = ""
    if config == "checkpoint":
        blocks, head = checkpoint_segments(name, model)
        forward = lambda x: checkpointed_forward(blocks, head, x)  # noqa: E731
        notes = f"per-block checkpoint, {len(blocks)} blocks"
    elif config in ("plain", "save_on_cpu"):
        forward = model
    else:
        raise ValueError(f"unknown configuration '{config}'")

    def step(g):
        xb, yb = batches[g % count]
        x, y = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
        opt.zero_grad(set_to_none=True)
        if config == "save_on_cpu":
            with torch.autograd.graph.save_on_cpu(pin_memory=True):
                loss = F.cross_entropy(forward(x), y)
                loss.backward()
        else:
            loss = F.cross_entropy(forward(x), y)
            loss.backward()
        opt.step()
        return loss.item()

    def sync():
        if cuda:
            torch.cuda.synchronize()

    losses, times = [], []
    for g in range(spec["warmup"] + spec["steps"]):
        if g == spec["warmup"] and cuda:
            sync()
            torch.cuda.reset_peak_memory_stats()
        sync()
        t0 = time.perf_counter()
        losses.append(step(g))
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    out = {"step_ms": statistics.median(times[spec["warmup"]:] or times), "step_ms_all": times,
           "loss0": losses[0], "notes": notes, "peak_bytes": None, "bytes_moved": 0 if cuda else None}
    if cuda:
        out["peak_bytes"] = torch.cuda.max_memory_allocated()
        out["peak_reserved_bytes"] = torch.cuda.max_memory_reserved()
    if config == "save_on_cpu":
        # One more step, untimed, counting what save_on_cpu copies: every
        # tensor saved for backward goes to the host and comes back once.
        saved = [0]

        def pack(t):
            if t.device.type == "cuda":
                saved[0] += t.numel() * t.element_size()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            opt.zero_grad(set_to_none=True)
            xb, yb = batches[0]
            F.cross_entropy(model(xb.to(device)), yb.to(device)).backward()
        opt.zero_grad(set_to_none=True)
        out["bytes_moved"] = 2 * saved[0] if cuda else None
        out["bytes_saved"] = saved[0]
    return out


def child_main(spec_json):
    """The --torch-child entry: one JSON line, RESULT {...}, on stdout."""
    spec = json.loads(spec_json)
    try:
        result = pinned_bandwidth() if spec.get("task") == "pinned" else torch_run(spec)
    except Exception as err:  # noqa: BLE001 (reported in the row, e.g. CUDA out of memory)
        first = (str(err).strip().splitlines() or [""])[0]
        result = {"error": f"{type(err).__name__}: {first}"[:400]}
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    return 0


# --- the parent ---------------------------------------------------------------------------


class Deadline:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self):
        return self.end - time.monotonic()

    def timeout(self, cap):
        """A subprocess timeout: `cap`, or the time left if less (at least 5 s)."""
        return max(5.0, min(cap, self.left()))


def run_proc(argv, timeout, env=None):
    """(CompletedProcess or None, error or None)."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, **(env or {})))
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout:.0f} s"
    except OSError as err:
        return None, f"cannot run {argv[0]}: {err}"
    return proc, None


def run_child(spec, timeout):
    """Runs a --torch-child; its result dict (with 'error' on failure)."""
    proc, err = run_proc([sys.executable, os.path.abspath(__file__), "--torch-child", json.dumps(spec)], timeout)
    if err:
        return {"error": err}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    return {"error": one_line_error(proc.stderr, proc.returncode)}


def machine_info(args):
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            cpu = m.group(1).strip() if m else cpu
    except OSError:
        pass
    rev = "unknown"
    try:
        proc = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              timeout=10)
        if proc.returncode == 0:
            rev = proc.stdout.strip()
            dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=30)
            rev += "+dirty" if dirty.stdout.strip() else ""
    except (OSError, subprocess.TimeoutExpired):
        pass
    return {"cpu": cpu, "threads": len(os.sched_getaffinity(0)), "python": platform.python_version(),
            "tidal_rev": rev, "tidalc": args.tidalc, "kernel": platform.release()}


def write_data(name, batch, work):
    """(x.npy, label.npy) with SAMPLES_PER_BATCH_SET batches of random data."""
    import numpy as np
    import torch
    from tidal import zoo

    entry = zoo.MODELS[name]
    rng = np.random.default_rng(1234)
    n = batch * SAMPLES_PER_BATCH_SET
    x = os.path.join(work, f"{name}_x.npy")
    y = os.path.join(work, f"{name}_y.npy")
    np.save(x, rng.standard_normal((n,) + tuple(entry.inputs[0][1])).astype(np.float32))
    # Cross-entropy labels: class indices shaped like the output without its
    # class dimension (dim 1), e.g. one per token for the transformer block.
    with torch.no_grad():
        out_shape = tuple(zoo.build(name).eval()(torch.zeros((2,) + tuple(entry.inputs[0][1]))).shape)
    np.save(y, rng.integers(0, out_shape[1], (n,) + out_shape[2:]).astype(np.int64))
    return x, y


def tidal_flags(args):
    return (["--batch-size", str(args.batch), "--loss", "cross-entropy", "--optimizer", "sgd", "--lr", str(LR),
             "--momentum", str(MOMENTUM), "--target", args.target] + list(args.tidalc_flag))


def tidal_config(args, onnx_path, data, budget, name, work, deadline, pinned):
    """One tidal row: plan and executable at `budget`, then a logged run."""
    tag = f"{os.path.splitext(os.path.basename(onnx_path))[0]}_{budget}"
    flags = tidal_flags(args) + ["--device-memory", str(budget)]
    plan_path = os.path.join(work, f"{tag}.plan.json")
    proc, err = run_proc([args.tidalc, onnx_path, "-o", plan_path, "--emit", "plan"] + flags, deadline.timeout(300))
    if err or proc.returncode != 0:
        why = err or one_line_error(proc.stderr, proc.returncode, work + "/")
        return failed_row(name, "tidalc --emit plan: " + why, "tidal")
    try:
        with open(plan_path) as f:
            plan = json.load(f)
        swaps = sum(len(t.get("swaps", [])) for t in plan.get("tensors", []))
        recomputed = len({r["position"] for t in plan.get("tensors", []) for r in t.get("recomputations", [])})
        predicted = plan.get("predicted", {})
    except (OSError, ValueError, KeyError, TypeError) as e:
        return failed_row(name, f"tidalc --emit plan: unreadable plan: {type(e).__name__}: {e}", "tidal")
    exe = os.path.join(work, tag)
    proc, err = run_proc([args.tidalc, onnx_path, "-o", exe] + flags, deadline.timeout(300))
    if err or proc.returncode != 0:
        return failed_row(name, "tidalc: " + (err or one_line_error(proc.stderr, proc.returncode, work + "/")), "tidal")
    log = exe + ".log.jsonl"
    argv = [exe, "--input", f"input={data[0]}", "--input", f"label={data[1]}",
            "--steps", str(args.warmup + args.steps), "--log", log, "--quiet"]
    if args.threads:
        argv += ["--threads", str(args.threads)]
    proc, err = run_proc(argv, deadline.timeout(300))
    if err or proc.returncode != 0:
        return failed_row(name, "run: " + (err or one_line_error(proc.stderr, proc.returncode, work + "/")), "tidal")
    try:
        s = summarize_log(read_log(log), args.warmup)
    except (OSError, ValueError, KeyError) as e:
        return failed_row(name, f"run: unreadable log: {e}", "tidal")
    reference = pinned_reference_gbps(s["bytes_to_host"], s["bytes_to_device"],
                                      pinned.get("h2d_gbps"), pinned.get("d2h_gbps"))
    notes = (f"budget {budget / MIB:.2f} MiB; plan: {swaps} swaps, {recomputed} recomputed, "
             f"predicted {predicted.get('step_time_us', 0) / 1e3:.2f} ms")
    if s["copy_note"] and s["bytes_moved"]:
        notes += f"; copy GB/s n/a: {s['copy_note']}"
    return {"name": name, "kind": "tidal", "budget_bytes": budget, "step_ms": s["step_ms"],
            "peak_bytes": s["device_peak_bytes"], "bytes_moved": s["bytes_moved"],
            "bytes_to_host": s["bytes_to_host"], "bytes_to_device": s["bytes_to_device"],
            "copy_gbps": s["copy_gbps"], "copy_seconds": s["copy_seconds"],
            "copy_fraction": ratio(s["copy_gbps"], reference), "pinned_reference_gbps": reference,
            "loss0": s["loss0"], "step_ms_all": s["step_ms_all"], "host_peak_bytes": s["host_peak_bytes"],
            "plan": {"swaps": swaps, "recomputed": recomputed, "predicted": predicted}, "notes": notes}


def bench_model(name, args, work, deadline, pinned, log):
    """(rows, model error or None) for one zoo model."""
    rows = []
    try:
        data = write_data(name, args.batch, work)
    except Exception as err:  # noqa: BLE001 (a model the zoo cannot build: its one row)
        return rows, f"data: {type(err).__name__}: {err}"

    def skipped(row_name, kind):
        return failed_row(row_name, f"skipped: --time-limit {args.time_limit:.0f} s reached", kind)

    for config in TORCH_CONFIGS:
        row_name = TORCH_NAMES[config]
        if deadline.left() <= 0:
            rows.append(skipped(row_name, row_name))
            continue
        spec = {"model": name, "config": config, "device": args.torch_device, "batch": args.batch,
                "steps": args.steps, "warmup": args.warmup, "x": data[0], "y": data[1],
                "threads": args.threads, "tf32": args.torch_tf32}
        result = run_child(spec, deadline.timeout(300))
        row = dict(result, name=row_name, kind=row_name)
        rows.append(row)
        log(f"# {name} {row_name}: {json.dumps({k: v for k, v in row.items() if k != 'step_ms_all'})}")

    # tidal: the model as ONNX, its peak and floor, the budgets between.
    if deadline.left() <= 0:
        rows.append(skipped("tidal", "tidal"))
        return rows, None
    onnx_path = os.path.join(args.onnx_dir, f"{name}.onnx") if args.onnx_dir else ""
    if not (onnx_path and os.path.isfile(onnx_path)):
        onnx_path = os.path.join(work, f"{name}.onnx")
        try:
            from tidal import export

            export.export(name, onnx_path)
        except Exception as err:  # noqa: BLE001 (e.g. an exporter of another torch version)
            first = (str(err).strip().splitlines() or [""])[0]
            rows.append(failed_row("tidal", f"export: {type(err).__name__}: {first}"[:400], "tidal"))
            return rows, None
    flags = tidal_flags(args)
    plan_path = os.path.join(work, f"{name}.plan.json")
    proc, err = run_proc([args.tidalc, onnx_path, "-o", plan_path, "--emit", "plan"] + flags, deadline.timeout(300))
    if err or proc.returncode != 0:
        rows.append(failed_row("tidal", "tidalc --emit plan: " + (
            err or one_line_error(proc.stderr, proc.returncode, work + "/")), "tidal"))
        return rows, None
    try:
        with open(plan_path) as f:
            peak = int(json.load(f)["predicted"]["peak_device_bytes"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        rows.append(failed_row("tidal", f"tidalc --emit plan: unreadable plan: {type(e).__name__}: {e}", "tidal"))
        return rows, None
    floor = None
    proc, err = run_proc([args.tidalc, onnx_path, "-o", plan_path, "--emit", "plan", "--device-memory", "1",
                          "--host-layers", "off"] + flags,
                         deadline.timeout(300))
    if not err:
        floor = parse_floor(proc.stderr)
    if floor is None:
        why = err or one_line_error(proc.stderr, proc.returncode, work + "/")
        rows.append(failed_row("tidal floor", f"no floor from tidalc's 1-byte error: {why}", "tidal"))
    for budget in budgets(peak, floor, args.points):
        row_name = budget_name(budget, peak, floor)
        if deadline.left() <= 0:
            rows.append(skipped(row_name, "tidal"))
            continue
        row = tidal_config(args, onnx_path, data, budget, row_name, work, deadline, pinned)
        rows.append(row)
        log(f"# {name} {row_name}: {json.dumps({k: v for k, v in row.items() if k != 'step_ms_all'})}")
    return rows, None


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--torch-child"]:
        return child_main(argv[1])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=DEFAULT_MODELS)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--points", type=int, default=5, help="budgets from the no-swap peak down to the floor")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json", metavar="OUT.json")
    ap.add_argument("--target", choices=("cuda", "sim"), default="cuda")
    ap.add_argument("--torch-device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--tidalc", default=os.path.join(ROOT, "build", "bin", "tidalc"))
    ap.add_argument("--tidalc-flag", action="append", default=[],
                    help="extra tidalc flag, e.g. --tidalc-flag=--recompute=off (repeatable)")
    ap.add_argument("--onnx-dir", help="take NAME.onnx from here instead of exporting it (e.g. files exported "
                                       "elsewhere with `python3 -m tidal.export NAME DIR/NAME.onnx`)")
    ap.add_argument("--threads", type=int, default=0, help="the executables' --threads and torch.set_num_threads "
                                                           "(default: each library's own)")
    ap.add_argument("--time-limit", type=float, default=540.0,
                    help="start no configuration after this many seconds (default 540)")
    ap.add_argument("--workdir", help="keep the models, data, executables and logs here (default: a temporary "
                                      "folder, removed at the end)")
    ap.add_argument("--torch-tf32", action="store_true", help="let PyTorch use TF32 (default off, as tidal)")
    args = ap.parse_args(argv)
    from tidal import zoo

    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in zoo.MODELS]
    if unknown:
        ap.error(f"unknown zoo model(s) {', '.join(unknown)} (have: {', '.join(zoo.MODELS)})")
    if args.points < 1 or args.steps < 1 or args.warmup < 0 or args.batch < 1:
        ap.error("--points, --steps and --batch must be positive, --warmup not negative")
    if not (os.path.isfile(args.tidalc) and os.access(args.tidalc, os.X_OK)):
        ap.error(f"no tidalc at {args.tidalc} (build the project or give --tidalc)")
    deadline = Deadline(args.time_limit)
    work = args.workdir or tempfile.mkdtemp(prefix="tidal-gpu-bench-")
    os.makedirs(work, exist_ok=True)
    try:
        return run_all(args, models, work, deadline)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)


def run_all(args, models, work, deadline):
    started = time.monotonic()

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    info = machine_info(args)
    if args.torch_device == "cuda":
        pinned = run_child({"task": "pinned"}, deadline.timeout(120))
        if pinned.get("error"):
            pinned = {"note": pinned["error"]}
        info.update({k: pinned.pop(k) for k in ("torch", "cuda", "cudnn", "gpu", "gpu_memory_bytes") if k in pinned})
    else:
        import torch

        pinned = {"note": "--torch-device cpu"}
        info.update({"torch": torch.__version__, "cuda": None, "cudnn": None, "gpu": None})
    info["pinned"] = pinned
    print(("- " if args.markdown else "") + header_line(info, args) + "\n", flush=True)
    results = {"machine": info, "args": vars(args), "workdir": work, "models": {}}

    def dump():
        if args.json:
            tmp = args.json + ".tmp"
            with open(tmp, "w") as f:
                json.dump(results, f, indent=1)
            os.replace(tmp, args.json)

    for name in models:
        try:
            rows, error = bench_model(name, args, work, deadline, pinned, log)
        except Exception as err:  # noqa: BLE001 (a bug here must not lose the other models' figures)
            log("# " + traceback.format_exc().replace("\n", "\n# "))
            rows, error = [], f"benchmark bug: {type(err).__name__}: {err}"
        results["models"][name] = {"rows": rows, "error": error}
        print(format_model_table(name, rows, args.markdown, error), flush=True)
        dump()
    results["wall_seconds"] = time.monotonic() - started
    dump()
    log(f"# done in {results['wall_seconds']:.0f} s" + (f"; files in {work}" if args.workdir else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
