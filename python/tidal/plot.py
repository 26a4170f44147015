"""Pictures of a plan (docs/plots.md): memory over the schedule.

    python3 -m tidal.plot plan.json -o plan.png [--title T]

The top panel is device memory at each schedule position (the host arena
on the cpu target) with the budget line and the peak marked; below it, a
device target's host arena (offloaded copies, host-placed tensors); the
bottom lane shows each swapped tensor as a bar from its offload to its
last prefetch (the time it spends in host memory), recomputations as
ticks, and ops that run on the host as dots.
"""

import argparse
import sys
from typing import Optional


def plot(plan, path: str, title: Optional[str] = None) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mib = float(1 << 20)
    occupancy = plan.occupancy()
    device_target = plan.target != "cpu"
    main = occupancy["device" if device_target else "host"]
    panels = 3 if device_target else 2
    heights = [3, 1.4, 1.2] if device_target else [3, 1.2]
    fig, axes = plt.subplots(panels, 1, figsize=(11, 2.2 * panels + 1), sharex=True,
                             gridspec_kw={"height_ratios": heights})
    x = list(range(len(main)))

    ax = axes[0]
    label = "device memory" if device_target else "host arena"
    ax.fill_between(x, [b / mib for b in main], step="mid", alpha=0.35, color="tab:blue")
    ax.step(x, [b / mib for b in main], where="mid", color="tab:blue", label=label)
    if plan.budget:
        ax.axhline(plan.budget / mib, color="tab:red", linestyle="--", label=f"budget {plan.budget / mib:.2f} MiB")
    if main:
        peak = max(main)
        at = main.index(peak)
        ax.annotate(f"peak {peak / mib:.2f} MiB", (at, peak / mib), xytext=(8, 6), textcoords="offset points",
                    fontsize=8, arrowprops={"arrowstyle": "-", "color": "0.4"})
    baseline = plan.baseline_device_peak if device_target else plan.baseline_host_peak
    if baseline:
        # Far above the plan it would flatten the curve: then it is named
        # in the legend only.
        top = max(main + [plan.budget or 0])
        if baseline <= 3 * top:
            ax.axhline(baseline / mib, color="0.6", linestyle=":", label=f"without planning {baseline / mib:.2f} MiB")
        else:
            ax.plot([], [], " ", label=f"without planning {baseline / mib:.2f} MiB")
    for r in plan.recomputations:
        ax.axvline(r.position, color="tab:green", alpha=0.25, linewidth=0.8)
    ax.set_ylabel("MiB")
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(alpha=0.3)

    if device_target:
        ax = axes[1]
        host = occupancy["host"]
        ax.fill_between(x, [b / mib for b in host], step="mid", alpha=0.35, color="tab:orange")
        ax.step(x, [b / mib for b in host], where="mid", color="tab:orange", label="host arena")
        ax.set_ylabel("MiB")
        ax.legend(loc="upper right", fontsize=8)
        ax.grid(alpha=0.3)

    ax = axes[-1]
    lane = 0
    for s in sorted(plan.swaps, key=lambda s: s.offload):
        end = max(s.prefetches) if s.prefetches else len(main) - 1
        ax.plot([s.offload, end], [lane, lane], color="tab:purple", linewidth=2, solid_capstyle="butt")
        ax.plot(s.prefetches, [lane] * len(s.prefetches), "|", color="tab:purple", markersize=6)
        lane += 1
    rec = lane + 2
    for r in plan.recomputations:
        ax.plot([r.position], [rec], "v", color="tab:green", markersize=5)
    host_lane = rec + 2
    if plan.host_ops:
        ax.plot([o.position for o in plan.host_ops], [host_lane] * len(plan.host_ops), ".", color="tab:brown",
                markersize=4)
    ax.set_yticks([max(lane - 1, 0) / 2, rec, host_lane])
    ax.set_yticklabels([f"swaps ({len(plan.swaps)})", f"recompute ({len(plan.recomputations)})",
                        f"host ops ({len(plan.host_ops)})"], fontsize=8)
    ax.set_ylim(-1, host_lane + 1)
    ax.set_xlabel("schedule position")
    ax.grid(alpha=0.3, axis="x")

    heading = title or (f"{plan.model}: {plan.target}"
                        + (f", budget {plan.budget / mib:.2f} MiB" if plan.budget else "")
                        + f", predicted step {plan.step_time_us / 1e3:.2f} ms")
    fig.suptitle(heading, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    from tidal.plan import PlanError, load
    parser = argparse.ArgumentParser(prog="python3 -m tidal.plot", description=__doc__.split("\n\n")[0])
    parser.add_argument("plan", help="a plan file (tidalc --emit plan)")
    parser.add_argument("-o", "--output", required=True, help="the picture (.png, .svg or .pdf)")
    parser.add_argument("--title")
    args = parser.parse_args(argv)
    try:
        plot(load(args.plan), args.output, args.title)
    except PlanError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as err:
        print(f"{args.output}: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
