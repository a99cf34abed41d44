"""Volcano's admission webhook over HTTPS: the paths of Volcano's webhook-manager, each
answering AdmissionReview v1 through volcanic.admission.review.

    POST /jobs/mutate       /jobs/validate
    POST /queues/mutate     /queues/validate
    POST /podgroups/mutate  /podgroups/validate
    POST /pods/mutate       /pods/validate
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
  one; chunked bodies are not read), 413 for a body over MAX_BODY, 408 when the body does
  not arrive in time, 500 if the codec itself fails (a bug; logged).
- Limits: bodies up to MAX_BODY = 3 MiB, the API server's own request limit
  (MaxRequestBodyBytes) and what Kubernetes' PodSecurity webhook accepts; a larger
  Content-Length is refused before any of the body is read. Every socket read waits at most
  `read_timeout` (10 s, the API server's default webhook timeoutSeconds) and the whole body
  must arrive within `read_timeout` too, so a client that stops mid-body or trickles it
  cannot hold a worker. At most `max_connections` (128) connections are served at once; more
  are closed on accept. The TLS handshake happens in the connection's worker thread, under
  the same timeout, never in the accepting thread.
- Keep-alive (HTTP/1.1) connections are reused, as the API server does; a response that
  leaves part of a request unread closes the connection.

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

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import logging
import socket
import ssl
import threading
import time
from typing import Any, Callable, Iterable

from volcanic.admission import AdmissionConf
from volcanic.admission import review as codec
from volcanic.admission import volcano_chain
from volcanic.admission.chain import EMPTY_LISTER, AdmissionChain

log = logging.getLogger(__name__)

Obj = dict[str, Any]

MAX_BODY = 3 * 1024 * 1024
READ_TIMEOUT = 10.0
MAX_CONNECTIONS = 128
LINGER_SECONDS, LINGER_BYTES = 1.0, 8 * 1024 * 1024
# path -> (kind, mutating)
PATHS = {
    "/jobs/mutate": ("Job", True), "/jobs/validate": ("Job", False),
    "/queues/mutate": ("Queue", True), "/queues/validate": ("Queue", False),
    "/podgroups/mutate": ("PodGroup", True), "/podgroups/validate": ("PodGroup", False),
    "/pods/mutate": ("Pod", True), "/pods/validate": ("Pod", False),
}
HEALTHZ = "/healthz"


class _BodyError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "WebhookServer"

    def version_string(self) -> str:
        return "volcanic-webhook"

    def setup(self) -> None:
        self.timeout = self.server.read_timeout  # StreamRequestHandler sets it on the socket
        super().setup()
        # Answers go out in one write; without this, Nagle's algorithm and the client's
        # delayed ACK would hold each one back 40 ms.
        self._unread_body = False
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.request.do_handshake()  # here, in the worker thread, under the timeout

    def parse_request(self) -> bool:
        self._unread_body = False
        ok = super().parse_request()
        if ok:
            self._unread_body = bool(self.headers.get("Transfer-Encoding")) or \
                (self.headers.get("Content-Length") or "0").strip() != "0"
        return ok

    def finish(self) -> None:
        super().finish()
        if self.close_connection and self._unread_body:
            self._drain()

    def _drain(self) -> None:
        """A lingering close: reads and drops what the client is still sending (at most
        LINGER_BYTES, for LINGER_SECONDS) so that it reads our answer instead of a reset."""
        deadline, dropped = time.monotonic() + LINGER_SECONDS, 0
        try:
            while dropped < LINGER_BYTES:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.request.settimeout(left)
                data = self.request.recv(65536)
                if not data:
                    break
                dropped += len(data)
        except (OSError, ValueError):
            pass

    # Routing.
    def do_GET(self) -> None:
        path = self.path.partition("?")[0]
        if path == HEALTHZ:
            self._send(200, b"ok", "text/plain; charset=utf-8")
        elif path in PATHS:
            self._error(405, f"{path} accepts POST only", allow="POST")
        else:
            self._error(404, f"no such path {path}")

    def do_HEAD(self) -> None:
        self._not_allowed()

    def do_PUT(self) -> None:
        self._not_allowed()

    def do_DELETE(self) -> None:
        self._not_allowed()

    def do_PATCH(self) -> None:
        self._not_allowed()

    def do_OPTIONS(self) -> None:
        self._not_allowed()

    def do_POST(self) -> None:
        path = self.path.partition("?")[0]
        if path not in PATHS:
            if path == HEALTHZ:
                self._error(405, f"{path} accepts GET only", allow="GET")
            else:
                self._error(404, f"no such path {path}")
            return
        media = (self.headers.get("Content-Type") or "").partition(";")[0].strip().lower()
        if media != "application/json":
            self._error(415, f"Content-Type must be application/json, got {media or 'none'!r}", close=True)
            return
        try:
            body = self._read_body()
        except _BodyError as e:
            self._error(e.code, str(e), close=True)
            return
        kind, mutating = PATHS[path]
        admit = codec.mutate if mutating else codec.validate
        try:
            answer = admit(codec.parse(body), self.server.chain, self.server.lister, kind=kind)
        except codec.ReviewError as e:
            self._error(400, str(e), close=False)
            return
        except Exception as e:  # a bug in the codec: answer, log, keep serving
            log.exception("admission review on %s failed", path)
            self._error(500, f"internal error: {type(e).__name__}: {e}", close=False)
            return
        self._send(200, json.dumps(answer, separators=(",", ":")).encode(), "application/json")

    def _not_allowed(self) -> None:
        path = self.path.partition("?")[0]
        if path in PATHS or path == HEALTHZ:
            self._error(405, f"{path} accepts {'GET' if path == HEALTHZ else 'POST'} only",
                        allow="GET" if path == HEALTHZ else "POST")
        else:
            self._error(404, f"no such path {path}")

    # The body.
    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding"):
            raise _BodyError(411, "a Content-Length is required (chunked bodies are not read)")
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            raise _BodyError(411, "a Content-Length is required")
        length_text = length_text.strip()
        if not (length_text.isascii() and length_text.isdigit()):
            raise _BodyError(400, f"invalid Content-Length {length_text!r}")
        length = int(length_text)
        if length > self.server.max_body:
            raise _BodyError(413, f"the body is {length} bytes; at most {self.server.max_body} are accepted")
        deadline = time.monotonic() + self.server.read_timeout
        chunks, received = [], 0
        while received < length:
            if time.monotonic() > deadline:
                self._unread_body = False  # a slow client: no point in waiting for the rest
                raise _BodyError(408, f"the body did not arrive within {self.server.read_timeout:g} s "
                                      f"({received} of {length} bytes)")
            try:
                chunk = self.rfile.read1(min(length - received, 65536))
            except (TimeoutError, socket.timeout):
                self._unread_body = False
                raise _BodyError(408, f"the body did not arrive within {self.server.read_timeout:g} s "
                                      f"({received} of {length} bytes)") from None
            if not chunk:
                self._unread_body = False
                raise _BodyError(400, f"the body ended after {received} of {length} bytes")
            chunks.append(chunk)
            received += len(chunk)
        self._unread_body = False
        return b"".join(chunks)

    # Answers.
    def _error(self, code: int, message: str, allow: str | None = None, close: bool | None = None) -> None:
        """A Kubernetes Status object. The connection is closed (`close`, by default when
        the request had a body) when part of the request may be left unread."""
        if close is None:
            close = self._unread_body
        status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                  "message": message, "reason": _REASONS.get(code, ""), "code": code}
        headers = {"Allow": allow} if allow else {}
        if close:
            self.close_connection = True
            headers["Connection"] = "close"
        self._send(code, json.dumps(status).encode(), "application/json", headers)

    def _send(self, code: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            # end_headers, written with the body at once (an HTTP/0.9 answer has no headers)
            head = getattr(self, "_headers_buffer", [])
            self.wfile.write(b"".join(head) + (b"\r\n" if head else b"") + body)
            self._headers_buffer = []
        except OSError:  # the client went away
            self.close_connection = True

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # What http.server itself refuses (a malformed request line, headers too long, an
        # unsupported method): the same Status body, and the connection closed.
        self._error(code, message or explain or _REASONS.get(code, "error"), close=True)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)


_REASONS = {400: "BadRequest", 404: "NotFound", 405: "MethodNotAllowed", 408: "Timeout",
            411: "LengthRequired", 413: "RequestEntityTooLarge", 415: "UnsupportedMediaType",
            500: "InternalError", 501: "NotImplemented"}


class WebhookServer(ThreadingHTTPServer):
    """The HTTPS server; a thread per connection, at most `max_connections` at once."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], context: ssl.SSLContext, chain: AdmissionChain,
                 lister: Any, max_body: int = MAX_BODY, read_timeout: float = READ_TIMEOUT,
                 max_connections: int = MAX_CONNECTIONS) -> None:
        self.chain, self.lister = chain, lister
        self.max_body, self.read_timeout = max_body, read_timeout
        self.max_connections = max_connections
        self._slots = threading.BoundedSemaphore(max_connections)
        self._thread: threading.Thread | None = None
        super().__init__(address, _Handler)
        # The handshake is left to the worker thread (first read), under its timeout.
        self.socket = context.wrap_socket(self.socket, server_side=True, do_handshake_on_connect=False)

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def url(self) -> str:
        host = self.server_address[0]
        return f"https://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{self.port}"

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            log.warning("refusing a connection from %s: %d connections are open already",
                        client_address, self.max_connections)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # TLS failures, resets and timeouts of one connection are the client's business.
        log.debug("connection from %s failed", client_address, exc_info=True)

    def stop(self) -> None:
        """Stops serving (started with start_server) and closes the listening socket."""
        if self._thread is not None:
            self.shutdown()  # only a running serve_forever can be shut down
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "WebhookServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def tls_context(cert: str, key: str) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    return context


