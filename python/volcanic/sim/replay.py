"""Plays a Trace through an embedded Cluster.

Each arrival's objects are created at its time; the cluster runs between arrivals (time
jumps over idle stretches at no cost). A pod that has ended is recorded and deleted, as the
trace's pods are deleted when they end, so the cluster holds only live work however long
the trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import time
from typing import Any, Callable

from volcanic.cluster import Cluster
from volcanic.kube.informers import Handler
from volcanic.kube.quantity import pod_requests
from volcanic.sim.trace import Obj, Trace

TERMINAL = ("Succeeded", "Failed")


@dataclass
class PodRecord:
    name: str
    arrival: float  # virtual seconds since the cluster's start
    start: float | None = None  # Running
    end: float | None = None  # Succeeded or Failed
    node: str | None = None
    phase: str = "Pending"
    requests: dict[str, float] = field(default_factory=dict)  # resource -> amount (cores, bytes, ...)


@dataclass
class Replay:
    """One trace played through one scheduler configuration."""

    trace: str
    cluster: Cluster
    pods: dict[str, PodRecord] = field(default_factory=dict)  # "ns/name" -> its record
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
    run = Replay(trace.name, cluster if cluster is not None else Cluster(conf))
    cluster = run.cluster
    cluster.informers.add_handler("Pod", Handler(on_update=lambda old, new: _pod_changed(run, new)))
    for node in trace.nodes:
        cluster.api.create(node)
    cluster.run(0)
    for arrival in trace.arrivals:
        cluster.run(max(0.0, arrival.time - cluster.now))
        for obj in arrival.objects:
            created = cluster.api.create(obj)
            if created["kind"] == "Pod":
                run.pods[_key(created)] = PodRecord(_key(created), cluster.now, requests=_requests(created))
        if progress:
            progress(1)
    cluster.run_until(lambda c: all(r.end is not None for r in run.pods.values()), limit=limit)
    run.wall_s = time.perf_counter() - started
    return run


def _requests(pod: Obj) -> dict[str, float]:
    return {name: float(q[0]) for name, q in pod_requests(pod["spec"]).items()}


def _key(pod: Obj) -> str:
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


def _pod_changed(run: Replay, pod: Obj) -> None:
    record = run.pods.get(_key(pod))
    phase = (pod.get("status") or {}).get("phase")
    if record is None or record.phase == phase:
        return
    now = run.cluster.now
    record.phase = phase
    if phase == "Running":
        record.start, record.node = now, pod["spec"].get("nodeName")
    elif phase in TERMINAL:
        record.end = now
        run.cluster.api.delete("Pod", pod["metadata"]["name"], pod["metadata"]["namespace"])
