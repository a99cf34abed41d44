"""The extender plugin's wire (docs/extender.md, "Payloads"; Volcano v1.15.1's
pkg/scheduler/plugins/extender): requests under Volcano's Go field names and units, answers
decoded as Go's encoding/json decodes them, transport errors, timeouts, keep-alive, and
TestMaxBodySizeLimit2, against a local extender per test."""

from __future__ import annotations

import logging
import time

import pytest

from builders import node, pod, podgroup
from extender_helpers import Fake, Reply, conf, extender, fake, schedule, three_nodes_one_pod  # noqa: F401 - fixture
from volcanic.scheduler.extender import MAX_BODY, TOO_LARGE, Client, ExtenderError
from volcanic.scheduler.extender_wire import decode, payload_resource


def test_the_request_carries_volcanos_field_names(fake):
    gpu_pod = pod("p", "pg", cpu="500m", memory="1Gi", labels={"app": "x"},
                  annotations={"volcano.sh/task-spec": "worker"})
    gpu_pod["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": "2", "ephemeral-storage": "1Ki"}
    gpu_node = node("n1", labels={"zone": "a"}, **{"nvidia.com/gpu": "4", "ephemeral-storage": "1Mi"})
    gpu_node["metadata"]["annotations"] = {"note": "x"}
    gpu_node["spec"] = {"taints": [{"key": "gpu", "value": "yes", "effect": "PreferNoSchedule"}]}
    schedule([gpu_node, podgroup("pg", min_member=1), gpu_pod], conf(extender(fake, predicateVerb="predicate")))
    [request] = fake.requests("predicate")
    uid = request["task"]["UID"]
    assert request["task"] == {
        "UID": uid, "Job": "ns/pg", "Name": "p", "Namespace": "ns", "TaskRole": "worker",
        "Resreq": {"MilliCPU": 500, "Memory": 1 << 30,
                   "ScalarResources": {"ephemeral-storage": 1024000, "nvidia.com/gpu": 2000, "pods": 1},
                   "MaxTaskNum": 0},
        "NodeName": "", "Status": 1, "Priority": 1, "Preemptable": True, "BestEffort": False,
        "Pod": {"metadata": {"name": "p", "namespace": "ns", "uid": uid, "labels": {"app": "x"},
                             "annotations": {"volcano.sh/task-spec": "worker",
                                             "scheduling.k8s.io/group-name": "pg"}}}}
    empty = {"MilliCPU": 0, "Memory": 0, "ScalarResources": {}, "MaxTaskNum": 0}
    allocatable = {"MilliCPU": 4000, "Memory": 8 << 30, "MaxTaskNum": 110,
                   "ScalarResources": {"ephemeral-storage": (1 << 20) * 1000, "nvidia.com/gpu": 4000, "pods": 110}}
    assert request["node"] == {
        "Name": "n1",
        "Node": {"metadata": {"name": "n1", "labels": {"zone": "a"}, "annotations": {"note": "x"}},
                 "spec": {"taints": [{"key": "gpu", "value": "yes", "effect": "PreferNoSchedule"}]}},
        "Releasing": empty, "Pipelined": empty, "Idle": allocatable, "Used": empty, "Allocatable": allocatable}


def test_resources_in_volcanos_units():
    class R(dict):
        cpu = property(lambda self: self.get("cpu", 0))
        memory = property(lambda self: self.get("memory", 0))
    r = R({"cpu": 1500, "memory": 2048, "pods": 3000, "hugepages-2Mi": 4 << 20, "example.com/fpga": 500})
    assert payload_resource(r, 3) == {  # type: ignore[arg-type]
        "MilliCPU": 1500, "Memory": 2048, "MaxTaskNum": 3,
        "ScalarResources": {"example.com/fpga": 500, "hugepages-2Mi": (4 << 20) * 1000, "pods": 3}}


@pytest.mark.parametrize("ignorable, bound", [(False, False), (True, True)])
def test_a_predicate_error_rejects_the_node_unless_ignorable(fake, ignorable, bound):
    fake.answers["predicate"] = Reply(500)
    d = schedule(three_nodes_one_pod(), conf(extender(fake, predicateVerb="predicate", ignorable=ignorable)))
    if bound:
        assert d.binds == {"ns/p": "n1"}
    else:
        assert d.unschedulable["ns/p"] == \
            f"0/3 nodes are unavailable: 3 failed predicate with extender at URL {fake.url}/predicate, code 500."


