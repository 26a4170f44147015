"""A tidal plan (`tidalc --emit plan`, docs/memory-plan.md) as Python
objects.

    plan = tidal.plan.load("plan.json")      # or trainer.plan
    plan.device_peak, plan.host_peak, plan.step_time_us
    plan.ops[i].device, plan.tensors[j].home, plan.swaps, plan.recomputations
    plan.occupancy()                          # device bytes at each position
    print(plan.summary()); plan.plot("plan.png")
"""

import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Union


class PlanError(ValueError):
    """The file is not a tidal plan (or not one this version reads)."""


@dataclass
class Op:
    position: int
    op: str
    name: str
    device: str  # "device" or "host"
    stream: str
    start_us: float
    duration_us: float
    reads: List[int]
    writes: List[int]
    recompute_of: Optional[int] = None

    @property
    def is_copy(self) -> bool:
        return self.op in ("tidal.offload", "tidal.prefetch")


@dataclass
class Tensor:
    id: int
    name: str
    bytes: int
    first_use: int
    last_use: int
    space: str  # where its home is: "device" or "host"
    arena: str
    offset: int
    buffer: int
    buffer_live: List[int]
    role: Optional[str] = None
    producer: Optional[int] = None


@dataclass
class Swap:
    """A tensor offloaded to host memory after `offload` and prefetched
    back at each of `prefetches` (schedule positions)."""
    tensor: int
    name: str
    bytes: int
    offload: int
    offload_wait: int
    prefetches: List[int] = field(default_factory=list)


@dataclass
class Recomputation:
    """A tensor dropped after its uses before `position` and computed again
    there."""
    tensor: int
    name: str
    bytes: int
    position: int


class Plan:
    def __init__(self, doc: dict, path: str = "<plan>"):
        if not isinstance(doc, dict) or doc.get("format") != "tidal-plan":
            raise PlanError(f"{path}: not a tidal plan (no \"format\": \"tidal-plan\")")
        if doc.get("version") != 1:
            raise PlanError(f"{path}: plan version {doc.get('version')}, this reader reads version 1")
        try:
            self._read(doc)
        except (KeyError, TypeError, IndexError) as err:
            raise PlanError(f"{path}: malformed plan: {err!r}") from None
        self.doc, self.path = doc, path

    def _read(self, doc: dict) -> None:
        self.model: str = doc["model"]
        self.target: str = doc["target"]
        self.budget: Optional[int] = doc.get("budget_bytes")
        predicted = doc["predicted"]
        self.device_peak: int = predicted.get("peak_device_bytes", 0)
        self.host_peak: int = predicted.get("peak_host_bytes", 0)
        self.step_time_us: float = predicted.get("step_time_us", 0.0)
        self.copy_stall_us: float = predicted.get("copy_stall_us", 0.0)
        baseline = doc.get("baseline", {})
        self.baseline_device_peak: int = baseline.get("peak_device_bytes", 0)
        self.baseline_host_peak: int = baseline.get("peak_host_bytes", 0)
        self.live_bytes: List[int] = list(doc["live_bytes"])
        self.ops = [Op(o["position"], o["op"], o.get("name", ""), o.get("device", "host"), o.get("stream", ""),
                       o.get("start_us", 0.0), o.get("duration_us", 0.0), list(o.get("reads", [])),
                       list(o.get("writes", [])), o.get("recompute_of")) for o in doc["schedule"]]
        self.tensors: List[Tensor] = []
        self.swaps: List[Swap] = []
        self.recomputations: List[Recomputation] = []
        for t in doc["tensors"]:
            home = t.get("home", {})
            name = t.get("name", f"%{t['id']}")
            self.tensors.append(Tensor(t["id"], name, t["bytes"], t["first_use"], t["last_use"],
                                       home.get("space", "host"), home.get("arena", ""), home.get("offset", 0),
                                       t.get("buffer", t["id"]), list(t.get("buffer_live", [t["first_use"],
                                                                                            t["last_use"]])),
                                       t.get("role"), t.get("producer")))
            for s in t.get("swaps", []):
                self.swaps.append(Swap(t["id"], name, s["bytes"], s["offload"], s.get("offload_wait", s["offload"]),
                                       [p["prefetch"] for p in s.get("prefetches", [])]))
            for r in t.get("recomputations", []):
                self.recomputations.append(Recomputation(t["id"], name, t["bytes"], r["position"]))
        self.host_ops = [o for o in self.ops if o.device == "host" and not o.is_copy]

    @property
    def positions(self) -> int:
        """Schedule positions 0..N+1 (entry, the ops, exit)."""
        return len(self.live_bytes)

    def occupancy(self) -> Dict[str, List[int]]:
        """Bytes in use at each position: "device" (the plan's live bytes;
        on the cpu target, the host arena) and "host" (the host arena of a
        device target: offloaded copies and host-placed tensors). The
        device maximum is the stated peak when packing meets its lower
        bound, and at most the peak (the packed arena) otherwise."""
        result = {"device" if self.target != "cpu" else "host": list(self.live_bytes)}
        if self.target != "cpu":
            host = [0] * self.positions
            seen = set()
            for t in self.tensors:
                if t.space != "host" or t.buffer in seen or t.arena == "constants":
                    continue
                seen.add(t.buffer)
                first, last = t.buffer_live
                for i in range(max(first, 0), min(last, self.positions - 1) + 1):
                    host[i] += t.bytes
            result["host"] = host
        return result

    def summary(self) -> str:
        mib = 1 << 20
        lines = [f"{self.model} on {self.target}" + (f", budget {self.budget / mib:.2f} MiB" if self.budget else "")]
        if self.target != "cpu":
            lines.append(f"device peak {self.device_peak / mib:.2f} MiB (without planning "
                         f"{self.baseline_device_peak / mib:.2f} MiB); host {self.host_peak / mib:.2f} MiB")
        else:
            lines.append(f"host peak {self.host_peak / mib:.2f} MiB (without planning "
                         f"{self.baseline_host_peak / mib:.2f} MiB)")
        swapped = sum(s.bytes for s in self.swaps)
        lines.append(f"{len(self.swaps)} swaps ({swapped / mib:.2f} MiB offloaded), {len(self.recomputations)} "
                     f"recomputations, {len(self.host_ops)} ops on the host")
        lines.append(f"predicted step {self.step_time_us / 1e3:.2f} ms (copy stall {self.copy_stall_us / 1e3:.2f} ms)")
        return "\n".join(lines)

    def plot(self, path: str, title: Optional[str] = None) -> None:
        """Draws the plan into `path` (PNG, SVG or PDF by its extension)."""
        from tidal import plot
        plot.plot(self, path, title=title)


def load(source: Union[str, dict]) -> Plan:
    """A Plan from a plan file's path or its parsed JSON."""
    if isinstance(source, dict):
        return Plan(source)
    try:
        with open(source) as f:
            doc = json.load(f)
    except OSError as err:
        raise PlanError(f"{source}: cannot read: {err.strerror}") from None
    except json.JSONDecodeError as err:
        raise PlanError(f"{source}: not JSON: {err}") from None
    return Plan(doc, source)
