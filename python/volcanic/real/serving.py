"""`--metrics-address`: Prometheus `/metrics` and `/healthz` over plain HTTP; Volcano's
`--listen-address` (/metrics, with `--enable-metrics`) and `--healthz-address` (/healthz, with
`--enable-healthz`; over HTTPS when the component is given its certificate files, as
Volcano's helpers.StartHealthz serves it) are Endpoints of the same server.

/healthz answers 200 while every component in the process has shown it is alive (its loop
beat) within the last STALE seconds, and 503 naming the stuck ones otherwise; a liveness
probe restarts a process whose loop hangs. /metrics is prometheus-client's text format.
The server is the webhook's (volcanic.httpd.server), over plain HTTP, so a slow or
idle client holds no thread and meets the same deadlines and connection bounds.
"""

from __future__ import annotations

from dataclasses import dataclass
import threading
import time
from typing import Any, Callable

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from volcanic.httpd.server import HttpServer, Limits
from volcanic.httpd.tls import tls_context
from volcanic.httpd.wire import Request, Response
from volcanic.real.foresight_http import PREFIX, ForesightRoutes

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


HEALTH_PATHS = ("/healthz", "/healthz/ping", "/livez", "/readyz")


@dataclass(frozen=True)
class Endpoint:
    """One HTTP server of a process: HOST:PORT (":8080" is every address), what it serves,
    and its certificate and key files for HTTPS (None: plain HTTP)."""

    address: str
    metrics: bool = True
    healthz: bool = True
    tls: tuple[str, str] | None = None


def merged(endpoints: list[Endpoint]) -> list[Endpoint]:
    """One server per address: two endpoints on the same address serve both's paths (over
    HTTPS if either has a certificate)."""
    by_address: dict[str, Endpoint] = {}
    for e in endpoints:
        seen = by_address.get(e.address)
        by_address[e.address] = e if seen is None else Endpoint(
            e.address, seen.metrics or e.metrics, seen.healthz or e.healthz, seen.tls or e.tls)
    return list(by_address.values())


class MetricsServer(HttpServer):
    server_version = "volcanic-metrics"

    def __init__(self, address: tuple[str, int], registry: CollectorRegistry, health: Health,
                 metrics: bool = True, healthz: bool = True, tls: tuple[str, str] | None = None,
                 foresight: Callable[[], Any] | None = None, **limits: Any) -> None:
        """foresight: the scheduler's Foresight (None before its caches sync), for /foresight/."""
        self.registry, self.health = registry, health
        self.metrics, self.healthz = metrics, healthz
        self.foresight = ForesightRoutes(foresight) if foresight is not None and metrics else None
        super().__init__(address, tls_context(*tls) if tls else None, Limits(**limits))

    def handle(self, request: Request) -> Response:
        path = request.head.path
        if path.startswith(PREFIX) and self.foresight is not None:
            return self.foresight.handle(request)
        if request.head.method != "GET":
            return Response(405, b"GET only", TEXT, {"Allow": "GET"})
        if path == "/metrics" and self.metrics:
            return Response(200, generate_latest(self.registry), CONTENT_TYPE_LATEST)
        if path in HEALTH_PATHS and self.healthz:
            stuck = self.health.stuck()
            return Response(503, f"stuck: {', '.join(stuck)}".encode(), TEXT) if stuck else Response(200, b"ok", TEXT)
        return Response(404, b"not found", TEXT)


def host_port(address: str) -> tuple[str, int]:
    """HOST:PORT as Go's net.Listen takes it: an empty host (":8080") is every address, an
    IPv6 host is in brackets."""
    host, _, port = address.rpartition(":")
    return host.strip("[]") or "0.0.0.0", int(port)


def serve(address: str, registry: CollectorRegistry, health: Health, metrics: bool = True, healthz: bool = True,
          tls: tuple[str, str] | None = None, foresight: Callable[[], Any] | None = None,
          **limits: Any) -> MetricsServer:
    """Serves /metrics and /healthz (those asked for), and /foresight/ beside /metrics when
    given, on HOST:PORT in a daemon thread; `limits` as httpd.server.Limits. Stop it with
    .shutdown()."""
    server = MetricsServer(host_port(address), registry, health, metrics, healthz, tls, foresight, **limits)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server
