"""Plays a Trace through an embedded Cluster.

Each arrival's objects are created at its time; the cluster runs between arrivals (time
jumps over idle stretches at no cost). Every pod is recorded as it appears, its arrival
being that of the object that made it (a Job's pods arrive with the Job). A bare pod that
has ended is deleted, as the trace's pods were; a Job goes once finished (the replay's Jobs
set ttlSecondsAfterFinished: 0), so the cluster holds only live work however long the trace.

What it returns is a record (volcanic.sim.records.Replay): the pods' records and a snapshot of
the cluster as the run left it (ClusterState), never the live cluster.
"""

from __future__ import annotations

from functools import partial
import gc
import time
from typing import Any, Callable

from volcanic.cluster import Cluster
from volcanic.kube.informers import Handler
from volcanic.kube.keys import GROUP_NAME, POD_QUEUE_NAME
from volcanic.kube.keys import QUEUE_NAME as JOB_QUEUE_NAME
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import annotations_of, dig, spec_of, status_of
from volcanic.sim.records import ClusterState, PodRecord, Replay
from volcanic.sim.trace import CARDS_OF_POD, Obj, Trace

TERMINAL = ("Succeeded", "Failed")


def snapshot(cluster: Cluster) -> ClusterState:
    """The cluster as it is now, fixed. The committed objects are shared, not copied: the
    store replaces an object it changes and never edits one (docs/development.md)."""
    committed = cluster.api.store.shared
    return ClusterState(now=cluster.now, started=cluster.started, sessions=cluster.scheduler.sessions,
                        errors=list(cluster.errors), objects={kind: tuple(committed.list(kind)) for kind in KINDS})


class _Recorder:
    """What the Pod handler records while the replay runs; closed when the replay returns,
    so the records stay as they were then even if the cluster (a caller's) runs on."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.pods: dict[str, PodRecord] = {}  # "ns/name" -> its record
        self.arrived: dict[tuple[str, str, str], float] = {}  # (kind, ns, name) -> time
        self.ended = 0  # pods that have ended
        self.open = True


def replay(trace: Trace, conf: Any = None, limit: float = 365 * 86400.0,
           progress: Callable[[int], None] | None = None, cluster: Cluster | None = None,
           after_arrival: Callable[[Cluster, int], None] | None = None) -> Replay:
    """Plays `trace` until every pod has ended or `limit` seconds after the last arrival;
    `progress(n)` is told of arrivals as they are made. `cluster`: a new one to play into
    instead of Cluster(conf) (one with its own admission or schedule period).
    `after_arrival(cluster, i)` is called once the objects of `trace.arrivals[i]` are created
    (an observer such as forecast_error's, which may run the cluster for 0 seconds: the
    replay would settle the same work at that instant next)."""
    started = time.perf_counter()
    cluster = cluster if cluster is not None else Cluster(conf)
    run = _Recorder(cluster)
    expected = trace.pods  # what the trace's arrivals make
    cluster.informers.add_handler("Pod", Handler(on_add=partial(_pod_added, run), on_update=partial(_pod_changed, run),
                                                 on_delete=partial(_pod_deleted, run)))
    for obj in trace.nodes + trace.setup:
        cluster.api.create(obj)
    cluster.run(0)  # new queues are opened
    # The trace and the nodes live through the replay: frozen, the collector's full passes
    # do not walk them again and again (a tenth of a second each on the openb trace).
    gc.freeze()
    try:
        for i, arrival in enumerate(trace.arrivals):
            cluster.run(max(0.0, arrival.time - cluster.now))
            for obj in arrival.objects:
                meta = obj["metadata"]
                run.arrived[(obj["kind"], meta.get("namespace", "default"), meta["name"])] = cluster.now
                cluster.api.create(obj)
            if after_arrival:
                after_arrival(cluster, i)
            if progress:
                progress(1)
        cluster.run_until(lambda c: run.ended >= expected, limit=limit)
    finally:
        gc.unfreeze()
        run.open = False
    wall_s = time.perf_counter() - started
    return Replay(trace.name, snapshot(cluster), expected, run.pods, wall_s)


def _pod_added(run: _Recorder, pod: Obj) -> None:
    """A pod arrives with the object that made it, its job: itself, or its owner (a Job)."""
    if not run.open:
        return
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


def _queue(run: _Recorder, pod: Obj) -> str:
    """Its PodGroup's queue when the group exists (a Job's does before its pods), else what
    the controllers will read: the job controller's or the pod's queue annotation."""
    annotations = annotations_of(pod)
    group = run.cluster.informers.get("PodGroup", annotations.get(GROUP_NAME, ""), pod["metadata"]["namespace"])
    return (dig(group, "spec", "queue") or annotations.get(JOB_QUEUE_NAME)
            or annotations.get(POD_QUEUE_NAME) or "default")


def _key(pod: Obj) -> str:
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


def _pod_deleted(run: _Recorder, pod: Obj) -> None:
    """A pod deleted while Running was cut short: its run is kept in `interrupted`; a
    replacement of the same name (a Job's) overwrites start and node when it runs."""
    record = run.pods.get(_key(pod)) if run.open else None
    if record is not None and record.start is not None and status_of(pod).get("phase") == "Running":
        record.interrupted.append((record.start, run.cluster.now, record.node))


def _pod_changed(run: _Recorder, old: Obj, pod: Obj) -> None:
    record = run.pods.get(_key(pod)) if run.open else None
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
