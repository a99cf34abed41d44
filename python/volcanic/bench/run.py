"""`volcanic bench`: ingest a synthetic cluster through Scheduler.upsert, run one session, report."""

from __future__ import annotations

import resource
import runpy
import time
from typing import Any

from volcanic.bench.synth import synthetic_cluster
from volcanic.scheduler import Scheduler

# preset -> (nodes, pods)
PRESETS = {"small": (100, 1_000), "medium": (1_000, 10_000), "large": (10_000, 100_000)}


# Volcano's default configuration (framework/conf.cc DefaultSchedulerConf) with its one node
# scorer, nodeorder, swapped for another by `--scorer`.
DEFAULT_TIERS = [["priority", "gang", "conformance"], ["overcommit", "drf", "predicates", "proportion", "nodeorder"]]


def scorer_conf(scorer: str) -> dict[str, Any]:
    """Volcano's default configuration with `scorer` (e.g. binpack, or a Python plugin such as
    py-binpack from examples/binpack_plugin.py) in place of nodeorder."""
    tiers = [[scorer if name == "nodeorder" else name for name in tier] for tier in DEFAULT_TIERS]
    return {"actions": "enqueue, allocate, backfill",
            "tiers": [{"plugins": [{"name": name} for name in tier]} for tier in tiers]}


def load_plugin_file(path: str) -> None:
    """Runs a Python file that registers scheduler plugins (volcanic.register_plugin)."""
    runpy.run_path(path, run_name="volcanic_bench_plugins")


def run_bench(preset: str, seed: int = 1, conf: Any = None, scorer: str | None = None) -> dict[str, Any]:
    if scorer is not None:
        conf = scorer_conf(scorer)
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
    extra = {"scorer": scorer} if scorer is not None else {}
    return {**extra,
        "preset": preset,
        "nodes": nodes,
        "pods": pods,
        "ingest_s": round(ingest, 4),
        "actions": {k: round(v, 4) for k, v in d.action_seconds.items()},
        "plugins": {plugin: {hook: {"seconds": round(t["seconds"], 4), "calls": t["calls"]}
                             for hook, t in hooks.items()}
                    for plugin, hooks in d.plugin_timings.items()},
        "session_s": round(session, 4),
        "placed": placed,
        "pods_per_s": round(placed / allocate) if allocate > 0 else None,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
