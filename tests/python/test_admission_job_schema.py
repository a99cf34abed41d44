"""Volcano's Job CRD schema (reference §3.1, "CRD/VAP-level rules"): the types of every field
and the CRD's value constraints (python/volcanic/admission/job_schema.py), unit and through
volcanic.Cluster().apply. Builders in admission_job_helpers.py."""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest

# c is a pytest fixture, taken by name.
from admission_job_helpers import DEFAULT, c, container, denied, job, task
import volcanic
from volcanic.admission import job_schema as JS
from volcanic.admission import jobs as J
from volcanic.admission.chain import AdmissionRequest

# --- CRD schema: types ---------------------------------------------------------------------------

def test_check_job_shape_accepts_a_full_job():
    """reference §1.1 / §3.1 CRD schema: a job using every checked field passes."""
    t = task("a", 2, minAvailable=1, maxRetry=2, topologyPolicy="none", dependsOn={"name": [], "iteration": "all"},
             policies=[{"event": "PodEvicted", "action": "RestartJob", "timeout": "10s"}],
             partitionPolicy={"totalPartitions": 1, "partitionSize": 2, "minPartitions": 0,
                              "networkTopology": {"mode": "soft", "highestTierAllowed": 1}})
    c0 = container({"spec": {"tasks": [t]}})
    c0.update(env=[{"name": "A", "value": "1"}], ports=[{"name": "p", "containerPort": 80}], command=["x"],
              volumeMounts=[{"name": "v", "mountPath": "/v"}])
    t["template"]["spec"].update(volumes=[{"name": "v", "emptyDir": {}}], hostname="h", nodeSelector={"a": "b"})
    j = job("j", t, minAvailable=1, queue="default", maxRetry=1, ttlSecondsAfterFinished=0, minSuccess=1,
            priorityClassName="high", schedulerName="volcano", runningEstimate="1h",
            networkTopology={"mode": "hard", "highestTierName": "tier1"}, plugins={"svc": None, "env": []},
            volumes=[{"mountPath": "/data", "volumeClaimName": "pvc"}],
            policies=[{"exitCode": 3, "action": "AbortJob"}])
    assert JS.check_job_shape(j) is None
    assert J.admit_job_schema(AdmissionRequest("CREATE", j, None, DEFAULT)) is None


