"""A busy API server, as client-go meets it (k8s.io/client-go rest/request.go and
rest/with_retry.go, `IsNextRetry`/`checkWait`; rest.Config QPS/Burst): an answer 429 or 5xx
with Retry-After is sent again inside the request, up to 10 times, without holding up the
other requests; a GET whose connection broke is sent again, a write is not; every attempt
takes a token of the client's bucket. Issue 33, "Faults on a real API server" 1-2: 5-9 of 100
Jobs were lost (Terminated, "retry limit reached") to a throttled API server because a 429
failed the request at once."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import threading
import time

from prometheus_client import generate_latest
import pytest

from kubeconfig_helpers import write_kubeconfig
from volcanic.kube.errors import Unavailable
from volcanic.real import connection
from volcanic.real.client import KubeClient
from volcanic.real.components import Process
from volcanic.real.connection import MAX_RETRIES, Connections, TokenBucket, Window, retry_wait


class _Busy(BaseHTTPRequestHandler):
    """Answers `/refuse/<n>/<status>/<retry-after or ->/<rest>` with `status` (and that
    Retry-After) the first n times it is asked, then 200; `/drop/<n>/<rest>` closes the
    connection without an answer the first n times; `/one-at-a-time/<rest>` takes 10 ms and
    refuses (429, Retry-After: 0) while another one is being answered; anything else at once
    with 200. A watch (query watch=true) answers its 200 as one line of JSON."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._answer()

    def do_POST(self) -> None:  # noqa: N802
        self._answer()

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path = self.path.split("?")[0]
        with self.server.lock:
            self.server.arrivals.append((time.monotonic(), self.command, path, body))
            seen = sum(1 for _, _, p, _ in self.server.arrivals if p == path)
        parts = path.strip("/").split("/")
        if parts[0] == "one-at-a-time":  # kube-apiserver with --max-requests-inflight=1
            if not self.server.inflight.acquire(blocking=False):
                return self._refuse(429, "0")
            try:
                time.sleep(0.01)
            finally:
                self.server.inflight.release()
        if parts[0] == "drop" and seen <= int(parts[1]):
            self.close_connection = True
            return
        if parts[0] == "refuse" and seen <= int(parts[1]):
            return self._refuse(int(parts[2]), parts[3])
        data = json.dumps({"path": path, "seen": seen, "body": body.decode()}).encode()
        if "watch=true" in self.path:
            data += b"\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _refuse(self, status: int, after: str) -> None:
        data = json.dumps({"kind": "Status", "code": status, "reason": "TooManyRequests",
                           "message": "too many requests, please try again later"}).encode()
        self.send_response(status)
        if after != "-":
            self.send_header("Retry-After", after)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def busy():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Busy)
    httpd.arrivals, httpd.lock, httpd.inflight = [], threading.Lock(), threading.Lock()
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _client(tmp_path, httpd, **limits) -> KubeClient:
    return KubeClient(write_kubeconfig(tmp_path, f"http://127.0.0.1:{httpd.server_port}"), timeout=5.0, **limits)


def _arrivals(httpd, path: str) -> list[float]:
    return [t for t, _, p, _ in httpd.arrivals if p == path]


def test_a_request_refused_with_retry_after_is_sent_again_after_it(busy, tmp_path):
    """Two 429s with Retry-After: 1, then the answer: the caller sees only the answer, a
    second or more after each refusal."""
    client = _client(tmp_path, busy)
    answer = client.request("GET", "/refuse/2/429/1/a")
    assert answer["seen"] == 3
    times = _arrivals(busy, "/refuse/2/429/1/a")
    assert len(times) == 3 and all(later - earlier >= 0.95 for earlier, later in zip(times, times[1:]))
    counts = client.connections.counts
    assert (counts.sent, counts.retried, counts.refused) == (3, 2, 2)
    # and a process's /metrics says so (Process.of registers them)
    text = generate_latest(Process.of(client).registry).decode()
    for name, value in [("volcanic_api_requests_total", 3), ("volcanic_api_request_retries_total", 2),
                        ("volcanic_api_requests_throttled_total", 2)]:
        assert f"\n{name} {float(value)}\n" in text


def test_writes_are_sent_again_too_with_their_body(busy, tmp_path):
    """The server refused before acting: a POST (a pod create, a bind) is as safe to send again
    as a GET, and a 5xx with Retry-After (a server shutting down) is retried like a 429."""
    client = _client(tmp_path, busy)
    answer = client.request_async("POST", "/refuse/1/429/0/create", {"metadata": {"name": "p"}}).result(timeout=10)
    assert answer["seen"] == 2 and json.loads(answer["body"]) == {"metadata": {"name": "p"}}
    assert client.request("POST", "/refuse/1/503/0/bind", {"n": 1})["seen"] == 2
    assert [m for _, m, p, _ in busy.arrivals if p == "/refuse/1/429/0/create"] == ["POST", "POST"]


def test_without_retry_after_or_past_ten_retries_the_refusal_is_the_answer(busy, tmp_path):
    client = _client(tmp_path, busy)
    with pytest.raises(Unavailable, match="too many requests"):
        client.request("GET", "/refuse/1/429/-/no-retry-after")
    assert len(_arrivals(busy, "/refuse/1/429/-/no-retry-after")) == 1
    with pytest.raises(Unavailable, match="too many requests"):
        client.request("POST", "/refuse/99/429/0/always", {})
    assert len(_arrivals(busy, "/refuse/99/429/0/always")) == MAX_RETRIES + 1 == 11
    with pytest.raises(Unavailable):  # a 500 without Retry-After is an answer, not a refusal
        client.request("GET", "/refuse/1/500/-/error")
    assert len(_arrivals(busy, "/refuse/1/500/-/error")) == 1


