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
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
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

# finish(status, body, error): the future's value (or raises its exception); error is
# libcurl's message when no answer came.
Finish = Callable[[int, bytes, "str | None"], Any]
OnChunk = Callable[[int, bytes], bool]


class Connections:
    """Thread-safe. submit() queues a request for the transfer thread (started on first use);
    stream() runs a long request (a watch) in the calling thread on a connection of its own."""

    def __init__(self, configuration: Any, max_connections: int = MAX_CONNECTIONS) -> None:
        self._base, self._options = _server_options(configuration)
        self._max_connections = max_connections
        self._queue: list[_Request] = []
        self._lock = threading.Lock()
        self._waker, self._wake_end = socket.socketpair()
        self._thread: threading.Thread | None = None

    def submit(self, method: str, path: str, body: bytes | None, headers: dict[str, str], timeout: float,
               finish: Finish, first: bool = False) -> Future:
        """The future of finish(status, body, error); `first` goes ahead of every request not
        sent yet (a caller waiting in its thread, a Lease renewal, must not wait behind a
        burst of pod creates)."""
        request = _Request(method, path, body, headers, timeout, finish, first)
        with self._lock:
            wake = not self._queue  # else a wake is pending already
            self._queue.append(request)
            if self._thread is None:
                self._thread = threading.Thread(target=_Transfers(self).run, daemon=True, name="kube-transfers")
                self._thread.start()
        if wake:
            self._waker.send(b"\0")
        return request.future

    def stream(self, path: str, headers: dict[str, str], timeout: float, on_chunk: OnChunk) -> tuple[int, str | None]:
        """GET `path`, giving on_chunk(status, chunk) each piece of the body as it comes until it
        returns False; (status, libcurl's error or None) once the server ends the answer."""
        easy = pycurl.Curl()
        status, stopped = [0], [False]

        def header(line: bytes) -> None:
            if line.startswith(b"HTTP/"):  # the status line (the last one: a proxy's comes first)
                status[0] = int(line.split()[1])

        def write(chunk: bytes) -> int | None:
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
        return status[0], error

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
    future: Future = field(default_factory=Future)
    chunks: list[bytes] = field(default_factory=list)  # the answer's body as it comes


class _Transfers:
    """The transfer thread: libcurl's multi interface on an epoll/kqueue selector (libcurl
    says which sockets to watch and when its next timeout is), woken by submit().

    At most one request per connection is handed to libcurl; the others wait here and go in
    the order they were submitted, those marked `first` before the others. (libcurl's own
    queue for a busy host does not keep that order: a job's pods then arrive interleaved
    with every other job's, and each gang fills only when all do.) So at most that many easy
    handles exist; they are reused."""

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

    def run(self) -> None:
        while True:
            try:
                self._step()
            except Exception:  # noqa: BLE001 - the thread every request waits on must not die
                log.exception("kube-transfers: unexpected error; going on")
                self.deadline = time.monotonic()  # let libcurl look at every transfer again

    def _step(self) -> None:
        timeout = None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
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
        self._start_waiting()

    def _start_waiting(self) -> None:
        while (self.waiting_first or self.waiting) and len(self.running) < self.connections._max_connections:
            request = (self.waiting_first or self.waiting).popleft()
            easy = self.spare.pop() if self.spare else pycurl.Curl()
            try:
                self.connections._prepare(easy, request, request.chunks.append)
                self.multi.add_handle(easy)  # libcurl asks for a timeout of 0 to start it
            except Exception as e:  # noqa: BLE001 - a request libcurl refuses (a bad header): its caller's error
                easy.close()
                request.future.set_exception(e)
                continue
            self.running[easy] = request

    def _finish_done(self) -> None:
        while True:
            queued, succeeded, failed = self.multi.info_read()
            for easy in succeeded:
                self._finish(easy, None)
            for easy, _, message in failed:
                self._finish(easy, message)
            if not queued:
                return

    def _finish(self, easy: pycurl.Curl, error: str | None) -> None:
        request = self.running.pop(easy)
        try:
            status = easy.getinfo(pycurl.RESPONSE_CODE)
            self.multi.remove_handle(easy)
            easy.reset()
            self.spare.append(easy)
            value = request.finish(status, b"".join(request.chunks), error)
        except BaseException as e:  # noqa: BLE001 - the caller gets it from the future
            request.future.set_exception(e)
        else:
            request.future.set_result(value)

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
