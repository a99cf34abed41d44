"""Volcano's Job CRD schema (reference §3.1, "CRD/VAP-level rules"): the types of every field
and the CRD's value constraints (python/volcanic/admission/job_schema.py), unit and through
volcanic.Cluster().apply. Builders in admission_job_helpers.py."""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest
from volcanic.admission import job_schema as JS
from volcanic.admission import jobs as J
from volcanic.admission.chain import AdmissionRequest

import volcanic

# c is a pytest fixture, taken by name.
from admission_job_helpers import DEFAULT, c, container, denied, job, task


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


MALFORMED: list[tuple[Callable[[dict], Any], str]] = [
    (lambda j: j.update(spec="x"), "spec: must be an object, got string"),
    (lambda j: j["spec"].update(tasks="abc"), "spec.tasks: must be an array, got string"),
    (lambda j: j["spec"].update(tasks={"a": 1}), "spec.tasks: must be an array, got object"),
    (lambda j: j["spec"]["tasks"].append("x"), "spec.tasks[1]: must be an object, got string"),
    (lambda j: j["spec"]["tasks"].append(None), "spec.tasks[1]: must not be null"),
    (lambda j: j["spec"]["tasks"][0].update(replicas="2"), "spec.tasks[0].replicas: must be an integer, got string"),
    (lambda j: j["spec"]["tasks"][0].update(replicas=1.5), "spec.tasks[0].replicas: must be an integer, got number"),
    (lambda j: j["spec"]["tasks"][0].update(replicas=True), "spec.tasks[0].replicas: must be an integer, got boolean"),
    (lambda j: j["spec"]["tasks"][0].update(minAvailable="1"),
     "spec.tasks[0].minAvailable: must be an integer, got string"),
    (lambda j: j["spec"]["tasks"][0].update(name=["a"]), "spec.tasks[0].name: must be a string, got array"),
    (lambda j: j["spec"]["tasks"][0].update(template=[]), "spec.tasks[0].template: must be an object, got array"),
    (lambda j: j["spec"]["tasks"][0]["template"].update(spec="x"),
     "spec.tasks[0].template.spec: must be an object, got string"),
    (lambda j: j["spec"]["tasks"][0]["template"]["spec"].update(containers={}),
     "spec.tasks[0].template.spec.containers: must be an array, got object"),
    (lambda j: container(j).update(image=5), "spec.tasks[0].template.spec.containers[0].image: must be a string"),
    (lambda j: container(j).update(ports="80"),
     "spec.tasks[0].template.spec.containers[0].ports: must be an array, got string"),
    (lambda j: container(j).update(env=[{"name": "A", "value": 1}]),
     "spec.tasks[0].template.spec.containers[0].env[0].value: must be a string, got integer"),
    (lambda j: container(j)["resources"]["requests"].update(cpu="lots"),
     "spec.tasks[0].template.spec.containers[0].resources.requests.cpu: quantities must match"),
    (lambda j: container(j)["resources"].update(limits=["1"]),
     "spec.tasks[0].template.spec.containers[0].resources.limits: must be an object, got array"),
    (lambda j: j["spec"]["tasks"][0]["template"].update(metadata={"annotations": {"x": 1}}),
     "spec.tasks[0].template.metadata.annotations.x: must be a string, got integer"),
    (lambda j: j["spec"]["tasks"][0]["template"]["spec"].update(hostNetwork="yes"),
     "spec.tasks[0].template.spec.hostNetwork: must be a boolean, got string"),
    (lambda j: j["spec"].update(policies={"event": "PodFailed"}), "spec.policies: must be an array, got object"),
    (lambda j: j["spec"].update(policies=["PodFailed"]), "spec.policies[0]: must be an object, got string"),
    (lambda j: j["spec"].update(policies=[{"events": [1], "action": "AbortJob"}]),
     "spec.policies[0].events[0]: must be a string, got integer"),
    (lambda j: j["spec"].update(policies=[{"events": "PodFailed", "action": "AbortJob"}]),
     "spec.policies[0].events: must be an array, got string"),
    (lambda j: j["spec"].update(policies=[{"exitCode": "1", "action": "AbortJob"}]),
     "spec.policies[0].exitCode: must be an integer, got string"),
    (lambda j: j["spec"].update(policies=[{"event": "PodFailed", "action": "AbortJob", "timeout": "abc"}]),
     'spec.policies[0].timeout: invalid duration "abc"'),
    (lambda j: j["spec"].update(policies=[{"event": "PodFailed", "action": "AbortJob", "timeout": [1]}]),
     "spec.policies[0].timeout: must be a string, got array"),
    (lambda j: j["spec"]["tasks"][0].update(policies=[{"event": 3, "action": "AbortJob"}]),
     "spec.tasks[0].policies[0].event: must be a string, got integer"),
    (lambda j: j["spec"].update(plugins=["svc"]), "spec.plugins: must be an object, got array"),
    (lambda j: j["spec"].update(plugins={"svc": "--x"}), "spec.plugins.svc: must be an array, got string"),
    (lambda j: j["spec"].update(plugins={"svc": [1]}), "spec.plugins.svc[0]: must be a string, got integer"),
    (lambda j: j["spec"].update(minAvailable="1"), "spec.minAvailable: must be an integer, got string"),
    (lambda j: j["spec"].update(maxRetry=[3]), "spec.maxRetry: must be an integer, got array"),
    (lambda j: j["spec"].update(queue=5), "spec.queue: must be a string, got integer"),
    (lambda j: j["spec"].update(ttlSecondsAfterFinished="10"),
     "spec.ttlSecondsAfterFinished: must be an integer, got string"),
    (lambda j: j["spec"].update(minSuccess=1.0), "spec.minSuccess: must be an integer, got number"),
    (lambda j: j["spec"].update(volumes={"mountPath": "/x"}), "spec.volumes: must be an array, got object"),
    (lambda j: j["spec"].update(volumes=[{"mountPath": 1}]), "spec.volumes[0].mountPath: must be a string"),
    (lambda j: j["spec"].update(volumes=[{"mountPath": "/x", "volumeClaim": "x"}]),
     "spec.volumes[0].volumeClaim: must be an object, got string"),
    (lambda j: j["spec"].update(networkTopology="hard"), "spec.networkTopology: must be an object, got string"),
    (lambda j: j["spec"]["tasks"][0].update(dependsOn={"name": "a"}),
     "spec.tasks[0].dependsOn.name: must be an array, got string"),
    (lambda j: j["spec"]["tasks"][0].update(partitionPolicy={"totalPartitions": "1"}),
     "spec.tasks[0].partitionPolicy.totalPartitions: must be an integer, got string"),
    (lambda j: j["metadata"].update(labels=["x"]), "metadata.labels: must be an object, got array"),
    (lambda j: j["metadata"].update(annotations={"a": None, "b": 2}), "metadata.annotations.b: must be a string"),
]


