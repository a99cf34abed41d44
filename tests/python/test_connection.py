"""KubeClient's connections (volcanic.real.connection) against a local HTTP server: one
keep-alive connection per thread, replaced when the server closed it, watch lines decoded
as they come."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import socket
import threading

import pytest

from volcanic.kube.errors import NotFound, Unavailable
from volcanic.real import connection
from volcanic.real.client import KubeClient


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, chunked watches

    def setup(self) -> None:
        super().setup()
        self.server.connections += 1

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path.startswith("/watch"):
            return self._watch()
        status, body = (404, {"kind": "Status", "reason": "NotFound", "message": "nope"}) \
            if self.path == "/missing" else (200, {"path": self.path, "auth": self.headers.get("Authorization")})
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        # An idle timeout on the server's side: the connection ends without a Connection: close.
        self.close_connection = self.server.close_after_answer

    def _watch(self) -> None:
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        lines = b"".join(json.dumps({"type": "ADDED", "object": {"n": i}}).encode() + b"\n" for i in range(3))
        for piece in (lines[:10], lines[10:]):  # a line split across chunks
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.write(b"0\r\n\r\n")
        self.close_connection = True

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.connections, httpd.close_after_answer = 0, False
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _client(tmp_path, port: int) -> KubeClient:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
        "users": [{"name": "u", "user": {"token": "t0k3n"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    return KubeClient(str(kubeconfig), timeout=5.0)


def test_requests_reuse_one_connection_per_thread(server, tmp_path):
    client = _client(tmp_path, server.server_port)
    for _ in range(5):
        assert client.request("GET", "/a", query={"x": "1"}) == {"path": "/a?x=1", "auth": "Bearer t0k3n"}
    assert server.connections == 1
    other = threading.Thread(target=lambda: client.request("GET", "/b"))
    other.start()
    other.join()
    assert server.connections == 2


def test_a_connection_the_server_closed_is_replaced_before_it_is_used(server, tmp_path):
    client = _client(tmp_path, server.server_port)
    server.close_after_answer = True
    for _ in range(3):
        assert client.request("GET", "/a")["path"] == "/a"
    assert server.connections == 3


def test_a_close_racing_the_request_is_retried_once_on_a_new_connection(server, tmp_path, monkeypatch):
    client = _client(tmp_path, server.server_port)
    server.close_after_answer = True
    monkeypatch.setattr(connection, "_dropped", lambda conn: False)  # the close arrives after the look
    client.request("GET", "/a")
    client.request("GET", "/a")
    assert server.connections == 2


def test_answers_and_failures_become_store_errors(server, tmp_path):
    client = _client(tmp_path, server.server_port)
    with pytest.raises(NotFound, match="nope"):
        client.request("GET", "/missing")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(Unavailable, match="GET /a"):
        _client(tmp_path, port).request("GET", "/a")


def test_a_watch_yields_each_line_decoded_as_it_comes(server, tmp_path):
    client = _client(tmp_path, server.server_port)
    events = list(client.stream("/watch", {"watch": "true"}, timeout=5.0))
    assert events == [{"type": "ADDED", "object": {"n": i}} for i in range(3)]
    assert client.request("GET", "/after")["path"] == "/after"  # the watch had its own connection