@pytest.mark.parametrize("answer, fits", [
    (Reply(body=b"not json"), False),
    (Reply(body=b""), False),
    (Reply(body=b'{"status": 3}'), False),             # a number where Go wants a string
    (Reply(body=b'{"code": 1.0, "status": "x"}'), False),  # a float where Go wants an int
    (Reply(body=b"[]"), False),
    (Reply(body=b"null"), True),                       # Go's decoder: nothing set
    (Reply(body=b'{"STATUS": ""} trailing words'), True),  # keys ignore case; the first value only
    (Reply(body=b'{"Status": "busy", "unknown": 1}'), False),
    (Reply(201), False),
])
def test_answers_are_decoded_as_gos_encoding_json_does(fake, answer, fits):
    fake.answers["predicate"] = answer
    d = schedule([node("n1"), podgroup("pg"), pod("p", "pg")], conf(extender(fake, predicateVerb="predicate")))
    assert bool(d.binds) is fits


@pytest.mark.parametrize("body, fields, answer, error", [
    (b'{"nodeScore": {"a": 1e400}}', {"nodeScore": "scores"}, {}, True),  # no float64 holds it
    (b'{"nodeScore": {"a": 2, "b": null}, "NODESCORE": {"c": 1.5}}', {"nodeScore": "scores"},
     {"nodeScore": {"a": 2.0, "b": 0.0, "c": 1.5}}, False),  # a map decoded twice is merged
    (b'{"victims": [{"uid": "u1"}, null, {"UID": "u2", "Uid": "x"}]}', {"victims": "victims"},
     {"victims": ["u1", "x"]}, False),  # keys in order, any case: the last wins
    (b'{"status": true, "overused": 1}', {"status": "bool", "overused": "bool"}, {"status": True}, True),
    (b'{"status": 9223372036854775808}', {"status": "int"}, {}, True),  # over Go's int
    (b"[" * 100000, {"status": "int"}, {}, True),
    (b"  \n{} {", {"status": "int"}, {}, False),
])
def test_decoding_as_go_does(body, fields, answer, error):
    got, err = decode(body, fields)
    assert got == answer and (err is not None) is error


def test_a_timeout_is_an_error_and_bounds_the_call(fake):
    fake.answers["predicate"] = Reply(delay=2.0)
    start = time.monotonic()
    d = schedule([node("n1"), podgroup("pg"), pod("p", "pg")],
                 conf(extender(fake, predicateVerb="predicate", httpTimeout="200ms")))
    assert time.monotonic() - start < 1.5
    assert d.binds == {} and "timeout" in d.unschedulable["ns/p"]
    d = schedule([node("n1"), podgroup("pg"), pod("p", "pg")],
                 conf(extender(fake, predicateVerb="predicate", httpTimeout="200ms", ignorable=True)))
    assert d.binds == {"ns/p": "n1"}


def test_an_unreachable_extender_is_an_error_like_any_other():
    closed = Fake()
    closed.close()
    d = schedule(three_nodes_one_pod(), conf(extender(closed, predicateVerb="predicate")))
    assert d.binds == {} and "Connection refused" in d.unschedulable["ns/p"]


def test_an_error_is_logged_once_per_session_and_verb(fake, caplog):
    fake.answers["predicate"] = Reply(503)
    with caplog.at_level(logging.WARNING, logger="volcanic.scheduler.extender"):
        schedule(three_nodes_one_pod(), conf(extender(fake, predicateVerb="predicate")))
    assert len(fake.requests("predicate")) == 3
    [record] = caplog.records
    assert f"{fake.url}/predicate" in record.getMessage() and "code 503" in record.getMessage()


def test_one_connection_is_kept_alive_for_a_sessions_calls(fake):
    schedule([*three_nodes_one_pod(), pod("q", "pg")], conf(extender(fake, predicateVerb="predicate")))
    assert len(fake.requests("predicate")) == 6 and len(fake.ports) == 1
    old = Fake("HTTP/1.0")  # closes after each answer
    try:
        d = schedule(three_nodes_one_pod(), conf(extender(old, predicateVerb="predicate")))
        assert d.binds == {"ns/p": "n1"} and len(old.ports) == 3
    finally:
        old.close()


# TestMaxBodySizeLimit2: answers are read up to 10 MB.

def test_max_body_size_limit(fake):
    fake.answers["test"] = Reply(body=b'{"padding":"' + b"a" * (MAX_BODY + 1) + b'"}')
    with pytest.raises(ExtenderError, match=TOO_LARGE):
        Client(fake.url, None).post("test", {"task": {}, "node": {}})
    at_limit = b'{"status":"' + b"a" * (MAX_BODY - 13) + b'"}'
    assert len(at_limit) == MAX_BODY
    fake.answers["test"] = Reply(body=at_limit)
    assert Client(fake.url, None).post("test", {}) == at_limit
    fake.answers["predicate"] = Reply(body=b'{"padding":"' + b"a" * (MAX_BODY + 1) + b'"}')
    d = schedule([node("n1"), podgroup("pg"), pod("p", "pg")], conf(extender(fake, predicateVerb="predicate")))
    assert d.unschedulable["ns/p"] == f"0/1 nodes are unavailable: 1 {TOO_LARGE}."
