"""What a replay measured, as one flat dict (one JSON object per policy in `volcanic simulate`)."""

from __future__ import annotations

import math
from typing import Any

from volcanic.kube.quantity import parse_quantity
from volcanic.sim.replay import Replay
from volcanic.sim.trace import GPU_SHARE


def summary(run: Replay, policy: str) -> dict[str, Any]:
    """pods_* counts, waits (arrival to Running) as nearest-rank percentiles, and the mean
    utilization of each node resource over the simulated time (allocated while Running)."""
    pods = list(run.pods.values())
    now = run.cluster.now
    waits = sorted(p.start - p.arrival for p in pods if p.start is not None)
    capacity = _capacity(run)
    used = {name: 0.0 for name in capacity}
    for p in pods:
        if p.start is not None:
            for name, amount in p.requests.items():
                if name in used:
                    used[name] += amount * ((p.end if p.end is not None else now) - p.start)
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
            "utilization": utilization, "gpu_allocated_share": utilization.get(GPU_SHARE, 0.0)}


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
