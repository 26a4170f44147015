#!/usr/bin/env python3
"""The CPU optimizer update against memory bandwidth and torch.optim.

    /usr/bin/python3 bench/optimizer_bandwidth.py [--params 100000000] [--threads 2]
        [--optimizers sgd-momentum,adam,adamw] [--repeat 5] [--json OUT]

For each optimizer, tidal's update kernel over one float32 parameter of
`--params` elements is timed by `tidal-calibrate --ops` (the compiler's own
kernel call, median of its repeats) on the step of a one-MatMul model; the
machine's memory bandwidth is `tidal-calibrate`'s STREAM-add figure on the
same threads. PyTorch runs the same update (torch.optim with
foreach=False: the single-tensor CPU path) on a tensor of the same size,
median of `--repeat` steps. Bytes moved per update: SGD with momentum reads
param, grad and buffer and writes param and buffer (5 x 4 bytes per
element); Adam/AdamW read param, grad, m, v and write param, m, v (7 x 4).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BYTES_PER_ELEMENT = {"sgd-momentum": 5 * 4, "adam": 7 * 4, "adamw": 7 * 4}
TIDALC_FLAGS = {"sgd-momentum": ["--optimizer", "sgd", "--lr", "0.01", "--momentum", "0.9"],
                "adam": ["--optimizer", "adam", "--lr", "0.001"],
                "adamw": ["--optimizer", "adamw", "--lr", "0.001", "--weight-decay", "0.01"]}
UPDATE_OPS = {"sgd-momentum": "tidal.sgd_momentum_update", "adam": "tidal.adam_update", "adamw": "tidal.adam_update"}


def write_model(path, rows, cols):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = np.random.default_rng(0).standard_normal((rows, cols), dtype=np.float32) * 0.01
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "update",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, rows])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, cols])],
                              [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path, save_as_external_data=True, location="w.bin")


def tidal_update_us(work, name, threads, tools):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    step = os.path.join(work, f"{name}.mlir")
    subprocess.run([tools["tidalc"], os.path.join(work, "model.onnx"), "--batch-size", "1", "--loss", "mse",
                    "--emit", "mlir", "--stop-after", "tidal-schedule", "-o", step] + TIDALC_FLAGS[name],
                   check=True, env=env)
    out = os.path.join(work, f"{name}.ops.json")
    subprocess.run([tools["calibrate"], "--ops", step, "--from", os.path.join(work, "profile.json"), "-o", out],
                   check=True, env=env)
    with open(out) as f:
        table = json.load(f)["host"]["op_us"]
    times = [us for key, us in table.items() if key.startswith(UPDATE_OPS[name] + "(")]
    if len(times) != 1:
        raise RuntimeError(f"{name}: expected one {UPDATE_OPS[name]} in the op table, found {len(times)}")
    return times[0]


def torch_update_us(name, n, threads, repeat):
    import torch
    torch.set_num_threads(threads)
    p = torch.nn.Parameter(torch.randn(n) * 0.01)
    p.grad = torch.randn(n) * 0.01
    cls = {"sgd-momentum": lambda ps: torch.optim.SGD(ps, lr=0.01, momentum=0.9, foreach=False),
           "adam": lambda ps: torch.optim.Adam(ps, lr=0.001, foreach=False),
           "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.001, weight_decay=0.01, foreach=False)}[name]
    opt = cls([p])
    opt.step()  # creates the state
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        opt.step()
        times.append((time.perf_counter() - start) * 1e6)
    return float(np.median(times))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--params", type=int, default=100_000_000)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--optimizers", default="sgd-momentum,adam,adamw")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json")
    parser.add_argument("--build", default=os.environ.get("TIDAL_BUILD_DIR", os.path.join(ROOT, "build")))
    args = parser.parse_args(argv)
    tools = {"tidalc": os.path.join(args.build, "bin", "tidalc"),
             "calibrate": os.path.join(args.build, "bin", "tidal-calibrate")}
    cols = 10_000
    rows = max(args.params // cols, 1)
    n = rows * cols
    results = {"params": n, "threads": args.threads, "rows": []}
    with tempfile.TemporaryDirectory() as work:
        write_model(os.path.join(work, "model.onnx"), rows, cols)
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
        subprocess.run([tools["calibrate"], "--threads", str(args.threads), "-o",
                        os.path.join(work, "profile.json")], check=True, env=env)
        with open(os.path.join(work, "profile.json")) as f:
            stream = json.load(f)["host"]["gbytes_per_s"]
        results["stream_gbytes_per_s"] = stream
        print(f"{n} float32 parameters, {args.threads} threads; tidal-calibrate memory bandwidth "
              f"{stream:.1f} GB/s")
        print(f"{'optimizer':14} {'tidal ms':>9} {'GB/s':>7} {'of STREAM':>9} {'torch ms':>9} {'torch/tidal':>11}")
        for name in args.optimizers.split(","):
            ours = tidal_update_us(work, name, args.threads, tools)
            theirs = torch_update_us(name, n, args.threads, args.repeat)
            gbps = n * BYTES_PER_ELEMENT[name] / (ours * 1e3)
            row = {"optimizer": name, "tidal_us": ours, "tidal_gbytes_per_s": gbps, "fraction_of_stream":
                   gbps / stream, "torch_us": theirs, "speedup": theirs / ours}
            results["rows"].append(row)
            print(f"{name:14} {ours / 1e3:9.1f} {gbps:7.1f} {gbps / stream:9.0%} {theirs / 1e3:9.1f} "
                  f"{theirs / ours:11.1f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