# (how to break a job, the webhook's message, the API server's message when the CRD schema
# types the field: the embedded cluster, as a real API server, answers with that first).
MALFORMED: list[tuple[Callable[[dict], Any], str, str | None]] = [
    (lambda j: j.update(spec="x"), "spec: must be an object, got string",
     'spec: Invalid value: "string": spec in body must be of type object: "string"'),
    (lambda j: j["spec"].update(tasks="abc"), "spec.tasks: must be an array, got string",
     'spec.tasks: Invalid value: "string": spec.tasks in body must be of type array: "string"'),
    (lambda j: j["spec"].update(tasks={"a": 1}), "spec.tasks: must be an array, got object",
     'spec.tasks: Invalid value: "object": spec.tasks in body must be of type array: "object"'),
    (lambda j: j["spec"]["tasks"].append("x"), "spec.tasks[1]: must be an object, got string",
     'spec.tasks[1]: Invalid value: "string": spec.tasks[1] in body must be of type object: "string"'),
    (lambda j: j["spec"]["tasks"].append(None), "spec.tasks[1]: must not be null",
     'spec.tasks[1]: Invalid value: "null": spec.tasks[1] in body must be of type object: "null"'),
    (lambda j: j["spec"]["tasks"][0].update(replicas="2"), "spec.tasks[0].replicas: must be an integer, got string",
     'spec.tasks[0].replicas: Invalid value: "string": spec.tasks[0].replicas in body must be of type integer: "string"'),
    (lambda j: j["spec"]["tasks"][0].update(replicas=1.5), "spec.tasks[0].replicas: must be an integer, got number",
     'spec.tasks[0].replicas: Invalid value: "float64": spec.tasks[0].replicas in body must be of type int32: "float64"'),
    (lambda j: j["spec"]["tasks"][0].update(replicas=True), "spec.tasks[0].replicas: must be an integer, got boolean",
     'spec.tasks[0].replicas: Invalid value: "": spec.tasks[0].replicas in body must be of type int32: ""'),
    (lambda j: j["spec"]["tasks"][0].update(minAvailable="1"),
     "spec.tasks[0].minAvailable: must be an integer, got string",
     'spec.tasks[0].minAvailable: Invalid value: "string": spec.tasks[0].minAvailable in body must be of type integer: "string"'),
    (lambda j: j["spec"]["tasks"][0].update(name=["a"]), "spec.tasks[0].name: must be a string, got array",
     'spec.tasks[0].name: Invalid value: "array": spec.tasks[0].name in body must be of type string: "array"'),
    (lambda j: j["spec"]["tasks"][0].update(template=[]), "spec.tasks[0].template: must be an object, got array",
     'spec.tasks[0].template: Invalid value: "array": spec.tasks[0].template in body must be of type object: "array"'),
    (lambda j: j["spec"]["tasks"][0]["template"].update(spec="x"),
     "spec.tasks[0].template.spec: must be an object, got string", None),
    (lambda j: j["spec"]["tasks"][0]["template"]["spec"].update(containers={}),
     "spec.tasks[0].template.spec.containers: must be an array, got object", None),
    (lambda j: container(j).update(image=5), "spec.tasks[0].template.spec.containers[0].image: must be a string", None),
    (lambda j: container(j).update(ports="80"),
     "spec.tasks[0].template.spec.containers[0].ports: must be an array, got string", None),
    (lambda j: container(j).update(env=[{"name": "A", "value": 1}]),
     "spec.tasks[0].template.spec.containers[0].env[0].value: must be a string, got integer", None),
    (lambda j: container(j)["resources"]["requests"].update(cpu="lots"),
     "spec.tasks[0].template.spec.containers[0].resources.requests.cpu: quantities must match", None),
    (lambda j: container(j)["resources"].update(limits=["1"]),
     "spec.tasks[0].template.spec.containers[0].resources.limits: must be an object, got array", None),
    (lambda j: j["spec"]["tasks"][0]["template"].update(metadata={"annotations": {"x": 1}}),
     "spec.tasks[0].template.metadata.annotations.x: must be a string, got integer", None),
    (lambda j: j["spec"]["tasks"][0]["template"]["spec"].update(hostNetwork="yes"),
     "spec.tasks[0].template.spec.hostNetwork: must be a boolean, got string", None),
    (lambda j: j["spec"].update(policies={"event": "PodFailed"}), "spec.policies: must be an array, got object",
     'spec.policies: Invalid value: "object": spec.policies in body must be of type array: "object"'),
    (lambda j: j["spec"].update(policies=["PodFailed"]), "spec.policies[0]: must be an object, got string",
     'spec.policies[0]: Invalid value: "string": spec.policies[0] in body must be of type object: "string"'),
    (lambda j: j["spec"].update(policies=[{"events": [1], "action": "AbortJob"}]),
     "spec.policies[0].events[0]: must be a string, got integer",
     'spec.policies[0].events[0]: Invalid value: "integer": spec.policies[0].events[0] in body must be of type string: "integer"'),
    (lambda j: j["spec"].update(policies=[{"events": "PodFailed", "action": "AbortJob"}]),
     "spec.policies[0].events: must be an array, got string",
     'spec.policies[0].events: Invalid value: "string": spec.policies[0].events in body must be of type array: "string"'),
    (lambda j: j["spec"].update(policies=[{"exitCode": "1", "action": "AbortJob"}]),
     "spec.policies[0].exitCode: must be an integer, got string",
     'spec.policies[0].exitCode: Invalid value: "string": spec.policies[0].exitCode in body must be of type integer: "string"'),
    (lambda j: j["spec"].update(policies=[{"event": "PodFailed", "action": "AbortJob", "timeout": "abc"}]),
     'spec.policies[0].timeout: invalid duration "abc"', None),
    (lambda j: j["spec"].update(policies=[{"event": "PodFailed", "action": "AbortJob", "timeout": [1]}]),
     "spec.policies[0].timeout: must be a string, got array",
     'spec.policies[0].timeout: Invalid value: "array": spec.policies[0].timeout in body must be of type string: "array"'),
    (lambda j: j["spec"]["tasks"][0].update(policies=[{"event": 3, "action": "AbortJob"}]),
     "spec.tasks[0].policies[0].event: must be a string, got integer",
     'spec.tasks[0].policies[0].event: Invalid value: "integer": spec.tasks[0].policies[0].event in body must be of type string: "integer"'),
    (lambda j: j["spec"].update(plugins=["svc"]), "spec.plugins: must be an object, got array",
     'spec.plugins: Invalid value: "array": spec.plugins in body must be of type object: "array"'),
    (lambda j: j["spec"].update(plugins={"svc": "--x"}), "spec.plugins.svc: must be an array, got string",
     'spec.plugins.svc: Invalid value: "string": spec.plugins.svc in body must be of type array: "string"'),
    (lambda j: j["spec"].update(plugins={"svc": [1]}), "spec.plugins.svc[0]: must be a string, got integer",
     'spec.plugins.svc[0]: Invalid value: "integer": spec.plugins.svc[0] in body must be of type string: "integer"'),
    (lambda j: j["spec"].update(minAvailable="1"), "spec.minAvailable: must be an integer, got string",
     'spec.minAvailable: Invalid value: "string": spec.minAvailable in body must be of type integer: "string"'),
    (lambda j: j["spec"].update(maxRetry=[3]), "spec.maxRetry: must be an integer, got array",
     'spec.maxRetry: Invalid value: "array": spec.maxRetry in body must be of type integer: "array"'),
    (lambda j: j["spec"].update(queue=5), "spec.queue: must be a string, got integer",
     'spec.queue: Invalid value: "integer": spec.queue in body must be of type string: "integer"'),
    (lambda j: j["spec"].update(ttlSecondsAfterFinished="10"),
     "spec.ttlSecondsAfterFinished: must be an integer, got string",
     'spec.ttlSecondsAfterFinished: Invalid value: "string": spec.ttlSecondsAfterFinished in body must be of type integer: "string"'),
    (lambda j: j["spec"].update(minSuccess=1.0), "spec.minSuccess: must be an integer, got number", None),
    (lambda j: j["spec"].update(volumes={"mountPath": "/x"}), "spec.volumes: must be an array, got object",
     'spec.volumes: Invalid value: "object": spec.volumes in body must be of type array: "object"'),
    (lambda j: j["spec"].update(volumes=[{"mountPath": 1}]), "spec.volumes[0].mountPath: must be a string",
     'spec.volumes[0].mountPath: Invalid value: "integer": spec.volumes[0].mountPath in body must be of type string: "integer"'),
    (lambda j: j["spec"].update(volumes=[{"mountPath": "/x", "volumeClaim": "x"}]),
     "spec.volumes[0].volumeClaim: must be an object, got string",
     'spec.volumes[0].volumeClaim: Invalid value: "string": spec.volumes[0].volumeClaim in body must be of type object: "string"'),
    (lambda j: j["spec"].update(networkTopology="hard"), "spec.networkTopology: must be an object, got string",
     'spec.networkTopology: Invalid value: "string": spec.networkTopology in body must be of type object: "string"'),
    (lambda j: j["spec"]["tasks"][0].update(dependsOn={"name": "a"}),
     "spec.tasks[0].dependsOn.name: must be an array, got string",
     'spec.tasks[0].dependsOn.name: Invalid value: "string": spec.tasks[0].dependsOn.name in body must be of type array: "string"'),
    (lambda j: j["spec"]["tasks"][0].update(partitionPolicy={"totalPartitions": "1"}),
     "spec.tasks[0].partitionPolicy.totalPartitions: must be an integer, got string",
     'spec.tasks[0].partitionPolicy.totalPartitions: Invalid value: "string": spec.tasks[0].partitionPolicy.totalPartitions in body must be of type integer: "string"'),
    (lambda j: j["metadata"].update(labels=["x"]), "metadata.labels: must be an object, got array", None),
    (lambda j: j["metadata"].update(annotations={"a": None, "b": 2}), "metadata.annotations.b: must be a string", None),
]


