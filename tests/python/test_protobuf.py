"""Kubernetes' protobuf wire form (volcanic.real.protobuf, _core.ProtobufCodec): objects
decoded to the dicts their JSON gives (Go's encoding/json rules over k8s.io/api's struct
tags), what the schema cannot carry refused by name, and KubeClient's use of it against a
local server: protobuf bodies and answers for pods, frames of a watch cut anywhere, and JSON
from the first answer with a field the schema lacks. tests/e2e/test_protobuf_on_api_server.py compares the
two encodings on a real API server."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
import json
from pathlib import Path
import subprocess
import threading

import pytest

from kubeconfig_helpers import write_kubeconfig
from volcanic.real import protobuf
from volcanic.real.client import KubeClient

POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "a"},
                    "creationTimestamp": "2026-11-28T01:02:03Z"},
       "spec": {"containers": [{"name": "c", "image": "nginx",
                                "ports": [{"containerPort": 80, "name": "http"}],
                                "resources": {"requests": {"cpu": "500m", "memory": 1073741824}},
                                "livenessProbe": {"httpGet": {"port": "http"}},
                                "readinessProbe": {"tcpSocket": {"port": 8080}}}],
                "volumes": [{"name": "v", "emptyDir": {}}],
                "priority": 0, "hostname": ""}}


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _envelope(kind: str, raw: bytes) -> bytes:
    return protobuf.MAGIC + _field(1, _field(1, b"v1") + _field(2, kind.encode())) + _field(2, raw)


def test_a_pod_comes_back_as_its_json_would_read():
    """Go's encoding/json over the decoded struct: a struct is always written (status: {},
    resources of a container without them: {}), a zero scalar only without omitempty
    (containerPort 80 kept, the empty hostname left out), a pointer as set (priority 0), an
    inline struct's fields in its parent (the volume's emptyDir), a quantity as its string."""
    pod = protobuf.decode(protobuf.encode(POD))
    container = pod["spec"]["containers"][0]
    assert pod["kind"] == "Pod" and pod["apiVersion"] == "v1"
    assert pod["metadata"] == {"name": "p", "namespace": "ns", "labels": {"app": "a"},
                               "creationTimestamp": "2026-11-28T01:02:03Z"}
    assert pod["status"] == {}
    assert "hostname" not in pod["spec"] and pod["spec"]["priority"] == 0
    assert container["ports"] == [{"containerPort": 80, "name": "http"}]
    assert container["resources"] == {"requests": {"cpu": "500m", "memory": "1073741824"}}
    assert container["livenessProbe"]["httpGet"]["port"] == "http"
    assert container["readinessProbe"]["tcpSocket"]["port"] == 8080
    assert pod["spec"]["volumes"] == [{"name": "v", "emptyDir": {}}]


def test_a_list_without_items_has_an_empty_list_as_the_api_server_writes_it():
    listed = protobuf.decode(protobuf.encode({"apiVersion": "v1", "kind": "PodList", "metadata": {}}))
    assert listed["items"] == []


def test_what_the_schema_cannot_carry_is_refused_by_its_path():
    for path, change in [("spec.containers.imagePullPolicyy", {"imagePullPolicyy": "Always"}),
                         ("spec.containers.name", {"name": 7}),
                         ("spec.containers.ports", {"ports": {"containerPort": 80}})]:
        pod = json.loads(json.dumps(POD))
        pod["spec"]["containers"][0].update(change)
        with pytest.raises(ValueError, match=path):
            protobuf.codec().encode(pod)
        assert protobuf.encode(pod) is None  # the client then sends JSON
    with pytest.raises(ValueError, match="no schema for kind PodGroup"):
        protobuf.codec().encode({"apiVersion": "v1", "kind": "PodGroup"})
    with pytest.raises(ValueError, match="not of apiVersion apps/v1"):
        protobuf.codec().encode({"apiVersion": "apps/v1", "kind": "Pod"})


def test_a_field_the_schema_lacks_fails_a_strict_read_and_is_left_out_of_a_lenient_one():
    pod = _envelope("Pod", _field(1, _field(1, b"p")) + _field(99, b"from a newer server"))
    with pytest.raises(ValueError, match="api/core/v1.Pod has a field 99"):
        protobuf.decode(pod)
    assert protobuf.decode(pod, strict=False)["metadata"] == {"name": "p"}


@pytest.mark.parametrize("data", [b"", b"k8s\x00\x0a", b"k8s\x00" + _field(2, b"\x0a\xff"), b"{}"])
def test_a_malformed_message_is_a_value_error(data):
    with pytest.raises(ValueError):
        protobuf.decode(data)


def _watch_stream(events: list[dict]) -> bytes:
    frames = b""
    for event in events:
        frame = _field(1, event["type"].encode()) + _field(2, _field(1, protobuf.encode(event["object"])))
        frames += len(frame).to_bytes(4, "big") + frame
    return frames


def test_a_watch_stream_cut_anywhere_gives_whole_events():
    events = [{"type": "ADDED", "object": POD}, {"type": "DELETED", "object": POD}]
    stream = _watch_stream(events)
    frames, got = protobuf.Frames(), []
    for i in range(len(stream)):
        got += frames.feed(stream[i:i + 1])
    assert [e["type"] for e in got] == ["ADDED", "DELETED"]
    assert got[0]["object"] == protobuf.decode(protobuf.encode(POD))


class _Server(BaseHTTPRequestHandler):
    """Answers in protobuf when asked for it: a pod list (with a field the schema lacks once
    `newer` is set), a pods watch, and echoes of what it was sent."""
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        wants = protobuf.CONTENT_TYPE in self.headers.get("Accept", "")
        self.server.accepts.append((self.path.split("?")[0], wants))
        if "watch=true" in self.path:
            return self._answer(_watch_stream([{"type": "ADDED", "object": POD}]) if wants else
                                json.dumps({"type": "ADDED", "object": POD}).encode() + b"\n", close=True)
        pod = _field(1, _field(1, b"p")) + (_field(99, b"new") if self.server.newer else b"")
        self._answer(_envelope("PodList", _field(2, pod)) if wants else
                     json.dumps({"kind": "PodList", "items": [{"metadata": {"name": "p"}}]}).encode())

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.bodies.append((self.headers["Content-Type"], body))
        self._answer(body)

    def _answer(self, data: bytes, close: bool = False) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = close

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def client(tmp_path):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    httpd.accepts, httpd.bodies, httpd.newer = [], [], False
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield KubeClient(write_kubeconfig(tmp_path, f"http://127.0.0.1:{httpd.server_port}"), timeout=5.0), httpd
    httpd.shutdown()
    httpd.server_close()


def test_pods_and_bindings_go_as_protobuf_and_the_rest_as_json(client):
    kube, server = client
    created = kube.request("POST", "/api/v1/namespaces/ns/pods", POD)
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p", "namespace": "ns"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "n"}}
    kube.request("POST", "/api/v1/namespaces/ns/pods/p/binding", binding)
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "g"}}
    assert kube.request("POST", "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups", group) == group
    odd = dict(POD, spec={"containers": [{"name": "c", "sidecarOf": "x"}]})  # only JSON carries it
    assert kube.request("POST", "/api/v1/namespaces/ns/pods", odd) == odd
    assert [t for t, _ in server.bodies] == [protobuf.CONTENT_TYPE] * 2 + ["application/json"] * 2
    assert created == protobuf.decode(protobuf.encode(POD))


def test_a_read_with_a_field_the_schema_lacks_is_asked_again_in_json_and_json_stays(client):
    kube, server = client
    assert kube.request("GET", "/api/v1/pods")["items"] == [{"metadata": {"name": "p"}, "spec": {"containers": None},
                                                             "status": {}}]
    server.newer = True
    assert kube.request("GET", "/api/v1/pods")["items"] == [{"metadata": {"name": "p"}}]  # the JSON answer
    assert kube.protobuf is False
    assert server.accepts == [("/api/v1/pods", True), ("/api/v1/pods", True), ("/api/v1/pods", False)]


def test_a_pods_watch_reads_protobuf_frames_and_json_lines(client):
    kube, server = client
    for expected_protobuf in (True, False):
        events = []
        kube.stream("/api/v1/pods", {"watch": "true"}, 5.0, lambda e: events.append(e) or True)
        assert [e["type"] for e in events] == ["ADDED"]
        assert events[0]["object"]["metadata"]["name"] == "p"
        assert server.accepts[-1] == ("/api/v1/pods", expected_protobuf)
        kube.protobuf = False


def test_the_schema_is_what_tools_protoschema_reads_from_k8s_api():
    """protobuf_schema.json is generated: it must be what the tool writes from the k8s.io/api
    version its go.mod names (Go is on every machine the README sets up)."""
    tool = Path(__file__).parents[2] / "tools" / "protoschema"
    written = subprocess.run(["go", "run", "."], cwd=tool, capture_output=True, text=True, timeout=600, check=True)
    schema = resources.files("volcanic.real").joinpath("protobuf_schema.json").read_text()
    assert written.stdout == schema, "run tools/protoschema again: go run . > python/volcanic/real/protobuf_schema.json"
