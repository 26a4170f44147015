"""A tidal plan (`tidalc --emit plan`, docs/memory-plan.md) as Python objects.

    plan = tidal.plan.load("plan.json")       # or trainer.plan
    plan.device_peak, plan.host_peak, plan.step_time_us, plan.budget
    plan.ops[i].device, plan.tensors[j].placement, plan.swaps, plan.recomputations
    plan.occupancy().device                    # device bytes at each schedule position
    print(plan.summary()); plan.plot("plan.png")

Positions are the plan's: 0 is the step's entry, 1..N its ops in order and
N+1 its exit. docs/plots.md says how the figures relate.
"""

import heapq
import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

def format_bytes(n: float) -> str:
    """1536 -> "1.50 KiB"; plain bytes under 1 KiB."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{int(n)} B"


class PlanError(ValueError):
    """The file is not a tidal plan (or not one this version reads)."""


@dataclass
class Op:
    position: int
    op: str  # "tidal.conv", "tidal.offload", ...
    name: str  # the ONNX node
    device: str  # where it runs: "device" or "host"
    stream: str  # "compute", "copy_to_host", "copy_to_device", "host"
    kernel: bool  # false for views and constants
    start_us: float
    duration_us: float
    flops: int
    reads: List[int]
    writes: List[int]
    recompute_of: Optional[int] = None  # a clone: the recompute id of the op it redoes

    @property
    def end_us(self) -> float:
        return self.start_us + self.duration_us

    @property
    def is_copy(self) -> bool:
        return self.op in ("tidal.offload", "tidal.prefetch")

    @property
    def is_update(self) -> bool:
        """An optimizer update (the same test as tidalc --explain)."""
        return "_update" in self.op or self.op.startswith("tidal.onnx_")


@dataclass
class Prefetch:
    position: int  # the tidal.prefetch op
    wait: int  # its tidal.wait: the device copy is ready
    device_tensor: Optional[int]  # the copy's tensor id


@dataclass
class Swap:
    """Tensor `tensor` copied to host memory at `offload`, its device bytes
    free once `offload_wait` has run, and copied back by each prefetch.
    Without prefetches it was only sent to host ops that read it."""
    tensor: int
    name: str
    bytes: int
    offload: int
    offload_wait: int
    host_tensor: Optional[int]
    prefetches: List[Prefetch] = field(default_factory=list)

    @property
    def for_host_ops(self) -> bool:
        return not self.prefetches

    @property
    def off_device(self) -> Tuple[int, int]:
        """(the offload's wait, the first prefetch): the positions between
        which the tensor holds no device bytes."""
        return self.offload_wait, min((p.position for p in self.prefetches), default=self.offload_wait)


@dataclass
class Recomputation:
    """Tensor `tensor` computed again by a clone at `position` (result
    `clone`). `dropped` is the span it was absent before that, from the end
    of its previous copy's bytes; None for a clone's other results, whose
    originals were still live."""
    tensor: int
    name: str
    bytes: int
    position: int
    clone: Optional[int]
    dropped: Optional[Tuple[int, int]]


@dataclass
class Tensor:
    id: int
    name: str
    bytes: int
    first_use: int
    last_use: int
    space: str  # where its home is: "device" or "host"
    arena: str  # "step", "host" or "constants"
    offset: int
    buffer: int  # the id of the buffer (bytes shared by views, in-place results, copies' waits)
    buffer_live: Tuple[int, int]  # the buffer's closed live interval
    role: Optional[str] = None  # arguments: "param", "state", "input", ...
    producer: Optional[int] = None  # results: the position of the op that makes it
    view_of: Optional[int] = None
    in_place_of: Optional[int] = None
    copy_of: Optional[int] = None
    swaps: List[Swap] = field(default_factory=list)
    recomputations: List[Recomputation] = field(default_factory=list)
    placement: str = "device"  # see Plan._place


@dataclass
class Occupancy:
    """Bytes at each position 0..N+1, from the tensors' homes and their
    buffers' live intervals (each buffer counted once, its size rounded up
    to the plan's alignment). `device`/`host` sum the live buffers (the
    plan's live_bytes/host_live_bytes: their maximum is the lower bound);
    `device_top`/`host_top` are the highest byte any live buffer reaches
    (offset + size): their maximum is the packed arena, the stated peak.
    On the cpu target the step arena is host memory and `device` is zeros.
    `constants` is the read-only arena, live throughout, in the host peak."""
    device: List[int]
    device_top: List[int]
    host: List[int]
    host_top: List[int]
    constants: int

    @property
    def device_peak(self) -> int:
        return max(self.device_top, default=0)

    @property
    def host_peak(self) -> int:
        return max(self.host_top, default=0) + self.constants

    def __getitem__(self, key: str) -> List[int]:
        return getattr(self, key)


def _interval(value, default: Tuple[int, int]) -> Tuple[int, int]:
    return (int(value[0]), int(value[1])) if value else default


class Plan:
    """One plan file: see the module's docstring and docs/plots.md."""

    def __init__(self, doc: dict, path: str = "<plan>"):
        if not isinstance(doc, dict) or doc.get("format") != "tidal-plan":
            raise PlanError(f"{path}: not a tidal plan (no \"format\": \"tidal-plan\")")
        if doc.get("version") != 1:
            raise PlanError(f"{path}: plan version {doc.get('version')}, this reader reads version 1")
        self.doc, self.path = doc, path
        try:
            self._read(doc)
            self._place()
        except (KeyError, TypeError, IndexError, ValueError, AttributeError) as err:
            raise PlanError(f"{path}: malformed plan: {err!r}") from None

    def _read(self, doc: dict) -> None:
        self.model: str = doc["model"]
        self.mode: str = doc.get("mode", "train")
        self.target: str = doc["target"]
        self.budget: Optional[int] = doc.get("budget_bytes")
        self.alignment: int = int(doc.get("alignment") or 1)
        self.cost_model: dict = doc.get("cost_model", {})
        self.arenas: Dict[str, dict] = {a["name"]: a for a in doc.get("arenas", [])}
        predicted = doc["predicted"]
        self.device_peak: int = predicted.get("peak_device_bytes", 0)
        self.host_peak: int = predicted.get("peak_host_bytes", 0)
        self.step_time_us: float = predicted.get("step_time_us", 0.0)
        self.copy_stall_us: float = predicted.get("copy_stall_us", 0.0)
        self.lower_bound: Optional[int] = doc.get("lower_bound_bytes")
        baseline = doc.get("baseline") or {}
        self.baseline_device_peak: int = baseline.get("peak_device_bytes", 0)
        self.baseline_host_peak: int = baseline.get("peak_host_bytes", 0)
        self.baseline_step_time_us: Optional[float] = baseline.get("step_time_us")
        self.live_bytes: List[int] = [int(b) for b in doc["live_bytes"]]
        self.host_live_bytes: List[int] = [int(b) for b in doc.get("host_live_bytes", [])]
        self.ops: List[Op] = [
            Op(int(o["position"]), o["op"], o.get("name", ""), o.get("device", "host"), o.get("stream", ""),
               bool(o.get("kernel", True)), float(o.get("start_us", 0.0)), float(o.get("duration_us", 0.0)),
               int(o.get("flops", 0)), list(o.get("reads", [])), list(o.get("writes", [])), o.get("recompute_of"))
            for o in doc["schedule"]]
        self.tensors: List[Tensor] = []
        for t in doc["tensors"]:
            home = t.get("home") or {}
            live = (int(t["first_use"]), int(t["last_use"]))
            tensor = Tensor(int(t["id"]), t.get("name") or f"%{t['id']}", int(t["bytes"]), live[0], live[1],
                            home.get("space", "host"), home.get("arena", ""), int(home.get("offset", 0)),
                            int(t.get("buffer", t["id"])), _interval(t.get("buffer_live"), live), t.get("role"),
                            t.get("producer"), t.get("view_of"), t.get("in_place_of"), t.get("copy_of"))
            for s in t.get("swaps") or []:
                tensor.swaps.append(Swap(tensor.id, tensor.name, int(s.get("bytes", tensor.bytes)), int(s["offload"]),
                                         int(s.get("offload_wait", s["offload"])), s.get("host_tensor"),
                                         [Prefetch(int(p["prefetch"]), int(p.get("prefetch_wait", p["prefetch"])),
                                                   p.get("device_tensor")) for p in s.get("prefetches", [])]))
            self.tensors.append(tensor)
        by_id = {t.id: t for t in self.tensors}
        for t, raw in zip(self.tensors, doc["tensors"]):
            end = t.buffer_live[1]
            for r in sorted(raw.get("recomputations") or [], key=lambda r: r["position"]):
                position, clone = int(r["position"]), r.get("tensor")
                dropped = (end, position) if end < position else None
                t.recomputations.append(Recomputation(t.id, t.name, t.bytes, position, clone, dropped))
                clone_end = by_id[clone].buffer_live[1] if clone in by_id else position
                end = clone_end if dropped else max(end, clone_end)

    def _place(self) -> None:
        """Each tensor's `placement`, and the lists of what the planner did,
        by the rules of tidalc --explain (lib/Target/PlanExplain.cpp)."""
        self.swaps: List[Swap] = []  # swapped tensors: to the host and back
        self.sent_to_host: List[Swap] = []  # device tensors copied out for host ops
        self.recomputations: List[Recomputation] = []  # those that dropped a tensor
        self.streamed: List[Tensor] = []  # parameters in host memory, prefetched before use
        self.host_state: List[Tensor] = []  # arguments in host memory used only there (ZeRO-Offload)
        self.host_ops: List[Op] = []  # kernels on the host of a device target
        prefetched: Dict[int, List[int]] = {}
        for op in self.ops:
            if op.op == "tidal.prefetch" and op.reads:
                prefetched.setdefault(op.reads[0], []).append(op.position)
        self.refetches = 0
        if self.on_device:
            self.host_ops = [o for o in self.ops if o.device == "host" and o.kernel]
        host_layer_at = {o.position for o in self.host_ops if not o.is_update}
        for t in self.tensors:
            if t.arena == "constants":
                t.placement = "constant"
            elif not self.on_device:
                t.placement = "host"
            elif t.copy_of is not None:
                t.placement = "copy"  # an offload's host bytes, a prefetched device copy or their waits
            elif t.role and t.space == "host":
                t.placement = "streamed" if t.id in prefetched else "host"
                (self.streamed if t.id in prefetched else self.host_state).append(t)
                self.refetches += max(len(prefetched.get(t.id, [])) - 1, 0)
            elif t.space == "host":
                t.placement = "host layer" if t.producer in host_layer_at else "host"
            elif any(s.prefetches for s in t.swaps):
                t.placement = "swapped"
            elif t.swaps:
                t.placement = "to host"
            elif any(r.dropped for r in t.recomputations):
                t.placement = "recomputed"
            else:
                t.placement = "device"
            for s in t.swaps:
                (self.swaps if s.prefetches else self.sent_to_host).append(s)
                self.refetches += max(len(prefetched.get(s.host_tensor, [])) - 1, 0)
            self.recomputations += [r for r in t.recomputations if r.dropped]
        self.swaps.sort(key=lambda s: (s.offload, s.tensor))
        self.sent_to_host.sort(key=lambda s: (s.offload, s.tensor))
        self.recomputations.sort(key=lambda r: (r.position, r.tensor))
        self.host_layers: List[Op] = [o for o in self.host_ops if not o.is_update]
        self.clones: List[Op] = [o for o in self.ops if o.recompute_of is not None]

    @property
    def on_device(self) -> bool:
        """A device target (sim, cuda): a device arena, a budget, copies."""
        return self.target != "cpu"

    @property
    def positions(self) -> int:
        """The number of positions, 0..N+1 (entry, the ops, exit)."""
        return len(self.live_bytes)

    def op_at(self, position: int) -> Optional[Op]:
        index = position - 1
        if 0 <= index < len(self.ops) and self.ops[index].position == position:
            return self.ops[index]
        return next((o for o in self.ops if o.position == position), None)

    def occupancy(self) -> Occupancy:
        """Bytes in use at each position, from the tensors (see Occupancy).
        O((B + N) log B) for B buffers over N positions."""
        n = self.positions
        buffers: Dict[Tuple[str, int], list] = {}
        for t in self.tensors:
            if t.arena == "constants":
                continue
            size = -(-t.bytes // self.alignment) * self.alignment
            entry = buffers.setdefault((t.arena, t.buffer), [0, t.offset, t.buffer_live, t.space])
            entry[0] = max(entry[0], size)
        arenas: Dict[str, list] = {}  # arena -> (space, [(first, last, size, offset)])
        for (arena, _), (size, offset, (first, last), space) in buffers.items():
            first, last = max(first, 0), min(last, n - 1)
            if first <= last:
                arenas.setdefault(arena, [space if self.on_device else "host", []])[1].append(
                    (first, last, size, offset))
        series = {space: ([0] * n, [0] * n) for space in ("device", "host")}
        for space, spans in arenas.values():
            used, top = series[space]
            delta = [0] * (n + 1)
            for first, last, size, _ in spans:
                delta[first] += size
                delta[last + 1] -= size
            running = 0
            for i in range(n):
                running += delta[i]
                used[i] += running
            # The highest live byte: a max-heap of ends, each dropped once its buffer is dead.
            spans.sort()
            heap: List[Tuple[int, int]] = []
            k = 0
            for i in range(n):
                while k < len(spans) and spans[k][0] == i:
                    heapq.heappush(heap, (-(spans[k][3] + spans[k][2]), spans[k][1]))
                    k += 1
                while heap and heap[0][1] < i:
                    heapq.heappop(heap)
                top[i] += -heap[0][0] if heap else 0  # separate arenas of one space stack
        constants = int(self.arenas.get("constants", {}).get("bytes", 0))
        return Occupancy(series["device"][0], series["device"][1], series["host"][0], series["host"][1], constants)

    def summary(self) -> str:
        """A few lines: the compile, the peaks, what the planner did, the time."""
        head = f"{self.model} on {self.target}"
        if self.budget:
            head += f", device budget {format_bytes(self.budget)} ({self.budget} bytes)"
        lines = [head]
        if self.on_device:
            lines.append(f"device peak {format_bytes(self.device_peak)} (without planning "
                         f"{format_bytes(self.baseline_device_peak)}); host {format_bytes(self.host_peak)}")
            moved = sum(s.bytes for s in self.swaps)
            lines.append(f"{len(self.swaps)} swaps ({format_bytes(moved)}), {len(self.recomputations)} recomputations "
                         f"({len(self.clones)} clone ops), {len(self.streamed)} streamed parameters, "
                         f"{len(self.host_state)} host-state tensors")
            lines.append(f"{len(self.host_ops)} ops on the host ({len(self.host_layers)} layers, "
                         f"{len(self.host_ops) - len(self.host_layers)} optimizer updates), "
                         f"{len(self.sent_to_host)} tensors sent to them, {self.refetches} refetches")
        else:
            lines.append(f"host peak {format_bytes(self.host_peak)} (without planning "
                         f"{format_bytes(self.baseline_host_peak)})")
        stall = f" (copy stall {self.copy_stall_us / 1e3:.2f} ms)" if self.on_device else ""
        lines.append(f"predicted step {self.step_time_us / 1e3:.2f} ms{stall}, {len(self.ops)} ops")
        return "\n".join(lines)

    def plot(self, path: str, title: Optional[str] = None) -> None:
        """Draws the plan into `path` (PNG, SVG or PDF by its extension)."""
        from tidal import plot
        plot.plot(self, path, title=title)

    def __repr__(self) -> str:
        return f"<tidal.plan.Plan {self.model} on {self.target}, {len(self.ops)} ops, budget {self.budget}>"


def load(source: Union[str, dict]) -> Plan:
    """A Plan from a plan file's path or its parsed JSON."""
    if isinstance(source, dict):
        return Plan(source)
    try:
        with open(source) as f:
            doc = json.load(f)
    except OSError as err:
        raise PlanError(f"{source}: cannot read: {err.strerror or err}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise PlanError(f"{source}: not JSON: {err}") from None
    return Plan(doc, source)
