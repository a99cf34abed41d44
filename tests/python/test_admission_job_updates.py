"""Volcano's Job rules of UPDATE (reference §3.1 validateJobUpdate; python/volcanic/admission/
job_update_rules.py), unit and through volcanic.Cluster().apply. Builders in
admission_job_helpers.py."""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest

# c is a pytest fixture, taken by name.
from admission_job_helpers import NS, c, container, defaulted, job, task
import volcanic
from volcanic.admission import job_update_rules as JU
from volcanic.admission import jobs as J

# --- UPDATE ---------------------------------------------------------------------------------------------

def _update(old: dict, edit: Callable[[dict], Any]) -> dict:
    new = copy.deepcopy(old)
    edit(new)
    return new


OLD = defaulted(job("j", task("a", 2), task("b", 2),
                    volumes=[{"mountPath": "/d", "volumeClaim": {"resources": {}}}]))


# Negative replicas and minAvailable on UPDATE are the CRD schema's (test_crd_schema.py),
# which the API server checks before the webhook.


def test_validate_update_task_min_available():
    """reference §3.1 UPDATE: task.minAvailable <= replicas."""
    assert JU.validate_update_task_min_available(OLD) is None
    assert JU.validate_update_task_min_available(
        _update(OLD, lambda j: j["spec"]["tasks"][0].update(minAvailable=3))) == (
        "'minAvailable' must be <= 'replicas' in task: a")


def test_validate_update_partition_policy():
    """reference §3.1 UPDATE: partitionPolicy is re-checked."""
    old = defaulted(job("j", task("a", 4, partitionPolicy={"totalPartitions": 2, "partitionSize": 2})))
    assert JU.validate_update_partition_policy(old) is None
    assert JU.validate_update_partition_policy(_update(old, lambda j: j["spec"]["tasks"][0].update(replicas=6))) == (
        "'Replicas' are not equal to TotalPartitions*PartitionSize in task: a, job: j")


def test_validate_update_job_min_available():
    """reference §3.1 UPDATE: job.minAvailable <= total replicas."""
    assert JU.validate_update_job_min_available(OLD) is None
    assert JU.validate_update_job_min_available(_update(OLD, lambda j: j["spec"].update(minAvailable=5))) == (
        "job 'minAvailable' must not be greater than total replicas")


def test_validate_update_task_count():
    """reference §3.1 UPDATE: the number of tasks cannot change."""
    assert JU.validate_update_task_count(OLD, OLD) is None
    assert JU.validate_update_task_count(OLD, _update(OLD, lambda j: j["spec"]["tasks"].pop())) == (
        "job updates may not add or remove tasks")


@pytest.mark.parametrize("edit, allowed", [
    (lambda j: j["spec"].update(minAvailable=3), True),
    (lambda j: j["spec"]["tasks"][0].update(replicas=5, minAvailable=4), True),
    (lambda j: j["spec"].update(priorityClassName="high"), True),
    (lambda j: j["spec"]["volumes"][0].update(volumeClaimName="j-pvc-abc"), True),  # the controller names it
    (lambda j: j["spec"].update(policies=[]), True),  # empty and unset are the same to Go
    (lambda j: j["spec"].update(queue="other"), False),
    (lambda j: j["spec"].update(maxRetry=5), False),
    (lambda j: j["spec"]["tasks"][0].update(maxRetry=5), False),
    (lambda j: j["spec"]["tasks"][0].update(name="c"), False),
    (lambda j: container(j, 1).update(image="other"), False),
    (lambda j: j["spec"].update(plugins={"env": []}), False),
    (lambda j: j["spec"]["volumes"][0].update(mountPath="/e"), False),
])
def test_validate_update_immutable_fields(edit, allowed):
    """reference §3.1 UPDATE: only minAvailable, tasks[*].replicas, tasks[*].minAvailable and
    priorityClassName may change; volumeClaimName is ignored where volumeClaim is set."""
    got = JU.validate_update_immutable_fields(OLD, _update(OLD, edit))
    assert got == (None if allowed else JU.UPDATE_FIELDS_MESSAGE)
    assert JU.UPDATE_FIELDS_MESSAGE == ("job updates may not change fields other than `minAvailable`, "
                                       "`tasks[*].replicas under spec` and `PriorityClassName`")


def test_validate_job_update():
    """reference §3.1 UPDATE (validateJobUpdate): the value rules first, then the task count,
    then the fields that may not change; the first denial is the answer."""
    assert J.validate_job_update(OLD, copy.deepcopy(OLD)) is None
    new = _update(OLD, lambda j: (j["spec"]["tasks"].pop(), j["spec"].update(minAvailable=9)))
    assert J.validate_job_update(OLD, new) == "job 'minAvailable' must not be greater than total replicas"
    new = _update(OLD, lambda j: (j["spec"]["tasks"].pop(), j["spec"].update(queue="x", minAvailable=2)))
    assert J.validate_job_update(OLD, new) == "job updates may not add or remove tasks"
    new = _update(OLD, lambda j: j["spec"].update(networkTopology={"highestTierAllowed": 1, "highestTierName": "x"}))
    assert J.validate_job_update(OLD, new).startswith("must not specify 'highestTierAllowed' and 'highestTierName'")


def test_job_updates_through_the_cluster(c):
    """reference §3.1 UPDATE end to end: scaling a stored job is admitted; changing its image,
    its tasks or a minAvailable above the replicas is refused and the stored job stays. (The
    mutator runs on CREATE only, so an update that drops a defaulted field such as a task's
    maxRetry changes it, as with Volcano.)"""
    c.apply(job("j", task("a", 2)))
    scaled = copy.deepcopy(c.get("Job", "j"))
    scaled["spec"]["tasks"][0].update(replicas=3, minAvailable=3)
    scaled["spec"]["minAvailable"] = 3
    assert c.api.update(scaled)["spec"]["tasks"][0]["replicas"] == 3
    for edit, message in [
            (lambda j: container(j).update(image="other"), JU.UPDATE_FIELDS_MESSAGE),
            (lambda j: j["spec"]["tasks"][0].pop("maxRetry"), JU.UPDATE_FIELDS_MESSAGE),
            (lambda j: j["spec"]["tasks"].append(task("b")), "job updates may not add or remove tasks"),
            (lambda j: j["spec"].update(minAvailable=4), "job 'minAvailable' must not be greater than total replicas")]:
        before = c.get("Job", "j")
        changed = copy.deepcopy(before)
        edit(changed)
        with pytest.raises(volcanic.AdmissionError) as e:
            c.api.update(changed)
        assert str(e.value) == message and (e.value.kind, e.value.namespace, e.value.name) == ("Job", NS, "j")
        assert c.get("Job", "j") == before


def test_the_controllers_pvc_name_update_is_admitted(c):
    """reference §3.1 UPDATE: the job controller writes volumeClaimName for a volumeClaim; the
    update is admitted (no controller error)."""
    c.apply({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
             "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    c.apply(job("j", task("a", 1), volumes=[{"mountPath": "/data", "volumeClaim": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]))
    c.run(2)
    assert c.get("Job", "j")["spec"]["volumes"][0].get("volumeClaimName")
