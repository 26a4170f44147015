#!/usr/bin/python3
"""Simulated devices sharing one host link (issue 19, item 5): N devices on
the sim target behind one switch (TIDAL_SIM_SWITCH), each with its own link
of --link-gbps and the switch at --link-gbps too, so their swaps contend.
Two plans of the same step at the same device budget:

- naive: planned for the link alone (tidalc --link-gbps L);
- aware: planned for its share of the switch (tidalc --link-gbps L
  --link-share N: the planner gives each device L / N), so the planner
  swaps less, recomputes more, and prefetches early enough for the N
  devices' copies to pass the switch in turn.

Two kinds of group:

- default: N independent training processes (N jobs on one machine);
- --data-parallel: one data-parallel run of N ranks (tidalc --distributed
  mpi --ranks N, launched by mpirun), each rank on --batch samples of every
  global batch of N x --batch. The ranks run in lockstep (they meet at the
  gradient all-reduce every step), so their copies reach the switch
  together.

    /usr/bin/python3 bench/shared_link.py [--model resnet20] [--batch 32]
        [--fraction 0.5] [--link-gbps 2] [--devices 1,2,4,8] [--steps 12]
        [--data-parallel]

Reported per N: the median step time (independent jobs: the slowest
process's median; data-parallel: rank 0's, which every rank shares) after
the first two steps, of each plan, and naive / aware. One kernel thread per
process; on a machine with fewer cores than processes the compute shares
them too, which the two plans share alike. See bench/README.md.

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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cpu_train  # noqa: E402


def distributed_flags(args, n):
    """tidalc flags of the step each process runs: one of n ranks of a
    global batch of n x --batch, or (independent jobs) the plain step."""
    from tidal import training
    if not args.data_parallel:
        return training.tidalc_flags(cpu_train.case_for(args.model, args.batch, args.steps))
    flags = training.tidalc_flags(cpu_train.case_for(args.model, args.batch * n, args.steps))
    return flags + ["--distributed", "mpi", "--ranks", str(n)]


def compile_plan(args, onnx_path, exe, budget, n, share):
    cmd = [args.tidalc, onnx_path, "-o", exe, "--target", "sim", "--link-gbps", str(args.link_gbps),
           "--link-share", str(share)]
    cmd += distributed_flags(args, n)
    if budget:
        cmd += ["--device-memory", str(budget)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {proc.stderr.strip()}")
    # The plan's own prediction (the link at its planned share).
    plan = exe + ".plan.json"
    proc = subprocess.run(cmd[:3] + [plan, "--emit", "plan"] + cmd[4:], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip())
    with open(plan) as f:
        return json.load(f)["predicted"]["step_time_us"] / 1e3


def peak_bytes(args, onnx_path, work, n=1):
    plan = os.path.join(work, "plan.json")
    cmd = [args.tidalc, onnx_path, "-o", plan, "--emit", "plan", "--target", "sim", "--placement", "device"]
    cmd += distributed_flags(args, n)
    subprocess.run(cmd, check=True, capture_output=True)
    with open(plan) as f:
        return json.load(f)["predicted"]["peak_device_bytes"]


def run_ranks(exe, flags, n, args, work, tag, env):
    """One data-parallel run of n ranks; rank 0's median step."""
    log = os.path.join(work, f"log-{tag}.jsonl")
    env = dict(env, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    proc = subprocess.run([shutil.which("mpirun"), "--oversubscribe", "-n", str(n), exe] + flags +
                          ["--steps", str(args.steps), "--log", log, "--quiet", "--threads", "1"],
                          env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)
    with open(log) as f:
        steps = [json.loads(line)["step_ms"] for line in f]
    return statistics.median(steps[2:])


def run_group(exe, flags, n, args, work, tag):
    env = dict(os.environ, OMP_NUM_THREADS="1", TIDAL_SIM_LINK_GBPS=str(args.link_gbps),
               TIDAL_SIM_SWITCH=f"bench-{os.getpid()}-{tag}", TIDAL_SIM_SWITCH_GBPS=str(args.link_gbps))
    if args.data_parallel:
        return run_ranks(exe, flags, n, args, work, tag, env)
    procs, logs = [], []
    for k in range(n):
        log = os.path.join(work, f"log-{tag}-{k}.jsonl")
        logs.append(log)
        procs.append(subprocess.Popen([exe] + flags + ["--steps", str(args.steps), "--log", log, "--quiet",
                                       "--threads", "1"], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(err)
    medians = []
    for log in logs:
        with open(log) as f:
            steps = [json.loads(line)["step_ms"] for line in f]
        medians.append(statistics.median(steps[2:]))
    return max(medians)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="resnet20")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--fraction", type=float, default=0.5, help="device budget / the no-swap peak")
    parser.add_argument("--link-gbps", type=float, default=2.0)
    parser.add_argument("--devices", default="1,2,4,8")
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--data-parallel", action="store_true",
                        help="one run of N ranks (--distributed mpi) instead of N independent jobs")
    parser.add_argument("--tidalc", default=os.path.join(cpu_train.REPO, "build", "bin", "tidalc"))
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="tidal-switch-bench-")
    rows = []
    try:
        budgets = {}
        for n in [int(x) for x in args.devices.split(",")]:
            # Data-parallel: every global batch of n x --batch samples.
            data_args = argparse.Namespace(**vars(args))
            data_args.batch = args.batch * (n if args.data_parallel else 1)
            _, flags, _, cmd, _ = cpu_train.prepare_model(args.model, data_args, work)
            onnx_path = cmd[1]
            budget = int(peak_bytes(args, onnx_path, work, n) * args.fraction)
            budgets[n] = budget
            naive, aware = os.path.join(work, f"naive-{n}"), os.path.join(work, f"aware-{n}")
            p_naive = compile_plan(args, onnx_path, naive, budget, n, 1)
            p_aware = compile_plan(args, onnx_path, aware, budget, n, n)
            t_naive = run_group(naive, flags, n, args, work, f"naive{n}")
            t_aware = run_group(aware, flags, n, args, work, f"aware{n}")
            rows.append((n, t_naive, t_aware, p_naive, p_aware))
            print(json.dumps({"devices": n, "budget": budget, "naive_ms": t_naive, "aware_ms": t_aware,
                              "naive_predicted_ms": p_naive, "aware_predicted_ms": p_aware}), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    group = "ranks of one data-parallel run" if args.data_parallel else "independent jobs"
    print(f"\n{args.model}, batch {args.batch} per device, {group}, budget {args.fraction:.0%} of the no-swap peak "
          f"({', '.join(f'{n}: {b} B' for n, b in budgets.items())}), "
          f"link and switch {args.link_gbps} GB/s, one thread per process, {os.cpu_count()} CPUs")
    print("| devices on the switch | naive plan ms | aware plan ms | naive / aware | predicted naive / aware ms |")
    print("|---|---|---|---|---|")
    for n, a, b, pa, pb in rows:
        print(f"| {n} | {a:.1f} | {b:.1f} | {a / b:.2f} | {pa:.1f} / {pb:.1f} |")


if __name__ == "__main__":
    main()
