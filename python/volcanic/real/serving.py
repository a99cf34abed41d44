"""`--metrics-address`: Prometheus `/metrics` and `/healthz` over plain HTTP.

/healthz answers 200 while every component in the process has shown it is alive (its loop
beat) within the last STALE seconds, and 503 naming the stuck ones otherwise; a liveness
probe restarts a process whose loop hangs. /metrics is prometheus-client's text format.
"""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import threading
import time

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

STALE = 60.0


class Health:
    """Heartbeats of a process's components."""

    def __init__(self) -> None:
        self._beats: dict[str, float] = {}

    def beat(self, component: str) -> None:
        self._beats[component] = time.monotonic()

    def stuck(self) -> list[str]:
        now = time.monotonic()
        return sorted(c for c, t in self._beats.items() if now - t > STALE)


def serve(address: str, registry: CollectorRegistry, health: Health) -> ThreadingHTTPServer:
    """Serves /metrics and /healthz on HOST:PORT in a daemon thread."""
    host, _, port = address.rpartition(":")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path == "/metrics":
                self._answer(200, generate_latest(registry), CONTENT_TYPE_LATEST)
            elif self.path in ("/healthz", "/livez", "/readyz"):
                stuck = health.stuck()
                self._answer(503 if stuck else 200, (f"stuck: {', '.join(stuck)}" if stuck else "ok").encode())
            else:
                self._answer(404, b"not found")

        def _answer(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass  # scrapes every few seconds would drown the log

    server = ThreadingHTTPServer((host or "0.0.0.0", int(port)), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
    return server
