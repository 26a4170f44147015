"""Pictures of a plan (docs/plots.md): memory over the schedule.

    python3 -m tidal.plot plan.json -o plan.png [--title T]

The top panel is device memory at each schedule position (the step arena
in host memory on the cpu target): the bytes of the live tensors, the top
of the packed arena, the budget and the peak. A second panel shows a
device target's host arena when it has one. The bottom lane shows what the
planner did: each swapped tensor from its offload to its prefetch, each
recomputed tensor's dropped span, the ops on the host, the tensors sent to
them and the streamed parameters' prefetches.
"""

import argparse
import sys
from typing import List, Optional, Tuple

from tidal.plan import PlanError, format_bytes, load

UNITS = (("GiB", float(1 << 30)), ("MiB", float(1 << 20)), ("KiB", float(1 << 10)))
COLOURS = {"device": "tab:blue", "host": "tab:orange", "budget": "tab:red", "swap": "tab:purple",
           "recompute": "tab:green", "host_op": "tab:brown", "update": "0.55", "stream": "tab:cyan",
           "sent": "tab:pink"}


def _unit(largest: float) -> Tuple[str, float]:
    return next(((name, scale) for name, scale in UNITS if largest >= scale), UNITS[-1])


def _memory_panel(ax, used: List[int], top: List[int], stated: int, constants: int, colour: str,
                  label: str, unit: Tuple[str, float]) -> None:
    """The bytes live at each position, filled; the packed arena as a line
    when packing missed the lower bound; the peak annotated."""
    x = range(len(used))
    ax.fill_between(x, [b / unit[1] for b in used], step="mid", alpha=0.35, color=colour, linewidth=0)
    ax.step(x, [b / unit[1] for b in used], where="mid", color=colour, linewidth=1, label=f"{label}: bytes live")
    arena = max(top, default=0)
    if arena != max(used, default=0):
        ax.axhline(arena / unit[1], color="0.2", linewidth=0.8,
                   label=f"{label}: packed arena {format_bytes(arena)} (the plan's peak)")
    if not any(used):
        ax.text(0.5, 0.5, f"{label}: nothing here (every tensor elsewhere)", transform=ax.transAxes, ha="center",
                va="center", fontsize=9, color="0.35")
    else:
        peak = max(used)
        at = used.index(peak)
        text = f"peak {format_bytes(peak)} at position {at}"
        if stated and stated - constants != peak:
            text += f"\nstated peak {format_bytes(stated)}" + (
                f" (arena {format_bytes(arena)} + {format_bytes(constants)} constants)" if constants else "")
        right = at > 0.6 * len(used)
        ax.annotate(text, (at, peak / unit[1]), xytext=(-12 if right else 12, 12), textcoords="offset points",
                    ha="right" if right else "left", fontsize=8,
                    arrowprops={"arrowstyle": "->", "color": "0.3", "linewidth": 0.8})
        ax.plot([at], [peak / unit[1]], "o", color="0.2", markersize=3)
    ax.set_ylabel(unit[0])
    ax.grid(alpha=0.3)


def _lane(ax, plan, positions: int) -> None:
    """One row per swap and per recomputation, one each for the host ops,
    the tensors sent to them and the streamed parameters' prefetches."""
    ticks, labels = [], []
    row = 0
    swaps = plan.swaps
    if swaps:
        rows = list(range(row, row + len(swaps)))
        out_left = [s.offload for s in swaps]
        ax.barh(rows, [s.offload_wait - s.offload for s in swaps], left=out_left, height=0.8,
                color=COLOURS["swap"], alpha=0.35, linewidth=0)
        ax.barh(rows, [s.off_device[1] - s.off_device[0] for s in swaps], left=[s.off_device[0] for s in swaps],
                height=0.8, color=COLOURS["swap"], linewidth=0, label="swapped: off the device")
        back = [(r, p) for r, s in zip(rows, swaps) for p in s.prefetches]
        ax.barh([r for r, _ in back], [p.wait - p.position for _, p in back], left=[p.position for _, p in back],
                height=0.8, color=COLOURS["swap"], alpha=0.35, linewidth=0, label="swapped: copy in flight")
        ticks.append(row + (len(swaps) - 1) / 2)
        labels.append(f"swaps ({len(swaps)})")
        row += len(swaps) + 1
    recs = plan.recomputations
    if recs:
        rows = list(range(row, row + len(recs)))
        ax.barh(rows, [r.dropped[1] - r.dropped[0] for r in recs], left=[r.dropped[0] for r in recs], height=0.8,
                color=COLOURS["recompute"], alpha=0.45, linewidth=0, label="recomputed: dropped")
        ax.plot([r.position for r in recs], rows, "<", color=COLOURS["recompute"], markersize=3,
                label="recomputed: clone runs")
        ticks.append(row + (len(recs) - 1) / 2)
        labels.append(f"recompute ({len(recs)})")
        row += len(recs) + 1
    singles = [("sent to host ops", [s.offload for s in plan.sent_to_host], COLOURS["sent"], "|"),
               ("streamed prefetches", [p for t in plan.streamed for p in _prefetches_of(plan, t.id)],
                COLOURS["stream"], "|"),
               ("host layers", [o.position for o in plan.host_layers], COLOURS["host_op"], "o"),
               ("host updates", [o.position for o in plan.host_ops if o.is_update], COLOURS["update"], ".")]
    for name, xs, colour, marker in singles:
        if not xs:
            continue
        ax.plot(xs, [row] * len(xs), marker, color=colour, markersize=5 if marker == "|" else 3, linestyle="none")
        ticks.append(row)
        labels.append(f"{name} ({len(xs)})")
        row += 2
    ax.set_yticks(ticks)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_ylim(row - 0.5, -1)  # first rows on top
    ax.set_xlim(-0.5, positions - 0.5)
    ax.grid(alpha=0.3, axis="x")


