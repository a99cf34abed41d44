"""How far a replay's forecasts were from what then happened (docs/simulation.md, "Forecast
error"; `volcanic simulate --forecast`).

At the arrival of every k-th job, the replay's cluster is forecast (volcanic.foresight's
forecast of its whole state, taken once the job is submitted and its PodGroup made, at the
cluster's clock); the job's estimated start is recorded, and after the run compared with its
actual start. Both are the same instant: when its gang started, its PodGroup's
`minMember`-th pod (each pod's first run; the first pod for a gang of one).

The error of one job is |forecast - actual| / max(actual wait, MIN_WAIT), over the jobs that
waited at least MIN_WAIT (a job that starts at once says little about a forecaster). A job
the forecast put beyond its horizon but that started counts as if forecast at the horizon
(arrival + horizon): the least its forecast could have been off by, so such a miss is a large
error rather than none. A job that never started in the replay has no actual wait and is
left out.

The state forecast is what a cluster keeping its finished pods would show: the replay
deletes a pod once it ends (as the trace's pods were), so the last HISTORY pods that ended
are added to it, as pod garbage collection would have left them; they are what the
forecaster's queue medians are made of when pods carry no expected duration.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field, replace
import math
import time
from typing import Any, Callable

from volcanic.cluster import Cluster
from volcanic.foresight.forecast import EXPECTED_DURATION, FORKED_KINDS, HORIZON, forecast
from volcanic.kube.duration import format_duration, parse_duration
from volcanic.kube.informers import Handler
from volcanic.kube.objects import Obj, spec_of, status_of
from volcanic.sim.frames import pod_runs, write_table
from volcanic.sim.metrics import percentile
from volcanic.sim.records import Replay
from volcanic.sim.replay import replay
from volcanic.sim.trace import Trace

MIN_WAIT = 60.0  # seconds: shorter waits are not measured, and a longer one divides the error
HISTORY = 500  # finished pods kept in the forecast state (the queue medians' sample)
DEFAULT_SAMPLE = 100  # about how many jobs `--forecast` forecasts by default (docs/simulation.md: the cost)
DURATION_SOURCES = ("trace", "none")
SIM_DURATION = "volcanic/sim-duration"
TERMINAL = ("Succeeded", "Failed")


@dataclass
class JobForecastRecord:
    """One forecast job. Times are virtual seconds since the replay's start, as PodRecord's."""

    job: str  # "ns/name" of the arrival's Job (or bare Pod)
    group: str  # "ns/name" of its PodGroup
    min_member: int
    arrival: float
    forecast: float | None  # its estimated start; None: not within the horizon
    horizon: float
    basis: str = ""
    start: float | None = None  # its gang's actual start, filled once the replay has ended

    @property
    def wait(self) -> float | None:
        return None if self.start is None else self.start - self.arrival

    @property
    def forecast_wait(self) -> float | None:
        return None if self.forecast is None else self.forecast - self.arrival

    @property
    def error(self) -> float | None:
        """The relative error (module docstring); None for a job that never started."""
        if self.start is None or self.wait is None:
            return None
        said = self.forecast if self.forecast is not None else self.arrival + self.horizon
        return abs(said - self.start) / max(self.wait, MIN_WAIT)

    def row(self) -> dict[str, Any]:
        return {"job": self.job, "arrival": self.arrival, "forecast": self.forecast, "start": self.start,
                "forecast_wait": self.forecast_wait, "wait": self.wait, "error": self.error, "basis": self.basis}


FORECAST_COLUMNS = ("job", "arrival", "forecast", "start", "forecast_wait", "wait", "error", "basis")


@dataclass
class ForecastRun:
    """What the forecasts of one replay recorded."""

    records: list[JobForecastRecord] = field(default_factory=list)
    forecasts: int = 0  # forks run (one serves every sampled job of an instant)
    wall_s: float = 0.0  # spent forecasting, within the replay's wall_s

    def counted(self) -> list[JobForecastRecord]:
        """The records the error is over: jobs that started after waiting at least MIN_WAIT."""
        return [r for r in self.records if r.wait is not None and r.wait >= MIN_WAIT]


def forecast_summary(run: ForecastRun) -> dict[str, Any]:
    """The summary's forecast fields: error percentiles (nearest rank) over the counted jobs."""
    counted = run.counted()
    errors = sorted(r.error for r in counted if r.error is not None)
    p50, p90 = percentile(errors, 50), percentile(errors, 90)
    return {"forecast_error_p50": None if p50 is None else round(p50, 4),
            "forecast_error_p90": None if p90 is None else round(p90, 4),
            "forecast_jobs": len(counted),
            "forecast_beyond_horizon": sum(r.forecast is None for r in counted),
            "forecast_sampled": len(run.records), "forecasts": run.forecasts,
            "forecast_wall_s": round(run.wall_s, 3)}


