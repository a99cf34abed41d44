"""An HTTP/1.1 server (over TLS, or plain) that slow or idle clients cannot lock out: the
admission webhook's (volcanic.webhook) and the daemons' /metrics and /healthz (volcanic.real.serving).

One thread runs a selector loop that does all socket work without blocking: accepting, the
TLS handshake, reading a request (line, headers and body) and writing its answer. Only a
complete request goes to the small pool of worker threads, which compute the answer and
never touch a socket. So a connection that is idle, handshakes slowly or trickles its
headers costs a file descriptor and a buffer, not a worker, and every one has a deadline:

- the TLS handshake must be done `handshake_timeout` after the accept;
- the request line and headers must all arrive within `header_timeout` (Go's
  http.Server ReadHeaderTimeout): one deadline for the whole head, counted from the end of
  the handshake (first request) or from the first byte of the request (a keep-alive one),
  which no byte sent renews;
- the body within `read_timeout` of the end of the head;
- a keep-alive connection waits `idle_timeout` for its next request;
- an answer must be taken by the client within WRITE_TIMEOUT.

`max_connections` are open at once in all and `max_connections_per_address` per client
address; more are closed as they are accepted, before any TLS. A request line that is not
HTTP/1.x (an HTTP/0.9 `GET /path`, garbage) is answered 400 as soon as its line ends.

Subclasses answer requests with handle(request) -> Response and word the server's own
errors with error(code, message) -> Response.
"""

from __future__ import annotations

from collections import Counter, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
import logging
import math
import selectors
import socket
import ssl
import threading
import time
from typing import Any, Callable

from volcanic.httpd.wire import (
    Head,
    Request,
    Response,
    WireError,
    check_request_line,
    encode,
    head_end,
    parse_head,
)

log = logging.getLogger(__name__)

MAX_HEAD = 64 * 1024  # request line and headers, as http.server's line limit
WRITE_TIMEOUT = 10.0
LINGER_SECONDS, LINGER_BYTES = 1.0, 8 * 1024 * 1024
SWEEP_SECONDS = 0.05  # how often deadlines are checked: their precision
ACCEPTS_PER_TURN = 64
REFUSAL_LOG_SECONDS = 10.0
WANT_MORE = (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError)


@dataclass(frozen=True)
class Limits:
    handshake_timeout: float = 10.0
    header_timeout: float = 10.0
    read_timeout: float = 10.0
    idle_timeout: float = 90.0
    max_body: int = 3 * 1024 * 1024
    max_connections: int = 1024
    max_connections_per_address: int = 128
    workers: int = 8

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                raise ValueError(f"webhook limit {name}: must be a number more than 0, got {value!r}")


class _Connection:
    """One client connection and where it stands: handshake, head, body, busy (a worker has
    its request), write, linger (dropping what a refused client still sends) or closed."""

    def __init__(self, sock: socket.socket, host: str, state: str, deadline: float) -> None:
        self.sock, self.host = sock, host
        self.state, self.deadline = state, deadline
        self.buffer = bytearray()
        self.head: Head | None = None
        self.idle = False  # waiting for the first byte of a keep-alive request
        self.out = memoryview(b"")
        self.then_close = self.linger = False
        self.dropped = 0
        self.events = 0