def test_a_request_waiting_to_be_sent_again_holds_up_no_other(busy, tmp_path):
    """On one connection: while a refused request waits out its Retry-After, the requests sent
    after it are answered (the libcurl loop does not sleep for it)."""
    client = _client(tmp_path, busy)
    client.connections = Connections(client.configuration, max_connections=1)
    start = time.monotonic()
    refused = client.request_async("GET", "/refuse/1/429/1/slow")
    others = [client.request_async("GET", f"/other-{i}") for i in range(5)]
    for f in others:
        f.result(timeout=10)
    others_done = time.monotonic() - start
    assert refused.result(timeout=10)["seen"] == 2
    assert others_done < 0.8 <= time.monotonic() - start


def test_a_get_whose_connection_broke_is_sent_again_a_write_is_not(busy, tmp_path):
    """client-go retries a reset or an answerless close for GET only: a write may have been
    done."""
    assert _client(tmp_path, busy).request("GET", "/drop/1/read")["seen"] == 2
    with pytest.raises(Unavailable):  # a new client: libcurl itself re-sends on a reused connection
        _client(tmp_path, busy).request("POST", "/drop/1/write", {})
    assert len(_arrivals(busy, "/drop/1/write")) == 1


def test_a_watch_refused_with_retry_after_is_asked_for_again(busy, tmp_path):
    client = _client(tmp_path, busy)
    lines = []
    client.stream("/refuse/2/429/0/watch", {"watch": "true"}, 5.0, lambda line: lines.append(line) or True)
    assert [line["seen"] for line in lines] == [3]
    with pytest.raises(Unavailable, match="too many requests"):
        client.stream("/refuse/1/429/-/watch-once", {"watch": "true"}, 5.0, lambda line: True)


def test_every_attempt_takes_a_token_of_the_client_bucket(busy, tmp_path):
    """qps 20, burst 5: 15 requests (one of them refused once, so 16 attempts) take at least
    (16 - 5) / 20 s; the bucket's first 5 go at once."""
    client = _client(tmp_path, busy, qps=20, burst=5)
    start = time.monotonic()
    futures = [client.request_async("GET", f"/n-{i}") for i in range(14)]
    futures.append(client.request_async("GET", "/refuse/1/429/0/r"))
    for f in futures:
        f.result(timeout=10)
    assert time.monotonic() - start >= (16 - 5) / 20 - 0.02
    first = sorted(t for t, *_ in busy.arrivals)
    assert first[4] - first[0] < 0.1
    assert client.connections.counts.sent == 16


def test_a_server_that_takes_one_request_at_a_time_gets_about_one(busy, tmp_path, monkeypatch):
    """32 connections, 64 requests, a server refusing all but one at once: the window shrinks
    to what it takes, so every request is answered and few are refused (with 32 in flight
    for every round, 31 of 32 attempts were refused and requests failed after 10 retries).
    The window's clock stands still, so a slow machine's second without a refusal does not
    grow it back midway (test_the_window_halves_once_a_round_and_grows_back_when_calm)."""
    monkeypatch.setattr(connection, "Window", lambda most: Window(most, now=lambda: 0.0))
    client = _client(tmp_path, busy)
    futures = [client.request_async("POST", f"/one-at-a-time/{i}", {}) for i in range(64)]
    assert [f.result(timeout=30)["path"] for f in futures] == [f"/one-at-a-time/{i}" for i in range(64)]
    assert client.connections.counts.refused < 64


def test_the_window_halves_once_a_round_and_grows_back_when_calm():
    now = [0.0]
    window = Window(32, now=lambda: now[0])
    assert window.limit() == 32
    sent = window.round
    for _ in range(31):  # one round's refusals arrive together: one halving
        window.refused(sent)
    assert window.limit() == 16
    for _ in range(5):
        window.refused(window.round)
    assert window.limit() == 1  # never below one
    now[0] += 0.9
    assert window.limit() == 1
    now[0] += 0.1
    assert window.limit() == 2
    now[0] += 10
    assert [window.limit() for _ in range(5)][-1] == 4  # once per second: doubled only once more
    for _ in range(4):
        now[0] += 1
        window.limit()
    assert window.limit() == 32


def test_the_token_bucket():
    now = [100.0]
    bucket = TokenBucket(qps=2, burst=3, now=lambda: now[0])
    assert [bucket.try_take() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.try_take() == pytest.approx(0.5)  # the next token in half a second
    now[0] += 0.5
    assert bucket.try_take() == 0.0
    now[0] += 100  # full again, never more than burst
    assert [bucket.try_take() for _ in range(4)][-1] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="kube-api-qps"):
        TokenBucket(qps=0, burst=1)


@pytest.mark.parametrize("status,head,errno,message,method,expected", [
    (429, [b"Retry-After: 1\r\n"], None, "", "POST", 1.0),
    (503, [b"retry-after:  3 \r\n"], None, "", "PUT", 3.0),
    (429, [], None, "", "GET", None),                      # no Retry-After
    (429, [b"Retry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\n"], None, "", "GET", None),  # not seconds (Atoi)
    (409, [b"Retry-After: 1\r\n"], None, "", "GET", None),  # only 429 and 5xx
    (0, [], 52, "Empty reply from server", "GET", 1.0),    # closed without an answer: GET again after 1 s
    (0, [], 52, "Empty reply from server", "POST", None),
    (0, [], 56, "Recv failure: Connection reset by peer", "GET", 1.0),
    (0, [], 56, "OpenSSL SSL_read: tlsv13 alert certificate required", "GET", None),  # not a reset
    (0, [], 7, "Failed to connect", "GET", None),          # connection refused
])
def test_retry_wait_follows_client_go(status, head, errno, message, method, expected):
    assert retry_wait(method, status, head, errno, message) == expected