def make_server(cert: str, key: str, conf: AdmissionConf | None = None, lister: Any = None,
                host: str = "0.0.0.0", port: int = 8443, chain: AdmissionChain | None = None,
                **limits: Any) -> WebhookServer:
    """A bound WebhookServer, not yet serving. `limits`: max_body, read_timeout, max_connections."""
    conf = conf or AdmissionConf()
    chain = chain if chain is not None else volcano_chain(conf)
    lister = lister if lister is not None else EMPTY_LISTER
    return WebhookServer((host, port), tls_context(cert, key), chain, lister, **limits)


def start_server(cert: str, key: str, conf: AdmissionConf | None = None, lister: Any = None,
                 host: str = "127.0.0.1", port: int = 0, **kwargs: Any) -> WebhookServer:
    """make_server serving in a daemon thread; port 0 picks a free port (see .port, .url).
    Stop it with .stop() or use it as a context manager."""
    server = make_server(cert, key, conf, lister, host, port, **kwargs)
    server._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                                      name=f"volcanic-webhook-{server.port}", daemon=True)
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


# Certificates.

def self_signed_cert(directory: str, hosts: Iterable[str] = ("localhost", "127.0.0.1"),
                     days: int = 1) -> tuple[str, str]:
    """Writes a self-signed certificate for `hosts` (names or IP addresses) and its key
    (ECDSA P-256) as PEM files in `directory`; returns their paths. For tests and the
    benchmark: a real deployment uses the certificate the API server is given as caBundle."""
    import datetime
    import ipaddress
    import os

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    hosts = list(hosts)
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0] if hosts else "volcanic-webhook")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=days))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = os.path.join(directory, "tls.crt"), os.path.join(directory, "tls.key")
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return cert_path, key_path