class HttpServer:
    server_version = "volcanic"

    def __init__(self, address: tuple[str, int], context: ssl.SSLContext | None, limits: Limits = Limits()) -> None:
        self.context, self.limits = context, limits
        self.listener = socket.create_server(address, backlog=1024)
        self.listener.setblocking(False)
        self.server_address = self.listener.getsockname()[:2]
        self._workers = ThreadPoolExecutor(limits.workers, thread_name_prefix=f"http-{self.server_address[1]}")
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)  # a worker never waits on a full wake-up pipe
        self._answers: deque[tuple[_Connection, Response]] = deque()
        self._connections: set[_Connection] = set()
        self._per_host: Counter[str] = Counter()
        self._refused, self._refusal_logged = 0, 0.0
        self._selector: selectors.BaseSelector | None = None
        self._lock = threading.Lock()
        self._stopping, self._stopped = threading.Event(), threading.Event()
        self._serving = False

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def url(self) -> str:
        host = self.server_address[0]
        scheme = "https" if self.context is not None else "http"
        return f"{scheme}://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{self.port}"

    # What subclasses answer.
    def handle(self, request: Request) -> Response:
        raise NotImplementedError

    def error(self, code: int, message: str) -> Response:
        return Response(code, message.encode(), "text/plain; charset=utf-8")

    # Running.
    def serve_forever(self) -> None:
        with self._lock:
            if self._stopping.is_set():
                return
            self._serving = True
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.listener, selectors.EVENT_READ, "accept")
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        try:
            self._loop()
        finally:
            for conn in list(self._connections):
                self._close(conn)
            self._selector.close()
            self._stopped.set()

    def shutdown(self) -> None:
        """Stops serve_forever and waits for it to return."""
        with self._lock:
            self._stopping.set()
            serving = self._serving
        self._wake()
        if serving:
            self._stopped.wait()

    def server_close(self) -> None:
        self.listener.close()
        self._workers.shutdown(wait=False, cancel_futures=True)
        self._wake_r.close()
        self._wake_w.close()

    @property
    def _selecting(self) -> selectors.BaseSelector:
        """The selector of serve_forever, whose loop is the only caller of what watches sockets."""
        assert self._selector is not None, "sockets are watched only while serve_forever runs"
        return self._selector

    def _loop(self) -> None:
        next_sweep = 0.0
        while not self._stopping.is_set():
            for key, mask in self._selecting.select(SWEEP_SECONDS):
                if key.data == "accept":
                    self._accept()
                elif key.data == "wake":
                    self._drain_wakeups()
                else:
                    self._on_event(key.data)
            self._take_answers()
            now = time.monotonic()
            if now >= next_sweep:
                self._sweep(now)
                next_sweep = now + SWEEP_SECONDS

    # Accepting.
    def _accept(self) -> None:
        for _ in range(ACCEPTS_PER_TURN):
            try:
                sock, address = self.listener.accept()
            except BlockingIOError:
                return
            except OSError as e:  # out of file descriptors: the backlog waits
                log.warning("accept failed: %s", e)
                return
            host = address[0]
            if len(self._connections) >= self.limits.max_connections:
                self._refuse(sock, host, f"{self.limits.max_connections} connections are open already")
            elif self._per_host[host] >= self.limits.max_connections_per_address:
                self._refuse(sock, host, f"{self.limits.max_connections_per_address} connections from it are open")
            else:
                self._open(sock, host)

    def _open(self, sock: socket.socket, host: str) -> None:
        now = time.monotonic()
        try:
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # each answer is one write
            if self.context is None:
                conn = _Connection(sock, host, "head", now + self.limits.header_timeout)
            else:
                sock = self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
                conn = _Connection(sock, host, "handshake", now + self.limits.handshake_timeout)
        except OSError:  # reset before we could look at it
            sock.close()
            return
        self._connections.add(conn)
        self._per_host[host] += 1
        self._watch(conn, selectors.EVENT_READ)

    def _refuse(self, sock: socket.socket, host: str, why: str) -> None:
        sock.close()
        self._refused += 1
        now = time.monotonic()
        if now - self._refusal_logged >= REFUSAL_LOG_SECONDS:  # a flood of them is one line
            log.warning("refusing connections: from %s, %s (%d refused in all)", host, why, self._refused)
            self._refusal_logged = now

    # Events.
    def _on_event(self, conn: _Connection) -> None:
        step = {"handshake": self._handshake, "head": self._receive, "body": self._receive,
                "write": self._send, "linger": self._drop_input}.get(conn.state)
        if step is not None:
            self._safely(conn, step)

    def _safely(self, conn: _Connection, step: Callable[..., None], *args: Any) -> None:
        try:
            step(conn, *args)
        except OSError:  # resets, TLS alerts: the client's business
            log.debug("connection from %s failed", conn.host, exc_info=True)
            self._close(conn)
        except Exception:  # a bug: this connection is lost, the others are served on
            log.exception("connection from %s failed", conn.host)
            self._close(conn)

    def _handshake(self, conn: _Connection) -> None:
        assert isinstance(conn.sock, ssl.SSLSocket)  # a connection handshakes only if _open wrapped it in TLS
        try:
            conn.sock.do_handshake()
        except ssl.SSLWantReadError:
            return self._watch(conn, selectors.EVENT_READ)
        except ssl.SSLWantWriteError:
            return self._watch(conn, selectors.EVENT_WRITE)
        self._await_request(conn, idle=False)

    def _await_request(self, conn: _Connection, idle: bool) -> None:
        conn.state, conn.head, conn.idle = "head", None, idle
        conn.deadline = time.monotonic() + (self.limits.idle_timeout if idle else self.limits.header_timeout)
        self._watch(conn, selectors.EVENT_READ)
        self._receive(conn)  # what is here already: pipelined, or held in the TLS layer

    def _receive(self, conn: _Connection) -> None:
        eof = self._read_available(conn)
        try:
            self._advance(conn, eof)
        except WireError as e:
            self._answer(conn, self.error(e.code, str(e)), close=True, linger=e.unread_body)

    def _read_available(self, conn: _Connection) -> bool:
        """Reads what the socket has, up to what one request can hold; True at end of input."""
        cap = MAX_HEAD + self.limits.max_body
        while len(conn.buffer) <= cap:
            try:
                data = conn.sock.recv(65536)
            except WANT_MORE:
                return False
            if not data:
                return True
            conn.buffer += data
        return False

    def _advance(self, conn: _Connection, eof: bool) -> None:
        if conn.state == "head":
            if conn.idle and conn.buffer:  # the keep-alive request has begun: its head's deadline
                conn.idle = False
                conn.deadline = time.monotonic() + self.limits.header_timeout
            end = head_end(conn.buffer)
            if end < 0 or end > MAX_HEAD:
                return self._incomplete_head(conn, eof)
            conn.head = parse_head(bytes(conn.buffer[:end]), self.limits.max_body)
            del conn.buffer[:end]
            conn.state, conn.deadline = "body", time.monotonic() + self.limits.read_timeout
            if len(conn.buffer) < conn.head.length:
                self._continue(conn, conn.head)
        head = conn.head
        assert head is not None  # state "body" (a head that is not whole yet returned above)
        if len(conn.buffer) >= head.length:
            self._dispatch(conn, head)
        elif eof:
            raise WireError(400, f"the body ended after {len(conn.buffer)} of {head.length} bytes")

    def _continue(self, conn: _Connection, head: Head) -> None:
        """Tells a client that waits for it (curl, with large bodies) to send its body; if
        these few bytes cannot go out at once, the client sends after its own wait."""
        if head.version == "HTTP/1.1" and (head.headers.get("Expect") or "").lower() == "100-continue":
            try:
                conn.sock.send(b"HTTP/1.1 100 Continue\r\n\r\n")
            except WANT_MORE:
                pass

    def _incomplete_head(self, conn: _Connection, eof: bool) -> None:
        if len(conn.buffer) > MAX_HEAD:
            raise WireError(431, f"the request line and headers are over {MAX_HEAD} bytes")
        check_request_line(conn.buffer)
        if eof:
            self._close(conn)

    # Workers.
    def _dispatch(self, conn: _Connection, head: Head) -> None:
        request = Request(head, bytes(conn.buffer[:head.length]))
        del conn.buffer[:head.length]
        conn.state, conn.deadline = "busy", math.inf
        self._unwatch(conn)
        future = self._workers.submit(self._compute, request)
        future.add_done_callback(lambda f: self._computed(conn, f))

    def _compute(self, request: Request) -> Response:
        try:
            return self.handle(request)
        except Exception as e:  # a bug: answer, log, keep serving
            log.exception("%s %s failed", request.head.method, request.head.path)
            return self.error(500, f"internal error: {type(e).__name__}: {e}")

    def _computed(self, conn: _Connection, future: Future[Response]) -> None:
        if not future.cancelled():  # cancelled: the server is stopping
            self._answers.append((conn, future.result()))
            self._wake()

    def _take_answers(self) -> None:
        while self._answers:
            conn, response = self._answers.popleft()
            if conn.state == "busy":
                assert conn.head is not None  # busy: a worker has had its request
                self._safely(conn, self._answer, response, response.close or not conn.head.keep_alive)

    # Writing.
    def _answer(self, conn: _Connection, response: Response, close: bool, linger: bool = False) -> None:
        if close:
            response = replace(response, close=True)
        conn.out = memoryview(encode(response, self.server_version, conn.head.method if conn.head else "GET"))
        conn.then_close, conn.linger = close, linger
        conn.state, conn.deadline = "write", time.monotonic() + WRITE_TIMEOUT
        self._send(conn)

    def _send(self, conn: _Connection) -> None:
        while conn.out:
            try:
                conn.out = conn.out[conn.sock.send(conn.out):]
            except ssl.SSLWantReadError:
                return self._watch(conn, selectors.EVENT_READ)
            except (ssl.SSLWantWriteError, BlockingIOError):
                return self._watch(conn, selectors.EVENT_WRITE)
        if not conn.then_close:
            self._await_request(conn, idle=True)
        elif conn.linger:
            conn.state, conn.deadline = "linger", time.monotonic() + LINGER_SECONDS
            self._watch(conn, selectors.EVENT_READ)
            self._drop_input(conn)
        else:
            self._close(conn)

    def _drop_input(self, conn: _Connection) -> None:
        """A lingering close: reads and drops what a refused client still sends (at most
        LINGER_BYTES, for LINGER_SECONDS), so that it reads our answer rather than a reset."""
        conn.buffer.clear()
        while conn.dropped < LINGER_BYTES:
            try:
                data = conn.sock.recv(65536)
            except WANT_MORE:
                return
            if not data:
                break
            conn.dropped += len(data)
        self._close(conn)

    # Deadlines.
    def _sweep(self, now: float) -> None:
        for conn in [c for c in self._connections if c.deadline <= now]:
            if conn.state == "head" and conn.buffer and not conn.idle:
                late = self.error(408, f"the request line and headers did not arrive within "
                                       f"{self.limits.header_timeout:g} s")
            elif conn.state == "body":
                assert conn.head is not None  # state "body": the head is parsed
                late = self.error(408, f"the body did not arrive within {self.limits.read_timeout:g} s "
                                       f"({len(conn.buffer)} of {conn.head.length} bytes)")
            else:  # no handshake, no request, or an answer not taken: nothing to say
                self._close(conn)
                continue
            self._safely(conn, self._answer, late, True)

    # Bookkeeping.
    def _watch(self, conn: _Connection, events: int) -> None:
        if conn.events == events:
            return
        if conn.events:
            self._selecting.modify(conn.sock, events, conn)
        else:
            self._selecting.register(conn.sock, events, conn)
        conn.events = events

    def _unwatch(self, conn: _Connection) -> None:
        if conn.events:
            self._selecting.unregister(conn.sock)
            conn.events = 0

    def _close(self, conn: _Connection) -> None:
        if conn not in self._connections:
            return
        self._unwatch(conn)
        conn.state = "closed"
        conn.sock.close()
        self._connections.discard(conn)
        self._per_host[conn.host] -= 1
        if not self._per_host[conn.host]:
            del self._per_host[conn.host]

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"\0")
        except OSError:  # closed, or full: the loop is awake already
            pass

    def _drain_wakeups(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except OSError:
            pass

    def __enter__(self) -> "HttpServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()
        self.server_close()
