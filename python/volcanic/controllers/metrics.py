"""Volcano v1.15's controller-manager metrics, each where Volcano's controller updates it:
- pkg/controllers/metrics/queue.go: each queue's PodGroups by phase, set when the queue
  controller syncs the queue and removed with the queue;
- pkg/controllers/jobflow/state/metrics.go: JobFlows that reached Succeed or Failed, per
  namespace (the jobflow controller counts them; Volcano never removes these series);
- pkg/controllers/job/state/metrics.go: Jobs that reached Completed or Failed, per job and
  queue, removed with the Job; pkg/controllers/metrics/job.go: the time from a Job's creation
  to each of its pods' (the job controller counts both).
The controllers take them from `Context.extra` (controller_metrics' keys) when the process
exports metrics; without them they count nothing."""

from __future__ import annotations

from typing import Any, Iterable

from prometheus_client import CollectorRegistry, Gauge, Histogram

from volcanic.httpd.prometheus import exponential_buckets_range

# PodGroup phase field (QueueController.podgroup_counts) -> Volcano's gauge.
PHASES = ("inqueue", "pending", "running", "unknown", "completed")


def controller_metrics(registry: CollectorRegistry) -> dict[str, Any]:
    """The controllers' metrics on `registry`, as the Context.extra entries they look for: what
    the controller-manager serves and the embedded cluster's metrics() reads."""
    return {"queue_metrics": QueueMetrics(registry), "jobflow_metrics": JobFlowMetrics(registry),
            "job_metrics": JobMetrics(registry)}


class QueueMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.gauges = {phase: Gauge(f"volcano_queue_pod_group_{phase}_count",
                                    f"The number of {phase.capitalize()} PodGroup in this queue", ["queue_name"],
                                    registry=registry)
                       for phase in PHASES}

    def set(self, queue: str, counts: dict[str, int]) -> None:
        for phase, gauge in self.gauges.items():
            gauge.labels(queue).set(counts.get(phase, 0))

    def remove(self, queue: str) -> None:
        remove_series(self.gauges.values(), queue)


class JobFlowMetrics:
    """Volcano's two counters of JobFlow outcomes, labelled `jobflow_namespace`. Their names do
    not end in _total, and prometheus_client would export a counter as <name>_total: they are
    gauges that only grow here (as the scheduler's volcano_total_preemption_attempts). A
    namespace has a series from its first count on, as a Go CounterVec's label values do."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.outcomes = {"Succeed": Gauge("volcano_jobflow_succeed_phase_count", "Number of jobflow succeed phase",
                                          ["jobflow_namespace"], registry=registry),
                         "Failed": Gauge("volcano_jobflow_failed_phase_count", "Number of jobflow failed phase",
                                         ["jobflow_namespace"], registry=registry)}

    def count(self, namespace: str, phase: str) -> None:
        """One more JobFlow of `namespace` made `phase` (Succeed or Failed) by a sync."""
        self.outcomes[phase].labels(namespace).inc()


class JobMetrics:
    """The job controller's: `volcano_job_completed_phase_count` and
    `volcano_job_failed_phase_count` {job_name ("ns/name"), queue_name}, gauges that only grow
    as JobFlowMetrics' (Volcano's counters keep their names without _total), and the histogram
    `volcano_controller_job_to_pod_creation_latency_milliseconds` with Volcano's buckets."""

    def __init__(self, registry: CollectorRegistry) -> None:
        labels = ["job_name", "queue_name"]
        self.outcomes = {"Completed": Gauge("volcano_job_completed_phase_count", "Number of job completed phase",
                                            labels, registry=registry),
                         "Failed": Gauge("volcano_job_failed_phase_count", "Number of job failed phase",
                                         labels, registry=registry)}
        self.pod_creation = Histogram("volcano_controller_job_to_pod_creation_latency_milliseconds",
                                      "Latency from VCJob creation to pod created in milliseconds",
                                      buckets=exponential_buckets_range(50, 60000, 30), registry=registry)

    def finished(self, job: str, queue: str, phase: str) -> None:
        """One more move of `job` to `phase` (Completed or Failed)."""
        self.outcomes[phase].labels(job, queue).inc()

    def forget(self, job: str, queue: str) -> None:
        """The Job is gone: its series go too (Volcano's DeleteJobMetrics)."""
        remove_series(self.outcomes.values(), job, queue)

    def pod_created(self, milliseconds: float) -> None:
        self.pod_creation.observe(milliseconds)


def remove_series(gauges: Iterable[Gauge], *labels: str) -> None:
    """Each gauge's series of these label values, where it has one."""
    for gauge in gauges:
        try:
            gauge.remove(*labels)
        except KeyError:
            pass
