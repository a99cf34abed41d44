"""Admission over AdmissionReview v1 (volcanic.admission.review) and the HTTPS webhook
(volcanic.admission.webhook): the codec, every path, the HTTP error answers, limits, and
fuzzing of both. Rule-specific expectations use only the Job mutator's defaults; everything
else is generic behaviour."""

from __future__ import annotations

import base64
import copy
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
from volcanic.admission import review as rv
from volcanic.admission.chain import AdmissionChain
from volcanic.admission.review import ReviewError
from volcanic.admission.webhook import PATHS, start_server
from volcanic.cluster.snapshot import snapshot_lister
from volcanic.errors import AdmissionError

API = "admission.k8s.io/v1"
GROUPS = {"Job": "batch.volcano.sh", "Queue": "scheduling.volcano.sh", "PodGroup": "scheduling.volcano.sh",
          "Pod": "", "Command": "bus.volcano.sh"}


# Objects and reviews.

def job(name: str = "tf", **spec) -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default", "annotations": {"a/b~c": "x"}},
            "spec": {"tasks": [
                {"name": "ps", "replicas": 1, "template": {"spec": {"containers": [
                    {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]}}},
                {"name": "worker", "replicas": 3, "minAvailable": 2, "template": {"spec": {"containers": [
                    {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "2"}}}]}}}],
                **spec}}


def queue(name: str = "q1") -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"weight": 1, "reclaimable": True, "capability": {"cpu": "10"}}}


def podgroup(name: str = "pg1") -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"minMember": 1, "queue": "default"}}


def pod(name: str = "p1", scheduler: str = "default-scheduler", annotations: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "annotations": annotations or {}},
            "spec": {"schedulerName": scheduler, "containers": [{"name": "c", "image": "busybox"}]}}


def command(name: str = "c1") -> dict:
    return {"apiVersion": "bus.volcano.sh/v1alpha1", "kind": "Command",
            "metadata": {"name": name, "namespace": "default"}, "action": "AbortJob",
            "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "tf"}}


def review(obj: dict | None, operation: str = "CREATE", old: dict | None = None, uid: str = "uid-1",
           kind: str | None = None, group: str | None = None) -> dict:
    kind = kind or (obj or old or {}).get("kind")
    gvk = {"group": GROUPS.get(kind, "") if group is None else group, "version": "v1", "kind": kind}
    return {"apiVersion": API, "kind": "AdmissionReview",
            "request": {"uid": uid, "kind": gvk, "operation": operation, "object": obj, "oldObject": old,
                        "userInfo": {"username": "tester"}}}


# A JSONPatch applier written for the tests, independent of review.apply_patch.

def apply_ops(doc, ops):
    doc = copy.deepcopy(doc)
    for op in ops:
        assert set(op) <= {"op", "path", "value"} and op["op"] in ("add", "remove", "replace"), op
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in op["path"].split("/")[1:]]
        if not tokens:
            assert op["op"] != "remove"
            doc = copy.deepcopy(op["value"])
            continue
        parent = doc
        for t in tokens[:-1]:
            parent = parent[int(t)] if isinstance(parent, list) else parent[t]
        last = tokens[-1]
        if isinstance(parent, list):
            i = len(parent) if last == "-" else int(last)
            if op["op"] == "add":
                parent.insert(i, copy.deepcopy(op["value"]))
            elif op["op"] == "remove":
                del parent[i]
            else:
                assert i < len(parent)
                parent[i] = copy.deepcopy(op["value"])
        else:
            assert isinstance(parent, dict)
            if op["op"] == "add":
                parent[last] = copy.deepcopy(op["value"])
            else:
                assert last in parent, op
                if op["op"] == "remove":
                    del parent[last]
                else:
                    parent[last] = copy.deepcopy(op["value"])
    return doc


