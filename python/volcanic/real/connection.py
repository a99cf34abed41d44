"""HTTP(S) to one API server over libcurl (pycurl): every request of a process goes through
one libcurl multi handle, driven by one thread, on a pool of keep-alive connections.

Why libcurl: the scheduler and the controller-manager send thousands of requests per
thousand pods on the CPU the API server needs. From Python threads over http.client, 1,000
pod creates cost the client 0.6-0.8 CPU-seconds; through one multi handle, 0.2-0.3 (libcurl
does the HTTP and TLS work without the GIL, and no thread is parked per request in flight).
It also handles what we hand-wrote before: a kept-alive connection the server closed
meanwhile is replaced and the request sent again, and a connection pool shared by every
thread of the process. HTTP/1.1 on several connections, not HTTP/2 on one: the latter was
slower in wall time against kube-apiserver here.

The kubernetes client still loads the kubeconfig; this module only moves bytes, with the
TLS settings and proxy it found (`tls-server-name` is honoured with CONNECT_TO: the URL
names the certificate's host, the socket goes to the configured address).

A busy API server is handled as client-go's REST client handles it (k8s.io/client-go
rest/request.go and rest/with_retry.go, `IsNextRetry`/`checkWait`): an answer 429 or 5xx that
carries an integer Retry-After is sent again after that many seconds, up to MAX_RETRIES times,
whatever its method (the server refused it before acting on it), and a GET whose connection
was reset or closed without an answer is sent again after a second. The caller sees only the
last answer. A request waiting to be sent again holds no connection: the others go on. With
a `limiter` (client-go's QPS/Burst token bucket), every attempt, a retry's included, waits
for a token before it is handed to libcurl; the transfer thread does not sleep for it, it
starts the next request when the bucket has a token again.

Beyond client-go: the requests in flight at once are also limited by a window (Window) that
is halved by a 429 and doubles again after each second without one. An API server that
refuses what it cannot take at once (--max-requests-inflight, or APF's queues full) then
gets about as many requests as it takes, instead of 32 at once of which all but one come
back refused, again and again: measured on the dev cluster with --max-requests-inflight=1,
a burst of 400 pods had ~50 refusals a pod without it (docs/kubernetes.md, "A busy API
server").
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
import heapq
import itertools
import logging
import selectors
import socket
import threading
import time
from typing import Any, Callable
from urllib.parse import urlsplit

import pycurl

log = logging.getLogger(__name__)

MAX_CONNECTIONS = 32  # kept-alive connections to the server, one request in flight on each
MAX_RETRIES = 10  # client-go's default for one request (rest/request.go, Request.maxRetries)
RESET_RETRY_SECONDS = 1.0  # a GET whose connection broke: client-go's artificial Retry-After
RETRY_LOG_SECONDS = 10.0  # at most one log line about retries this often
WINDOW_GROW_SECONDS = 1.0  # the in-flight window doubles after this long without a 429
# libcurl's errors for a connection closed without an answer or cut in the middle of one
# (client-go's IsProbableEOF): a GET is sent again; a refused connection or TLS failure is not.
EOF_ERRORS = frozenset((pycurl.E_GOT_NOTHING, pycurl.E_PARTIAL_FILE))
RESET_ERRORS = frozenset((pycurl.E_RECV_ERROR, pycurl.E_SEND_ERROR))  # only when reset (IsConnectionReset)

# finish(status, body, error): the future's value (or raises its exception); error is
# libcurl's message when no answer came.
Finish = Callable[[int, bytes, "str | None"], Any]
OnChunk = Callable[[int, bytes], bool]


class TokenBucket:
    """client-go's client-side rate limit (rest.Config QPS and Burst, flowcontrol's token
    bucket): `burst` requests at once, then `qps` a second. Thread-safe."""

    def __init__(self, qps: float, burst: int, now: Callable[[], float] = time.monotonic) -> None:
        if not qps > 0 or burst < 1:
            raise ValueError(f"kube-api-qps must be more than 0 and kube-api-burst at least 1, got {qps} and {burst}")
        self.qps, self.burst, self._now = float(qps), int(burst), now
        self._tokens, self._at = float(burst), now()
        self._lock = threading.Lock()

    def try_take(self) -> float:
        """Takes a token if there is one (0.0); else the seconds until there will be one."""
        with self._lock:
            now = self._now()
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.qps)
            self._at = now
            if self._tokens >= 1:
                self._tokens -= 1
                return 0.0
            return (1 - self._tokens) / self.qps

    def take(self) -> None:
        """Waits for a token in the calling thread (a watch's)."""
        while (wait := self.try_take()) > 0:
            time.sleep(wait)


def retry_wait(method: str, status: int, head: list[bytes], errno: int | None, message: str = "") -> float | None:
    """The seconds after which client-go would send a request again, or None: an answer 429
    or 5xx with an integer Retry-After (any method: the server did not act on it), or a GET
    whose connection was reset or closed without a whole answer (with_retry.go's checkWait;
    request.go's isErrRetryableFunc, IsConnectionReset and IsProbableEOF)."""
    if errno is not None:
        broken = errno in EOF_ERRORS or (errno in RESET_ERRORS and "reset" in message.lower())
        return RESET_RETRY_SECONDS if method == "GET" and broken else None
    if status != 429 and status < 500:
        return None
    for line in head:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"retry-after":
            value = value.strip()
            return float(value) if value.isdigit() else None
    return None


class Window:
    """How many requests may be in flight (TCP's congestion window, on 429s): all connections
    while the server takes them; halved by a 429 answering a request sent since the last
    halving (the refusals of one round arrive together: the round halves the window once),
    never below one; doubled after each WINDOW_GROW_SECONDS without a 429. Only the
    transfer thread uses it."""

    def __init__(self, most: int, now: Callable[[], float] = time.monotonic) -> None:
        self.most, self._now = most, now
        self.size = float(most)
        self.round = 0  # which halving requests are sent under
        self._calm_since = now()

    def limit(self) -> int:
        now = self._now()
        if self.size < self.most and now - self._calm_since >= WINDOW_GROW_SECONDS:
            self.size = min(self.most, self.size * 2)
            self._calm_since = now
        return int(self.size)

    def refused(self, sent_in_round: int) -> None:
        if sent_in_round == self.round:
            self.size = max(1.0, self.size / 2)
            self.round += 1
        self._calm_since = self._now()


@dataclass
class Counts:
    """What went to the server: attempts (a retry is one more), retries, and answers 429."""

    sent: int = 0
    retried: int = 0
    refused: int = 0
    logged_at: float = float("-inf")  # when log_retries() last wrote a line
    logged_retries: int = 0  # `retried` then

    def log_retries(self) -> None:
        """A warning at most every RETRY_LOG_SECONDS while requests are being sent again (an
        operator should see that the API server is refusing work)."""
        now = time.monotonic()
        if now - self.logged_at >= RETRY_LOG_SECONDS:
            log.warning("kube client: the API server is busy or unreachable: %d requests sent again since the "
                        "last such line (%d answered 429 in all)", self.retried - self.logged_retries, self.refused)
            self.logged_at, self.logged_retries = now, self.retried


class Connections:
    """Thread-safe. submit() queues a request for the transfer thread (started on first use);
    stream() runs a long request (a watch) in the calling thread on a connection of its own."""

    def __init__(self, configuration: Any, max_connections: int = MAX_CONNECTIONS,
                 limiter: TokenBucket | None = None, max_retries: int = MAX_RETRIES) -> None:
        self._base, self._options = _server_options(configuration)
        self._max_connections = max_connections
        self.limiter, self.max_retries = limiter, max_retries
        self.counts = Counts()
        self._sequence = itertools.count()  # submission order, kept by retries
        self._queue: list[_Request] = []
        self._lock = threading.Lock()
        self._waker, self._wake_end = socket.socketpair()
        self._thread: threading.Thread | None = None

    def submit(self, method: str, path: str, body: bytes | None, headers: dict[str, str], timeout: float,
               finish: Finish, first: bool = False) -> Future:
        """The future of finish(status, body, error); `first` goes ahead of every request not
        sent yet (a caller waiting in its thread, a Lease renewal, must not wait behind a
        burst of pod creates)."""
        request = _Request(method, path, body, headers, timeout, finish, first, next(self._sequence))
        with self._lock:
            wake = not self._queue  # else a wake is pending already
            self._queue.append(request)
            if self._thread is None:
                self._thread = threading.Thread(target=_Transfers(self).run, daemon=True, name="kube-transfers")
                self._thread.start()
        if wake:
            self._waker.send(b"\0")
        return request.future

    def stream(self, path: str, headers: dict[str, str], timeout: float,
               on_chunk: OnChunk) -> tuple[int, str | None, bytes]:
        """GET `path`, giving on_chunk(status, chunk) each piece of a 2xx answer's body as it
        comes until it returns False; (status, libcurl's error or None, the body of an error
        answer) once the server ends the answer. An answer with Retry-After is asked for again
        first (a watch refused by a busy server: nothing was delivered yet)."""
        attempts = 0
        while True:
            if self.limiter is not None:
                self.limiter.take()
            status, error, body, head = self._stream_once(path, headers, timeout, on_chunk)
            with self._lock:
                self.counts.sent += 1
                self.counts.refused += status == 429
            wait = retry_wait("GET", status, head, None) if error is None and status >= 300 else None
            if wait is None or attempts == self.max_retries:
                return status, error, body
            attempts += 1
            with self._lock:
                self.counts.retried += 1
                self.counts.log_retries()
            time.sleep(wait)

    def _stream_once(self, path: str, headers: dict[str, str], timeout: float,
                     on_chunk: OnChunk) -> tuple[int, str | None, bytes, list[bytes]]:
        easy = pycurl.Curl()
        status, stopped = [0], [False]
        head: list[bytes] = []
        error_body: list[bytes] = []

        def header(line: bytes) -> None:
            if line.startswith(b"HTTP/"):  # the status line (the last one: a proxy's comes first)
                status[0] = int(line.split()[1])
                head.clear()
            else:
                head.append(line)

        def write(chunk: bytes) -> int | None:
            if status[0] >= 300:
                error_body.append(chunk)
                return None
            if on_chunk(status[0], chunk):
                return None
            stopped[0] = True
            return 0  # abort the transfer
        self._prepare(easy, _Request("GET", path, None, headers, timeout), write)
        easy.setopt(pycurl.HEADERFUNCTION, header)
        easy.setopt(pycurl.TCP_KEEPALIVE, 1)  # a watch is idle for long: notice a vanished peer
        try:
            easy.perform()
            error = None
        except pycurl.error as e:
            error = None if stopped[0] else _message(e)
        finally:
            easy.close()
        return status[0], error, b"".join(error_body), head

    def _prepare(self, easy: pycurl.Curl, request: "_Request", write: Callable[[bytes], Any]) -> None:
        for option, value in self._options:
            easy.setopt(option, value)
        easy.setopt(pycurl.URL, self._base + request.path)
        easy.setopt(pycurl.CUSTOMREQUEST, request.method)
        if request.body is not None:
            easy.setopt(pycurl.POSTFIELDS, request.body)
        elif request.method == "GET":
            easy.setopt(pycurl.HTTPGET, 1)
        easy.setopt(pycurl.HTTPHEADER, [f"{k}: {v}" for k, v in request.headers.items()] + ["Expect:"])
        easy.setopt(pycurl.TIMEOUT_MS, int(request.timeout * 1000))
        easy.setopt(pycurl.WRITEFUNCTION, write)

    def _take_queued(self) -> list["_Request"]:
        with self._lock:
            queued, self._queue = self._queue, []
        return queued


@dataclass(slots=True)
class _Request:
    method: str
    path: str
    body: bytes | None
    headers: dict[str, str]
    timeout: float
    finish: Finish | None = None
    first: bool = False
    sequence: int = 0  # submission order
    future: Future = field(default_factory=Future)
    chunks: list[bytes] = field(default_factory=list)  # the answer's body as it comes
    head: list[bytes] = field(default_factory=list)  # the answer's header lines
    attempts: int = 0  # answers that were retried
    round: int = 0  # the Window's round it was sent in


class _Transfers:
    """The transfer thread: libcurl's multi interface on an epoll/kqueue selector (libcurl
    says which sockets to watch and when its next timeout is), woken by submit().

    At most one request per connection is handed to libcurl; the others wait here and go in
    the order they were submitted, those marked `first` before the others. (libcurl's own
    queue for a busy host does not keep that order: a job's pods then arrive interleaved
    with every other job's, and each gang fills only when all do.) So at most that many easy
    handles exist; they are reused. A request to be sent again waits in `delayed` until its
    Retry-After has passed, then goes ahead of those of its class not sent yet, in
    submission order; the selector's timeout covers it and the token bucket's next token."""

    def __init__(self, connections: Connections) -> None:
        self.connections = connections
        self.selector = selectors.DefaultSelector()
        self.selector.register(connections._wake_end, selectors.EVENT_READ)
        self.multi = pycurl.CurlMulti()
        self.multi.setopt(pycurl.M_SOCKETFUNCTION, self._watch_socket)
        self.multi.setopt(pycurl.M_TIMERFUNCTION, self._set_timer)
        self.multi.setopt(pycurl.M_MAX_HOST_CONNECTIONS, connections._max_connections)
        self.multi.setopt(pycurl.M_MAXCONNECTS, connections._max_connections)
        self.deadline: float | None = None
        self.waiting: deque[_Request] = deque()
        self.waiting_first: deque[_Request] = deque()
        self.running: dict[pycurl.Curl, _Request] = {}
        self.spare: list[pycurl.Curl] = []
        self.delayed: list[tuple[float, int, _Request]] = []  # (when, sequence, request): retries
        self.throttled_until: float | None = None  # no token before then
        self.window = Window(connections._max_connections)

    def run(self) -> None:
        while True:
            try:
                self._step()
            except Exception:  # noqa: BLE001 - the thread every request waits on must not die
                log.exception("kube-transfers: unexpected error; going on")
                self.deadline = time.monotonic()  # let libcurl look at every transfer again

    def _step(self) -> None:
        timeout = None if (wake_at := self._wake_at()) is None else max(0.0, wake_at - time.monotonic())
        for key, events in self.selector.select(timeout):
            if key.fileobj is self.connections._wake_end:
                self.connections._wake_end.recv(4096)
                for request in self.connections._take_queued():
                    (self.waiting_first if request.first else self.waiting).append(request)
            else:
                self.multi.socket_action(key.fd, _curl_events(events))
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.deadline = None
            self.multi.socket_action(pycurl.SOCKET_TIMEOUT, 0)
        self._finish_done()
        self._release_delayed()
        self._start_waiting()

    def _wake_at(self) -> float | None:
        """The earliest of libcurl's timeout, the next retry's time and the next token's."""
        times = [t for t in (self.deadline, self.delayed[0][0] if self.delayed else None, self.throttled_until)
                 if t is not None]
        return min(times) if times else None

    def _release_delayed(self) -> None:
        """Retries whose time has come go ahead of their class's requests not sent yet."""
        now = time.monotonic()
        due: list[_Request] = []
        while self.delayed and self.delayed[0][0] <= now:
            due.append(heapq.heappop(self.delayed)[2])
        for request in sorted(due, key=lambda r: r.sequence, reverse=True):
            (self.waiting_first if request.first else self.waiting).appendleft(request)

    def _start_waiting(self) -> None:
        limiter = self.connections.limiter
        self.throttled_until = None
        while (self.waiting_first or self.waiting) and len(self.running) < self.window.limit():
            if limiter is not None:
                wait = limiter.try_take()
                if wait > 0:
                    self.throttled_until = time.monotonic() + wait
                    return
            request = (self.waiting_first or self.waiting).popleft()
            easy = self.spare.pop() if self.spare else pycurl.Curl()
            try:
                self.connections._prepare(easy, request, request.chunks.append)
                easy.setopt(pycurl.HEADERFUNCTION, request.head.append)
                self.multi.add_handle(easy)  # libcurl asks for a timeout of 0 to start it
            except Exception as e:  # noqa: BLE001 - a request libcurl refuses (a bad header): its caller's error
                easy.close()
                request.future.set_exception(e)
                continue
            self.running[easy] = request
            request.round = self.window.round
            self.connections.counts.sent += 1

    def _finish_done(self) -> None:
        while True:
            queued, succeeded, failed = self.multi.info_read()
            for easy in succeeded:
                self._finish(easy, None, None)
            for easy, errno, message in failed:
                self._finish(easy, message, errno)
            if not queued:
                return

    def _finish(self, easy: pycurl.Curl, error: str | None, errno: int | None) -> None:
        request = self.running.pop(easy)
        try:
            status = easy.getinfo(pycurl.RESPONSE_CODE)
            self.multi.remove_handle(easy)
            easy.reset()
            self.spare.append(easy)
            if self._retried(request, status, error, errno):
                return
            value = request.finish(status, b"".join(request.chunks), error)
        except BaseException as e:  # noqa: BLE001 - the caller gets it from the future
            request.future.set_exception(e)
        else:
            request.future.set_result(value)

    def _retried(self, request: _Request, status: int, error: str | None, errno: int | None) -> bool:
        """Puts the request aside to be sent again if client-go would (retry_wait)."""
        counts = self.connections.counts
        if status == 429:
            counts.refused += 1
            self.window.refused(request.round)
        if request.attempts >= self.connections.max_retries:
            return False
        wait = retry_wait(request.method, status, request.head, errno, error or "")
        if wait is None:
            return False
        request.attempts += 1
        request.chunks.clear()
        request.head.clear()
        heapq.heappush(self.delayed, (time.monotonic() + wait, request.sequence, request))
        counts.retried += 1
        counts.log_retries()
        return True

    def _watch_socket(self, what: int, fd: int, multi: Any, data: Any) -> None:
        """libcurl's wishes for a socket: IN, OUT, INOUT, or none (POLL_NONE, POLL_REMOVE)."""
        if fd in self.selector.get_map():
            self.selector.unregister(fd)
        events = 0
        if what != pycurl.POLL_REMOVE:
            events = (selectors.EVENT_READ if what & pycurl.POLL_IN else 0) | \
                     (selectors.EVENT_WRITE if what & pycurl.POLL_OUT else 0)
        if events:
            self.selector.register(fd, events)

    def _set_timer(self, milliseconds: int) -> None:
        self.deadline = None if milliseconds < 0 else time.monotonic() + milliseconds / 1000


def _curl_events(events: int) -> int:
    return (pycurl.CSELECT_IN if events & selectors.EVENT_READ else 0) | \
           (pycurl.CSELECT_OUT if events & selectors.EVENT_WRITE else 0)


def _message(error: pycurl.error) -> str:
    return error.args[1] if len(error.args) > 1 else str(error)


def _server_options(configuration: Any) -> tuple[str, list[tuple[int, Any]]]:
    """The base URL and the options every request carries: HTTP/1.1, TLS as the kubeconfig
    says, the proxy (or none: libcurl would read the environment's on its own)."""
    url = urlsplit(configuration.host.rstrip("/"))
    https = url.scheme == "https"
    port = url.port or (443 if https else 80)
    options: list[tuple[int, Any]] = [(pycurl.NOSIGNAL, 1),
                                      (pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_1_1),
                                      (pycurl.PROXY, _proxy_of(configuration) or "")]
    if configuration.proxy_headers:
        options.append((pycurl.PROXYHEADER, [f"{k}: {v}" for k, v in configuration.proxy_headers.items()]))
        options.append((pycurl.HEADEROPT, pycurl.HEADER_SEPARATE))
    netloc = url.netloc
    if https:
        options += _tls_options(configuration)
        server_name = getattr(configuration, "tls_server_name", None)
        if server_name:
            address = f"[{url.hostname}]" if ":" in (url.hostname or "") else url.hostname
            options.append((pycurl.CONNECT_TO, [f"{server_name}:{port}:{address}:{port}"]))
            netloc = f"{server_name}:{port}"
    return f"{url.scheme}://{netloc}{url.path}", options


def _tls_options(configuration: Any) -> list[tuple[int, Any]]:
    """The kubernetes client's own rules (kubernetes/client/rest.py): its CA file, else
    certifi's; no verification when the kubeconfig says insecure-skip-tls-verify."""
    import certifi

    if not configuration.verify_ssl:
        options = [(pycurl.SSL_VERIFYPEER, 0), (pycurl.SSL_VERIFYHOST, 0)]
    else:
        options = [(pycurl.CAINFO, configuration.ssl_ca_cert or certifi.where())]
        if configuration.assert_hostname is False:
            options.append((pycurl.SSL_VERIFYHOST, 0))
    if configuration.cert_file:
        options += [(pycurl.SSLCERT, configuration.cert_file), (pycurl.SSLKEY, configuration.key_file)]
    return options


def _proxy_of(configuration: Any) -> str | None:
    """The proxy the kubernetes client would use: the kubeconfig's proxy-url or the
    environment's, unless no_proxy names the server."""
    proxy = configuration.proxy
    if not proxy:
        return None
    from kubernetes.client.rest import should_bypass_proxies

    if should_bypass_proxies(configuration.host, configuration.no_proxy or ""):
        return None
    return proxy
