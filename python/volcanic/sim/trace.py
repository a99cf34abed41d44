"""A trace: the nodes of a cluster and what arrives on it, when, and for how long.

Readers (openb.py, jobs.py) turn files into a Trace; replay.py plays one through a Cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]


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


# GPUs as an extended resource of 1000 per GPU, so a pod may ask for a share of one. The node
# accounts only for its sum: per-GPU accounting is the deviceshare plugin's (issue 13).
GPU_SHARE = "volcanic/gpu-milli"