@pytest.mark.parametrize("mutate, message", MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_jobs_are_denied_naming_the_field(c, mutate, message):
    """reference §3.1 CRD schema: a wrong type anywhere is an AdmissionError naming the Job and
    the field; nothing is stored and nothing raises out of admission."""
    j = job("bad")
    mutate(j)
    e = denied(c, j)
    assert str(e).startswith(message)
    assert c.list("Job") == []


def test_malformed_updates_are_denied_naming_the_field(c):
    """reference §3.1 CRD schema: the types are checked on UPDATE too."""
    stored = c.apply(job("j"))
    bad = copy.deepcopy(stored)
    bad["spec"]["tasks"][0]["replicas"] = "3"
    with pytest.raises(volcanic.AdmissionError, match=r"^spec.tasks\[0\].replicas: must be an integer"):
        c.api.update(bad)
    assert c.get("Job", "j")["spec"]["tasks"][0]["replicas"] == 1


def test_check_job_shape_requires_a_name():
    """reference §3.1: the job has a metadata.name (the job name rule needs one)."""
    assert JS.check_job_shape({"kind": "Job", "spec": {}}) == "metadata.name: Required value"
    assert JS.check_job_shape("x") == "Job: must be an object, got string"


# --- CRD schema: values ---------------------------------------------------------------------------

def test_validate_queue_name():
    """reference §3.1 CRD: queue matches the DNS-1123 subdomain pattern (maxLength 253)."""
    assert JS.validate_queue_name(job(queue="team-a.prod")) is None
    assert JS.validate_queue_name(job(queue="Team_A")) == (
        'spec.queue: Invalid value: "Team_A": spec.queue in body should match '
        "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'")
    assert JS.validate_queue_name(job(queue="a" * 254)) == "spec.queue: Too long: may not be longer than 253"


def test_validate_priority_class_name():
    """reference §3.1 CRD: priorityClassName matches the DNS-1123 subdomain pattern."""
    assert JS.validate_priority_class_name(job(priorityClassName="high")) is None
    assert JS.validate_priority_class_name(job(priorityClassName="High")).startswith(
        'spec.priorityClassName: Invalid value: "High": spec.priorityClassName in body should match')


def test_validate_scheduler_name():
    """reference §1.1 CRD: schedulerName maxLength 63."""
    assert JS.validate_scheduler_name(job(schedulerName="s" * 63)) is None
    assert JS.validate_scheduler_name(job(schedulerName="s" * 64)) == (
        "spec.schedulerName: Too long: may not be longer than 63")


def test_validate_min_success():
    """reference §1.1 CRD: minSuccess >= 1 when set."""
    assert JS.validate_min_success(job(minSuccess=1)) is None and JS.validate_min_success(job()) is None
    assert JS.validate_min_success(job(minSuccess=0)) == (
        "spec.minSuccess: Invalid value: 0: spec.minSuccess in body should be greater than or equal to 1")


def test_validate_network_topology_fields():
    """reference §1.1 CRD: networkTopology.mode is hard|soft, highestTierAllowed >= 0 (job and
    partitionPolicy)."""
    assert JS.validate_network_topology_fields(job(networkTopology={"mode": "soft", "highestTierAllowed": 0})) is None
    assert JS.validate_network_topology_fields(job(networkTopology={"mode": "strict"})) == (
        'spec.networkTopology.mode: Unsupported value: "strict": supported values: "hard", "soft"')
    t = task("t", 2, partitionPolicy={"totalPartitions": 1, "partitionSize": 2,
                                      "networkTopology": {"highestTierAllowed": -1}})
    assert JS.validate_network_topology_fields(job("j", t)).startswith(
        "spec.tasks[0].partitionPolicy.networkTopology.highestTierAllowed: Invalid value: -1:")


def test_validate_task_crd_fields():
    """reference §1.1 CRD: topologyPolicy, dependsOn.iteration enums; minPartitions >= 0."""
    assert JS.validate_task_crd_fields(job("j", task(topologyPolicy="single-numa-node",
                                                    dependsOn={"iteration": "any"}))) is None
    assert JS.validate_task_crd_fields(job("j", task(topologyPolicy="numa"))) == (
        'spec.tasks[0].topologyPolicy: Unsupported value: "numa": supported values: "none", "best-effort", '
        '"restricted", "single-numa-node"')
    assert JS.validate_task_crd_fields(job("j", task(dependsOn={"iteration": "some"}))).startswith(
        'spec.tasks[0].dependsOn.iteration: Unsupported value: "some"')
    assert JS.validate_task_crd_fields(job("j", task(partitionPolicy={"minPartitions": -1}))).startswith(
        "spec.tasks[0].partitionPolicy.minPartitions: Invalid value: -1:")


def test_crd_value_rules_run_in_the_schema_validator(c):
    """reference §3.1: the CRD's value rules deny through admission on CREATE."""
    e = denied(c, job("bad", queue="Bad"))
    assert str(e).startswith('spec.queue: Invalid value: "Bad"')
