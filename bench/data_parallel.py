#!/usr/bin/python3
"""Data-parallel scaling on one machine: tidal's --distributed mpi
executable against PyTorch DistributedDataParallel (gloo), both at one
kernel thread per rank.

    /usr/bin/python3 bench/data_parallel.py [--models resnet20,lenet]
        [--batch 32] [--ranks 2] [--steps 30] [--warmup 5] [--json OUT]

For each zoo model (exported and fed as bench/cpu_train.py does: synthetic
data, cross-entropy, SGD with momentum): tidal compiled for one process and
for `--ranks` ranks at the same global batch, PyTorch plain and under DDP
(`torch.multiprocessing`, gloo over loopback, each rank on its contiguous
share of every global batch). Per run: the median step time after the
warm-up (rank 0's; ours from --log, which includes waiting for the
gradient all-reduce), the scaling (one-process step / N-rank step; N is
ideal), and for tidal the all-reduce time per step on the communication
thread and the share of it that the backward pass hid (the executable's
comm_ms_per_step and comm_hidden). Ratios are within one run on one
machine; see bench/README.md.

This is a benchmark, not a test: nothing here runs in the test suite.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cpu_train  # noqa: E402

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMP_NUM_THREADS": "1"}


def median_after(values, warmup):
    return statistics.median(values[warmup:] if len(values) > warmup else values)


def summary_value(stdout, key):
    for line in stdout.splitlines():
        if line.startswith(key + " "):
            return float(line.split()[1])
    return float("nan")


def run_tidal(exe, flags, args, work, tag, ranks):
    log = os.path.join(work, f"log-{tag}.jsonl")
    argv = [exe] + flags + ["--steps", str(args.steps), "--log", log, "--quiet", "--threads", "1"]
    if ranks > 1:
        argv = [shutil.which("mpirun"), "--oversubscribe", "-n", str(ranks)] + argv
    proc = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, **MPI_ENV))
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {proc.stderr.strip()}")
    with open(log) as f:
        steps = [json.loads(line)["step_ms"] for line in f]
    return {"step_ms": median_after(steps, args.warmup),
            "comm_ms_per_step": summary_value(proc.stdout, "comm_ms_per_step"),
            "comm_wait_ms_per_step": summary_value(proc.stdout, "comm_wait_ms_per_step"),
            "comm_hidden": summary_value(proc.stdout, "comm_hidden")}


def torch_rank(rank, ranks, model_name, ddir, args, result_path, init_file):
    import numpy as np
    import torch
    import torch.distributed as dist
    from tidal import training, zoo

    torch.set_num_threads(1)
    if ranks > 1:
        dist.init_process_group("gloo", init_method="file://" + init_file, rank=rank, world_size=ranks)
    case = cpu_train.case_for(model_name, args.batch, args.steps)
    model = zoo.build(model_name)
    net = torch.nn.parallel.DistributedDataParallel(model) if ranks > 1 else model
    opt = training.make_optimizer(case, model.parameters())
    x = torch.from_numpy(np.load(os.path.join(ddir, "input.npy")))
    y = torch.from_numpy(np.load(os.path.join(ddir, "label.npy")))
    share = args.batch // ranks
    step_ms = []
    for r in training.batch_rows(len(y), args.batch, args.steps):
        mine = slice(r.start + rank * share, r.start + (rank + 1) * share)
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = training.loss_fn(case, net(x[mine]), y[mine])
        loss.backward()
        opt.step()
        loss.item()
        step_ms.append((time.perf_counter() - t0) * 1e3)
    if rank == 0:
        with open(result_path, "w") as f:
            json.dump({"step_ms": step_ms, "torch": torch.__version__}, f)
    if ranks > 1:
        dist.destroy_process_group()


def run_torch(model, ddir, args, work, ranks):
    import torch.multiprocessing as mp

    result = os.path.join(work, f"torch-{model}-{ranks}.json")
    init = os.path.join(work, f"torch-init-{model}-{ranks}")
    if os.path.exists(init):
        os.remove(init)
    mp.start_processes(torch_rank, args=(ranks, model, ddir, args, result, init), nprocs=ranks, join=True,
                       start_method="spawn")
    with open(result) as f:
        data = json.load(f)
    return {"step_ms": median_after(data["step_ms"], args.warmup), "torch": data["torch"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="resnet20,lenet")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--json")
    parser.add_argument("--tidalc", default=os.path.join(cpu_train.REPO, "build", "bin", "tidalc"))
    args = parser.parse_args()
    if args.batch % args.ranks:
        parser.error("--batch must divide among --ranks")
    work = tempfile.mkdtemp(prefix="tidal-dp-bench-")
    rows = []
    try:
        for model in args.models.split(","):
            exe1, flags, ddir, cmd, _ = cpu_train.prepare_model(model, args, work)
            exen = exe1 + f"-r{args.ranks}"
            proc = subprocess.run(cmd[:2] + ["-o", exen] + cmd[4:] +
                                  ["--distributed", "mpi", "--ranks", str(args.ranks)], capture_output=True, text=True)
            if proc.returncode != 0:
                raise RuntimeError(proc.stderr)
            ours1 = run_tidal(exe1, flags, args, work, f"{model}-1", 1)
            oursn = run_tidal(exen, flags, args, work, f"{model}-{args.ranks}", args.ranks)
            torch1 = run_torch(model, ddir, args, work, 1)
            torchn = run_torch(model, ddir, args, work, args.ranks)
            row = {"model": model, "batch": args.batch, "ranks": args.ranks,
                   "tidal_1_ms": ours1["step_ms"], "tidal_n_ms": oursn["step_ms"],
                   "tidal_scaling": ours1["step_ms"] / oursn["step_ms"],
                   "tidal_comm_ms": oursn["comm_ms_per_step"], "tidal_comm_wait_ms": oursn["comm_wait_ms_per_step"],
                   "tidal_comm_hidden": oursn["comm_hidden"],
                   "torch_1_ms": torch1["step_ms"], "torch_n_ms": torchn["step_ms"],
                   "torch_scaling": torch1["step_ms"] / torchn["step_ms"],
                   "tidal_vs_torch_n": oursn["step_ms"] / torchn["step_ms"], "torch": torch1["torch"]}
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nmachine: {cpu_train.machine_info()['cpu']}, {os.cpu_count()} CPUs; one kernel thread per rank; "
          f"global batch {args.batch}; {args.ranks} ranks; median of steps {args.warmup + 1}..{args.steps}")
    print("| model | tidal 1 proc ms | tidal N ranks ms | tidal scaling | all-reduce ms/step | hidden | "
          "torch 1 proc ms | torch DDP ms | torch scaling | tidal/torch (N ranks) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['tidal_1_ms']:.2f} | {r['tidal_n_ms']:.2f} | {r['tidal_scaling']:.2f}x | "
              f"{r['tidal_comm_ms']:.2f} | {100 * r['tidal_comm_hidden']:.0f}% | {r['torch_1_ms']:.2f} | "
              f"{r['torch_n_ms']:.2f} | {r['torch_scaling']:.2f}x | {r['tidal_vs_torch_n']:.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
