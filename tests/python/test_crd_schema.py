"""Volcano's CRD schemas (python/volcanic/kube/crds.py, checked by kube/openapi.py): one table
that `volcanic install` puts into the CRDs and that the embedded cluster validates and
defaults with, answering as the API server does. The Volcano e2e specs are Volcano v1.15.1's
test/e2e/admission/job_validation_test.go and queue_validation_test.go; the constraints are
its config/crd/volcano/bases/*.yaml."""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import pytest

import volcanic
from volcanic.kube import crds
from volcanic.kube.openapi import _check, _passes, compile_schema, schema_errors, with_defaults
from volcanic.real.manifests.definitions import crds as crd_manifests

NS = "default"


def job(name: str = "j", **spec) -> dict:
    t = {"name": "task-1", "replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name, "namespace": NS},
            "spec": {"minAvailable": 1, "queue": "default", "tasks": [t], **spec}}


def queue(name: str = "q", **spec) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": spec}


@pytest.fixture
def c() -> volcanic.Cluster:
    cluster = volcanic.Cluster()
    yield cluster
    assert cluster.errors == []


def refused(c: volcanic.Cluster, obj: dict) -> str:
    """Applies `obj`, expecting the CRD schema to refuse it as the API server does (422
    Invalid, an InvalidObject here); nothing is stored."""
    with pytest.raises(volcanic.InvalidObject) as e:
        c.apply(obj)
    meta = obj["metadata"]
    assert c.get(obj["kind"], meta["name"], meta.get("namespace") or NS) is None
    return str(e.value)


# --- Volcano's e2e specs ---------------------------------------------------------------------

@pytest.mark.parametrize("edit, field, message", [
    # "Should reject job creation with invalid minAvailable less than zero"
    (lambda j: j["spec"].update(minAvailable=-1), "spec.minAvailable", "should be greater than or equal to 0"),
    # "... invalid maxRetry less than zero"
    (lambda j: j["spec"].update(maxRetry=-1), "spec.maxRetry", "should be greater than or equal to 0"),
    # "... invalid TTLSecondsAfterFinished less than zero"
    (lambda j: j["spec"].update(ttlSecondsAfterFinished=-1), "spec.ttlSecondsAfterFinished",
     "should be greater than or equal to 0"),
    # "... task replicas less than zero"
    (lambda j: j["spec"]["tasks"][0].update(replicas=-1), "spec.tasks[0].replicas",
     "should be greater than or equal to 0"),
    # "... task minAvailable less than zero"
    (lambda j: j["spec"]["tasks"][0].update(minAvailable=-1), "spec.tasks[0].minAvailable",
     "should be greater than or equal to 0"),
    # "... invalid task name (non-DNS1123)"
    (lambda j: j["spec"]["tasks"][0].update(name="Task-1"), "spec.tasks[0].name", "should match"),
    # "... invalid volume mount path"
    (lambda j: j["spec"].update(volumes=[{"mountPath": ""}]), "spec.volumes[0].mountPath",
     "should be at least 1 chars long"),
])
def test_volcano_job_validation_specs(c, edit, field, message):
    """Volcano's admission e2e (job_validation_test.go): these rules are the CRD schema's, and
    the error names the field in the API server's words."""
    j = job("bad")
    edit(j)
    error = refused(c, j)
    assert error.startswith('Job.batch.volcano.sh "bad" is invalid: ')
    assert field in error and message in error


def test_job_min_available_message_is_the_api_servers(c):
    j = job("bad", minAvailable=-1)
    assert refused(c, j) == ('Job.batch.volcano.sh "bad" is invalid: spec.minAvailable: Invalid value: -1: '
                             "spec.minAvailable in body should be greater than or equal to 0")


def test_volcano_queue_weight_specs(c):
    """Volcano's admission e2e (queue_validation_test.go) "Should reject queue creation with
    negative weight" and the update of a queue to weight -1; the CRD's weight is 1..65535,
    default 1 ("Should allow queue creation without weight specified (uses default)")."""
    assert refused(c, queue("neg", weight=-1)) == (
        'Queue.scheduling.volcano.sh "neg" is invalid: spec.weight: Invalid value: -1: '
        "spec.weight in body should be greater than or equal to 1")
    assert "spec.weight in body should be less than or equal to 65535" in refused(c, queue("big", weight=65536))
    stored = c.apply(queue("q"))
    assert stored["spec"]["weight"] == 1 and stored["spec"]["dequeueStrategy"] == "traverse"
    c.run(0)
    update = copy.deepcopy(c.get("Queue", "q"))
    update["spec"]["weight"] = -1
    with pytest.raises(volcanic.InvalidObject, match="spec.weight in body should be greater than or equal to 1"):
        c.apply(update)
    assert c.get("Queue", "q")["spec"]["weight"] == 1


def test_job_update_is_checked_against_the_schema(c):
    """The API server checks the schema on every update, before the webhook."""
    stored = c.apply(job("j"))
    update = copy.deepcopy(stored)
    update["spec"]["tasks"][0]["replicas"] = -1
    with pytest.raises(volcanic.InvalidObject, match=r"spec.tasks\[0\].replicas in body should be greater"):
        c.api.update(update)
    assert c.get("Job", "j")["spec"]["tasks"][0]["replicas"] == 1


