"""`fill` mode: the FGD paper's experiment (Weng et al., USENIX ATC'23, as the authors'
simulator runs it). The trace's pods arrive one at a time, in trace order (shuffled with a
seed when one is given), on the trace's GPU nodes only, and never leave; a pod the scheduler
cannot place is dropped. Pods are taken again from the start, renamed, until the GPUs they
asked for reach `until` times the cluster's GPU capacity. After each pod the curve records
the arrived workload, the allocated GPU and the fragmented GPU (fragmentation.py), each as a
share of the GPU capacity.

The pods go through the same engine and configuration a cluster runs (volcanic.Scheduler),
`batch` pods a session (placed exactly as one session per pod would place them: _place);
with no pod ever leaving or running, a Cluster's controllers and kubelets would add nothing
but time. A bound pod is upserted as the API server would return it (node, the binding's
annotations, Running), so later sessions count the cards it holds.
"""

from __future__ import annotations

import itertools
import random
import time
from typing import Any, Callable, Iterator

from volcanic.kube.clock import EPOCH, rfc3339
from volcanic.kube.objects import annotation, annotations_of
from volcanic.scheduler import Scheduler
from volcanic.sim.fragmentation import Ledger, Shape, pod_shape, typical_shapes
from volcanic.sim.frames import write_table
from volcanic.sim.records import CURVE_COLUMNS, Fill
from volcanic.sim.trace import CARDS_OF_POD, VGPU_REGISTER, Obj, Trace


def fill(trace: Trace, conf: Any = None, seed: int | None = None, until: float = 1.3,
         progress: Callable[[int], None] | None = None, batch: int = 256) -> Fill:
    """Runs the experiment; `batch` pods arrive between two sessions (see the module's doc)."""
    started = time.perf_counter()
    # A pod an arrival.
    pods = [(o, a.gpus, pod_shape(o)) for a in trace.arrivals for o in a.objects if o.get("kind") == "Pod"]
    if not pods:
        raise ValueError(f"fill mode: trace {trace.name} has no pods (fill takes a trace of pods, as openb's)")
    if seed is not None:
        random.Random(seed).shuffle(pods)
    nodes = [n for n in trace.nodes if annotation(n, VGPU_REGISTER)]
    ledger = Ledger(nodes, typical_shapes(shape for _, _, shape in pods))
    scheduler = Scheduler(conf, bare_pods_as_groups=True)  # the trace's pods are each a job of one
    for n in nodes:
        scheduler.upsert(n)
    run = Fill(trace.name)
    arrived = 0.0
    for chunk in _batches(_arrivals(pods, until * ledger.capacity / 100), batch):
        for (pod, gpus, shape), node in zip(chunk, _place(scheduler, [p for p, _, _ in chunk], EPOCH + run.pods_total)):
            arrived += gpus
            run.pods_total += 1
            if node:
                ledger.place(node, shape.cpu, pod["metadata"]["annotations"].get(CARDS_OF_POD, ""))
                run.pods_scheduled += 1
            allocated, fragmented = ledger.shares()
            run.curve.append({"pods": run.pods_total, "arrived": round(arrived * 100 / ledger.capacity, 6),
                              "allocated": round(allocated, 6), "fragmented": round(fragmented, 6)})
        run.sessions += 1
        if progress:
            progress(len(chunk))
    run.wall_s = time.perf_counter() - started
    return run


def _arrivals(pods: list[tuple[Obj, float, Shape]], limit: float) -> Iterator[tuple[Obj, float, Shape]]:
    """(pod, GPUs asked, shape) in order, again and again (renamed), until they asked for `limit`."""
    if not any(gpus for _, gpus, _ in pods):
        return
    asked = 0.0
    for round_ in itertools.count():
        for pod, gpus, shape in pods:
            if asked >= limit:
                return
            asked += gpus
            yield _renamed(pod, round_), gpus, shape


def _batches(pods: Iterator[Any], size: int) -> Iterator[list[Any]]:
    while chunk := list(itertools.islice(pods, size)):
        yield chunk


def _place(scheduler: Scheduler, pods: list[Obj], first: float) -> list[str | None]:
    """One session for the pods, the i-th created at `first` + i seconds: Volcano's allocate
    takes jobs of one queue and priority by creation time, and nothing leaves, so a session
    places them exactly as one session per pod would. Each pod's node (the pod updated as
    bound), or None when it did not fit (then it is dropped)."""
    for i, pod in enumerate(pods):
        pod["metadata"]["creationTimestamp"] = rfc3339(first + i)
        scheduler.upsert(pod)
    d = scheduler.run_once(first + len(pods), changed_only=True)
    placed = []
    for pod in pods:
        meta = pod["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        node = d.binds.get(key)
        if node is None:
            scheduler.delete("Pod", meta["name"], meta["namespace"])
        else:
            meta["annotations"] = {**annotations_of(pod), **d.bind_annotations.get(key, {})}
            pod["spec"] = dict(pod["spec"], nodeName=node)
            pod["status"] = {"phase": "Running"}
            scheduler.upsert(pod)
        placed.append(node)
    return placed


def _renamed(pod: Obj, round_: int) -> Obj:
    """A copy to place (the trace's stay untouched); from the second round on, renamed."""
    meta = dict(pod["metadata"])
    if round_:
        meta["name"] = f"{meta['name']}-r{round_}"
    return dict(pod, metadata=meta)



def fill_summary(run: Fill, policy: str) -> dict[str, Any]:
    """The JSON line of `volcanic simulate --mode fill`: counts, and the GPU shares when the
    arrived workload first reached the cluster's GPU capacity and at the end."""
    full, last = run.at(1.0), run.at(float("inf"))
    return {"policy": policy, "trace": run.trace, "mode": "fill", "pods_total": run.pods_total,
            "pods_scheduled": run.pods_scheduled, "pods_unschedulable": run.pods_total - run.pods_scheduled,
            "simulated_s": float(run.pods_total), "wall_s": round(run.wall_s, 3), "sessions": run.sessions,
            "gpu_allocated_share": last.get("allocated", 0.0), "gpu_fragmentation": last.get("fragmented", 0.0),
            "gpu_unallocated_at_full": round(1 - full.get("allocated", 0.0), 6),
            "gpu_fragmentation_at_full": full.get("fragmented", 0.0)}


def write_fill(run: Fill, summary: dict[str, Any], directory: str) -> None:
    """DIR/curve.csv (CURVE_COLUMNS, a row per pod) and DIR/summary.json."""
    write_table(directory, "curve.csv", run.curve, list(CURVE_COLUMNS), summary)
