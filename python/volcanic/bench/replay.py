"""`volcanic bench --preset replay-openb`: the whole openb default trace (1,523 nodes, 8,152
pods over 149 simulated days) replayed through the `volcano` policy (Volcano's default
configuration with deviceshare's vGPU cards, volcanic.sim.policies). Reports
wall seconds, the speed-up over real time and how the pods ended. The trace is read in
place (../shared/traces, or $VOLCANIC_TRACES), never copied into the project."""

from __future__ import annotations

import os
from typing import Any

from volcanic.errors import InvalidObject
from volcanic.sim.metrics import summary
from volcanic.sim.openb import DEFAULT_PODS_CSV, NODES_CSV, find_openb, read_openb
from volcanic.sim.policies import policy_conf
from volcanic.sim.replay import replay
from volcanic.sim.trace import Trace

REPLAY_PRESETS = ("replay-openb",)


def run_replay(preset: str) -> dict[str, Any]:
    trace = openb_trace(preset)
    result = summary(replay(trace, policy_conf("volcano")), "volcano")
    return {"preset": preset, "nodes": len(trace.nodes), **result,
            "speedup": round(result["simulated_s"] / result["wall_s"]) if result["wall_s"] else None}


def openb_trace(preset: str) -> Trace:
    """The openb default trace on all its nodes, or an error naming the preset that needs it."""
    root = find_openb()
    if root is None:
        raise InvalidObject(f"preset {preset}: the openb trace is not in $VOLCANIC_TRACES or ../shared/traces "
                            "(alibaba-gpu-v2023/)")
    return read_openb(os.path.join(root, NODES_CSV), os.path.join(root, DEFAULT_PODS_CSV))
