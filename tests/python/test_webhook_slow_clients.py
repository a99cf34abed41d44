"""The HTTPS webhook (volcanic.webhook) against slow, idle and malformed clients,
over real sockets on 127.0.0.1: deadlines for the TLS handshake and for the request line
plus headers (Go's http.Server ReadHeaderTimeout: one deadline for the whole head, not a
per-read timeout that each byte renews), a bound per client address, a prompt 400 for a
request line that is not HTTP/1.x, and reviews answered while hundreds of such connections
are open. Clients spread over several source addresses (all of 127.0.0.0/8 is loopback)
where the per-address bound would otherwise refuse them."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import subprocess
import sys
import threading
import time
import types

import pytest

from volcanic.cluster.snapshot import snapshot_lister
from volcanic.httpd.tls import self_signed_cert
from volcanic.webhook import start_server

LISTER = snapshot_lister([])
REVIEW = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
    "uid": "u-1", "kind": {"group": "batch.volcano.sh", "version": "v1alpha1", "kind": "Job"},
    "operation": "CREATE", "object": {
        "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
        "spec": {"tasks": [{"name": "t", "replicas": 1, "template": {"spec": {"containers": [
            {"name": "c", "image": "busybox"}]}}}]}}}}


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    return self_signed_cert(str(tmp_path_factory.mktemp("tls")), ["127.0.0.1"])


@pytest.fixture(scope="module")
def client_context(tls):
    return ssl.create_default_context(cafile=tls[0])


def tcp(server, source: str = "127.0.0.1") -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10, source_address=(source, 0))


def tls_socket(server, context, source: str = "127.0.0.1") -> ssl.SSLSocket:
    return context.wrap_socket(tcp(server, source), server_hostname="127.0.0.1")


def closed_by_server(sock: socket.socket, within: float) -> bytes | None:
    """What the server sent before closing `sock`, or None if it is still open after `within`."""
    sock.settimeout(within)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (TimeoutError, socket.timeout):
        return None
    except (ConnectionError, ssl.SSLError):
        pass
    return data


def review_and_healthz(server, context) -> float:
    """A valid review and /healthz on a new connection; returns the seconds both took."""
    start = time.monotonic()
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=context, timeout=10)
    try:
        conn.request("POST", "/jobs/mutate", json.dumps(REVIEW).encode(), {"Content-Type": "application/json"})
        r = conn.getresponse()
        assert r.status == 200 and json.loads(r.read())["response"]["allowed"] is True
        conn.request("GET", "/healthz")
        r = conn.getresponse()
        assert (r.status, r.read()) == (200, b"ok")
    finally:
        conn.close()
    return time.monotonic() - start


def test_reviews_are_answered_while_500_slow_and_idle_connections_are_open(tls, client_context):
    """250 TCP connections that never start TLS and 250 TLS connections sending one header
    byte every 0.5 s, from 25 addresses; each kind alone is more than the old server's 128
    slots. Reviews and /healthz keep their usual latency."""
    with start_server(*tls, lister=LISTER, handshake_timeout=60, header_timeout=60,
                      max_connections_per_address=20) as server:
        usual = min(review_and_healthz(server, client_context) for _ in range(5))
        sources = [f"127.0.0.{2 + i % 25}" for i in range(250)]
        idle = [tcp(server, source) for source in sources]
        slow = [tls_socket(server, client_context, source) for source in sources]
        stop = threading.Event()

        def trickle():
            header = b"POST /jobs/mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            i = 0
            while not stop.wait(0.5):
                for s in slow:
                    s.sendall(header[i % len(header):i % len(header) + 1])
                i += 1
        sender = threading.Thread(target=trickle, daemon=True)
        sender.start()
        try:
            time.sleep(1.2)  # every slow client has sent a few bytes
            latencies = sorted(review_and_healthz(server, client_context) for _ in range(20))
            assert latencies[-1] < max(1.0, 20 * usual), (usual, latencies)
            # The slow and idle connections are all still open: nothing was refused to make room.
            assert all(closed_by_server(s, 0.001) is None for s in idle + slow)
        finally:
            stop.set()
            sender.join()
            for s in idle + slow:
                s.close()


def test_a_slow_header_client_is_cut_off_at_the_header_deadline_though_it_keeps_sending(tls, client_context):
    with start_server(*tls, lister=LISTER, header_timeout=1.0, read_timeout=1.0) as server:
        s = tls_socket(server, client_context)
        start, sent = time.monotonic(), 0
        header = b"POST /jobs/mutate HTTP/1.1\r\n" + b"X-Slow: " + b"a" * 200
        try:
            while time.monotonic() - start < 5:
                s.sendall(header[sent:sent + 1])  # a byte every 0.1 s: far faster than any per-read timeout
                sent += 1
                answer = closed_by_server(s, 0.1)
                if answer is not None:
                    break
        except (ConnectionError, ssl.SSLError):
            answer = b""
        took = time.monotonic() - start
        assert answer is not None, "still open after 5 s"
        assert 0.9 < took < 2.0, took
        assert answer == b"" or answer.startswith(b"HTTP/1.1 408 "), answer
        s.close()
        assert review_and_healthz(server, client_context) < 1.0


def test_a_connection_that_never_starts_tls_is_closed_at_the_handshake_deadline(tls, client_context):
    with start_server(*tls, lister=LISTER, handshake_timeout=0.5, header_timeout=5) as server:
        s = tcp(server)
        start = time.monotonic()
        s.sendall(b"\x16\x03\x01")  # the first bytes of a ClientHello, and no more
        assert closed_by_server(s, 5) is not None
        assert 0.4 < time.monotonic() - start < 1.5
        s.close()


@pytest.mark.parametrize("line", [b"GET /healthz\r\n", b"GET /healthz\n", b"hello\r\n",
                                  b"GET /healthz HTTP/1.1 extra\r\n", b"GET /healthz FTP/1.1\r\n"])
def test_a_request_line_that_is_not_http_1_is_answered_400_at_once(tls, client_context, line):
    """An HTTP/0.9-style line ("GET /path", no version) has no headers to wait for; the old
    server read on for headers until its timeout and never answered."""
    with start_server(*tls, lister=LISTER, header_timeout=5) as server:
        s = tls_socket(server, client_context)
        start = time.monotonic()
        s.sendall(line)
        answer = closed_by_server(s, 3)
        assert time.monotonic() - start < 1.0
        assert answer is not None and answer.startswith(b"HTTP/1.1 400 "), answer
        head, _, body = answer.partition(b"\r\n\r\n")
        assert b"Connection: close" in head
        status = json.loads(body)
        assert status["kind"] == "Status" and status["code"] == 400 and "request line" in status["message"]
        s.close()


def test_connections_per_client_address_are_bounded(tls, client_context):
    with start_server(*tls, lister=LISTER, handshake_timeout=10, max_connections_per_address=3) as server:
        held = [tcp(server) for _ in range(3)]
        extra = tcp(server)
        start = time.monotonic()
        assert closed_by_server(extra, 2) is not None  # closed at once, before any TLS
        assert time.monotonic() - start < 1.0
        extra.close()
        # Another address is served, and the first one again once it has closed a connection.
        conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=client_context, timeout=5,
                                           source_address=("127.0.0.2", 0))
        conn.request("GET", "/healthz")
        assert conn.getresponse().read() == b"ok"
        conn.close()
        held.pop().close()
        time.sleep(0.2)
        assert review_and_healthz(server, client_context) < 1.0
        for s in held:
            s.close()


def test_the_limits_are_flags_of_volcanic_webhook(tls, client_context):
    command = [sys.executable, "-m", "volcanic.cli.main", "webhook", "--listen", "127.0.0.1:0",
               "--tls-cert", tls[0], "--tls-key", tls[1]]
    proc = subprocess.Popen(command + ["--header-timeout", "0.5s", "--max-connections-per-address", "2"],
                            stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("serving https://127.0.0.1:")
        server = types.SimpleNamespace(port=int(line.rsplit(":", 1)[1]))
        held = [tls_socket(server, client_context) for _ in range(2)]
        extra = tcp(server)
        assert closed_by_server(extra, 2) is not None  # the third from this address
        start = time.monotonic()
        assert closed_by_server(held[0], 5) is not None  # no request line within 0.5 s
        assert time.monotonic() - start < 1.5
        for s in held + [extra]:
            s.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    for flag, value in (("--header-timeout", "0"), ("--handshake-timeout", "soon"),
                        ("--max-connections", "-3"), ("--max-connections-per-address", "1.5")):
        r = subprocess.run(command + [flag, value], capture_output=True, text=True, timeout=30)
        assert r.returncode == 2 and f"argument {flag}:" in r.stderr and value in r.stderr, r.stderr


def test_limits_that_are_not_positive_numbers_are_refused(tls):
    with pytest.raises(ValueError, match="webhook limit header_timeout: must be a number more than 0, got 0"):
        start_server(*tls, header_timeout=0)
    with pytest.raises(TypeError, match="max_conections"):
        start_server(*tls, max_conections=3)


def test_a_client_that_expects_100_continue_is_told_to_send_its_body(tls, client_context):
    """curl waits for "100 Continue" before a large body (http.server answered it too)."""
    with start_server(*tls, lister=LISTER) as server:
        s = tls_socket(server, client_context)
        body = json.dumps(REVIEW).encode()
        s.sendall(b"POST /jobs/mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body))
        assert s.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
        s.sendall(body)
        assert s.recv(65536).startswith(b"HTTP/1.1 200 OK\r\n")
        s.close()


def test_a_keep_alive_request_has_the_header_deadline_from_its_first_byte(tls, client_context):
    """Between requests a connection may idle (idle_timeout); once the next request has
    begun, its line and headers must all arrive within header_timeout."""
    with start_server(*tls, lister=LISTER, header_timeout=0.8, idle_timeout=30) as server:
        s = tls_socket(server, client_context)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert s.recv(65536).startswith(b"HTTP/1.1 200 OK\r\n")
        time.sleep(1.2)  # idle past the header deadline: still open
        start = time.monotonic()
        s.sendall(b"G")
        assert closed_by_server(s, 0.3) is None
        s.sendall(b"ET /healthz HTTP/1.1\r\n")  # and no more
        answer = closed_by_server(s, 5)
        assert answer is not None and answer.startswith(b"HTTP/1.1 408 "), answer
        assert 0.7 < time.monotonic() - start < 1.6
        s.close()
