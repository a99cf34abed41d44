"""`volcanic bench --preset forecast-openb` and `forecast-openb-loaded`: one forecast of every
waiting job (docs/foresight.md) on an openb-sized state. The openb default trace (1,523 nodes)
is replayed through the `volcano` policy (volcanic.sim.policies) with its arrivals 400 (or
2,000) times as fast and each pod's lifetime as its expected duration, and stopped after half
its arrivals; that state is forecast ROUNDS times. Reports the state's size and the forecasts'
wall seconds (the median, and each); the replay that makes the state is timed apart."""

from __future__ import annotations

from dataclasses import dataclass
import statistics
import time
from typing import Any

from volcanic.bench.replay import openb_trace
from volcanic.cluster import Cluster
from volcanic.foresight.forecast import FORKED_KINDS, forecast
from volcanic.kube.objects import Obj, status_of
from volcanic.sim.forecast_error import with_expected_durations
from volcanic.sim.policies import policy_conf
from volcanic.sim.replay import replay
from volcanic.sim.trace import Trace, loaded

FORECAST_PRESETS = {"forecast-openb": 400.0, "forecast-openb-loaded": 2000.0}
ROUNDS = 3


@dataclass
class _State:
    objects: list[Obj]
    conf: Any
    now: float


class _Taken(Exception):
    """The replay has reached the arrival the state is taken after."""


def run_forecast(preset: str) -> dict[str, Any]:
    load = FORECAST_PRESETS[preset]
    trace = with_expected_durations(loaded(openb_trace(preset), load))
    started = time.perf_counter()
    state = _state_after(trace, len(trace.arrivals) // 2)
    replay_s = time.perf_counter() - started
    walls = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        result = forecast(state.objects, state.conf, state.now)
        walls.append(round(time.perf_counter() - started, 3))
    pods = [o for o in state.objects if o["kind"] == "Pod"]
    return {"preset": preset, "load": load, "nodes": len(trace.nodes), "pods": len(pods),
            "running": sum(status_of(p).get("phase") == "Running" for p in pods),
            "waiting_jobs": len(result.jobs),
            "started_in_forecast": sum(j.estimated_start is not None for j in result.jobs.values()),
            "forecast_s": statistics.median(walls), "rounds": walls, "replay_s": round(replay_s, 2)}


def _state_after(trace: Trace, arrival: int) -> _State:
    """The replay's objects once the jobs of arrival `arrival` have their PodGroups."""
    taken: list[_State] = []

    def take(cluster: Cluster, i: int) -> None:
        if i < arrival:
            return
        cluster.run(0)  # the controllers make the new jobs' PodGroups (no session runs)
        store = cluster.api.store.shared
        taken.append(_State([o for kind in FORKED_KINDS for o in store.list(kind)], cluster.scheduler.conf,
                            cluster.started + cluster.now))
        raise _Taken
    try:
        replay(trace, policy_conf("volcano"), after_arrival=take)
    except _Taken:
        return taken[0]
    raise ValueError(f"the trace has no arrival {arrival}")