def test_podgroup_and_command_constraints(c):
    """PodGroup minMember >= 0 and queue default; a Command's target names apiVersion, kind,
    name and uid (Volcano's bus.volcano.sh_commands.yaml)."""
    pg = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg", "namespace": NS},
          "spec": {"minMember": -1}}
    assert "spec.minMember in body should be greater than or equal to 0" in refused(c, pg)
    pg["spec"] = {"minMember": 1, "subGroupPolicy": [{"name": "a"}]}
    stored = c.apply(pg)
    assert stored["spec"]["queue"] == "default"
    assert stored["spec"]["subGroupPolicy"] == [{"name": "a", "subGroupSize": 1, "minSubGroups": 0}]
    cmd = {"apiVersion": "bus.volcano.sh/v1alpha1", "kind": "Command", "metadata": {"name": "x", "namespace": NS},
           "action": "CloseQueue", "target": {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                                              "name": "default"}}
    assert refused(c, cmd) == 'Command.bus.volcano.sh "x" is invalid: target.uid: Required value'


def test_schema_runs_between_mutating_and_validating_admission(c):
    """The API server's order: mutation (Volcano's job defaults), the schema, then the
    webhook's validation: a job the mutator fixes passes the schema, and a job the schema
    refuses never reaches the webhook (one message for one rule)."""
    # weight 0 is Volcano's mutator's to set to 1 before the schema's minimum 1 is checked.
    assert c.apply(queue("zero", weight=0))["spec"]["weight"] == 1
    error = refused(c, job("bad", minAvailable=-1, queue="missing"))
    assert "unable to find job queue" not in error


# --- The one table ---------------------------------------------------------------------------

def test_install_manifests_carry_the_same_schemas():
    """`volcanic install` applies the table the embedded cluster checks with, so a real API
    server answers with the same messages and fills in the same defaults."""
    by_kind = {c["spec"]["names"]["kind"]: c for c in crd_manifests()}
    assert set(by_kind) == set(crds.SCHEMAS)
    for kind, crd in by_kind.items():
        assert crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] == crds.SCHEMAS[kind]
    spec = crds.SCHEMAS["Queue"]["properties"]["spec"]["properties"]
    assert spec["weight"] == {"type": "integer", "format": "int32", "minimum": 1, "maximum": 65535, "default": 1}
    task = crds.SCHEMAS["Job"]["properties"]["spec"]["properties"]["tasks"]["items"]["properties"]
    assert task["name"]["pattern"] == "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" and task["name"]["maxLength"] == 63


# --- The validator ---------------------------------------------------------------------------

def test_validator_messages_and_defaults():
    """kube-openapi's checks, worded as apiextensions-apiserver reports them."""
    node = compile_schema({"type": "object", "properties": {
        "n": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 9},
        "s": {"type": "string", "maxLength": 3, "pattern": "^[a-z]+$", "default": "abc"},
        "e": {"type": "string", "enum": ["a", "b"]},
        "l": {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["k"],
                                                         "properties": {"k": {"type": "string"}}}},
        "m": {"type": "object", "additionalProperties": {"type": "integer"}}}})
    assert schema_errors({"n": 5, "s": "ab", "e": "a", "l": [{"k": "x"}], "m": {"a": 1}}, node) == []
    assert schema_errors({"n": 10, "s": "ABCD", "e": "c", "l": [{}], "m": {"a": "1"}}, node) == [
        "n: Invalid value: 10: n in body should be less than or equal to 9",
        "s: Too long: may not be more than 3 bytes",
        "s: Invalid value: \"ABCD\": s in body should match '^[a-z]+$'",
        'e: Unsupported value: "c": supported values: "a", "b"',
        "l[0].k: Required value",
        'm.a: Invalid value: "string": m.a in body must be of type integer: "string"']
    assert schema_errors({"n": True, "l": []}, node) == [
        'n: Invalid value: "": n in body must be of type int32: ""',
        "l: Invalid value: 0: l in body should have at least 1 items"]
    original = {"n": None, "s": None}
    assert with_defaults(original, node) == {"s": "abc"} and original == {"n": None, "s": None}
    same = {"s": "x"}
    assert with_defaults(same, node) is same  # nothing to change: shared, not copied


def test_the_fast_pass_agrees_with_the_messages():
    """schema_errors answers a valid object without building messages (openapi._passes); on
    any object, that answer is the full check's."""
    scalars = st.none() | st.booleans() | st.integers(-3, 70000) | st.floats(allow_nan=False) | st.text(max_size=8)
    values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["minMember", "queue", "weight", "minAvailable", "tasks", "replicas", "name", "spec",
                         "minResources", "cpu", "policies", "event", "action", "volumes", "mountPath"]),
        inner, max_size=4), max_leaves=12)
    nodes = [compile_schema(schema) for schema in crds.SCHEMAS.values()]

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(st.sampled_from(range(len(nodes))), st.dictionaries(st.just("spec"), values))
    def agree(i, obj):
        errors: list[str] = []
        _check(obj, nodes[i], "", errors)
        assert _passes(obj, nodes[i]) == (not errors)

    agree()