def write_forecasts(run: ForecastRun, summary: dict[str, Any], directory: str) -> None:
    """DIR/forecasts.csv, a row per forecast job (FORECAST_COLUMNS), and DIR/summary.json."""
    write_table(directory, "forecasts.csv", [r.row() for r in run.records], list(FORECAST_COLUMNS), summary)


def with_expected_durations(trace: Trace) -> Trace:
    """The trace with each pod's true lifetime (its `volcanic/sim-duration`) also given as
    `volcanic.sh/expected-duration`: on a bare pod, or on a Job's pod templates."""
    return replace(trace, arrivals=[replace(a, objects=tuple(_annotated(o) for o in a.objects))
                                    for a in trace.arrivals])


def _annotated(obj: Obj) -> Obj:
    if obj.get("kind") == "Pod":
        return dict(obj, metadata=_with_expected(obj["metadata"]))
    if obj.get("kind") == "Job":
        tasks = [dict(t, template=dict(t.get("template") or {},
                                       metadata=_with_expected((t.get("template") or {}).get("metadata") or {})))
                 for t in spec_of(obj).get("tasks") or []]
        return dict(obj, spec=dict(spec_of(obj), tasks=tasks))
    return obj


def _with_expected(meta: dict) -> dict:
    annotations = dict(meta.get("annotations") or {})
    if SIM_DURATION in annotations:
        seconds = parse_duration(annotations[SIM_DURATION], SIM_DURATION)
        annotations[EXPECTED_DURATION] = format_duration(seconds)
    return dict(meta, annotations=annotations)


def sample_stride(arrivals: int, sample: int) -> int:
    """Every k-th arrival is forecast, so that about `sample` (> 0) of them are."""
    if sample <= 0:
        raise ValueError(f"sample: must be a whole number > 0, got {sample!r}")
    return max(1, math.ceil(arrivals / sample))


def replay_with_forecasts(trace: Trace, conf: Any = None, sample: int = DEFAULT_SAMPLE,
                          durations: str = "trace", horizon: float = HORIZON,
                          progress: Callable[[int], None] | None = None) -> tuple[Replay, ForecastRun]:
    """Replays `trace` under `conf`, forecasting every k-th arrival (sample_stride); with
    durations "trace" the forecaster knows each pod's true lifetime, with "none" it has
    only the queue medians of the finished pods."""
    if durations not in DURATION_SOURCES:
        raise ValueError(f"durations: must be one of {', '.join(DURATION_SOURCES)}, got {durations!r}")
    if durations == "trace":
        trace = with_expected_durations(trace)
    cluster = Cluster(conf)
    probe = _Probe(trace, cluster, sample_stride(len(trace.arrivals), sample), horizon)
    run = replay(trace, cluster=cluster, progress=progress, after_arrival=probe.arrived)
    probe.result.records = [replace(r, start=start) for r, start in zip(probe.result.records,
                                                                        gang_starts(run, probe.result.records))]
    return run, probe.result


