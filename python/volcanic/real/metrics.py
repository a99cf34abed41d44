"""Prometheus metrics of the real-cluster processes beside Volcano's own (the scheduler's are
volcanic.scheduler.metrics, the controllers' queue gauges volcanic.controllers.metrics):
what each process asked of the API server, and the controller-manager's work queues."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector


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
