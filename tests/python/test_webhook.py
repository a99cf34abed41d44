"""The HTTPS admission webhook (volcanic.webhook): every path, the HTTP error
answers, limits and fuzzing over HTTPS, the offline lister, the command and the benchmark.
Slow, idle and malformed clients are in test_webhook_slow_clients.py; the codec in
test_admission_review.py."""

from __future__ import annotations

import datetime
import http.client
import json
import pathlib
import random
import socket
import ssl
import subprocess
import sys
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import pytest

from review_helpers import (
    LISTER,
    apply_ops,
    check_answer,
    job,
    mutated_review,
    patch_of,
    pod,
    podgroup,
    queue,
    review,
)
from volcanic.cluster.snapshot import snapshot_lister
from volcanic.kube.kinds import KINDS
from volcanic.webhook import PATHS, start_server

# The HTTPS server.

def make_cert(directory: pathlib.Path) -> tuple[str, str]:
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "volcanic-webhook-test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / "tls.crt", directory / "tls.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_path), str(key_path)


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    return make_cert(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def server(tls):
    s = start_server(*tls, lister=LISTER, handshake_timeout=1.0, header_timeout=1.0, read_timeout=1.0)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def client_context(tls):
    return ssl.create_default_context(cafile=tls[0])


@pytest.fixture
def conn(server, client_context):
    c = http.client.HTTPSConnection("127.0.0.1", server.port, context=client_context, timeout=10)
    yield c
    c.close()


def post(conn, path, body, content_type="application/json"):
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()
    conn.request("POST", path, body, {"Content-Type": content_type})
    r = conn.getresponse()
    return r.status, r.getheaders(), r.read()


def raw_socket(server, client_context):
    s = client_context.wrap_socket(socket.create_connection(("127.0.0.1", server.port), timeout=10),
                                   server_hostname="127.0.0.1")
    return s


def read_all(sock) -> bytes:
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except (ConnectionError, ssl.SSLError):
            break
        if not chunk:
            break
        data += chunk
    return data


HYPERNODE = {"apiVersion": KINDS["HyperNode"].api_version, "kind": "HyperNode", "metadata": {"name": "s0"},
             "spec": {"tier": 1, "members": [{"type": "Node", "selector": {"exactMatch": {"name": "n1"}}}]}}
JOBFLOW = {"apiVersion": KINDS["JobFlow"].api_version, "kind": "JobFlow", "metadata": {"name": "jf9", "namespace": "ns"},
           "spec": {"flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}]}}
QUEUEBINDING = {"apiVersion": KINDS["QueueBinding"].api_version, "kind": "QueueBinding", "metadata": {"name": "qb9"},
                "spec": {"queue": "q9", "namespaces": ["ns"]}}
CRONJOB = {"apiVersion": KINDS["CronJob"].api_version, "kind": "CronJob", "metadata": {"name": "cj9", "namespace": "ns"},
           "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {}}}}
PATH_OBJECTS = {"Job": job(), "Queue": queue("q9"), "PodGroup": podgroup("pg9"), "Pod": pod(), "HyperNode": HYPERNODE,
                "QueueBinding": QUEUEBINDING, "JobFlow": JOBFLOW, "CronJob": CRONJOB}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_every_path_answers_its_kind(conn, path):
    kind, mutating = PATHS[path]
    sent = review(PATH_OBJECTS[kind], uid=f"uid-{path}")
    status, headers, body = post(conn, path, sent)
    assert status == 200 and dict(headers)["Content-Type"] == "application/json"
    answer = json.loads(body)
    check_answer(sent, answer)
    if path == "/jobs/mutate":
        mutated = apply_ops(sent["request"]["object"], patch_of(answer))
        assert mutated["spec"]["queue"] == "default" and mutated["spec"]["maxRetry"] == 3
        assert mutated["spec"]["minAvailable"] == 3
    if kind == "Pod":  # a pod of another scheduler passes untouched
        assert answer["response"] == {"uid": f"uid-{path}", "allowed": True}
    if not mutating:
        assert "patch" not in answer["response"]
    # Another kind on this path is refused, as Volcano's decoders refuse it.
    other = review(PATH_OBJECTS["Queue" if kind != "Queue" else "Job"])
    status, _, body = post(conn, path, other)
    assert status == 200
    response = json.loads(body)["response"]
    assert response["allowed"] is False and response["status"]["message"].startswith("expect resource to be")


def test_healthz_and_keep_alive(conn):
    for _ in range(3):  # one connection
        conn.request("GET", "/healthz")
        r = conn.getresponse()
        assert (r.status, r.read(), r.getheader("Content-Type")) == (200, b"ok", "text/plain; charset=utf-8")
    sock = conn.sock
    post(conn, "/jobs/mutate", review(job()))
    assert conn.sock is sock


@pytest.mark.parametrize("body, message", [
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": ', "not JSON"),
    (b"\x00\x01\xfe binary", "not JSON"),
    (b"", "not JSON"),
    (b"[1, 2]", "must be a JSON object"),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u"}}',
     "request.operation"),
])
def test_malformed_bodies_are_400_with_a_message(conn, body, message):
    status, headers, data = post(conn, "/jobs/validate", body)
    assert status == 400
    answer = json.loads(data)
    assert answer["kind"] == "Status" and answer["code"] == 400 and message in answer["message"]
    assert post(conn, "/jobs/validate", review(job()))[0] == 200  # the connection still serves


def test_truncated_review_is_400(conn):
    data = json.dumps(review(job())).encode()
    for n in (1, len(data) // 3, len(data) - 1):
        assert post(conn, "/jobs/mutate", data[:n])[0] == 400


def test_methods_paths_and_content_types(conn):
    conn.request("GET", "/jobs/mutate")
    r = conn.getresponse()
    assert r.status == 405 and r.getheader("Allow") == "POST" and b"accepts POST only" in r.read()
    for method in ("PUT", "DELETE", "PATCH"):
        conn.request(method, "/pods/validate", b"{}", {"Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        assert r.status == 405
    assert post(conn, "/healthz", b"{}")[0] == 405
    assert post(conn, "/jobtemplates/validate", review(job()))[0] == 404
    status, _, data = post(conn, "/jobs/mutate", review(job()), content_type="text/plain")
    assert status == 415 and b"application/json" in data
    assert post(conn, "/jobs/mutate", review(job()), content_type="application/json; charset=utf-8")[0] == 200


def test_oversized_bodies_are_413_before_they_are_read(server, conn, client_context):
    # A client that says it will send 50 MiB gets 413 at once, after a few bytes.
    s = raw_socket(server, client_context)
    s.sendall(b"POST /jobs/mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 52428800\r\n\r\n{")
    start = time.monotonic()
    data = read_all(s)
    assert data.startswith(b"HTTP/1.1 413 ") and b"at most 3145728" in data and b"Connection: close" in data
    assert time.monotonic() - start < 3
    s.close()
    # One that sends all of a 4 MiB body still reads the answer.
    status, _, data = post(conn, "/jobs/mutate", b" " * (4 * 1024 * 1024))
    assert status == 413 and json.loads(data)["reason"] == "RequestEntityTooLarge"
    # Just under the limit is read and judged.
    body = json.dumps(review(job())).encode()
    assert post(conn, "/jobs/mutate", body + b" " * (3 * 1024 * 1024 - len(body)))[0] == 200


def test_missing_length_and_stalled_bodies_do_not_hang_a_worker(server, conn, client_context):
    s = raw_socket(server, client_context)
    s.sendall(b"POST /jobs/mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Transfer-Encoding: chunked\r\n\r\n5\r\n{}\r\n\r\n0\r\n\r\n")
    assert read_all(s).startswith(b"HTTP/1.1 411 ")
    s.close()
    # A client that stops halfway through its body gets 408 after the read timeout (1 s here)...
    stalled = raw_socket(server, client_context)
    stalled.sendall(b"POST /jobs/mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 500\r\n\r\n{\"apiVersion\": ")
    idle = socket.create_connection(("127.0.0.1", server.port))  # not even a TLS handshake
    # ... while other clients are served.
    start = time.monotonic()
    assert post(conn, "/jobs/mutate", review(job()))[0] == 200
    assert time.monotonic() - start < 0.5
    data = read_all(stalled)
    assert data.startswith(b"HTTP/1.1 408 ") and b"did not arrive within 1 s" in data
    assert time.monotonic() - start < 5
    idle.settimeout(10)
    assert idle.recv(100) == b""  # closed by the server
    idle.close()
    stalled.close()
    # A body that ends early (the client closed its side) is answered (a 400) and closed. Once
    # shut down, Python's SSLSocket reads the raw records: the answer is one application-data
    # record, then EOF.
    s = raw_socket(server, client_context)
    s.sendall(b"POST /jobs/mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 500\r\n\r\n{}")
    s.shutdown(socket.SHUT_WR)
    assert read_all(s).startswith(b"\x17\x03\x03")
    s.close()


def test_garbage_on_the_wire_leaves_the_server_up(server, conn):
    plain = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    plain.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")  # plain HTTP to the TLS port
    read_all(plain)
    plain.close()
    junk = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    junk.sendall(bytes(range(256)) * 4)
    read_all(junk)
    junk.close()
    conn.request("GET", "/healthz")
    assert conn.getresponse().read() == b"ok"


def test_connections_over_the_limit_are_closed(tls, client_context):
    with start_server(*tls, lister=LISTER, header_timeout=0.5, max_connections=2,
                      max_connections_per_address=3) as s:
        held = [raw_socket(s, client_context) for _ in range(2)]
        with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
            raw_socket(s, client_context).recv(1)
        for h in held:
            read_all(h)  # the silent ones are closed at the header deadline, and their slots freed
            h.close()
        time.sleep(0.1)
        c = http.client.HTTPSConnection("127.0.0.1", s.port, context=client_context, timeout=10)
        c.request("GET", "/healthz")
        assert c.getresponse().read() == b"ok"
        c.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", s.port), timeout=1).recv(1)


def test_fuzz_https(server, client_context):
    """300 random bodies over HTTPS: every one gets 200 or a 4xx, and the server stays up."""
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=client_context, timeout=10)
    count = {"requests": 0, "200": 0}

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None,
              derandomize=True)
    @given(st.integers(0, 2**32))
    def run(seed):
        rng = random.Random(seed)
        for _ in range(10):
            sent = mutated_review(rng)
            body = sent if isinstance(sent, bytes) else json.dumps(sent).encode()
            status, _, data = post(conn, rng.choice(sorted(PATHS)), body)
            assert status == 200 or 400 <= status < 500, (status, data[:300])
            if status == 200:
                check_answer(json.loads(body), json.loads(data))
                count["200"] += 1
            count["requests"] += 1

    run()
    conn.request("GET", "/healthz")
    assert conn.getresponse().read() == b"ok"
    conn.close()
    assert count["requests"] >= 300 and count["200"] > 50


# The lister, the command and the benchmark.

def test_snapshot_lister_holds_the_defaults_and_the_state_as_given():
    closed = dict(queue("closed"), status={"state": "Closed"})
    ns = {"apiVersion": "v1", "kind": "Namespace",
          "metadata": {"name": "default", "annotations": {"scheduling.volcano.sh/queue-name": "q1"}}}
    lister = snapshot_lister([queue("q1"), closed, ns, podgroup()])
    assert lister.get("Queue", "q1")["status"]["state"] == "Open"
    assert lister.get("Queue", "closed")["status"]["state"] == "Closed"
    assert {q["metadata"]["name"] for q in lister.list("Queue")} == {"root", "default", "q1", "closed"}
    assert lister.get("Queue", "default")["status"]["state"] == "Open"
    assert lister.get("Namespace", "default")["metadata"]["annotations"] == ns["metadata"]["annotations"]
    assert lister.get("PodGroup", "pg1", "default")["spec"]["queue"] == "default"


def test_webhook_command_serves_and_reports_bad_input(tmp_path, tls, client_context):
    state = tmp_path / "state.yaml"
    state.write_text("kind: Queue\nmetadata: {name: team-a}\nspec: {weight: 2}\n---\n"
                     "kind: Namespace\nmetadata: {name: ml}\n")
    proc = subprocess.Popen([sys.executable, "-m", "volcanic.cli.main", "webhook", "--listen", "127.0.0.1:0",
                             "--tls-cert", tls[0], "--tls-key", tls[1], "--state", str(state),
                             "--scheduler-name", "volcano"], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("serving https://127.0.0.1:")
        c = http.client.HTTPSConnection("127.0.0.1", int(line.rsplit(":", 1)[1]), context=client_context,
                                        timeout=10)
        status, _, data = post(c, "/jobs/mutate", review(job()))
        assert status == 200 and patch_of(json.loads(data))
        c.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Gizmo\nmetadata: {name: g}\n")
    r = subprocess.run([sys.executable, "-m", "volcanic.cli.main", "webhook", "--listen", "127.0.0.1:0",
                        "--tls-cert", tls[0], "--tls-key", tls[1], "--state", str(bad)], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 1 and r.stderr.startswith("volcanic: error:") and "Gizmo" in r.stderr
    r = subprocess.run([sys.executable, "-m", "volcanic.cli.main", "webhook", "--listen", "127.0.0.1:0",
                        "--tls-cert", str(tmp_path / "missing.crt"), "--tls-key", tls[1]], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 1 and r.stderr.startswith("volcanic: error:")


def test_admission_bench_runs():
    from volcanic.bench import run_admission
    out = run_admission("admission", jobs=20, clients=2)
    assert set(out) == {"preset", "jobs", "reviews", "clients", "wall_s", "reviews_per_s", "p50_ms", "p99_ms",
                        "mutate", "validate", "patched", "denied", "errors"}
    assert (out["jobs"], out["reviews"], out["patched"], out["denied"], out["errors"]) == (20, 40, 20, 0, 0)
    assert 0 < out["p50_ms"] <= out["p99_ms"]