def same_json(a, b) -> bool:
    """Equal as JSON, types included (1 is not 1.0 is not true)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def patch_of(answer: dict) -> list:
    response = answer["response"]
    if "patch" not in response:
        assert "patchType" not in response
        return []
    assert response["patchType"] == "JSONPatch"
    ops = json.loads(base64.b64decode(response["patch"], validate=True))
    assert isinstance(ops, list) and ops
    return ops


def check_answer(sent, answer) -> None:
    """What every answer must look like; applies any patch to the object sent."""
    assert answer["apiVersion"] == API and answer["kind"] == "AdmissionReview"
    response = answer["response"]
    assert response["uid"] == sent["request"]["uid"]
    assert isinstance(response["allowed"], bool)
    if not response["allowed"]:
        assert isinstance(response["status"]["message"], str) and response["status"]["message"]
        assert "patch" not in response
    ops = patch_of(answer)
    if ops:
        json.dumps(apply_ops(sent["request"]["object"], ops), allow_nan=False)


# The codec.

def test_mutate_echoes_the_uid_and_patches_the_job_defaults():
    sent = review(job(), uid="4f1c-77")
    before = copy.deepcopy(sent)
    answer = rv.mutate(sent)
    assert sent == before  # the review is not changed
    assert answer["apiVersion"] == API and answer["kind"] == "AdmissionReview"
    assert answer["response"]["uid"] == "4f1c-77" and answer["response"]["allowed"] is True
    ops = patch_of(answer)
    mutated = apply_ops(job(), ops)
    spec = mutated["spec"]
    assert spec["queue"] == "default" and spec["maxRetry"] == 3 and spec["schedulerName"] == "volcano"
    assert spec["minAvailable"] == 1 + 2  # the ps task's replicas, the worker's minAvailable
    assert [t["maxRetry"] for t in spec["tasks"]] == [3, 3]
    assert mutated["metadata"] == job()["metadata"]  # the ~ and / in the annotation key survive
    # The patch is exactly the mutator's change and mutating the result changes nothing more.
    again = rv.mutate(review(mutated))
    assert again["response"] == {"uid": "uid-1", "allowed": True}


def test_mutate_follows_the_conf_scheduler_name():
    from volcanic.admission import AdmissionConf, volcano_chain
    chain = volcano_chain(AdmissionConf(scheduler_names=("kube-batch", "volcano")))
    mutated = apply_ops(job(), patch_of(rv.mutate(review(job()), chain=chain)))
    assert mutated["spec"]["schedulerName"] == "kube-batch"


def test_a_patch_is_relative_to_the_object_as_sent_even_without_kind():
    obj = job()
    del obj["kind"]
    sent = review(obj, kind="Job")
    ops = patch_of(rv.mutate(sent))
    assert not any(op["path"] == "/kind" for op in ops)
    assert apply_ops(obj, ops)["spec"]["queue"] == "default"


def _chain(mutator=None, validator=None, kind="Job") -> AdmissionChain:
    chain = AdmissionChain()
    if mutator:
        chain.add_mutator(kind, mutator)
    if validator:
        chain.add_validator(kind, validator)
    return chain


def test_a_denial_carries_the_rules_message_as_volcano_writes_it():
    chain = _chain(validator=lambda r: f"queue {r.obj['spec'].get('queue')!r} is closed")
    answer = rv.validate(review(job(queue="q")), chain=chain)
    assert answer["response"] == {"uid": "uid-1", "allowed": False, "status": {"message": "queue 'q' is closed"}}
    allowed = rv.validate(review(job()), chain=_chain(validator=lambda r: None))
    assert allowed["response"] == {"uid": "uid-1", "allowed": True}


def test_a_mutator_denial_and_a_rule_failure_are_answers():
    def deny(request):
        raise AdmissionError("no jobs on Sundays", kind="Job")
    answer = rv.mutate(review(job()), chain=_chain(mutator=deny))
    assert answer["response"] == {"uid": "uid-1", "allowed": False, "status": {"message": "no jobs on Sundays"}}

    def broken(request):
        return request.obj["spec"]["nope"]
    for answer in (rv.mutate(review(job()), chain=_chain(mutator=broken)),
                   rv.validate(review(job()), chain=_chain(validator=broken))):
        status = answer["response"]["status"]
        assert answer["response"]["allowed"] is False and status["code"] == 500
        assert status["reason"] == "InternalError" and "KeyError" in status["message"]
    answer = rv.mutate(review(job()), chain=_chain(mutator=lambda r: "not an object"))
    assert answer["response"]["status"]["code"] == 500


def test_mutators_and_validators_run_on_their_own_paths_only():
    calls = []
    chain = _chain(mutator=lambda r: calls.append("m") or dict(r.obj, extra=1),
                   validator=lambda r: calls.append("v") or None)
    assert patch_of(rv.mutate(review(job()), chain=chain)) == [{"op": "add", "path": "/extra", "value": 1}]
    assert calls == ["m"]
    rv.validate(review(job()), chain=chain)
    assert calls == ["m", "v"]


def test_update_and_delete_reach_the_rules_with_both_objects():
    seen = []
    chain = _chain(validator=lambda r: seen.append((r.operation, r.obj, r.old)) or None)
    old, new = job(), job(minAvailable=2)
    assert rv.validate(review(new, "UPDATE", old), chain=chain)["response"]["allowed"]
    assert rv.validate(review(None, "DELETE", old), chain=chain)["response"]["allowed"]
    assert seen == [("UPDATE", new, old), ("DELETE", None, old)]
    # Mutating a DELETE has no object to patch; CONNECT is never admitted by rules.
    assert rv.mutate(review(None, "DELETE", old))["response"] == {"uid": "uid-1", "allowed": True}
    assert rv.validate(review({"kind": "PodExecOptions"}, "CONNECT", kind="Pod"),
                       chain=_chain(validator=lambda r: "no", kind="Pod"))["response"]["allowed"]


def test_kinds_of_other_groups_and_foreign_pods_are_allowed_unchanged():
    k8s_job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
               "spec": {"template": {"spec": {"containers": []}}}}
    for fn in (rv.mutate, rv.validate):
        assert fn(review(k8s_job, group="batch"))["response"] == {"uid": "uid-1", "allowed": True}
        assert fn(review({"kind": "ConfigMap", "metadata": {"name": "c"}}))["response"]["allowed"]
        # A pod of another scheduler is the pod rules' business, and they leave it alone.
        assert fn(review(pod(scheduler="default-scheduler")))["response"] == {"uid": "uid-1", "allowed": True}
    # Without request.kind.group the group is read from the object's apiVersion.
    sent = review(k8s_job)
    del sent["request"]["kind"]["group"]
    assert rv.mutate(sent)["response"] == {"uid": "uid-1", "allowed": True}
    sent = review(job())
    del sent["request"]["kind"]["group"]
    assert patch_of(rv.mutate(sent))


def test_a_path_admits_its_own_kind_only_as_volcano_does():
    answer = rv.validate(review(queue()), kind="Job")
    assert answer["response"]["allowed"] is False
    assert answer["response"]["status"]["message"].startswith("expect resource to be [{batch.volcano.sh v1alpha1 jobs}")
    assert rv.mutate(review(job(), group="batch"), kind="Job")["response"]["allowed"] is False
    assert rv.mutate(review(job()), kind="Job")["response"]["allowed"] is True


@pytest.mark.parametrize("bad, message", [
    (None, "must be a JSON object, got null"),
    ([], "must be a JSON object, got an array"),
    ({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "request": {}}, "apiVersion"),
    ({"apiVersion": API, "kind": "Review", "request": {}}, "kind: must be 'AdmissionReview'"),
    ({"apiVersion": API, "kind": "AdmissionReview"}, "request: must be an object, got null"),
    ("uid", "request.uid: must be a non-empty string"),
    ("operation", "request.operation: must be one of CREATE, UPDATE, DELETE, CONNECT"),
    ("kind", "request.kind: must be an object"),
    ("object", "request.object: must be an object or null, got an array"),
    ("no-object", "request.object: is required for CREATE"),
    ("no-old", "request.oldObject: is required for UPDATE"),
    ("kind-mismatch", "request.object.kind: 'Queue' is not request.kind.kind 'Job'"),
    ("nan", "is not a JSON value"),
    ("int-key", "key 1 is not a string"),
    ("deep", "nested deeper than 64 levels"),
    ("group", "request.kind.group: must be a string"),
])
def test_malformed_reviews_raise_review_error(bad, message):
    if isinstance(bad, str):
        sent = review(job())
        request = sent["request"]
        if bad == "uid":
            request["uid"] = ""
        elif bad == "operation":
            request["operation"] = "create"
        elif bad == "kind":
            request["kind"] = "Job"
        elif bad == "object":
            request["object"] = []
        elif bad == "no-object":
            request["object"] = None
        elif bad == "no-old":
            request["operation"] = "UPDATE"
        elif bad == "kind-mismatch":
            request["object"] = queue()
        elif bad == "nan":
            request["object"]["spec"]["minAvailable"] = float("nan")
        elif bad == "int-key":
            request["object"]["spec"][1] = 2
        elif bad == "deep":
            deep = request["object"]["spec"]
            for _ in range(100):
                deep["x"] = {}
                deep = deep["x"]
        elif bad == "group":
            request["kind"]["group"] = 7
        bad = sent
    for fn in (rv.mutate, rv.validate):
        with pytest.raises(ReviewError, match=message):
            fn(bad)


def test_parse_refuses_what_is_not_json():
    assert rv.parse(b'{"a": [1, 2.5, null]}') == {"a": [1, 2.5, None]}
    for body in (b"", b'{"a": ', b"\xff\xfe\x00", b'{"a": NaN}', b"[" * 100_000 + b"]" * 100_000, b"{'a': 1}"):
        with pytest.raises(ReviewError, match="the body is not JSON"):
            rv.parse(body)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["a", "b", "~", "/", "a/~0", ""])
                                                                | st.text(max_size=4), inner, max_size=4),
    max_leaves=16)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(JSON, JSON)
def test_json_patch_turns_one_document_into_the_other(a, b):
    ops = rv.json_patch(a, b)
    assert same_json(apply_ops(a, ops), b)
    assert same_json(rv.apply_patch(a, ops), b)
    assert rv.json_patch(a, a) == []
    json.dumps(ops, allow_nan=False)


def test_json_patch_escapes_pointers_and_keeps_json_types():
    assert rv.json_patch({"a/b": 1, "c~d": 1}, {"a/b": 2, "c~d": 1, "e": {}}) == [
        {"op": "replace", "path": "/a~1b", "value": 2}, {"op": "add", "path": "/e", "value": {}}]
    assert rv.json_patch({"x": 1}, {"x": True}) == [{"op": "replace", "path": "/x", "value": True}]
    assert rv.json_patch({"x": 1}, {"x": 1.0}) == [{"op": "replace", "path": "/x", "value": 1.0}]
    assert rv.json_patch({"l": [1, 2]}, {"l": [1, 3]}) == [{"op": "replace", "path": "/l/1", "value": 3}]
    assert rv.json_patch({"l": [1, 2]}, {"l": [1]}) == [{"op": "replace", "path": "/l", "value": [1]}]
    assert rv.json_patch({"x": 1}, {}) == [{"op": "remove", "path": "/x"}]


# The fuzzing of the codec: 2,000 random reviews and JSON values, 10,000 mutated reviews and
# 2,300 truncations, each through mutate and validate, with and without a path kind.

LISTER = snapshot_lister([queue("q1"), podgroup("pg1")])
BASES = [review(job()), review(job(queue="q1", plugins={"mpi": [], "ssh": []})),
         review(job(minAvailable=2), "UPDATE", job()), review(queue()), review(queue("q2"), "UPDATE", queue("q2")),
         review(None, "DELETE", queue("q1")), review(podgroup()), review(pod()),
         review(pod(scheduler="volcano", annotations={"volcano.sh/jdb-min-available": "50%",
                                                      "scheduling.k8s.io/group-name": "pg1"})),
         review(command()), review(None, "DELETE", job())]
PALETTE = [None, True, False, 0, -1, 1, 2**31, 2**63, 10**30, 0.5, -1e300, "", "x", "default", "Open", "1Gi",
           "-4", "10T", "ﬁ\u0000\U0001F600", "a" * 300, [], {}, [None], {"": None}, [[[[]]]], {"kind": "Job"},
           "CREATE", "*", "PodFailed", "RestartJob"]
PATH_KINDS = [None, "Job", "Queue", "PodGroup", "Pod"]


def _nodes(doc, path=()):
    yield path, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _nodes(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _nodes(v, path + (i,))


def _mutated(rng: random.Random) -> object:
    """A valid review with 1 to 4 random changes, or its serialization truncated or with a
    byte changed, or random bytes; bytes go through rv.parse."""
    doc = copy.deepcopy(rng.choice(BASES))
    for _ in range(rng.randint(1, 4)):
        path, node = rng.choice(list(_nodes(doc)))
        if not path:
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        key, action = path[-1], rng.random()
        if action < 0.2 and isinstance(parent, dict):
            del parent[key]
        elif action < 0.3 and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(node))
        elif action < 0.4 and isinstance(parent, dict):
            parent[rng.choice(["kind", "name", "spec", "status", "tasks", "queue", "x"])] = copy.deepcopy(node)
        else:
            parent[key] = copy.deepcopy(rng.choice(PALETTE))
    roll = rng.random()
    if roll < 0.75:
        return doc
    data = json.dumps(doc).encode()
    if roll < 0.88:
        return data[:rng.randrange(len(data))]
    if roll < 0.96:
        i = rng.randrange(len(data))
        return data[:i] + bytes([rng.randrange(256)]) + data[i + 1:]
    return bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))


def _admit_everywhere(sent, rng: random.Random) -> int:
    """Feeds one input to mutate and validate, with and without a path kind; only answers and
    ReviewError may come out. Returns how many reviews were answered."""
    if isinstance(sent, bytes):
        try:
            sent = rv.parse(sent)
        except ReviewError:
            return 0
    answered = 0
    for fn in (rv.mutate, rv.validate):
        for kind in (None, rng.choice(PATH_KINDS)):
            try:
                answer = fn(sent, lister=LISTER, kind=kind)
            except ReviewError as e:
                assert str(e)
                continue
            check_answer(sent, answer)
            answered += 1
    return answered


OBJECTS = {"Job": [job(), job(queue="q1")], "Queue": [queue(), queue("q1")], "PodGroup": [podgroup()],
           "Pod": [pod(), pod(scheduler="volcano")], "Command": [command()]}


@st.composite
def random_reviews(draw):
    """Reviews whose every part is most often valid and otherwise random JSON."""
    def part(valid, odds=8):
        return draw(valid) if draw(st.integers(0, 9)) < odds else draw(JSON)
    kind = draw(st.sampled_from(sorted(OBJECTS)))
    objects = st.sampled_from(OBJECTS[kind]).map(copy.deepcopy)
    # Random JSON inside a valid object: the rules see odd shapes.
    odd = st.builds(lambda o, k, v: {**o, "spec": {**o.get("spec", {}), k: v}}, objects,
                    st.sampled_from(["tasks", "queue", "minAvailable", "weight", "capability", "x"]), JSON)
    operation = part(st.sampled_from(["CREATE", "UPDATE", "DELETE", "CONNECT"]), 9)
    request = {"uid": part(st.text(min_size=1, max_size=8)),
               "kind": part(st.just({"group": GROUPS[kind], "version": "v1", "kind": kind}), 9),
               "operation": operation,
               "object": part(st.one_of(objects, odd, odd), 9),
               "oldObject": part(st.one_of(st.none(), objects, odd), 9)}
    return {"apiVersion": part(st.just(API), 9), "kind": part(st.just("AdmissionReview"), 9),
            "request": part(st.just(request), 9)}


def test_fuzz_codec_with_random_reviews():
    count = {"inputs": 0, "answered": 0}

    @settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), database=None,
              derandomize=True)
    @given(st.lists(st.one_of(JSON, random_reviews(), random_reviews()), min_size=20, max_size=20),
           st.randoms(use_true_random=False))
    def run(inputs, rng):
        for sent in inputs:
            count["answered"] += _admit_everywhere(sent, rng)
        count["inputs"] += len(inputs)

    run()
    assert count["inputs"] >= 2_000 and count["answered"] > 1_500


def test_fuzz_codec_with_mutated_reviews():
    count = {"inputs": 0, "answered": 0}

    @settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck), database=None,
              derandomize=True)
    @given(st.integers(0, 2**32))
    def run(seed):
        rng = random.Random(seed)
        for _ in range(40):
            count["answered"] += _admit_everywhere(_mutated(rng), rng)
        count["inputs"] += 40

    run()
    assert count["inputs"] >= 10_000 and count["answered"] > 12_000


def test_every_truncation_of_a_review_is_a_review_error():
    from volcanic.bench.admission import review as bench_review
    from volcanic.bench.admission import typical_job
    data = json.dumps(bench_review("uid-1", "CREATE", typical_job(1))).encode()
    for n in range(len(data)):
        with pytest.raises(ReviewError):
            rv.validate(rv.parse(data[:n]))
    assert len(data) > 2_000


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


PATH_OBJECTS = {"Job": job(), "Queue": queue("q9"), "PodGroup": podgroup("pg9"), "Pod": pod()}


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
    assert post(conn, "/hypernodes/validate", review(job()))[0] == 404
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
            sent = _mutated(rng)
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


def test_the_package_exposes_mutate_and_validate():
    """The issue's contract: volcanic.admission.mutate(review) / validate(review)."""
    import volcanic.admission
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "ns"},
           "spec": {"tasks": [{"name": "t", "replicas": 1, "template": {"spec": {"containers": [
               {"name": "c", "image": "busybox"}]}}}]}}
    req = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "u-1", "kind": {"group": "batch.volcano.sh", "version": "v1alpha1", "kind": "Job"},
        "operation": "CREATE", "object": job}}
    mutated = volcanic.admission.mutate(req)
    assert mutated["response"]["uid"] == "u-1" and mutated["response"]["patchType"] == "JSONPatch"
    denied = volcanic.admission.validate(req)  # no queue "default" in an empty lister
    assert denied["response"]["allowed"] is False
