"""When will each pending job start? A forward simulation of a cluster's state (docs/foresight.md).

The state (its objects, at `now`) is restored into an embedded Cluster whose virtual clock
starts at `now`, with the same scheduler configuration, and run forward with no new arrivals:
the same engine decides, in virtual time. Running pods end at their expected end, pending pods
run their expected duration once started. A job's estimated start is the instant its
`minMember`-th pod starts in that run; None when it does not start within the horizon.

Expected durations, per pod (the first that applies):
1. the annotation `volcanic.sh/expected-duration` (a Go duration) on the pod (a Job's pod
   template), else on its PodGroup (which carries its Job's annotations);
2. the pod's `activeDeadlineSeconds`, an upper bound;
3. the median run of the pods that finished in the same queue (from the state's Succeeded
   and Failed pods);
4. none: the pod runs until the horizon, and the basis says how many had no estimate.

The fork holds what placement depends on (nodes, queues, Volcano Jobs, PodGroups, pods,
PriorityClasses, namespaces, HyperNodes, budgets and quotas, volumes), uids kept, so its
controllers carry on: a Job whose PodGroup is let in gets its pods, which then run their
expected duration (a Job's task template gets it as its pods would). Nothing else of a pod
is read: a duration the simulated kubelets would use is replaced by the expected one.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
import statistics
from typing import Any, Iterable

from volcanic.cluster import Cluster
from volcanic.kube.clock import seconds_of
from volcanic.kube.duration import format_duration, parse_duration
from volcanic.kube.informers import Handler
from volcanic.kube.keys import GROUP_NAME, JOB_NAME
from volcanic.kube.objects import Obj, annotation, spec_of, status_of

EXPECTED_DURATION = "volcanic.sh/expected-duration"
SIM_DURATION = "volcanic/sim-duration"
HORIZON = 30 * 86400.0  # how far a forecast looks ahead: beyond it, a job has no estimate
# The kinds placement depends on; everything else (Jobs, Commands, Events, ...) stays out.
FORKED_KINDS = ("Namespace", "Node", "Queue", "PriorityClass", "HyperNode", "Numatopology", "Job", "PodGroup", "Pod",
                "PodDisruptionBudget", "ResourceQuota", "QueueBinding", "PersistentVolume", "PersistentVolumeClaim",
                "StorageClass")
TERMINAL = ("Succeeded", "Failed")


@dataclass(frozen=True)
class JobForecast:
    job: str  # "ns/name" of the PodGroup
    queue: str
    estimated_start: float | None  # Unix seconds; None: not within the horizon
    basis: str


@dataclass
class Forecast:
    now: float
    jobs: dict[str, JobForecast] = field(default_factory=dict)
    basis: str = ""  # what the durations rest on, for the whole forecast
    # The fork's first session's Decisions.why: the engine's reasons on the state at `now`
    # (for a job the cluster's own last session has not seen yet).
    why: dict[str, dict] = field(default_factory=dict)


def _key(obj: Obj) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace') or 'default'}/{meta['name']}"


def _group_of(pod: Obj) -> str | None:
    group = annotation(pod, GROUP_NAME)
    return f"{pod['metadata'].get('namespace') or 'default'}/{group}" if group else None


class _Durations:
    """Each pod's expected duration by the rules above, and what they rested on."""

    def __init__(self, pods: list[Obj], groups: dict[str, Obj]) -> None:
        self.groups = groups
        runs: dict[str, list[float]] = defaultdict(list)
        for pod in pods:
            run = _finished_run(pod)
            if run is not None:
                runs[self._queue(self.groups.get(_group_of(pod) or ""))].append(run)
        self.medians = {queue: statistics.median(r) for queue, r in runs.items()}
        self.used_median: dict[str, int] = defaultdict(int)  # queue -> pods given its median
        self.unknown = 0

    @staticmethod
    def _queue(owner: Obj | None) -> str:
        return (spec_of(owner).get("queue") if owner else None) or "default"

    def of_pod(self, pod: Obj) -> float | None:
        return self._of(pod, self.groups.get(_group_of(pod) or ""))

    def of_template(self, template: Obj, job: Obj, replicas: int) -> float | None:
        return self._of(template, job, replicas)

    def _of(self, obj: Obj, owner: Obj | None, count: int = 1) -> float | None:
        """obj: a pod, or a pod template of `count` pods yet to be made; owner: its PodGroup
        or Job."""
        for source in (obj, owner):
            text = annotation(source, EXPECTED_DURATION) if source else None
            if text is not None:
                try:
                    return parse_duration(text, EXPECTED_DURATION)
                except ValueError:
                    pass  # a malformed estimate is no estimate
        deadline = spec_of(obj).get("activeDeadlineSeconds")
        if isinstance(deadline, (int, float)) and not isinstance(deadline, bool) and deadline > 0:
            return float(deadline)
        queue = self._queue(owner)
        if queue in self.medians:
            self.used_median[queue] += count
            return self.medians[queue]
        self.unknown += count
        return None

    def basis(self, running: int) -> str:
        parts = [f"{n} pod(s) without an estimate took the median of queue {q}, "
                 f"{format_duration(self.medians[q])}" for q, n in sorted(self.used_median.items()) if n]
        if self.unknown:
            parts.append(f"{self.unknown} pod(s) had no estimate and no queue median: they run until the horizon")
        return "; ".join(parts) or f"every pod had an estimate ({running} running)"


