#!/usr/bin/env python3
"""The deepest ImageNet bottleneck ResNet whose training step tidalc plans into a device budget.

    /usr/bin/python3 bench/deepest_resnet.py [--batch 16] [--budget 12GiB]
        [--calibrate 64,128] [--no-anchors] [--start 64] [--max-blocks N] [--probes N,N,...]
        [--tidalc-flag=--FLAG[=V] ...] [--no-state-bound] [--no-context] [--timeout S]
        [--rss-limit-gib G] [--external-data always|auto] [--workdir DIR] [--keep]
        [--json OUT] [--resume OLD.json ...] [--markdown [FILE]] [--tidalc PATH]

Nets: `tidal.imagenet` (torchvision's bottleneck ResNet, [3, 8, n, 3] blocks
from n = 36 on, depth 3 * (14 + n) + 2), written straight to ONNX with
seeded random weights as external data, batch 16 at 3x224x224. Each probe
compiles a plan only, with a private copy of tidalc taken at the start (a
rebuild during a search of hours must not mix two compilers):

    tidalc M.onnx -o plan.json --emit plan --target sim --batch-size 16 --loss cross-entropy
        --optimizer sgd --lr 0.01 --momentum 0.9 --timings --device-memory 12884901888

A probe fits when tidalc writes the plan; it does not fit when tidalc says
"device memory budget ... is too small": its smallest reachable budget, the
floor, is recorded. The search:

1. the floor line: the floors of two small nets (--calibrate, compiled
   with a 1-byte budget; the floor grows by about a block's parameters and
   momentum, 8.9 MB, per block);
2. the anchors: Layrub's ResNet-1517 (n = 491) and SuperNeurons'
   ResNet-2500 (n = 819, depth 2501);
3. the largest n whose floor on the line through the two floors at the
   largest n fits the budget; if it fits, n + 1; if not, its floor joins
   the line. Without two floors, or when a guess did not halve the bracket:
   doubling from the largest n that fits (from --start when none has),
   then bisection. The placement moves the optimizer and its momentum to
   the host when they do not fit, but the float32 parameters stay on the
   device unless streamed (a second fitting trial, after the host
   optimizer's fails), so an n whose parameters alone exceed the budget
   counts as not fitting without a compile (--no-state-bound turns that
   off).

ResNet-152's peak without swapping (no budget) is the context.

Per probe: depth, parameters, ONNX write time, tidalc's wall and CPU time
(user + system: the machine is shared) and the pass times from --timings,
tidalc's peak RSS (GNU time's %M, the grandchild's ru_maxrss), the plan's
predicted peak device bytes, host arena (swapped copies), predicted step
time and copy stall, tensors swapped and recomputed. A probe is skipped
(and the search capped) when tidalc's RSS, extrapolated from the probes so
far, would pass --rss-limit-gib (default 85% of MemTotal); tidalc is killed
if MemAvailable falls under 1 GiB or after --timeout seconds. --json is
rewritten after every probe; --resume reuses an earlier file's probes made
with the same tidalc binary, flags and budget.
"""

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

from tidal import imagenet  # noqa: E402

sys.path.insert(0, HERE)
from plan_memory import meminfo  # noqa: E402  (/proc/meminfo as {key: bytes})

GIB = 1 << 30
MIB = 1 << 20
ANCHORS = (("Layrub", 1517, 491), ("SuperNeurons", 2500, 819))  # (system, depth claimed in 12 GB, n)
CONTEXT_N = 36  # ResNet-152
WATCHDOG_FLOOR = GIB
TOO_SMALL = re.compile(r"device memory budget (\d+) bytes is too small for @\w+: the smallest budget its plan "
                       r"reaches is (\d+) bytes \((\d+) tensors swapped(?:, (\d+) recomputed)?")
PASS_LINE = re.compile(r"^\s+([\d.]+) \(\s*[\d.]+%\)\s+(\w+)\s*$")


