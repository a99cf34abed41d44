"""Prometheus metrics of the components, under Volcano's names where Volcano has one
(pkg/scheduler/metrics/metrics.go), so existing dashboards keep working."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from volcanic.kube.quantity import parse_quantity
from volcanic.scheduler.engine import Decisions

MS_BUCKETS = (5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240)
US_BUCKETS = tuple(b * 1000 for b in MS_BUCKETS)


class SchedulerMetrics:
    """Filled after each session (SchedulerLoop.on_session)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.e2e = Histogram("volcano_e2e_scheduling_latency_milliseconds",
                             "E2e scheduling latency in milliseconds (scheduling algorithm + binding)",
                             buckets=MS_BUCKETS, registry=registry)
        self.action = Histogram("volcano_action_scheduling_latency_microseconds",
                                "Action scheduling latency in microseconds", ["action"],
                                buckets=US_BUCKETS, registry=registry)
        self.attempts = Counter("volcano_schedule_attempts_total",
                                "Number of attempts to schedule pods, by the result: 'unschedulable' means a pod "
                                "could not be scheduled, 'error' that its bind failed", ["result"], registry=registry)
        self.victims = Counter("volcano_pod_preemption_victims_total", "Pods evicted by preempt or reclaim",
                               registry=registry)
        self.unschedulable_jobs = Gauge("volcano_unschedule_job_count", "Number of jobs could not be scheduled",
                                        registry=registry)
        self.unschedulable_tasks = Gauge("volcano_unschedule_task_count", "Number of tasks could not be scheduled",
                                         registry=registry)
        self.queue_cpu = Gauge("volcano_queue_allocated_milli_cpu", "Allocated CPU count for one queue",
                               ["queue_name"], registry=registry)
        self.skipped_plugins = Gauge("volcanic_scheduler_skipped_plugins",
                                     "1 for each plugin the scheduler configuration names that no one provides: "
                                     "the scheduler runs without it, as Volcano's does", ["plugin"], registry=registry)
        self.queue_memory = Gauge("volcano_queue_allocated_memory_bytes", "Allocated memory for one queue",
                                  ["queue_name"], registry=registry)

    def skipped(self, plugins: list[str]) -> None:
        """The plugins the running configuration names but nothing provides (skipped)."""
        self.skipped_plugins.clear()
        for name in plugins:
            self.skipped_plugins.labels(name).set(1)

    def observe(self, d: Decisions, seconds: float, bound: int, failed_binds: int) -> None:
        """A session's decisions and seconds; `bound` and `failed_binds` count the binds
        answered since the session before (binds are answered in the background)."""
        self.e2e.observe(seconds * 1000)
        for action, s in d.action_seconds.items():
            self.action.labels(action).observe(s * 1e6)
        self.attempts.labels("scheduled").inc(bound)
        self.attempts.labels("error").inc(failed_binds)
        self.attempts.labels("unschedulable").inc(len(d.unschedulable))
        self.victims.inc(len(d.evictions))
        self.unschedulable_tasks.set(len(d.unschedulable))
        self.unschedulable_jobs.set(sum(1 for s in d.podgroups.values() if s.get("phase") in ("Pending", "Inqueue")
                                        and _unschedulable(s)))
        for name, status in d.queues.items():
            allocated = status.get("allocated") or {}
            self.queue_cpu.labels(name).set(float(parse_quantity(allocated.get("cpu", "0"))[0]) * 1000)
            self.queue_memory.labels(name).set(float(parse_quantity(allocated.get("memory", "0"))[0]))


def _unschedulable(status: dict) -> bool:
    return any(c.get("type") == "Unschedulable" and c.get("status") == "True" for c in status.get("conditions") or [])


class ApiRequestMetrics(Collector):
    """What a process sent to the API server (its KubeClient's Counts): every attempt, the
    attempts that were retries (after a 429, a 5xx or a broken connection, as client-go
    retries), and the answers 429. Read at each scrape: counting costs the requests nothing."""

    def __init__(self, registry: CollectorRegistry, counts) -> None:
        self.counts = counts
        registry.register(self)

    def collect(self):
        c = self.counts
        yield CounterMetricFamily("volcanic_api_requests", "Requests sent to the API server, retries included",
                                  value=c.sent)
        yield CounterMetricFamily("volcanic_api_request_retries",
                                  "Requests sent again after a 429, a 5xx or a broken connection", value=c.retried)
        yield CounterMetricFamily("volcanic_api_requests_throttled",
                                  "Requests the API server answered 429 (Too Many Requests)", value=c.refused)


class ControllerMetrics:
    """Work the controller-manager has waiting and the requests it could not process."""

    def __init__(self, registry: CollectorRegistry, runner) -> None:
        depth = Gauge("volcanic_controller_queue_depth", "Requests waiting, per controller", ["controller"],
                      registry=registry)
        for c in runner.controllers:
            depth.labels(c.name).set_function(lambda c=c: len(c.queue))
        self.errors = Counter("volcanic_controller_errors_total",
                              "Requests a controller could not process (a bug or a malformed object)",
                              registry=registry)
