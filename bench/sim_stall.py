#!/usr/bin/env python3
"""Predicted against measured copy stall on the simulated device (issue 18, item 4).

For each zoo case and budget (a fraction of the case's no-swap device peak)
and each link bandwidth, compiles the sim executable with a calibrated host
profile plus the model's own op times (`tidal-calibrate --ops` on its
planned cpu step and its all-device sim step) and `--link-gbps G`, trains it over a link throttled to
the same G (TIDAL_SIM_LINK_GBPS), and prints the plan's
`predicted.copy_stall_us` and `predicted.step_time_us` next to the
measured median `copy_stall_seconds` (the time the sim compute stream stood
blocked at its waits for copies) and `step_ms` of the timed steps, and the same model's cpu-target step
(predicted, and measured in the same run) for what the kernels alone take.

    /usr/bin/python3 bench/sim_stall.py [--cases resnet20_momentum:0.4,...] [--link-gbps 1,4]
        [--steps 40] [--warmup 5] [--threads 2] [--profile P.json] [--json OUT]
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))

DEFAULT_CASES = "lenet_momentum:0.8,vgg_bn13_momentum_wd:0.6,resnet20_momentum:0.4,transformer13_adamw:0.7"


def run(argv, env=None):
    proc = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr}")
    return proc


def load(path):
    with open(path) as f:
        return json.load(f)


def median_step_us(exe, inputs, args, env):
    log = exe + ".jsonl"
    run([exe] + inputs + ["--steps", str(args.steps), "--threads", str(args.threads), "--log", log, "--quiet"],
        env=env)
    with open(log) as f:
        lines = [json.loads(l) for l in f if l.strip()][args.warmup:]
    return statistics.median(l["step_ms"] for l in lines) * 1e3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default=DEFAULT_CASES, help="name:fraction of the no-swap peak, comma separated")
    ap.add_argument("--link-gbps", default="1,4", help="link bandwidths in GB/s, comma separated")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--build", default=os.environ.get("TIDAL_BUILD_DIR", os.path.join(ROOT, "build")))
    ap.add_argument("--profile", help="a host profile (default: tidal-calibrate measures one)")
    ap.add_argument("--no-op-times", action="store_true", help="the profile's roofline only")
    ap.add_argument("--no-link-latency", action="store_true",
                    help="price copies at the default link latency (10 us), not the sim's measured one")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    from tidal import training

    tidalc = os.path.join(args.build, "bin", "tidalc")
    calibrate = os.path.join(args.build, "bin", "tidal-calibrate")
    env = {"OMP_NUM_THREADS": str(args.threads)}
    rows = []
    with tempfile.TemporaryDirectory(prefix="tidal-sim-stall-") as tmp:
        profile = args.profile
        if not profile:
            profile = os.path.join(tmp, "profile.json")
            run([calibrate, "--threads", str(args.threads), "-o", profile], env=env)
        # The sim's per-copy cost at each rate (tidal-calibrate --link-gbps
        # measures it on a sim device), put into each model's profile.
        links = {}
        for gbps in args.link_gbps.split(","):
            if args.no_link_latency:
                break
            out = os.path.join(tmp, f"link_{gbps}.json")
            run([calibrate, "--quick", "--threads", str(args.threads), "--link-gbps", gbps, "-o", out], env=env)
            links[gbps] = load(out)["link"]
        measured = ", ".join(f"{g} GB/s: {l['latency_us']} us" for g, l in links.items())
        print(f"# sim link latency per copy: {measured or 'the default 10 us'}")
        print(f"# {platform.node()}, {os.cpu_count()} CPUs, {args.threads} threads, "
              f"median of steps {args.warmup + 1}-{args.steps}; profile {args.profile or 'calibrated now'}"
              f"{'' if args.no_op_times else ' + op times'}")
        print("| case | budget | link GB/s | copies/step | predicted stall us | measured stall us | stall error | "
              "predicted step us | measured step us | step error | cpu target: predicted us | measured us |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for item in args.cases.split(","):
            name, fraction = item.split(":")
            work = os.path.join(tmp, item.replace(":", "_"))
            _, model, flags, inputs = training.prepare_case(name, work)
            model_profile = profile
            if not args.no_op_times:
                # The kernels of both steps: the sim target runs no fused
                # chains or epilogues (cpu-target passes), so its calls
                # differ from the cpu step's.
                steps = []
                for target in ("cpu", "sim"):
                    step = os.path.join(work, f"step_{target}.mlir")
                    run([tidalc, model, "-o", step, "--emit", "mlir", "--stop-after", "tidal-plan-memory",
                         "--target", target] + (["--placement", "device"] if target == "sim" else []) + flags)
                    steps += ["--ops", step]
                model_profile = os.path.join(work, "profile_ops.json")
                run([calibrate, "--threads", str(args.threads)] + steps + ["--from", profile, "-o",
                     model_profile], env=env)
            flags = flags + ["--device-profile", model_profile]
            plan_path = os.path.join(work, "plan.json")
            run([tidalc, model, "-o", plan_path, "--emit", "plan", "--target", "sim", "--placement", "device"]
                + flags)
            budget = int(load(plan_path)["predicted"]["peak_device_bytes"] * float(fraction))
            # The same step on the cpu target: what the kernels alone take
            # on this machine now, predicted and measured.
            run([tidalc, model, "-o", plan_path, "--emit", "plan"] + flags)
            cpu_predicted = load(plan_path)["predicted"]["step_time_us"]
            cpu_exe = os.path.join(work, "train_cpu")
            run([tidalc, model, "-o", cpu_exe] + flags)
            cpu_measured = median_step_us(cpu_exe, inputs, args, env)
            for gbps in args.link_gbps.split(","):
                link_flags = flags
                if gbps in links:
                    linked = load(model_profile)
                    linked["link"] = links[gbps]
                    linked_path = os.path.join(work, f"profile_link_{gbps}.json")
                    with open(linked_path, "w") as f:
                        json.dump(linked, f)
                    link_flags = flags[:-1] + [linked_path]
                mflags = ["--target", "sim", "--device-memory", str(budget), "--link-gbps", gbps] + link_flags
                try:
                    run([tidalc, model, "-o", plan_path, "--emit", "plan"] + mflags)
                except SystemExit as e:
                    if "too small" not in str(e):
                        raise
                    print(f"| {name} | {fraction} | {gbps} | does not fit | | | | | | | | |", flush=True)
                    continue
                plan = load(plan_path)
                exe = os.path.join(work, "train")
                run([tidalc, model, "-o", exe] + mflags)
                log = exe + ".jsonl"
                run([exe] + inputs + ["--steps", str(args.steps), "--threads", str(args.threads), "--log", log,
                                      "--quiet"], env=dict(env, TIDAL_SIM_LINK_GBPS=gbps))
                with open(log) as f:
                    lines = [json.loads(l) for l in f if l.strip()][args.warmup:]
                row = {
                    "case": name, "fraction": float(fraction), "budget": budget, "link_gbps": float(gbps),
                    "copies": sum(1 for op in plan["schedule"] if op["op"] in ("tidal.offload", "tidal.prefetch")),
                    "predicted_stall_us": plan["predicted"]["copy_stall_us"],
                    "measured_stall_us": statistics.median(l["copy_stall_seconds"] for l in lines) * 1e6,
                    "predicted_step_us": plan["predicted"]["step_time_us"],
                    "measured_step_us": statistics.median(l["step_ms"] for l in lines) * 1e3,
                    "moved_bytes": statistics.median(l["bytes_to_host"] + l["bytes_to_device"] for l in lines),
                    "cpu_predicted_step_us": cpu_predicted,
                    "cpu_measured_step_us": cpu_measured,
                }
                rows.append(row)

                def error(p, m):
                    return f"{(p - m) / m:+.1%}" if m > 0 else "-"
                print(f"| {name} | {fraction} ({budget} B) | {gbps} | {row['copies']} | "
                      f"{row['predicted_stall_us']:.1f} | {row['measured_stall_us']:.1f} | "
                      f"{error(row['predicted_stall_us'], row['measured_stall_us'])} | "
                      f"{row['predicted_step_us']:.1f} | {row['measured_step_us']:.1f} | "
                      f"{error(row['predicted_step_us'], row['measured_step_us'])} | "
                      f"{cpu_predicted:.1f} | {cpu_measured:.1f} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