def parse_size(text):
    m = re.fullmatch(r"\s*([\d.]+)\s*([KMGT]?i?B?)?\s*", text, re.I)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text}")
    unit = (m.group(2) or "").lower()
    scale = {"": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
             "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}.get(unit)
    if scale is None:
        raise argparse.ArgumentTypeError(f"unknown unit in {text}")
    return int(float(m.group(1)) * scale)




def machine_info(args):
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
        cpu = m.group(1).strip() if m else cpu
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return {
        "tidalc_built": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.stat(args.tidalc).st_mtime)),
        "tidalc_sha256": args.tidalc_sha256,
        "cpu": cpu,
        "cores": len(os.sched_getaffinity(0)),
        "mem_total_gib": meminfo()["MemTotal"] / GIB,
        "loadavg_at_start": os.getloadavg(),
        "tidal_rev": rev.stdout.strip() or "unknown",
        "tidalc": args.tidalc,
        "batch": args.batch,
        "budget_bytes": args.budget,
        "flags": base_flags(args),
    }


def base_flags(args):
    return (["--emit", "plan", "--target", "sim", "--batch-size", str(args.batch), "--loss", "cross-entropy",
             "--optimizer", "sgd", "--lr", "0.01", "--momentum", "0.9"] + list(args.tidalc_flag))


def snapshot_tidalc(path, workdir):
    """A private copy of tidalc, so that a rebuild during a long search does
    not mix two compilers (a missing binary is waited for: it is being
    linked). Returns (copy, sha256)."""
    deadline = time.time() + 900
    while not os.access(path, os.X_OK) or time.time() - os.stat(path).st_mtime < 10:
        if time.time() > deadline:
            raise SystemExit(f"{path} is missing or still being written after 900 s")
        time.sleep(5)
    copy = os.path.join(workdir, "tidalc")
    shutil.copy2(path, copy)
    with open(copy, "rb") as f:
        return copy, hashlib.sha256(f.read()).hexdigest()


def run_tidalc(args, model, plan, budget, log_prefix):
    usage = log_prefix + ".usage"
    cmd = [args.tidalc_copy, model, "-o", plan] + base_flags(args) + ["--timings"]
    if budget is not None:
        cmd += ["--device-memory", str(budget)]
    killed = {}
    with open(log_prefix + ".err", "w") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(["/usr/bin/time", "-f", "%M %e %U %S", "-o", usage] + cmd,
                                stdout=subprocess.DEVNULL, stderr=err)

        def watch():
            while proc.poll() is None:
                avail = meminfo().get("MemAvailable", 1 << 62)
                if avail < WATCHDOG_FLOOR:
                    killed["why"] = f"killed: MemAvailable fell to {avail / MIB:.0f} MiB"
                    proc.kill()
                    return
                if time.perf_counter() - t0 > args.timeout:
                    killed["why"] = f"killed: still running after {args.timeout} s (--timeout)"
                    proc.kill()
                    return
                time.sleep(0.5)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        rc = proc.wait()
        wall = time.perf_counter() - t0
        watcher.join()
    with open(log_prefix + ".err") as f:
        err_text = f.read()
    maxrss_kib = cpu_s = None
    try:
        with open(usage) as f:
            # GNU time prefixes "Command exited with non-zero status N" lines.
            fields = f.read().split()[-4:]
        maxrss_kib, cpu_s = int(fields[0]), float(fields[2]) + float(fields[3])
    except (OSError, ValueError, IndexError):
        pass
    passes = {}
    for line in err_text.splitlines():
        m = PASS_LINE.match(line)
        if m and m.group(2) not in ("Rest", "Total"):
            passes[m.group(2)] = passes.get(m.group(2), 0.0) + float(m.group(1))
    errors = [line for line in err_text.splitlines() if "error:" in line]
    return {"cmd": cmd, "rc": rc, "wall_s": wall, "cpu_s": cpu_s, "rss_bytes": maxrss_kib * 1024 if maxrss_kib else None,
            "passes_s": passes, "error": killed.get("why") or (errors[0] if errors else None),
            "stderr_tail": err_text[-2000:] if rc else ""}


def plan_figures(path):
    with open(path) as f:
        p = json.load(f)
    arenas = {a["name"]: a for a in p["arenas"]}
    swapped = [t for t in p["tensors"] if t["swaps"]]
    recomputed = [t for t in p["tensors"] if t.get("recomputations")]
    return {
        "peak_device_bytes": p["predicted"]["peak_device_bytes"],
        "host_arena_bytes": arenas.get("host", {}).get("bytes", 0),
        "lower_bound_bytes": p["lower_bound_bytes"],
        "step_time_s": p["predicted"]["step_time_us"] / 1e6,
        "copy_stall_s": p["predicted"].get("copy_stall_us", 0) / 1e6,
        "tensors_swapped": len(swapped),
        "bytes_swapped": sum(s["bytes"] for t in swapped for s in t["swaps"]),
        "tensors_recomputed": len(recomputed),
        "ops": len(p["schedule"]),
        "tensors": len(p["tensors"]),
        "plan_seconds": p.get("plan_seconds"),
        "plan_file_bytes": os.path.getsize(path),
    }