def _prefetches_of(plan, tensor_id: int) -> List[int]:
    return [o.position for o in plan.ops if o.op == "tidal.prefetch" and o.reads[:1] == [tensor_id]]


def plot(plan, path: str, title: Optional[str] = None) -> None:
    """Draws `plan` (a tidal.plan.Plan, a plan file's path or its JSON)
    into `path`; the format follows the extension (png, svg, pdf)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not hasattr(plan, "occupancy"):
        plan = load(plan)
    occ = plan.occupancy()
    host_panel = plan.on_device and max(occ.host_top, default=0) > 0
    lane_rows = len(plan.swaps) + len(plan.recomputations)
    lane = lane_rows > 0 or bool(plan.sent_to_host or plan.streamed or plan.host_ops)
    heights = [3.0] + ([1.5] if host_panel else []) + ([min(3.0, 1.0 + lane_rows / 40)] if lane else [])
    fig, axes = plt.subplots(len(heights), 1, figsize=(11, 1.4 * sum(heights) + 1.2), sharex=True,
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    axes = axes[:, 0]

    top = max((occ.device_top if plan.on_device else occ.host_top) + [0])
    unit = _unit(max(top, plan.budget or 0, 1))
    ax = axes[0]
    if plan.on_device:
        _memory_panel(ax, occ.device, occ.device_top, plan.device_peak, 0, COLOURS["device"], "device", unit)
        baseline = plan.baseline_device_peak
    else:
        _memory_panel(ax, occ.host, occ.host_top, plan.host_peak, occ.constants, COLOURS["device"],
                      "host step arena", unit)
        baseline = plan.baseline_host_peak
    if plan.budget:
        ax.axhline(plan.budget / unit[1], color=COLOURS["budget"], linestyle="--", linewidth=1,
                   label=f"budget {format_bytes(plan.budget)}")
    if baseline:
        # Far above the plan it would flatten the curve: then it is only named.
        shown = baseline <= 3 * max(top, plan.budget or 0)
        ax.plot([], [], ":" if shown else " ", color="0.5", label=f"without planning {format_bytes(baseline)}")
        if shown:
            ax.axhline(baseline / unit[1], color="0.5", linestyle=":", linewidth=1)
    for op in plan.clones:
        ax.axvline(op.position, color=COLOURS["recompute"], alpha=0.3, linewidth=0.6)
    ax.set_ylim(bottom=0)
    ax.margins(y=0.15)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)

    if host_panel:
        ax = axes[1]
        _memory_panel(ax, occ.host, occ.host_top, plan.host_peak, occ.constants, COLOURS["host"], "host arena",
                      _unit(max(occ.host_top + [1])))
        ax.set_ylim(bottom=0)
        ax.margins(y=0.2)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)

    if lane:
        _lane(axes[-1], plan, plan.positions)
        handles, names = axes[-1].get_legend_handles_labels()
        if handles:
            axes[-1].legend(handles, names, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    else:
        axes[0].text(0.99, 0.02, "nothing moved: no swaps, recomputations or host ops" if plan.on_device
                     else "cpu target: one arena in host memory", transform=axes[0].transAxes, ha="right",
                     va="bottom", fontsize=8, color="0.35")
        axes[-1].set_xlim(-0.5, plan.positions - 0.5)
    axes[-1].set_xlabel("schedule position (0 entry, 1..N the ops in order, N+1 exit)")

    heading = title or _title(plan)
    fig.suptitle(heading, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _title(plan) -> str:
    parts = [f"{plan.model} ({plan.mode}) on {plan.target}"]
    parts.append(f"budget {format_bytes(plan.budget)}" if plan.budget else "no device budget")
    step = f"predicted step {plan.step_time_us / 1e3:.2f} ms"
    if plan.on_device and plan.copy_stall_us:
        step += f" ({plan.copy_stall_us / 1e3:.2f} ms copy stall)"
    return ", ".join(parts + [step])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tidal.plot", description=__doc__.split("\n\n")[0])
    parser.add_argument("plan", help="a plan file (tidalc --emit plan)")
    parser.add_argument("-o", "--output", required=True, help="the picture (.png, .svg or .pdf)")
    parser.add_argument("--title", help="instead of the model, target, budget and predicted step time")
    args = parser.parse_args(argv)
    try:
        plan = load(args.plan)
    except PlanError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("error: tidal.plot needs matplotlib (python3-matplotlib)", file=sys.stderr)
        return 1
    try:
        plot(plan, args.output, args.title)
    except (OSError, ValueError) as err:
        message = str(err).splitlines()[0] if str(err) else type(err).__name__
        print(f"{args.output}: error: {message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
