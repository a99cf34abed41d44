"""Plays a Trace through an embedded Cluster.

Each arrival's objects are created at its time; the cluster runs between arrivals (time
jumps over idle stretches at no cost). Every pod is recorded as it appears, its arrival
being that of the object that made it (a Job's pods arrive with the Job). A bare pod that
has ended is deleted, as the trace's pods were; a Job goes once finished (the replay's Jobs
set ttlSecondsAfterFinished: 0), so the cluster holds only live work however long the trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
import gc
import time
from typing import Any, Callable

from volcanic.cluster import Cluster
from volcanic.kube.informers import Handler
from volcanic.kube.keys import GROUP_NAME, POD_QUEUE_NAME
from volcanic.kube.keys import QUEUE_NAME as JOB_QUEUE_NAME
from volcanic.kube.objects import annotations_of, dig, spec_of, status_of
from volcanic.sim.fragmentation import Shape, pod_shape
from volcanic.sim.trace import CARDS_OF_POD, Obj, Trace, requests_of

TERMINAL = ("Succeeded", "Failed")


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


@dataclass
class Replay:
    """One trace played through one scheduler configuration."""

    trace: str
    cluster: Cluster
    expected_pods: int = 0  # what the trace's arrivals make
    pods: dict[str, PodRecord] = field(default_factory=dict)  # "ns/name" -> its record
    arrived: dict[tuple[str, str, str], float] = field(default_factory=dict)  # (kind, ns, name) -> time
    ended: int = 0  # pods that have ended
    wall_s: float = 0.0

    def frame(self) -> Any:
        """The pods as a pandas DataFrame (volcanic.sim.frames.pod_rows' columns)."""
        from volcanic.sim.frames import pods_frame
        return pods_frame(self)


def replay(trace: Trace, conf: Any = None, limit: float = 365 * 86400.0,
           progress: Callable[[int], None] | None = None, cluster: Cluster | None = None) -> Replay:
    """Plays `trace` until every pod has ended or `limit` seconds after the last arrival;
    `progress(n)` is told of arrivals as they are made. `cluster`: a new one to play into
    instead of Cluster(conf) (one with its own admission or schedule period)."""
    started = time.perf_counter()
    run = Replay(trace.name, cluster if cluster is not None else Cluster(conf), trace.pods)
    cluster = run.cluster
    cluster.informers.add_handler("Pod", Handler(on_add=partial(_pod_added, run), on_update=partial(_pod_changed, run),
                                                 on_delete=partial(_pod_deleted, run)))
    for obj in trace.nodes + trace.setup:
        cluster.api.create(obj)
    cluster.run(0)  # new queues are opened
    # The trace and the nodes live through the replay: frozen, the collector's full passes
    # do not walk them again and again (a tenth of a second each on the openb trace).
    gc.freeze()
    try:
        for arrival in trace.arrivals:
            cluster.run(max(0.0, arrival.time - cluster.now))
            for obj in arrival.objects:
                meta = obj["metadata"]
                run.arrived[(obj["kind"], meta.get("namespace", "default"), meta["name"])] = cluster.now
                cluster.api.create(obj)
            if progress:
                progress(1)
        cluster.run_until(lambda c: run.ended >= run.expected_pods, limit=limit)
    finally:
        gc.unfreeze()
    run.wall_s = time.perf_counter() - started
    return run


def _pod_added(run: Replay, pod: Obj) -> None:
    """A pod arrives with the object that made it, its job: itself, or its owner (a Job)."""
    key = _key(pod)
    record = run.pods.get(key)
    if record is not None:
        if record.phase == "Running":  # a replacement for a pod deleted while Running: its own start is to come
            record.phase = "Pending"
        return
    meta = pod["metadata"]
    owners = [(ref.get("kind"), meta["namespace"], ref.get("name")) for ref in meta.get("ownerReferences") or ()]
    arrival = next((run.arrived[o] for o in owners if o in run.arrived),
                   run.arrived.get(("Pod", meta["namespace"], meta["name"]), run.cluster.now))
    job = next((f"{ns}/{name}" for kind, ns, name in owners if kind == "Job"), key)
    run.pods[key] = PodRecord(key, arrival, job=job, queue=_queue(run, pod), spec=spec_of(pod))


def _queue(run: Replay, pod: Obj) -> str:
    """Its PodGroup's queue when the group exists (a Job's does before its pods), else what
    the controllers will read: the job controller's or the pod's queue annotation."""
    annotations = annotations_of(pod)
    group = run.cluster.informers.get("PodGroup", annotations.get(GROUP_NAME, ""), pod["metadata"]["namespace"])
    return (dig(group, "spec", "queue") or annotations.get(JOB_QUEUE_NAME)
            or annotations.get(POD_QUEUE_NAME) or "default")


def _key(pod: Obj) -> str:
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


def _pod_deleted(run: Replay, pod: Obj) -> None:
    """A pod deleted while Running was cut short: its run is kept in `interrupted`; a
    replacement of the same name (a Job's) overwrites start and node when it runs."""
    record = run.pods.get(_key(pod))
    if record is not None and record.start is not None and status_of(pod).get("phase") == "Running":
        record.interrupted.append((record.start, run.cluster.now, record.node))


def _pod_changed(run: Replay, old: Obj, pod: Obj) -> None:
    record = run.pods.get(_key(pod))
    phase = status_of(pod).get("phase")
    if record is None or record.phase == phase:
        return
    now = run.cluster.now
    record.phase = phase
    if phase == "Running":
        record.start, record.node = now, pod["spec"].get("nodeName")
        record.gpu_cards = annotations_of(pod).get(CARDS_OF_POD, "")
    elif phase in TERMINAL:
        record.end = now
        run.ended += 1
        if not pod["metadata"].get("ownerReferences"):  # a Job's pods go with it
            run.cluster.api.delete("Pod", pod["metadata"]["name"], pod["metadata"]["namespace"])