class Search:
    def __init__(self, args, workdir, cache=()):
        self.args = args
        self.workdir = workdir
        self.probes = {}  # n -> row, at the budget
        self.extra = {}  # (n, tag) -> row: the floor calibration, the no-budget context
        self.cache = list(cache)
        self.notes = []
        self.on_row = lambda: None  # called after every probe (main saves --json there)

    # --- one probe ----------------------------------------------------------------------------

    def predicted_rss(self, weight_bytes):
        """tidalc's peak RSS for `weight_bytes` of weights, from the probes so
        far: a parabola through the three largest (part of tidalc's memory
        grows with the square of the number of arguments), a line through two,
        at least proportional to the largest."""
        by_weight = {}
        for r in self.all_rows():
            if r.get("rss_bytes"):
                by_weight[r["initializer_bytes"]] = max(by_weight.get(r["initializer_bytes"], 0), r["rss_bytes"])
        pts = sorted(by_weight.items())
        if not pts:
            return None
        x1, y1 = pts[-1]
        guess = y1 * weight_bytes / x1
        if len(pts) >= 3:
            (xa, ya), (xb, yb), (xc, yc) = pts[-3:]
            # Newton's divided differences.
            d1, d2 = (yb - ya) / (xb - xa), (yc - yb) / (xc - xb)
            d3 = (d2 - d1) / (xc - xa)
            guess = max(guess, ya + d1 * (weight_bytes - xa) + d3 * (weight_bytes - xa) * (weight_bytes - xb))
        elif len(pts) == 2:
            x0, y0 = pts[0]
            guess = max(guess, y1 + (y1 - y0) / (x1 - x0) * (weight_bytes - x1))
        return guess

    def largest_within_rss(self, lo, hi):
        """The largest n in (lo, hi) whose predicted RSS is within the limit, or None."""
        ok = lambda n: self.predicted_rss(self.weight_bytes(imagenet.stage_blocks(n))) <= self.args.rss_limit  # noqa: E731
        if hi - lo <= 1 or not ok(lo + 1):
            return None
        a, b = lo + 1, hi  # ok(a), not ok(b)
        while b - a > 1:
            m = (a + b) // 2
            a, b = (m, b) if ok(m) else (a, m)
        return a

    def cached(self, n, budget, tag):
        """A row from --resume for the same probe, compiler binary and flags."""
        flags = base_flags(self.args)
        for r in self.cache:
            cmd = r.get("cmd") or []
            if (r["n"] == n and r.get("tag", "") == tag and r.get("budget_bytes") == budget
                    and r.get("tidalc_sha256") == self.args.tidalc_sha256
                    and cmd[4:4 + len(flags) + 1] == flags + ["--timings"] and r["status"] in ("fits", "too small")):
                return dict(r, cached=True)
        return None

    def probe(self, n, budget, tag=""):
        store, key = (self.extra, (n, tag)) if tag else (self.probes, n)
        if key in store:
            return store[key]
        row = self.cached(n, budget, tag) or self.compile(n, budget, tag)
        store[key] = row
        self.log(row)
        self.on_row()
        return row

    def compile(self, n, budget, tag):
        args = self.args
        layers = imagenet.stage_blocks(n)
        weight_bytes = self.weight_bytes(layers)
        row = {"n": n, "layers": list(layers), "depth": imagenet.depth(layers), "params": imagenet.param_count(layers),
               "initializer_bytes": weight_bytes, "budget_bytes": budget, "tag": tag}
        guess = self.predicted_rss(weight_bytes)
        if guess is not None and guess > args.rss_limit:
            row.update(status="skipped", error=f"tidalc would need ~{guess / GIB:.1f} GiB of RSS "
                                               f"(limit {args.rss_limit / GIB:.1f} GiB)")
            return row
        model = os.path.join(self.workdir, f"resnet_n{n}.onnx")
        info = imagenet.write_onnx(model, n, external_data=args.external_data)
        row.update(write_s=info.seconds, file_bytes=info.file_bytes, external_data=bool(info.external_data),
                   onnx_nodes=info.nodes)
        plan = os.path.join(self.workdir, f"resnet_n{n}{tag}.plan.json")
        res = run_tidalc(args, model, plan, budget, os.path.join(self.workdir, f"resnet_n{n}{tag}"))
        row.update(compile_s=res["wall_s"], compile_cpu_s=res["cpu_s"], rss_bytes=res["rss_bytes"], passes_s=res["passes_s"], cmd=res["cmd"],
                   tidalc_sha256=args.tidalc_sha256, loadavg=os.getloadavg()[0])
        if res["rc"] == 0:
            row.update(status="fits", **plan_figures(plan))
        else:
            m = TOO_SMALL.search(res["error"] or "")
            if m:
                row.update(status="too small", floor_bytes=int(m.group(2)), tensors_swapped=int(m.group(3)),
                           tensors_recomputed=int(m.group(4)) if m.group(4) else None)
            else:
                row.update(status="error", error=res["error"] or f"exit {res['rc']}", stderr_tail=res["stderr_tail"])
        if not args.keep:
            for path in (model, info.external_data, plan):
                if path and os.path.exists(path):
                    os.remove(path)
        return row

    @staticmethod
    def weight_bytes(layers):
        _, inits = imagenet._graph(layers, imagenet.CLASSES)
        return sum(4 * math.prod(i.shape) for i in inits)

    def log(self, row):
        keys = ("n", "tag", "depth", "status", "cached", "write_s", "compile_s", "compile_cpu_s", "rss_bytes", "peak_device_bytes", "floor_bytes",
                "tensors_swapped", "error")
        print("# " + ", ".join(f"{k}={row[k]}" for k in keys if row.get(k) is not None), file=sys.stderr, flush=True)

    # --- the search ---------------------------------------------------------------------------

    def run(self):
        args = self.args
        budget = args.budget
        if args.probes:
            for n in args.probes:
                self.probe(n, budget)
            return self.result()
        # The floor line: the smallest budget small nets reach (a 1-byte
        # budget's error states it), from which the deepest n is predicted.
        for n in args.calibrate:
            self.probe(n, 1, tag="-floor")
        if not args.no_anchors:
            for _, _, n in ANCHORS:
                if n <= args.max_blocks:
                    self.probe(n, budget)
        halved = True
        while True:
            lo, hi = self.bracket()
            if lo is not None and hi is not None and hi - lo <= 1:
                break
            guess = self.predict() if halved else None
            if guess is not None and (lo is not None and guess <= lo or hi is not None and guess >= hi):
                guess = None
            if guess is not None:
                n = guess
            elif lo is not None and hi is not None:
                n = (lo + hi) // 2
            elif lo is not None:  # doubling
                n = 2 * lo
            else:  # halving
                n = hi // 2 if hi is not None else args.start
            if n < 1:
                self.notes.append("even n = 1 does not fit")
                break
            if n > args.max_blocks:
                self.notes.append(f"stopped at --max-blocks {args.max_blocks}")
                break
            bound = None if args.no_state_bound else self.state_bound()
            if bound is not None and n >= bound:
                self.add_state_bound_row(bound)
                continue
            if not self.probe_ok(n):
                break
            new_lo, new_hi = self.bracket()
            if lo is not None and hi is not None:
                halved = 2 * (new_hi - new_lo) <= hi - lo + 1
            if n == guess and new_lo == n and (new_hi is None or n + 1 < new_hi):
                # The floor line put the budget between n and n + 1: check n + 1.
                if n + 1 >= (bound or n + 2):
                    self.add_state_bound_row(bound)
                elif not self.probe_ok(n + 1):
                    break
        return self.result()

    def add_state_bound_row(self, n):
        """The parameters stay on the device for the whole step unless
        streamed, so from this n on the search does not compile."""
        layers = imagenet.stage_blocks(n)
        params = imagenet.param_count(layers)
        row = {"n": n, "layers": list(layers), "depth": imagenet.depth(layers), "params": params,
               "initializer_bytes": self.weight_bytes(layers), "budget_bytes": self.args.budget, "tag": "",
               "status": "too small",
               "error": f"not compiled: parameters alone need {4 * params / GIB:.2f} GiB"}
        self.probes[n] = row
        self.log(row)

    def floor_line(self):
        """The two known floors at the largest n: [(n, bytes), (n, bytes)], or None."""
        floors = {r["n"]: r["floor_bytes"] for r in self.all_rows() if r.get("floor_bytes")}
        return sorted(floors.items())[-2:] if len(floors) >= 2 else None

    def predict(self):
        """The largest n whose floor, on the line through the two known floors
        at the largest n, fits the budget; None without two floors."""
        line = self.floor_line()
        if line is None:
            return None
        (n0, f0), (n1, f1) = line
        slope = (f1 - f0) / (n1 - n0)
        if slope <= 0:
            return None
        return n1 + math.floor((self.args.budget - f1) / slope)

    def all_rows(self):
        return list(self.probes.values()) + list(self.extra.values())

    def state_bound(self):
        """The smallest n whose float32 parameters exceed the budget."""
        lo, hi = 1, 2
        while 4 * imagenet.param_count(imagenet.stage_blocks(hi)) <= self.args.budget:
            lo, hi = hi, 2 * hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if 4 * imagenet.param_count(imagenet.stage_blocks(mid)) <= self.args.budget:
                lo = mid
            else:
                hi = mid
        return hi

    def probe_ok(self, n):
        """Probes n at the budget; False (with a note) when that caps the search.

        When tidalc would need too much memory for n, the largest n above
        the largest that fits that it can compile is probed instead, once:
        the search then ends with a verified depth and the floor line's
        prediction beyond it."""
        row = self.probe(n, self.args.budget)
        if row["status"] == "error":
            self.notes.append(f"search capped at n = {n}: {row['error']}")
            return False
        if row["status"] != "skipped":
            return True
        self.notes.append(f"search capped at n = {n}: {row['error']}")
        lo, _ = self.bracket()
        within = self.largest_within_rss(lo or 0, n)
        if within is not None:
            self.notes.append(f"probed n = {within} instead, the largest whose predicted tidalc RSS is within the "
                              f"limit")
            self.probe(within, self.args.budget)
        return False

    def bracket(self):
        """(largest n that fits, smallest n above it that does not), either None."""
        fit = [n for n, r in self.probes.items() if r["status"] == "fits"]
        lo = max(fit) if fit else None
        no = [n for n, r in self.probes.items() if r["status"] == "too small" and (lo is None or n > lo)]
        return lo, (min(no) if no else None)

    def result(self):
        lo, hi = self.bracket()
        predicted = self.predict()
        bound = None if self.args.no_state_bound else self.state_bound()
        if predicted is not None and bound is not None:
            predicted = min(predicted, bound - 1)
        return {"deepest_n": lo, "smallest_failing_n": hi, "floor_line_n": predicted, "floor_line": self.floor_line(),
                "state_bound_n": bound, "notes": self.notes}


