"""Volcano v1.15's controller-manager metrics, each where Volcano's controller updates it:
- pkg/controllers/metrics/queue.go: each queue's PodGroups by phase, set when the queue
  controller syncs the queue and removed with the queue;
- pkg/controllers/jobflow/state/metrics.go: JobFlows that reached Succeed or Failed, per
  namespace (the jobflow controller counts them; Volcano never removes these series).
The controllers take them from `Context.extra` (controller_metrics' keys) when the process
exports metrics; without them they count nothing."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Gauge

# PodGroup phase field (QueueController.podgroup_counts) -> Volcano's gauge.
PHASES = ("inqueue", "pending", "running", "unknown", "completed")


def controller_metrics(registry: CollectorRegistry) -> dict[str, Any]:
    """The controllers' metrics on `registry`, as the Context.extra entries they look for: what
    the controller-manager serves and the embedded cluster's metrics() reads."""
    return {"queue_metrics": QueueMetrics(registry), "jobflow_metrics": JobFlowMetrics(registry)}


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
        for gauge in self.gauges.values():
            try:
                gauge.remove(queue)
            except KeyError:
                pass


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
