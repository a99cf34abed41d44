"""What a simulation leaves: plain records, fixed once the run returns. The drivers
(replay.py, fill.py) fill them in; the metrics, the rows and frames, and the plots read
them, never a live cluster.

- PodRecord: one pod of a replay (arrival, start, end, node, phase, requests, ...);
- ClusterState: the embedded cluster as a replay left it, a snapshot read like a Cluster
  (list, get, frame, now, errors, sessions);
- Replay: one trace through one configuration: its pods' records and the ClusterState;
- Fill: fill mode's GPU curve and counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from volcanic.kube.clock import EPOCH
from volcanic.kube.kinds import kind_named
from volcanic.kube.objects import Obj, clone, meta_of, namespace_of
from volcanic.sim.fragmentation import Shape, pod_shape
from volcanic.sim.trace import requests_of

POD_COLUMNS = ("pod", "arrival", "start", "end", "wait", "node", "phase")
CURVE_COLUMNS = ("pods", "arrived", "allocated", "fragmented")


class PodRecord:
    """One pod of a replay: when it arrived, ran and ended, where, and what it asked for.

    name: "ns/name"; arrival, start (Running), end (Succeeded or Failed): virtual seconds
    since the cluster's start, None when not reached; node; phase; job: "ns/name" of its
    owner Job, or the pod's own key for a bare pod; queue.
    interrupted: runs cut short, (start, end, node): an earlier pod of this name deleted
    while Running (evicted by preempt or reclaim, or restarted with its Job). A Job's
    replacement pod has the same name, so without these a reclaim's victims would look as
    if they never ran.
    gpu_cards: the vGPU cards it ran on (its volcano.sh/vgpu-ids-new annotation).
    requests: resource -> amount (cores, bytes, cards, ...) by the engine's rule, and
    shape (fragmentation.py): read from `spec` (the pod's, as created; shared, read-only)
    when first asked, so a replay spends nothing on what only its metrics read.
    """

    __slots__ = ("name", "arrival", "start", "end", "node", "phase", "job", "queue", "interrupted",
                 "gpu_cards", "spec", "_requests", "_shape")

    def __init__(self, name: str, arrival: float, start: float | None = None, end: float | None = None,
                 node: str | None = None, phase: str = "Pending", requests: dict[str, float] | None = None,
                 job: str = "", queue: str = "default",
                 interrupted: list[tuple[float, float, str | None]] | None = None, gpu_cards: str = "",
                 spec: Obj | None = None) -> None:
        self.name, self.arrival, self.start, self.end, self.node, self.phase = name, arrival, start, end, node, phase
        self.job, self.queue, self.gpu_cards, self.spec = job, queue, gpu_cards, spec
        self.interrupted = interrupted if interrupted is not None else []
        self._requests = {} if requests is None and spec is None else requests  # None: from spec, later
        self._shape: Shape | None = None

    @property
    def requests(self) -> dict[str, float]:
        if self._requests is None:
            self._requests = requests_of({"spec": self.spec})
        return self._requests

    @property
    def shape(self) -> Shape | None:
        """None for a record made without a spec."""
        if self._shape is None and self.spec is not None:
            self._shape = pod_shape({"spec": self.spec}, self.requests)
        return self._shape

    def __repr__(self) -> str:
        return (f"PodRecord({self.name!r}, arrival={self.arrival}, start={self.start}, end={self.end}, "
                f"node={self.node!r}, phase={self.phase!r}, job={self.job!r}, queue={self.queue!r})")


@dataclass(frozen=True)
class ClusterState:
    """The embedded cluster as a run left it: a snapshot that reads like the Cluster it was
    taken from (list, get and frame copy out of it; now, started, errors), and that nothing
    changes any more. volcanic.sim.replay.snapshot(cluster) takes one.

    objects: kind -> its objects in the store's order (by namespace, then name), the
    committed objects themselves: read-only (objects_of hands them out, without copies).
    """

    now: float = 0.0  # virtual seconds since the cluster's start
    started: float = EPOCH  # the Unix time of the start (timestamps minus this: virtual seconds)
    sessions: int = 0  # scheduling sessions run
    errors: list[str] = field(default_factory=list)  # requests controllers could not process
    objects: Mapping[str, tuple[Obj, ...]] = field(default_factory=dict)

    def objects_of(self, kind: str) -> tuple[Obj, ...]:
        """The objects of `kind` themselves, not copies: for readers that only look."""
        return self.objects.get(kind_named(kind).name, ())

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        """As Cluster.list: copies; namespace=None means all (ignored for cluster-scoped kinds)."""
        return [clone(o) for o in self._in(kind, namespace)]

    def get(self, kind: str, name: str, namespace: str = "default") -> Obj | None:
        """As Cluster.get: a copy, or None."""
        found = next((o for o in self._in(kind, namespace) if meta_of(o).get("name") == name), None)
        return None if found is None else clone(found)

    def _in(self, kind: str, namespace: str | None) -> list[Obj]:
        k = kind_named(kind)
        return [o for o in self.objects_of(k.name) if namespace is None or not k.namespaced
                or namespace_of(o) == namespace]

    def frame(self, kind: str, namespace: str | None = None) -> Any:
        """As Cluster.frame: the objects as a pandas DataFrame, fields flattened into columns."""
        from volcanic.cluster.report import objects_frame
        return objects_frame(self.list(kind, namespace), self.started)


@dataclass
class Replay:
    """One trace played through one scheduler configuration, as the replay recorded it."""

    trace: str
    cluster: ClusterState = field(default_factory=ClusterState)  # as the run left it (a snapshot)
    expected_pods: int = 0  # what the trace's arrivals make
    pods: dict[str, PodRecord] = field(default_factory=dict)  # "ns/name" -> its record
    wall_s: float = 0.0

    def frame(self) -> Any:
        """The pods as a pandas DataFrame (pod_rows' columns, indexed by pod)."""
        from volcanic.cluster.report import require_pandas
        return require_pandas().DataFrame(pod_rows(self)).set_index("pod")


def pod_rows(run: Replay) -> list[dict[str, Any]]:
    """One row per pod: times in virtual seconds from the start (None when not reached),
    wait = start - arrival, and its requests as `req_<resource>` columns."""
    names = sorted({name for r in run.pods.values() for name in r.requests})
    rows = []
    for r in run.pods.values():
        row = {"pod": r.name, "arrival": r.arrival, "start": r.start, "end": r.end,
               "wait": None if r.start is None else r.start - r.arrival, "node": r.node, "phase": r.phase}
        row.update({f"req_{name}": r.requests.get(name, 0.0) for name in names})
        rows.append(row)
    return rows


@dataclass
class Fill:
    """Fill mode's result (fill.py): the GPU curve, a point per pod, and the counts."""

    trace: str
    curve: list[dict[str, float]] = field(default_factory=list)  # CURVE_COLUMNS, one row per pod
    pods_total: int = 0
    pods_scheduled: int = 0
    sessions: int = 0
    wall_s: float = 0.0

    def at(self, arrived: float) -> dict[str, float]:
        """The first point where the arrived workload reached `arrived` (else the last)."""
        return next((p for p in self.curve if p["arrived"] >= arrived), self.curve[-1] if self.curve else {})

    def frame(self) -> Any:
        """The curve as a pandas DataFrame."""
        from volcanic.cluster.report import require_pandas
        return require_pandas().DataFrame(self.curve, columns=list(CURVE_COLUMNS))
