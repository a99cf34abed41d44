"""Volcano's admission webhook over HTTPS: the paths of Volcano's webhook-manager, each
answering AdmissionReview v1 through volcanic.admission.review. The glue of the admission
rules (volcanic.admission: the chain and the review codec, no sockets) and the HTTP server
(volcanic.httpd: knows nothing of admission); the real-cluster daemon (volcanic.real.webhook),
`volcanic webhook` and the admission benchmark serve it.

    POST /jobs/mutate       /jobs/validate
    POST /queues/mutate     /queues/validate
    POST /podgroups/mutate  /podgroups/validate
    POST /pods/mutate       /pods/validate
    POST                    /hypernodes/validate
    POST                    /jobflows/validate
    POST                    /cronjobs/validate
    GET  /healthz           200 "ok"

Each path admits its own kind only; a review of another kind is denied with Volcano's
"expect resource to be ..." (Volcano's decoders, pkg/webhooks/schema, do the same).

HTTP behaviour:
- 200 with the AdmissionReview response for a well-formed review (a denial is a 200 too:
  `response.allowed` is false);
- 400 for a body that is not JSON, is truncated, or is not an AdmissionReview v1, with a
  Kubernetes Status object whose message says what is wrong (Volcano answers these with a
  denial; a 400 tells a human with curl more, and the API server never sends such a body);
- 404 for an unknown path, 405 for a method a path does not serve, 415 for a Content-Type
  other than application/json, 411 without a Content-Length (the API server always sends
  one; chunked bodies are not read), 413 for a body over `max_body` (3 MiB, the API server's
  own MaxRequestBodyBytes), 408 when the headers or the body do not arrive in time, 400 at
  once for a request line that is not HTTP/1.x, 500 if the codec itself fails (a bug; logged).
- Serving, deadlines and connection bounds are volcanic.httpd.server's: slow and
  idle clients hold no worker thread, only complete requests reach one.

The lister. Rules that read other objects (a job's queue must exist and be Open, a queue's
parent, a namespace's annotations) read `lister`: on a real cluster, informers over the API
server (volcanic.real.webhook); offline, `volcanic.cluster.snapshot.snapshot_lister(objects)`,
an in-memory snapshot. Without one, nothing exists.

    server = start_server(cert, key, port=0)      # a thread; server.port, server.url
    ...
    server.stop()
    serve(port, cert, key, conf=AdmissionConf(), lister=None, host="0.0.0.0")   # blocks
"""

from __future__ import annotations

import json
import logging
import ssl
import threading
from typing import Any, Callable

from volcanic.admission import AdmissionConf, volcano_chain
from volcanic.admission import review as codec
from volcanic.admission.chain import EMPTY_LISTER, AdmissionChain
from volcanic.httpd.server import HttpServer, Limits
from volcanic.httpd.tls import tls_context
from volcanic.httpd.wire import REASONS, Request, Response

log = logging.getLogger(__name__)

# path -> (kind, mutating)
PATHS = {
    "/jobs/mutate": ("Job", True), "/jobs/validate": ("Job", False),
    "/queues/mutate": ("Queue", True), "/queues/validate": ("Queue", False),
    "/podgroups/mutate": ("PodGroup", True), "/podgroups/validate": ("PodGroup", False),
    "/pods/mutate": ("Pod", True), "/pods/validate": ("Pod", False),
    "/hypernodes/validate": ("HyperNode", False),
    "/jobflows/validate": ("JobFlow", False),
    "/cronjobs/validate": ("CronJob", False),
    "/queuebindings/validate": ("QueueBinding", False),  # volcanic's own
}
HEALTHZ = "/healthz"


class WebhookServer(HttpServer):
    """The HTTPS server of the admission paths (volcanic.httpd.server's loop)."""

    server_version = "volcanic-webhook"

    def __init__(self, address: tuple[str, int], context: ssl.SSLContext, chain: AdmissionChain,
                 lister: Any, **limits: Any) -> None:
        self.chain, self.lister = chain, lister
        self._thread: threading.Thread | None = None
        super().__init__(address, context, Limits(**limits))

    def handle(self, request: Request) -> Response:
        method, path = request.head.method, request.head.path
        if path == HEALTHZ and method == "GET":
            return Response(200, b"ok", "text/plain; charset=utf-8")
        if path in PATHS and method == "POST":
            return self._review(request, *PATHS[path])
        if path in PATHS or path == HEALTHZ:
            allowed = "GET" if path == HEALTHZ else "POST"
            return self.error(405, f"{path} accepts {allowed} only", {"Allow": allowed})
        return self.error(404, f"no such path {path}")

    def _review(self, request: Request, kind: str, mutating: bool) -> Response:
        headers = request.head.headers
        media = (headers.get("Content-Type") or "").partition(";")[0].strip().lower()
        if media != "application/json":
            return self.error(415, f"Content-Type must be application/json, got {media or 'none'!r}")
        if headers.get("Content-Length") is None:
            return self.error(411, "a Content-Length is required")
        admit = codec.mutate if mutating else codec.validate
        try:
            answer = admit(codec.parse(request.body), self.chain, self.lister, kind=kind)
        except codec.ReviewError as e:
            return self.error(400, str(e))
        return Response(200, json.dumps(answer, separators=(",", ":")).encode())

    def error(self, code: int, message: str, headers: dict[str, str] | None = None) -> Response:
        """A Kubernetes Status object."""
        status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                  "message": message, "reason": REASONS.get(code, ""), "code": code}
        return Response(code, json.dumps(status).encode(), headers=headers or {})

    def stop(self) -> None:
        """Stops serving (started with start_server) and closes the listening socket."""
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def make_server(cert: str, key: str, conf: AdmissionConf | None = None, lister: Any = None,
                host: str = "0.0.0.0", port: int = 8443, chain: AdmissionChain | None = None,
                **limits: Any) -> WebhookServer:
    """A bound WebhookServer, not yet serving. `limits`: the fields of httpd.server.Limits
    (handshake_timeout, header_timeout, read_timeout, idle_timeout, max_body,
    max_connections, max_connections_per_address, workers)."""
    conf = conf or AdmissionConf()
    chain = chain if chain is not None else volcano_chain(conf)
    lister = lister if lister is not None else EMPTY_LISTER
    return WebhookServer((host, port), tls_context(cert, key), chain, lister, **limits)


def start_server(cert: str, key: str, conf: AdmissionConf | None = None, lister: Any = None,
                 host: str = "127.0.0.1", port: int = 0, **kwargs: Any) -> WebhookServer:
    """make_server serving in a daemon thread; port 0 picks a free port (see .port, .url).
    Stop it with .stop() or use it as a context manager."""
    server = make_server(cert, key, conf, lister, host, port, **kwargs)
    server._thread = threading.Thread(target=server.serve_forever, name=f"volcanic-webhook-{server.port}",
                                      daemon=True)
    server._thread.start()
    return server


def serve(port: int, cert: str, key: str, conf: AdmissionConf | None = None, lister: Any = None,
          host: str = "0.0.0.0", ready: Callable[[WebhookServer], None] | None = None, **limits: Any) -> None:
    """Serves until interrupted (Ctrl-C or SIGTERM's KeyboardInterrupt)."""
    server = make_server(cert, key, conf, lister, host, port, **limits)
    if ready is not None:
        ready(server)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
