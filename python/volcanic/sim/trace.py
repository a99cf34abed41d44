"""A trace: the nodes of a cluster and what arrives on it, when, and for how long.

Readers (openb.py, jobs.py) turn files into a Trace; replay.py plays one through a Cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
import math
import os

from volcanic.kube.objects import Obj
from volcanic.kube.quantity import pod_requests_milli


@dataclass(frozen=True)
class Arrival:
    """Objects created together at `time` (seconds from the trace's start): a pod, or a Job."""

    time: float
    objects: tuple[Obj, ...]
    pods: int  # how many pods the objects make (a Job's tasks' replicas, or 1 for a pod)
    gpus: float = 0.0  # the GPUs they ask for (whole GPUs; a share counts its fraction)


@dataclass
class Trace:
    name: str
    nodes: list[Obj]
    arrivals: list[Arrival] = field(default_factory=list)  # in time order; ties in trace order
    setup: list[Obj] = field(default_factory=list)  # Queues, PriorityClasses: made after the nodes

    @property
    def pods(self) -> int:
        return sum(a.pods for a in self.arrivals)


def loaded(trace: Trace, load: float) -> Trace:
    """The trace with every arrival time divided by `load` (> 0): the same work arriving
    `load` times as fast (2: in half the time), each pod running as long as before."""
    if not (isinstance(load, (int, float)) and load > 0 and math.isfinite(load)):
        raise ValueError(f"load: must be a finite number > 0, got {load!r}")
    if load == 1:
        return trace
    return replace(trace, arrivals=[replace(a, time=a.time / load) for a in trace.arrivals])


# GPUs are Volcano's vGPU resources, accounted per card by the deviceshare plugin
# (docs/simulation.md): a pod asks for VGPU_NUMBER cards with VGPU_CORES percent of each.
VGPU_NUMBER, VGPU_CORES, VGPU_MEMORY = "volcano.sh/vgpu-number", "volcano.sh/vgpu-cores", "volcano.sh/vgpu-memory"
CARDS_OF_POD = "volcano.sh/vgpu-ids-new"  # the cards a pod got: "UUID,type,memory,cores:" per card
VGPU_REGISTER = "volcano.sh/node-vgpu-register"  # a node's cards: "UUID,sharers,memoryMiB,type,health,mode:"


def requests_of(pod: Obj) -> dict[str, float]:
    """A pod's requests by the engine's rule, in plain units (cores, bytes, cards, ...)."""
    return {name: milli / 1000 for name, (milli, _) in pod_requests_milli(pod["spec"]).items()}


def gpus_of(requests: dict[str, float]) -> float:
    """The GPUs a pod's vGPU requests take, in whole cards: number x cores / 100 (a pod
    asking for no cores takes none, as HAMi counts it)."""
    return requests.get(VGPU_NUMBER, 0.0) * requests.get(VGPU_CORES, 0.0) / 100


def line_of(path: str, line: int) -> str:
    """`FILE line N` for messages about a trace file's line (the file's base name)."""
    return f"{os.path.basename(path)} line {line}"