def gang_starts(run: Replay, records: list[JobForecastRecord]) -> list[float | None]:
    """Each record's job's gang start: its min_member-th pod start (each pod's first run)."""
    firsts: dict[str, list[float]] = {}
    for pod in run.pods.values():
        runs = pod_runs(pod)
        if runs:
            firsts.setdefault(pod.job, []).append(min(begin for begin, _ in runs))
    out: list[float | None] = []
    for r in records:
        starts = sorted(firsts.get(r.job, ()))
        out.append(starts[r.min_member - 1] if len(starts) >= r.min_member else None)
    return out


class _Probe:
    """Forecasts the replay's cluster after the last arrival of an instant that has a
    sampled job; keeps the last HISTORY pods that ended."""

    def __init__(self, trace: Trace, cluster: Cluster, every: int, horizon: float) -> None:
        self.trace, self.cluster, self.every, self.horizon = trace, cluster, every, horizon
        self.result = ForecastRun()
        self.pending: list[int] = []  # sampled arrivals of the current instant
        self.ended: OrderedDict[tuple[str, str], Obj] = OrderedDict()
        cluster.informers.add_handler("Pod", Handler(on_update=self._pod_changed))

    def _pod_changed(self, old: Obj, pod: Obj) -> None:
        if status_of(pod).get("phase") in TERMINAL:
            meta = pod["metadata"]
            key = (meta.get("namespace") or "default", meta["name"])
            self.ended.pop(key, None)
            self.ended[key] = pod
            if len(self.ended) > HISTORY:
                self.ended.popitem(last=False)

    def arrived(self, cluster: Cluster, i: int) -> None:
        if i % self.every == 0:
            self.pending.append(i)
        arrivals = self.trace.arrivals
        if not self.pending or (i + 1 < len(arrivals) and arrivals[i + 1].time == arrivals[i].time):
            return  # the instant's forecast waits for its last arrival
        started = time.perf_counter()
        cluster.run(0)  # the controllers make the new jobs' PodGroups (no session runs)
        self._forecast(cluster, self.pending)
        self.pending = []
        self.result.wall_s += time.perf_counter() - started

    def _forecast(self, cluster: Cluster, sampled: list[int]) -> None:
        store = cluster.api.store.shared
        objects = [o for kind in FORKED_KINDS for o in store.list(kind)]
        live = {(p["metadata"].get("namespace") or "default", p["metadata"]["name"]) for p in store.list("Pod")}
        objects += [p for key, p in self.ended.items() if key not in live]
        groups = _groups_by_owner(store.list("PodGroup"))
        jobs = [job for i in sampled for job in self._jobs_of(store, i, groups)]
        if not jobs:
            return
        now = cluster.started + cluster.now
        f = forecast(objects, cluster.scheduler.conf, now, self.horizon, watch=[g for _, g, _ in jobs])
        self.result.forecasts += 1
        for job, group, min_member in jobs:
            estimate = f.jobs.get(group)
            if estimate is None:  # its PodGroup is not waiting: nothing was forecast for it
                continue
            at = None if estimate.estimated_start is None else estimate.estimated_start - cluster.started
            self.result.records.append(JobForecastRecord(job, group, min_member, cluster.now, at, self.horizon,
                                                         estimate.basis))

    def _jobs_of(self, store: Any, i: int, groups: dict[str, Obj]) -> list[tuple[str, str, int]]:
        """(job, PodGroup key, minMember) for the objects of arrival i that have a PodGroup."""
        out = []
        for obj in self.trace.arrivals[i].objects:
            meta = obj["metadata"]
            namespace = meta.get("namespace") or "default"
            stored = store.get(obj["kind"], meta["name"], namespace)
            pg = groups.get(stored["metadata"].get("uid", "")) if stored else None
            if pg is not None:
                out.append((f"{namespace}/{meta['name']}", f"{namespace}/{pg['metadata']['name']}",
                            max(1, int(spec_of(pg).get("minMember") or 0))))
        return out


def _groups_by_owner(podgroups: list[Obj]) -> dict[str, Obj]:
    """PodGroup by the uid of each of its owners (a Volcano Job, or a bare pod)."""
    return {ref.get("uid", ""): pg for pg in podgroups for ref in pg["metadata"].get("ownerReferences") or ()}