@pytest.mark.parametrize("mutate, message, schema_message", MALFORMED, ids=[m for _, m, _ in MALFORMED])
def test_check_job_shape_denies_wrong_types_naming_the_field(mutate, message, schema_message):
    """reference §3.1: the webhook checks the type of every field its rules read, so that no
    rule meets a value of the wrong type, whatever sends it the job."""
    j = job("bad")
    mutate(j)
    assert J.admit_job_schema(AdmissionRequest("CREATE", j, None, DEFAULT)).startswith(message)


@pytest.mark.parametrize("mutate, message, schema_message", MALFORMED, ids=[m for _, m, _ in MALFORMED])
def test_malformed_jobs_are_refused_naming_the_field(c, mutate, message, schema_message):
    """reference §3.1 CRD schema: a wrong type is refused naming the Job and the field, by
    the CRD schema (an InvalidObject in the API server's words, Volcano's
    config/crd/volcano/bases/batch.volcano.sh_jobs.yaml) where it types the field, else by
    the webhook (an AdmissionError); nothing is stored and nothing raises out of admission."""
    j = job("bad")
    mutate(j)
    if schema_message is None:
        assert str(denied(c, j)).startswith(message)
    else:
        with pytest.raises(volcanic.InvalidObject) as e:
            c.apply(j)
        assert str(e.value).startswith('Job.batch.volcano.sh "bad" is invalid: ')
        assert schema_message in str(e.value)
    assert c.list("Job") == []


