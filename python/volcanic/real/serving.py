"""`--metrics-address`: Prometheus `/metrics` and `/healthz` over plain HTTP.

/healthz answers 200 while every component in the process has shown it is alive (its loop
beat) within the last STALE seconds, and 503 naming the stuck ones otherwise; a liveness
probe restarts a process whose loop hangs. /metrics is prometheus-client's text format.
The server is the webhook's (volcanic.httpd.server), over plain HTTP, so a slow or
idle client holds no thread and meets the same deadlines and connection bounds.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from volcanic.httpd.server import HttpServer, Limits
from volcanic.httpd.wire import Request, Response

STALE = 60.0
TEXT = "text/plain; charset=utf-8"


class Health:
    """Heartbeats of a process's components."""

    def __init__(self) -> None:
        self._beats: dict[str, float] = {}

    def beat(self, component: str) -> None:
        self._beats[component] = time.monotonic()

    def stuck(self) -> list[str]:
        now = time.monotonic()
        return sorted(c for c, t in self._beats.items() if now - t > STALE)


class MetricsServer(HttpServer):
    server_version = "volcanic-metrics"

    def __init__(self, address: tuple[str, int], registry: CollectorRegistry, health: Health, **limits: Any) -> None:
        self.registry, self.health = registry, health
        super().__init__(address, None, Limits(**limits))

    def handle(self, request: Request) -> Response:
        path = request.head.path
        if request.head.method != "GET":
            return Response(405, b"GET only", TEXT, {"Allow": "GET"})
        if path == "/metrics":
            return Response(200, generate_latest(self.registry), CONTENT_TYPE_LATEST)
        if path in ("/healthz", "/livez", "/readyz"):
            stuck = self.health.stuck()
            return Response(503, f"stuck: {', '.join(stuck)}".encode(), TEXT) if stuck else Response(200, b"ok", TEXT)
        return Response(404, b"not found", TEXT)


def serve(address: str, registry: CollectorRegistry, health: Health, **limits: Any) -> MetricsServer:
    """Serves /metrics and /healthz on HOST:PORT in a daemon thread; `limits` as
    httpd.server.Limits. Stop it with .shutdown()."""
    host, _, port = address.rpartition(":")
    server = MetricsServer((host or "0.0.0.0", int(port)), registry, health, **limits)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server