def _finished_run(pod: Obj) -> float | None:
    status = status_of(pod)
    if status.get("phase") not in TERMINAL:
        return None
    started = seconds_of(status.get("startTime"))
    finished = (seconds_of((c.get("state") or {}).get("terminated", {}).get("finishedAt"))
                for c in status.get("containerStatuses") or [])
    ends = [e for e in finished if e is not None]
    return max(ends) - started if started is not None and ends else None


def _with_duration(meta: dict, duration: float | None) -> dict:
    """Metadata whose simulated duration is the expected one (none: runs until the horizon)."""
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != SIM_DURATION}
    if duration is not None:
        annotations[SIM_DURATION] = f"{duration:.3f}s"
    return dict(meta, annotations=annotations)


def _forked_job(job: Obj, made: set[str], durations: _Durations) -> Obj:
    """made: the keys of the Jobs that have pods."""
    tasks = []
    for task in spec_of(job).get("tasks") or []:
        template = task.get("template") or {}
        replicas = 0 if _key(job) in made else int(task.get("replicas") or 0)  # made pods count as pods
        meta = _with_duration(template.get("metadata") or {}, durations.of_template(template, job, replicas))
        tasks.append(dict(task, template=dict(template, metadata=meta)))
    return dict(job, spec=dict(spec_of(job), tasks=tasks))


def forecast(objects: Iterable[Obj], conf: Any = None, now: float = 0.0, horizon: float = HORIZON,
             watch: Iterable[str] | None = None) -> Forecast:
    """Forecasts every pending job of the state `objects` (taken at Unix time `now`) under the
    scheduler configuration `conf`; only the PodGroups (keys) in `watch` if given, and the run
    stops as soon as they have started. Deterministic: the same state and configuration give
    the same forecast."""
    by_kind: dict[str, list[Obj]] = defaultdict(list)
    for obj in objects:
        if obj.get("kind") in FORKED_KINDS:
            by_kind[obj["kind"]].append(obj)
    groups = {_key(pg): pg for pg in by_kind["PodGroup"]}
    durations = _Durations(by_kind["Pod"], groups)
    watched = None if watch is None else set(watch)
    starts = _Starts({key: pg for key, pg in groups.items()
                      if status_of(pg).get("phase", "Pending") in ("Pending", "Inqueue")
                      and (watched is None or key in watched)})
    cluster = Cluster(conf, start=now)
    cluster.informers.add_handler("Pod", Handler(on_add=starts.seen, on_update=lambda old, new: starts.seen(new)))
    cluster.restore(o for kind in FORKED_KINDS if kind not in ("Job", "Pod") for o in by_kind[kind])
    made = {f"{p['metadata'].get('namespace') or 'default'}/{(p['metadata'].get('labels') or {}).get(JOB_NAME)}"
            for p in by_kind["Pod"]}
    cluster.restore(_forked_job(j, made, durations) for j in by_kind["Job"])
    cluster.restore(p if status_of(p).get("phase") in TERMINAL  # what a Job has finished stays finished
                    else dict(p, metadata=_with_duration(p["metadata"], durations.of_pod(p))) for p in by_kind["Pod"])
    cluster.run(0.0)  # the first session, on the state as it is at `now`
    why = dict(cluster.scheduler.last.why) if cluster.scheduler.last else {}
    cluster.run_until(lambda c: starts.all_started(), limit=horizon, step=min(60.0, horizon))
    running = sum(1 for p in by_kind["Pod"] if status_of(p).get("phase") == "Running")
    result = Forecast(now=now, basis=durations.basis(running), why=why)
    for key, pg in sorted(starts.groups.items()):
        start = starts.start_of(key)
        result.jobs[key] = JobForecast(key, spec_of(pg).get("queue") or "default",
                                       None if start is None else max(start, now), result.basis)
    return result


class _Starts:
    """When each waiting PodGroup's pods start in the fork, as the watch tells."""

    def __init__(self, groups: dict[str, Obj]) -> None:
        self.groups = groups
        self.need = {key: max(1, int(spec_of(pg).get("minMember") or 0)) for key, pg in groups.items()}
        self.times: dict[str, dict[str, float]] = defaultdict(dict)  # group -> pod -> start
        self.waiting = set(groups)

    def seen(self, pod: Obj) -> None:
        group = _group_of(pod)
        started = seconds_of(status_of(pod).get("startTime"))
        if group not in self.groups or started is None:
            return
        self.times[group][pod["metadata"]["name"]] = started
        if len(self.times[group]) >= self.need[group]:
            self.waiting.discard(group)

    def all_started(self) -> bool:
        return not self.waiting

    def start_of(self, group: str) -> float | None:
        """When the group's minMember-th pod started (the first, for minMember 0)."""
        starts = sorted(self.times[group].values())
        need = self.need[group]
        return starts[need - 1] if len(starts) >= need else None
