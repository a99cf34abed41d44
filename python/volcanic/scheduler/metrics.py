"""Volcano v1.15's scheduler metrics (pkg/scheduler/metrics: metrics.go, queue.go, job.go),
same names, labels and buckets, so that dashboards made for Volcano read volcanic.

A SchedulerLoop with `on_session = SchedulerMetrics(...).observe` asks the engine for its
session metrics (Decisions.metrics), which the plugins and actions fill where Volcano's
update theirs: proportion and capacity the queue gauges, drf the job shares, gang the
unschedulable counts, preempt the victims and attempts. What the engine does not see (the
session's wall time, the binds answered) comes from the loop. Values are the engine's
units, which are Volcano's: milli-CPU, memory bytes, other resources in milli-units.

Beside Volcano's v1.15 set, the per-queue counts Volcano added later (volcano#5826:
volcano_queue_pod_group_count{queue_name,phase} and volcano_queue_task_count{queue_name,
status}, as the session opened) and the inqueue resources of proportion and capacity
(volcano#5242: volcano_queue_inqueue_*), which tell why a queue admits no more jobs.

Labels of what is gone (a deleted queue, a job no session sees any more) are removed, as
Volcano's DeleteQueueMetrics/DeleteJobMetrics do."""

from __future__ import annotations

import time
from typing import Any, Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from volcanic.httpd.prometheus import exponential_buckets_range
from volcanic.scheduler.engine import Decisions

# What a queue gauge family reads from the engine's queue metrics, and its help text.
QUEUE_RESOURCES = {
    "allocated": "Allocated", "request": "Request", "deserved": "Deserved", "capability": "Capacity",
    "real_capability": "Capacity", "inqueue": "Inqueue",
}
QUEUE_PREFIX = {"capability": "capacity", "real_capability": "real_capacity"}
NOT_SCALAR = ("cpu", "memory", "pods")  # pods is Volcano's task count, not a scalar resource


class QueueResourceGauges:
    """One of Volcano's queue resource families: <prefix>_milli_cpu, _memory_bytes and
    _scalar_resources. A scalar a queue reported before and not now reads 0 (Volcano's
    updateScalarResourceMetrics)."""

    def __init__(self, registry: CollectorRegistry, field: str) -> None:
        name = "volcano_queue_" + QUEUE_PREFIX.get(field, field)
        what = QUEUE_RESOURCES[field]
        self.cpu = Gauge(f"{name}_milli_cpu", f"{what} CPU count for one queue", ["queue_name"], registry=registry)
        self.memory = Gauge(f"{name}_memory_bytes", f"{what} memory for one queue", ["queue_name"],
                            registry=registry)
        self.scalar = Gauge(f"{name}_scalar_resources", f"{what} scalar resources for one queue",
                            ["queue_name", "resource"], registry=registry)
        self.scalars: dict[str, set[str]] = {}  # queue -> scalar names it reported

    def set(self, queue: str, amounts: dict[str, int]) -> None:
        self.cpu.labels(queue).set(amounts.get("cpu", 0))
        self.memory.labels(queue).set(amounts.get("memory", 0))
        known = self.scalars.setdefault(queue, set())
        for name, value in amounts.items():
            if name not in NOT_SCALAR:
                known.add(name)
                self.scalar.labels(queue, name).set(value)
        for name in known - amounts.keys():
            self.scalar.labels(queue, name).set(0)

    def remove(self, queue: str) -> None:
        for gauge in (self.cpu, self.memory):
            _remove(gauge, queue)
        for name in self.scalars.pop(queue, ()):
            _remove(self.scalar, queue, name)


