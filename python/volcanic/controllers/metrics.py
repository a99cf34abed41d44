"""Volcano v1.15's controller-manager metrics (pkg/controllers/metrics/queue.go): each
queue's PodGroups by phase, set when the queue controller syncs the queue and removed with
the queue, as Volcano's queue controller does. The controllers take them from
`Context.extra["queue_metrics"]` when the process exports metrics."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Gauge

# PodGroup phase field (QueueController.podgroup_counts) -> Volcano's gauge.
PHASES = ("inqueue", "pending", "running", "unknown", "completed")


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
