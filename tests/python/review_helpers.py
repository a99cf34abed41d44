"""Objects, AdmissionReviews, a JSONPatch applier and checkers of answers, and random
reviews for fuzzing, shared by test_admission_review.py (the codec) and test_webhook.py
(the HTTPS server)."""

from __future__ import annotations

import base64
import copy
import json
import random

from builders import walk
from volcanic.cluster.snapshot import snapshot_lister

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


def mutated_review(rng: random.Random) -> object:
    """A valid review with 1 to 4 random changes, or its serialization truncated or with a
    byte changed, or random bytes; bytes go through rv.parse."""
    doc = copy.deepcopy(rng.choice(BASES))
    for _ in range(rng.randint(1, 4)):
        path, node = rng.choice(list(walk(doc)))
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
