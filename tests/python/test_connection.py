"""KubeClient's connections (volcanic.real.connection, libcurl) against a local HTTP(S) server:
kept-alive connections shared by every thread, concurrent requests on several of them, a
connection the server closed replaced, the kubeconfig's TLS settings (CA, client
certificate, tls-server-name), watch lines decoded as they come."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import socket
import ssl
import threading
import time

import pytest

from kubeconfig_helpers import write_kubeconfig
from volcanic.httpd.tls import self_signed_cert
from volcanic.kube.errors import NotFound, Unavailable
from volcanic.real.client import KubeClient
from volcanic.real.connection import Connections
from volcanic.real.devcluster.ports import free_port


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, chunked watches

    def setup(self) -> None:
        super().setup()
        self.server.connections += 1
        self.answered = 0

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path.startswith("/watch"):
            return self._watch()
        if self.answered and self.server.drop_reused:
            # A keep-alive connection the server closed as the request was sent: no answer.
            self.close_connection = True
            return
        self.server.arrivals.append(self.path)
        if self.path == "/hold":
            self.server.release.wait(timeout=5)
        if self.path == "/together":
            self.server.together.wait(timeout=5)  # breaks unless all arrive at once
        if self.path == "/plain":  # what the API server says of a group it does not serve
            self.send_response(404)
            self.send_header("Content-Length", "18")
            self.end_headers()
            self.wfile.write(b"404 page not found")
            return
        status, body = (404, {"kind": "Status", "reason": "NotFound", "message": "nope"}) \
            if self.path == "/missing" else (200, {"path": self.path, "auth": self.headers.get("Authorization"),
                                                   "host": self.headers.get("Host")})
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.answered += 1
        # An idle timeout on the server's side: the connection ends without a Connection: close.
        self.close_connection = self.server.close_after_answer

    def _watch(self) -> None:
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        lines = b"".join(json.dumps({"type": "ADDED", "object": {"n": i}}).encode() + b"\n" for i in range(3))
        for piece in (lines[:10], lines[10:]):  # a line split across chunks
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.flush()
        if self.path.startswith("/watch-open"):  # a watch that stays open until the client leaves
            self.server.release.wait(timeout=10)
        self.wfile.write(b"0\r\n\r\n")
        self.close_connection = True

    def log_message(self, *args) -> None:
        pass


def _serve(tls: ssl.SSLContext | None = None):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    if tls is not None:
        httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
    httpd.connections, httpd.close_after_answer, httpd.drop_reused = 0, False, False
    httpd.together = threading.Barrier(5)
    httpd.arrivals = []
    httpd.release = threading.Event()
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


@pytest.fixture
def server():
    httpd = _serve()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _client(tmp_path, server: str, cluster: dict | None = None, user: dict | None = None) -> KubeClient:
    return KubeClient(write_kubeconfig(tmp_path, server, cluster, user or {"token": "t0k3n"}), timeout=5.0)


def _http(tmp_path, httpd) -> KubeClient:
    return _client(tmp_path, f"http://127.0.0.1:{httpd.server_port}")


def test_threads_share_kept_alive_connections(server, tmp_path):
    client = _http(tmp_path, server)
    for _ in range(5):
        assert client.request("GET", "/a", query={"x": "1"})["path"] == "/a?x=1"
    other = threading.Thread(target=lambda: client.request("GET", "/b"))
    other.start()
    other.join()
    assert server.connections == 1


def test_requests_sent_together_run_concurrently(server, tmp_path):
    """Five requests the server answers only once all five arrived: they must be in flight at
    once, each on its own connection."""
    client = _http(tmp_path, server)
    futures = [client.request_async("GET", "/together", then=lambda answer: answer["path"]) for _ in range(5)]
    assert [f.result(timeout=10) for f in futures] == ["/together"] * 5
    assert server.connections == 5


def test_requests_beyond_the_connections_go_in_the_order_they_were_sent(server, tmp_path):
    """With every connection busy, the waiting requests go in order (a job's pods before the
    next job's): no request overtakes one sent three or more before it."""
    client = _http(tmp_path, server)
    client.connections = Connections(client.configuration, max_connections=2)
    paths = [f"/{i}" for i in range(40)]
    for f in [client.request_async("GET", path) for path in paths]:
        f.result(timeout=10)
    order = [int(path[1:]) for path in server.arrivals]
    assert sorted(order) == list(range(40))
    assert all(later > earlier - 3 for i, earlier in enumerate(order) for later in order[i + 1:])


def test_a_request_its_caller_waits_for_goes_ahead_of_background_ones(server, tmp_path):
    """A Lease renewal or a controller's read must not wait behind a burst of pod creates."""
    client = _http(tmp_path, server)
    client.connections = Connections(client.configuration, max_connections=1)
    held = client.request_async("GET", "/hold")
    deadline = time.monotonic() + 5
    while not server.arrivals and time.monotonic() < deadline:  # /hold holds the one connection
        time.sleep(0.01)
    background = [client.request_async("GET", f"/background-{i}") for i in range(5)]
    waited = client.request_async("GET", "/waited", first=True)  # as request() sends it
    server.release.set()
    for f in [held, *background, waited]:
        f.result(timeout=10)
    assert server.arrivals == ["/hold", "/waited"] + [f"/background-{i}" for i in range(5)]


def test_a_connection_the_server_closed_is_replaced(server, tmp_path):
    client = _http(tmp_path, server)
    server.close_after_answer = True
    for _ in range(3):
        assert client.request("GET", "/a")["path"] == "/a"
    assert server.connections == 3


def test_a_close_racing_the_request_is_retried_on_a_new_connection(server, tmp_path):
    client = _http(tmp_path, server)
    client.request("GET", "/a")
    server.drop_reused = True
    assert client.request("GET", "/a")["path"] == "/a"
    assert server.connections == 2


def test_answers_and_failures_become_store_errors(server, tmp_path):
    client = _http(tmp_path, server)
    with pytest.raises(NotFound, match="nope"):
        client.request("GET", "/missing")
    with pytest.raises(NotFound, match="nope"):
        client.request_async("GET", "/missing").result()
    with pytest.raises(NotFound, match="GET /plain: 404 page not found"):
        client.request("GET", "/plain")
    with pytest.raises(Unavailable, match="GET /a"):
        _client(tmp_path, f"http://127.0.0.1:{free_port()}").request("GET", "/a")  # nobody listens


def test_a_watch_gives_each_line_decoded_as_it_comes(server, tmp_path):
    client = _http(tmp_path, server)
    events = []
    client.stream("/watch", {"watch": "true"}, 5.0, lambda event: events.append(event) or True)
    assert events == [{"type": "ADDED", "object": {"n": i}} for i in range(3)]
    assert client.request("GET", "/after")["path"] == "/after"


def test_a_watch_ends_when_told_and_raises_what_its_handler_raised(server, tmp_path):
    """The handler's False ends a watch the server keeps open (the reflector's stop, a 410)."""
    client = _http(tmp_path, server)
    events = []
    started = time.monotonic()
    client.stream("/watch-open", {}, 30.0, lambda event: events.append(event) or len(events) < 2)
    assert len(events) == 2 and time.monotonic() - started < 5
    server.release.set()

    def fail(event):
        raise ValueError("bad event")
    with pytest.raises(ValueError, match="bad event"):
        client.stream("/watch", {}, 5.0, fail)


def test_tls_as_the_kubeconfig_says(tmp_path):
    """A server whose certificate names kube.example, reached at 127.0.0.1: verified against the
    kubeconfig's CA under tls-server-name, refused without it, and the client certificate sent
    when the server asks for one."""
    cert, key = self_signed_cert(str(tmp_path), hosts=("kube.example",))
    (tmp_path / "client").mkdir()
    client_cert, client_key = self_signed_cert(str(tmp_path / "client"), hosts=("alice",))
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    tls.verify_mode = ssl.CERT_REQUIRED
    tls.load_verify_locations(client_cert)
    httpd = _serve(tls)
    try:
        url = f"https://127.0.0.1:{httpd.server_port}"
        user = {"client-certificate": client_cert, "client-key": client_key}
        named = _client(tmp_path, url, {"certificate-authority": cert, "tls-server-name": "kube.example"}, user)
        assert named.request("GET", "/a")["path"] == "/a"
        with pytest.raises(Unavailable):  # the certificate does not name 127.0.0.1
            _client(tmp_path, url, {"certificate-authority": cert}, user).request("GET", "/a")
        with pytest.raises(Unavailable):  # no client certificate
            _client(tmp_path, url, {"certificate-authority": cert, "tls-server-name": "kube.example"}).request(
                "GET", "/a")
        insecure = _client(tmp_path, url, {"insecure-skip-tls-verify": True}, user)
        assert insecure.request("GET", "/b")["path"] == "/b"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_sockets_libcurl_asks_to_watch(tmp_path):
    """libcurl's socket callback: IN/OUT registered, POLL_NONE (a socket it wants nothing from
    yet) and POLL_REMOVE not, each call replacing the last."""
    import selectors

    import pycurl

    from volcanic.real.connection import _Transfers

    transfers = _Transfers(_client(tmp_path, "http://127.0.0.1:1").connections)
    with socket.socket() as s:
        fd = s.fileno()
        transfers._watch_socket(pycurl.POLL_NONE, fd, None, None)
        assert fd not in transfers.selector.get_map()
        transfers._watch_socket(pycurl.POLL_INOUT, fd, None, None)
        assert transfers.selector.get_key(fd).events == selectors.EVENT_READ | selectors.EVENT_WRITE
        transfers._watch_socket(pycurl.POLL_IN, fd, None, None)
        assert transfers.selector.get_key(fd).events == selectors.EVENT_READ
        transfers._watch_socket(pycurl.POLL_REMOVE, fd, None, None)
        assert fd not in transfers.selector.get_map()