def test_malformed_updates_are_refused_naming_the_field(c):
    """reference §3.1 CRD schema: the types are checked on UPDATE too."""
    stored = c.apply(job("j"))
    bad = copy.deepcopy(stored)
    bad["spec"]["tasks"][0]["replicas"] = "3"
    with pytest.raises(volcanic.InvalidObject, match=r'^Job.batch.volcano.sh "j" is invalid: '
                                                     r'spec.tasks\[0\].replicas: Invalid value: "string": '):
        c.api.update(bad)
    assert c.get("Job", "j")["spec"]["tasks"][0]["replicas"] == 1
    bad["spec"]["tasks"][0]["replicas"] = 1
    bad["spec"]["tasks"][0]["template"]["spec"]["containers"] = {}
    with pytest.raises(volcanic.AdmissionError, match=r"^spec.tasks\[0\].template.spec.containers: must be an array"):
        c.api.update(bad)


def test_check_job_shape_requires_a_name():
    """reference §3.1: the job has a metadata.name (the job name rule needs one)."""
    assert JS.check_job_shape({"kind": "Job", "spec": {}}) == "metadata.name: Required value"
    assert JS.check_job_shape("x") == "Job: must be an object, got string"


# --- CRD schema: values (Volcano's CRD, refused by the API server before admission) ----------

SUBDOMAIN = "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'"


def invalid(c, j) -> str:
    """Applies `j`, expecting the CRD schema to refuse it; the message without its
    'Job.batch.volcano.sh "<name>" is invalid: ' head. Nothing is stored."""
    with pytest.raises(volcanic.InvalidObject) as e:
        c.apply(j)
    head = f'Job.batch.volcano.sh "{j["metadata"]["name"]}" is invalid: '
    assert str(e.value).startswith(head)
    assert c.get("Job", j["metadata"]["name"]) is None
    return str(e.value)[len(head):]


