"""`volcanic bench`: ingest a synthetic cluster through Scheduler.upsert, run one session, report."""

from __future__ import annotations

import resource
import time
from typing import Any

from volcanic.bench.synth import synthetic_cluster
from volcanic.scheduler import Scheduler

# preset -> (nodes, pods)
PRESETS = {"small": (100, 1_000), "medium": (1_000, 10_000), "large": (10_000, 100_000)}


def run_bench(preset: str, seed: int = 1, conf: Any = None) -> dict[str, Any]:
    nodes, pods = PRESETS[preset]
    objs = synthetic_cluster(nodes, pods, seed=seed)
    s = Scheduler(conf)
    start = time.perf_counter()
    for obj in objs:
        s.upsert(obj)
    ingest = time.perf_counter() - start
    start = time.perf_counter()
    d = s.run_once(now=1_700_000_000)
    session = time.perf_counter() - start
    placed = len(d.binds) + len(d.pipelined)
    allocate = d.action_seconds.get("allocate", 0.0)
    return {
        "preset": preset,
        "nodes": nodes,
        "pods": pods,
        "ingest_s": round(ingest, 4),
        "actions": {k: round(v, 4) for k, v in d.action_seconds.items()},
        "session_s": round(session, 4),
        "placed": placed,
        "pods_per_s": round(placed / allocate) if allocate > 0 else None,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