# --- output ------------------------------------------------------------------------------------


def gib(x, spec="{:.2f}"):
    return spec.format(x / GIB) if x is not None else "-"


def fmt(x, spec):
    return spec.format(x) if x is not None else "-"


def table(rows, markdown):
    head = ["n", "depth", "params M", "weights GiB", "write s", "compile s (CPU s)", "slowest pass (s)", "tidalc RSS GiB",
            "result", "device peak GiB", "floor GiB", "host arena GiB", "step s (pred.)", "copy stall s",
            "swapped / recomputed"]
    lines = []
    if markdown:
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    else:
        lines.append("  ".join(head))
    for r in rows:
        passes = r.get("passes_s") or {}
        slow = max(passes.items(), key=lambda kv: kv[1]) if passes else None
        slow_txt = f"{slow[0].replace('Tidal', '').replace('Pass', '')} {slow[1]:.1f}" if slow else "-"
        result = r["status"] if r["status"] != "error" else f"error: {r['error']}"
        if r["status"] == "too small" and r.get("error"):
            result = f"too small ({r['error']})"
        if r["status"] == "skipped":
            result = f"skipped: {r['error']}"
        cells = [str(r["n"]) + (f" ({r['tag'].strip('-')})" if r.get("tag") else ""), str(r["depth"]),
                 f"{r['params'] / 1e6:.1f}", gib(r["initializer_bytes"]), fmt(r.get("write_s"), "{:.1f}"),
                 f"{fmt(r.get('compile_s'), '{:.1f}')} ({fmt(r.get('compile_cpu_s'), '{:.1f}')})", slow_txt, gib(r.get("rss_bytes")), result,
                 gib(r.get("peak_device_bytes"), "{:.3f}"), gib(r.get("floor_bytes"), "{:.3f}"),
                 gib(r.get("host_arena_bytes")), fmt(r.get("step_time_s"), "{:.1f}"),
                 fmt(r.get("copy_stall_s"), "{:.2f}"),
                 f"{fmt(r.get('tensors_swapped'), '{}')} / {fmt(r.get('tensors_recomputed'), '{}')}"]
        lines.append(("| " + " | ".join(cells) + " |") if markdown else "  ".join(cells))
    return "\n".join(lines)


