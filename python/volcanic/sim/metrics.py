"""What a replay measured, as one flat dict (one JSON object per policy in `volcanic simulate`)."""

from __future__ import annotations

import math
from typing import Any

from volcanic.kube.quantity import parse_quantity
from volcanic.sim.fragmentation import Ledger, typical_shapes
from volcanic.sim.replay import Replay
from volcanic.sim.trace import VGPU_CORES, gpus_of

VGPU_PREFIX = "volcano.sh/vgpu-"


def summary(run: Replay, policy: str) -> dict[str, Any]:
    """pods_* counts, waits (arrival to Running) as nearest-rank percentiles, the mean
    utilization of each node resource over the simulated time (allocated while Running; GPUs
    counted per card as `gpu`), and the mean allocated and fragmented GPU shares."""
    pods = list(run.pods.values())
    now = run.cluster.now
    waits = sorted(p.start - p.arrival for p in pods if p.start is not None)
    capacity = {name: v for name, v in _capacity(run).items() if not name.startswith(VGPU_PREFIX)}
    capacity["gpu"] = _capacity(run).get(VGPU_CORES, 0.0) / 100
    used = {name: 0.0 for name in capacity}
    for p in pods:
        if p.start is not None:
            held = (p.end if p.end is not None else now) - p.start
            for name, amount in {**p.requests, "gpu": gpus_of(p.requests)}.items():
                if name in used:
                    used[name] += amount * held
    utilization = {name: round(used[name] / (capacity[name] * now), 6) if capacity[name] and now else 0.0
                   for name in sorted(capacity)}
    scheduled = sum(p.start is not None for p in pods)
    total = max(run.expected_pods, len(pods))  # a Job never admitted made no pods yet
    return {"policy": policy, "trace": run.trace, "pods_total": total, "pods_scheduled": scheduled,
            "pods_succeeded": sum(p.phase == "Succeeded" for p in pods),
            "pods_failed": sum(p.phase == "Failed" for p in pods),
            "pods_unschedulable": total - scheduled,
            "simulated_s": now, "wall_s": round(run.wall_s, 3), "sessions": run.cluster.scheduler.sessions,
            "wait_p50_s": _percentile(waits, 50), "wait_p99_s": _percentile(waits, 99),
            "utilization": utilization, "gpu_allocated_share": utilization["gpu"],
            "gpu_fragmentation": mean_fragmentation(run)}


def mean_fragmentation(run: Replay) -> float:
    """The fragmented share of the GPU capacity (fragmentation.py, with the shapes of the
    run's pods), averaged over the simulated time."""
    events = sorted([(p.start, 1, p) for p in run.pods.values() if p.start is not None]
                    + [(p.end, -1, p) for p in run.pods.values() if p.start is not None and p.end is not None],
                    key=lambda e: (e[0], e[1]))  # at one instant, ends before starts
    ledger = Ledger(run.cluster.informers.list("Node"), typical_shapes(p.shape for p in run.pods.values() if p.shape))
    if not ledger.capacity or not run.cluster.now:
        return 0.0
    total, last = 0.0, 0.0
    for at, sign, p in events:
        total += ledger.shares()[1] * (at - last)
        last = at
        ledger.place(p.node or "", round(p.requests.get("cpu", 0.0) * 1000), p.gpu_cards, sign)
    total += ledger.shares()[1] * (run.cluster.now - last)
    return round(total / run.cluster.now, 6)


def _capacity(run: Replay) -> dict[str, float]:
    total: dict[str, float] = {}
    for node in run.cluster.informers.list("Node"):
        for name, q in ((node.get("status") or {}).get("allocatable") or {}).items():
            if name != "pods":
                total[name] = total.get(name, 0.0) + float(parse_quantity(q, f"Node {node['metadata']['name']}")[0])
    return total


def _percentile(sorted_values: list[float], p: float) -> float | None:
    """Nearest rank: the smallest value with at least p% of values at or below it."""
    if not sorted_values:
        return None
    return sorted_values[max(0, math.ceil(p / 100 * len(sorted_values)) - 1)]
