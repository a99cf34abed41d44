"""What a replay measured, as one flat dict (one JSON object per policy in `volcanic simulate`)."""

from __future__ import annotations

import math
from typing import Any

from volcanic.kube.objects import as_map, dig
from volcanic.kube.quantity import parse_quantity
from volcanic.sim.fragmentation import Ledger, typical_shapes
from volcanic.sim.records import Replay
from volcanic.sim.trace import VGPU_CORES, gpus_of

VGPU_PREFIX = "volcano.sh/vgpu-"


def summary(run: Replay, policy: str) -> dict[str, Any]:
    """pods_* counts, waits (arrival to Running) as nearest-rank percentiles, the mean
    utilization of each node resource over the simulated time (allocated while Running; GPUs
    counted per card as `gpu`), and the mean allocated and fragmented GPU shares."""
    pods = list(run.pods.values())
    now = run.cluster.now
    waits = sorted(p.start - p.arrival for p in pods if p.start is not None)
    allocatable = capacity(run)
    total_of = {name: v for name, v in allocatable.items() if not name.startswith(VGPU_PREFIX)}
    total_of["gpu"] = allocatable.get(VGPU_CORES, 0.0) / 100  # cards
    used = {name: 0.0 for name in total_of}
    for p in pods:
        if p.start is not None:
            held = (p.end if p.end is not None else now) - p.start
            for name, amount in {**p.requests, "gpu": gpus_of(p.requests)}.items():
                if name in used:
                    used[name] += amount * held
    utilization = {name: round(used[name] / (total_of[name] * now), 6) if total_of[name] and now else 0.0
                   for name in sorted(total_of)}
    scheduled = sum(p.start is not None for p in pods)
    total = max(run.expected_pods, len(pods))  # a Job never admitted made no pods yet
    return {"policy": policy, "trace": run.trace, "pods_total": total, "pods_scheduled": scheduled,
            "pods_succeeded": sum(p.phase == "Succeeded" for p in pods),
            "pods_failed": sum(p.phase == "Failed" for p in pods),
            "pods_unschedulable": total - scheduled,
            "simulated_s": now, "wall_s": round(run.wall_s, 3), "sessions": run.cluster.sessions,
            "wait_p50_s": percentile(waits, 50), "wait_p99_s": percentile(waits, 99),
            "utilization": utilization, "gpu_allocated_share": utilization["gpu"],
            "gpu_fragmentation": mean_fragmentation(run)}


GPU_COLUMNS = ("time", "allocated", "fragmented")


def gpu_timeline(run: Replay) -> list[dict[str, float]]:
    """The allocated and fragmented shares of the GPU capacity (fragmentation.py, with the
    shapes of the run's pods) from each time a pod started or ended until the next row;
    empty for a cluster without vGPU cards."""
    events = sorted([(p.start, 1, p) for p in run.pods.values() if p.start is not None]
                    + [(p.end, -1, p) for p in run.pods.values() if p.start is not None and p.end is not None],
                    key=lambda e: (e[0], e[1]))  # at one instant, ends before starts
    ledger = Ledger(run.cluster.objects_of("Node"), typical_shapes(p.shape for p in run.pods.values() if p.shape))
    if not ledger.capacity:
        return []
    rows = [{"time": 0.0, "allocated": 0.0, "fragmented": round(ledger.shares()[1], 6)}]
    for at, sign, p in events:
        ledger.place(p.node or "", round(p.requests.get("cpu", 0.0) * 1000), p.gpu_cards, sign)
        allocated, fragmented = ledger.shares()
        row = {"time": at, "allocated": round(allocated, 6), "fragmented": round(fragmented, 6)}
        if rows[-1]["time"] == at:
            rows[-1] = row  # the state once every event of that instant is in
        else:
            rows.append(row)
    return rows


def mean_fragmentation(run: Replay) -> float:
    """gpu_timeline's fragmented share averaged over the simulated time."""
    rows = gpu_timeline(run)
    end = run.cluster.now
    if not rows or not end:
        return 0.0
    total = sum(r["fragmented"] * ((rows[i + 1]["time"] if i + 1 < len(rows) else end) - r["time"])
                for i, r in enumerate(rows))
    return round(total / end, 6)


def capacity(run: Replay) -> dict[str, float]:
    """The sum of the nodes' allocatable per resource (but pods): what utilization divides by."""
    total: dict[str, float] = {}
    for node in run.cluster.objects_of("Node"):
        for name, q in as_map(dig(node, "status", "allocatable")).items():
            if name != "pods":
                total[name] = total.get(name, 0.0) + float(parse_quantity(q, f"Node {node['metadata']['name']}")[0])
    return total


def percentile(sorted_values: list[float], p: float) -> float | None:
    """Nearest rank: the smallest value with at least p% of values at or below it."""
    if not sorted_values:
        return None
    return sorted_values[max(0, math.ceil(p / 100 * len(sorted_values)) - 1)]