@pytest.mark.parametrize("fields, message", [
    ({"queue": "Team_A"}, 'spec.queue: Invalid value: "Team_A": spec.queue in body should match ' + SUBDOMAIN),
    ({"queue": "a" * 254}, "spec.queue: Too long: may not be more than 253 bytes"),
    ({"priorityClassName": "High"},
     'spec.priorityClassName: Invalid value: "High": spec.priorityClassName in body should match ' + SUBDOMAIN),
    ({"schedulerName": "s" * 64}, "spec.schedulerName: Too long: may not be more than 63 bytes"),
    ({"minSuccess": 0}, "spec.minSuccess: Invalid value: 0: spec.minSuccess in body should be greater than or equal to 1"),
    ({"networkTopology": {"mode": "strict"}},
     'spec.networkTopology.mode: Unsupported value: "strict": supported values: "hard", "soft"'),
    ({"networkTopology": {"highestTierAllowed": -1}},
     "spec.networkTopology.highestTierAllowed: Invalid value: -1: spec.networkTopology.highestTierAllowed in body "
     "should be greater than or equal to 0"),
    ({"maxRetry": -1}, "spec.maxRetry: Invalid value: -1: spec.maxRetry in body should be greater than or equal to 0"),
    ({"ttlSecondsAfterFinished": -1}, "spec.ttlSecondsAfterFinished: Invalid value: -1: "
                                      "spec.ttlSecondsAfterFinished in body should be greater than or equal to 0"),
])
def test_crd_value_rules_refuse_the_job(c, fields, message):
    """Volcano v1.15.1's Job CRD (config/crd/volcano/bases/batch.volcano.sh_jobs.yaml):
    patterns, lengths, enums and minimums at the spec level; admission e2e "Should reject job
    creation with invalid maxRetry / TTLSecondsAfterFinished less than zero"."""
    assert invalid(c, job("bad", **fields)) == message


def test_crd_task_rules_refuse_the_job(c):
    """The CRD's task constraints: topologyPolicy's enum, partitionPolicy's required fields
    and minimums, networkTopology's; admission e2e "Should reject job creation with invalid
    task name (non-DNS1123)"."""
    assert invalid(c, job("bad", task(topologyPolicy="numa"))) == (
        'spec.tasks[0].topologyPolicy: Unsupported value: "numa": supported values: "none", "best-effort", '
        '"restricted", "single-numa-node"')
    assert invalid(c, job("bad", task("Task-1"))) == (
        'spec.tasks[0].name: Invalid value: "Task-1": spec.tasks[0].name in body should match '
        "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'")
    assert invalid(c, job("bad", task("t" * 64))) == "spec.tasks[0].name: Too long: may not be more than 63 bytes"
    assert invalid(c, job("bad", task("t", 2, partitionPolicy={"minPartitions": -1}))) == (
        "[spec.tasks[0].partitionPolicy.partitionSize: Required value, "
        "spec.tasks[0].partitionPolicy.totalPartitions: Required value, "
        "spec.tasks[0].partitionPolicy.minPartitions: Invalid value: -1: "
        "spec.tasks[0].partitionPolicy.minPartitions in body should be greater than or equal to 0]")
    t = task("t", 2, partitionPolicy={"totalPartitions": 1, "partitionSize": 2,
                                      "networkTopology": {"highestTierAllowed": -1}})
    assert invalid(c, job("bad", t)).startswith(
        "spec.tasks[0].partitionPolicy.networkTopology.highestTierAllowed: Invalid value: -1:")


def test_crd_defaults_fill_the_job(c):
    """The CRD's defaults (maxRetry 3, queue default, networkTopology.mode hard,
    partitionPolicy.minPartitions 0), applied by the API server before admission; null
    fields are dropped as the API server prunes them."""
    t = task("t", 2, partitionPolicy={"totalPartitions": 1, "partitionSize": 2})
    stored = c.apply(job("j", t, networkTopology={"highestTierName": "tier1"}, ttlSecondsAfterFinished=None))
    assert stored["spec"]["maxRetry"] == 3 and stored["spec"]["queue"] == "default"
    assert stored["spec"]["networkTopology"] == {"highestTierName": "tier1", "mode": "hard"}
    assert stored["spec"]["tasks"][0]["partitionPolicy"]["minPartitions"] == 0
    assert "ttlSecondsAfterFinished" not in stored["spec"]


def test_validate_depends_on_iteration():
    """volcanic's rule: dependsOn.iteration is any or all (Volcano's CRD leaves it a string)."""
    assert JS.validate_depends_on_iteration(job("j", task(dependsOn={"iteration": "any"}))) is None
    assert JS.validate_depends_on_iteration(job("j", task(dependsOn={"iteration": "some"}))).startswith(
        'spec.tasks[0].dependsOn.iteration: Unsupported value: "some"')