class SchedulerMetrics:
    """Filled after each session (SchedulerLoop.on_session); `now` is the loop's clock."""

    def __init__(self, registry: CollectorRegistry, now: Callable[[], float] = time.time) -> None:
        self.now = now
        r = registry
        self.e2e = Histogram("volcano_e2e_scheduling_latency_milliseconds",
                             "Duration of a single scheduling session in milliseconds, from its open to its close",
                             buckets=exponential_buckets_range(1, 5000, 20), registry=r)
        self.open = Histogram("volcano_open_session_duration_milliseconds",
                              "Duration of opening a scheduling session in milliseconds",
                              buckets=exponential_buckets_range(1, 5000, 20), registry=r)
        self.job_latency = Histogram("volcano_e2e_job_scheduling_latency_milliseconds",
                                     "End-to-end job scheduling latency in milliseconds, per task bound: from the "
                                     "job's creation", buckets=exponential_buckets_range(100, 120000, 30), registry=r)
        job_labels = ["job_name", "queue", "job_namespace"]
        self.job_duration = Gauge("volcano_e2e_job_scheduling_duration",
                                  "Per-job duration from job creation to its last task bound, in milliseconds",
                                  job_labels, registry=r)
        self.job_start = Gauge("volcano_e2e_job_scheduling_start_time", "E2E job scheduling start time",
                               job_labels, registry=r)
        self.job_last = Gauge("volcano_e2e_job_scheduling_last_time", "E2E job scheduling last time",
                              job_labels, registry=r)
        self.plugin = Histogram("volcano_plugin_scheduling_latency_milliseconds",
                                "Plugin scheduling latency in milliseconds", ["plugin", "OnSession"],
                                buckets=exponential_buckets_range(0.1, 100, 15), registry=r)
        self.action = Histogram("volcano_action_scheduling_latency_milliseconds",
                                "Action scheduling latency in milliseconds", ["action"],
                                buckets=exponential_buckets_range(1, 2000, 20), registry=r)
        self.attempts = Counter("volcano_schedule_attempts_total",
                                "Number of attempts to schedule pods, by the result: 'unschedulable' means a pod "
                                "could not be scheduled, 'error' that its bind failed", ["result"], registry=r)
        self.victims = Gauge("volcano_pod_preemption_victims", "Number of selected preemption victims",
                             registry=r)
        # Volcano's counters whose names do not end in _total are gauges that only grow here:
        # prometheus_client would export a counter as <name>_total, not Volcano's name.
        self.preemptions = Gauge("volcano_total_preemption_attempts",
                                 "Total preemption attempts in the cluster till now", registry=r)
        self.unschedulable_tasks = Gauge("volcano_unschedule_task_count", "Number of tasks could not be scheduled",
                                         ["job_id"], registry=r)
        self.unschedulable_jobs = Gauge("volcano_unschedule_job_count", "Number of jobs could not be scheduled",
                                        registry=r)
        self.job_share = Gauge("volcano_job_share", "Share for one job", ["job_ns", "job_id"], registry=r)
        self.job_retries = Gauge("volcano_job_retry_counts", "Number of retry counts for one job", ["job_id"],
                                 registry=r)
        self.queue_resources = {field: QueueResourceGauges(r, field) for field in QUEUE_RESOURCES}
        self.queue_share = Gauge("volcano_queue_share", "Share for one queue", ["queue_name"], registry=r)
        self.queue_weight = Gauge("volcano_queue_weight", "Weight for one queue", ["queue_name"], registry=r)
        self.queue_overused = Gauge("volcano_queue_overused", "If one queue is overused", ["queue_name"], registry=r)
        self.queue_podgroups = Gauge("volcano_queue_pod_group_count", "PodGroups directly in the queue, by phase, "
                                     "as the latest session opened", ["queue_name", "phase"], registry=r)
        self.queue_tasks = Gauge("volcano_queue_task_count", "Tasks of the queue's jobs, by status, as the latest "
                                 "session opened", ["queue_name", "status"], registry=r)
        self.skipped_plugins = Gauge("volcanic_scheduler_skipped_plugins",
                                     "1 for each plugin the scheduler configuration names that no one provides: "
                                     "the scheduler runs without it, as Volcano's does", ["plugin"], registry=r)
        self._counted: dict[str, tuple[list[str], list[str]]] = {}  # queue -> its phases, statuses
        self._jobs: dict[str, tuple[str, str, str]] = {}  # job key -> the labels of its e2e job gauges
        # Every job's series as last set (engine key -> value): a session sets only those that
        # changed, so a steady cluster of 87,000 PodGroups costs a dict comparison a session.
        self._unschedulable: dict[str, float] = {}
        self._shares: dict[str, float] = {}

    def skipped(self, plugins: list[str]) -> None:
        """The plugins the running configuration names but nothing provides (skipped)."""
        self.skipped_plugins.clear()
        for name in plugins:
            self.skipped_plugins.labels(name).set(1)

    def observe(self, d: Decisions, seconds: float, bound: int, failed_binds: int) -> None:
        """A session's decisions and seconds; `bound` and `failed_binds` count the binds
        answered since the session before (binds are answered in the background)."""
        m: dict[str, Any] = d.metrics
        self.e2e.observe(seconds * 1000)
        self.open.observe(m.get("open_seconds", 0.0) * 1000)
        for action, s in d.action_seconds.items():
            self.action.labels(action).observe(s * 1000)
        for plugin, (opened, closed) in m.get("plugin_session_seconds", {}).items():
            self.plugin.labels(plugin, "OnSessionOpen").observe(opened * 1000)
            self.plugin.labels(plugin, "OnSessionClose").observe(closed * 1000)
        self.attempts.labels("scheduled").inc(bound)
        self.attempts.labels("error").inc(failed_binds)
        self.attempts.labels("unschedulable").inc(len(d.unschedulable))
        if m.get("preemption_victims"):
            self.victims.set(m["preemption_victims"][-1])
        self.preemptions.inc(m.get("preemption_attempts", 0))
        self._observe_jobs(m)
        self._observe_queues(m)

    def _observe_jobs(self, m: dict[str, Any]) -> None:
        now = self.now()
        for key, (queue, created, tasks) in m.get("scheduled", {}).items():
            ns, name = _split(key)
            labels = self._jobs[key] = (name, queue, ns)
            elapsed_ms = max(0.0, now - created) * 1000
            self.job_duration.labels(*labels).set(elapsed_ms)
            self.job_start.labels(*labels).set(created)
            self.job_last.labels(*labels).set(now)
            for _ in range(tasks):
                self.job_latency.observe(elapsed_ms)
        unschedulable = m.get("unschedulable_tasks")
        if unschedulable is not None and "unschedulable_jobs" in m:
            _follow(self.unschedulable_tasks, self._unschedulable, unschedulable, lambda key: (_split(key)[1],))
            if m["unschedulable_jobs"] is not None:  # gang ran: it reported every job of the session
                self.unschedulable_jobs.set(m["unschedulable_jobs"])
                for gone in self._jobs.keys() - unschedulable.keys():  # Volcano's DeleteJobMetrics
                    labels = self._jobs.pop(gone)
                    for gauge in (self.job_duration, self.job_start, self.job_last):
                        _remove(gauge, *labels)
            for key, n in unschedulable.items():
                if n > 0:
                    self.job_retries.labels(_split(key)[1]).inc()
        _follow(self.job_share, self._shares, m.get("job_shares", {}), _split)

    def _observe_queues(self, m: dict[str, Any]) -> None:
        queues: dict[str, dict[str, Any]] = m.get("queues", {})
        for name, q in queues.items():
            for field, gauges in self.queue_resources.items():
                if field in q:
                    gauges.set(name, q[field])
            for key, gauge in (("share", self.queue_share), ("weight", self.queue_weight),
                               ("overused", self.queue_overused)):
                if key in q:
                    gauge.labels(name).set(float(q[key]))
        podgroups, tasks = m.get("queue_podgroups", {}), m.get("queue_tasks", {})
        for name, phases in podgroups.items():
            for phase, n in phases.items():
                self.queue_podgroups.labels(name, phase).set(n)
        for name, statuses in tasks.items():
            for status, n in statuses.items():
                self.queue_tasks.labels(name, status).set(n)
        if podgroups:  # every queue is counted in every session: those not counted are gone
            for gone in self._counted.keys() - podgroups.keys():
                self._remove_queue(gone)
            self._counted = {name: (list(phases), list(tasks.get(name, {}))) for name, phases in podgroups.items()}

    def _remove_queue(self, name: str) -> None:
        for gauges in self.queue_resources.values():
            gauges.remove(name)
        for gauge in (self.queue_share, self.queue_weight, self.queue_overused):
            _remove(gauge, name)
        phases, statuses = self._counted[name]
        for phase in phases:
            _remove(self.queue_podgroups, name, phase)
        for status in statuses:
            _remove(self.queue_tasks, name, status)


def _split(key: str) -> tuple[str, str]:
    ns, _, name = key.rpartition("/")
    return ns, name


def _remove(metric: Any, *labels: str) -> None:
    try:
        metric.remove(*labels)
    except KeyError:
        pass


def _follow(gauge: Gauge, last: dict[str, float], values: dict[str, float],
            labels_of: Callable[[str], tuple[str, ...]]) -> None:
    """Makes `gauge` hold `values` (key -> value; a key's labels are labels_of(key)), given
    `last`, what it was made to hold before (updated here): series of keys gone are removed,
    and only values that changed are set."""
    for key in last.keys() - values.keys():
        _remove(gauge, *labels_of(key))
        del last[key]
    for key, value in values.items():
        if last.get(key) != value:
            gauge.labels(*labels_of(key)).set(value)
            last[key] = value