def report(info, context, rows, result, args):
    md = args.markdown is not None
    out = []
    out.append(f"- machine: {info['cpu']}, {info['cores']} cores, {info['mem_total_gib']:.1f} GiB; "
               f"load at start {info['loadavg_at_start'][0]:.2f}")
    out.append(f"- tidal {info['tidal_rev']} (tidalc built {info['tidalc_built']}, "
               f"sha256 {info['tidalc_sha256'][:12]}); batch {args.batch} x 3x224x224, budget {args.budget / GIB:g} GiB "
               f"(--device-memory {args.budget}), cross-entropy, SGD lr 0.01 momentum 0.9, --target sim, "
               f"plan only")
    out.append(f"- tidalc flags: {' '.join(base_flags(args))}")
    if context:
        out.append(f"- context: ResNet-152 ({context['params'] / 1e6:.1f} M parameters) at batch {args.batch} "
                   f"without swapping peaks at {gib(context.get('peak_device_bytes'), '{:.3f}')} GiB of device memory "
                   f"(compile {context.get('compile_s', 0):.1f} s)")
    out.append("")
    out.append(table(sorted(rows, key=lambda r: (r["n"], r.get("tag", ""))), md))
    out.append("")
    lo, hi = result["deepest_n"], result["smallest_failing_n"]
    if lo is not None:
        r = next(r for r in rows if r["n"] == lo and not r.get("tag"))
        what = "no larger n was compiled"
        if hi is not None:
            h = next(x for x in rows if x["n"] == hi and not x.get("tag"))
            why = (f"the smallest budget its plan reaches is {gib(h['floor_bytes'], '{:.3f}')} GiB"
                   if h.get("floor_bytes") else h.get("error", ""))
            what = f"n = {hi} (ResNet-{h['depth']}) does not: {why}"
        out.append(f"**Deepest that fits: ResNet-{r['depth']}** ({r['layers']}, {r['params'] / 1e6:.0f} M parameters): "
                   f"device peak {gib(r['peak_device_bytes'], '{:.3f}')} GiB, {r['tensors_swapped']} tensors swapped "
                   f"({gib(r['host_arena_bytes'])} GiB host arena), predicted step {r['step_time_s']:.1f} s; {what}.")
    else:
        out.append("**No probe fitted.**")
    for system, claimed, n in ANCHORS:
        r = next((x for x in rows if x["n"] == n and not x.get("tag")), None)
        if r is None:
            state = "not probed"
        elif r["status"] == "fits":
            state = (f"fits: device peak {gib(r['peak_device_bytes'], '{:.3f}')} GiB, {r['tensors_swapped']} tensors "
                     f"swapped, predicted step {r['step_time_s']:.1f} s, compile {r['compile_s']:.0f} s")
        elif r["status"] == "too small":
            state = f"does not fit: the smallest budget the plan reaches is {gib(r['floor_bytes'], '{:.3f}')} GiB"
        else:
            state = f"{r['status']}: {r.get('error')}"
        out.append(f"- {system}: ResNet-{claimed} in 12 GB (here n = {n}, depth {imagenet.depth(imagenet.stage_blocks(n))}): "
                   f"{state}")
    if lo is not None:
        d = imagenet.depth(imagenet.stage_blocks(lo))
        out.append(f"- tidal today, compiled: ResNet-{d} ({d / 1517:.2f}x Layrub's, {d / 2500:.2f}x SuperNeurons')")
    predicted = result.get("floor_line_n")
    if predicted is not None and (hi is None or hi - lo > 1):
        d = imagenet.depth(imagenet.stage_blocks(predicted))
        (n0, f0), (n1, f1) = result["floor_line"]
        out.append(f"- the floor line (smallest budgets {gib(f0, '{:.3f}')} GiB at n = {n0}, {gib(f1, '{:.3f}')} GiB at "
                   f"n = {n1}: {(f1 - f0) / (n1 - n0) / MIB:.2f} MiB per block) puts the deepest that fits at "
                   f"n = {predicted}: ResNet-{d} ({d / 1517:.2f}x Layrub's, {d / 2500:.2f}x SuperNeurons'); "
                   f"not compiled")
    for note in result["notes"]:
        out.append(f"- note: {note}")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--budget", type=parse_size, default=12 * GIB, help="device budget (default 12GiB)")
    ap.add_argument("--start", type=int, default=64, help="first stage-3 block count of the doubling")
    ap.add_argument("--max-blocks", type=int, default=8192, help="never probe more stage-3 blocks than this")
    ap.add_argument("--probes", type=lambda s: [int(x) for x in s.split(",")], default=None,
                    help="probe exactly these stage-3 block counts (no search)")
    ap.add_argument("--no-anchors", action="store_true", help="do not probe n = 491 and 819 first")
    ap.add_argument("--calibrate", type=lambda s: [int(x) for x in s.split(",") if x], default=[64, 128],
                    help="stage-3 block counts whose floors (1-byte budget) predict the deepest n "
                         "(default 64,128; empty: none)")
    ap.add_argument("--resume", action="append", default=[],
                    help="a --json file of an earlier run: its probes with the same tidalc binary (sha256), "
                         "flags, budget and batch are reused, not recompiled (repeatable)")
    ap.add_argument("--no-state-bound", action="store_true",
                    help="compile probes whose parameters alone exceed the budget (by default they count as "
                         "not fitting without a compile; streamed parameters can fit them, at the cost of a "
                         "second fitting trial)")
    ap.add_argument("--no-context", action="store_true", help="skip ResNet-152's no-swap peak")
    ap.add_argument("--tidalc-flag", action="append", default=[],
                    help="extra tidalc flag, repeatable; write --tidalc-flag=--swap=off")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per tidalc run (default 3600)")
    ap.add_argument("--rss-limit-gib", type=float, default=None,
                    help="skip probes whose predicted tidalc RSS exceeds this (default 85%% of MemTotal)")
    ap.add_argument("--external-data", choices=("auto", "always"), default="always",
                    help="weights as ONNX external data for every net (default), or only above 2 GiB (auto)")
    ap.add_argument("--workdir", default=None, help="default: a fresh temporary directory, removed at the end")
    ap.add_argument("--keep", action="store_true", help="keep the ONNX files and plans")
    ap.add_argument("--json", default=None, help="write every figure here")
    ap.add_argument("--markdown", nargs="?", const="-", default=None, help="markdown table (to FILE if given)")
    ap.add_argument("--tidalc", default=os.path.join(ROOT, "build", "bin", "tidalc"))
    args = ap.parse_args(argv)
    args.rss_limit = (args.rss_limit_gib * GIB if args.rss_limit_gib else 0.85 * meminfo()["MemTotal"])
    if not os.access("/usr/bin/time", os.X_OK):
        raise SystemExit("needs GNU time (/usr/bin/time) to measure tidalc's peak RSS")

    workdir = args.workdir or tempfile.mkdtemp(prefix="tidal-deepest-")
    os.makedirs(workdir, exist_ok=True)
    args.tidalc_copy, args.tidalc_sha256 = snapshot_tidalc(args.tidalc, workdir)
    info = machine_info(args)
    cache = []
    for path in args.resume:
        with open(path) as f:
            data = json.load(f)
        cache += data["probes"] + ([data["context"]] if data.get("context") else [])
    search = Search(args, workdir, cache)

    def save(result=None):
        if args.json:
            with open(args.json + ".tmp", "w") as f:
                json.dump({"machine": info, "context": search.extra.get((CONTEXT_N, "-nobudget")),
                           "probes": search.all_rows(), "result": result, "complete": result is not None}, f,
                          indent=1)
            os.replace(args.json + ".tmp", args.json)

    search.on_row = save
    context = None
    try:
        if not args.no_context:
            context = search.probe(CONTEXT_N, None, tag="-nobudget")
        result = search.run()
    finally:
        if not args.workdir and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    rows = search.all_rows()
    text = report(info, context, rows, result, args)
    if args.markdown not in (None, "-"):
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    print(text)
    save(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
