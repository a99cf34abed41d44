"""Objects stored past what today's CRDs refuse are reported on the object (issue 33,
"Faults on a real API server" 4: a Job with `replicas: -1` written past admission was one
error line in the scheduler's log, and the Job Pending forever).

How such objects get stored on a real cluster: Volcano's Job and PodGroup CRDs had no
`minimum`s before v1.14 (config/crd/volcano/bases/batch.volcano.sh_jobs.yaml and
scheduling.volcano.sh_podgroups.yaml at v1.13.0), and `helm upgrade` leaves CRDs as they were
installed, so a cluster upgraded from Volcano v1.13 keeps them, while v1.15's webhook leaves
replicas >= 0 to the CRD (pkg/webhooks/admission/jobs/validate/admit_job.go). The test puts the
dev cluster's Job and PodGroup CRDs back to that (today's schemas without their minimums),
writes the objects, and restores the CRDs; the objects stay stored.
"""

from __future__ import annotations

from contextlib import contextmanager
import json
import re
from typing import Any, Iterator

import pytest

from test_volcano_jobs import on_kwok, phase, pods_of
from volcanic.kube.errors import InvalidObject

OLD_CRDS = ("jobs.batch.volcano.sh", "podgroups.scheduling.volcano.sh")


def without_minimums(schema: Any) -> Any:
    """The schema with every `minimum` dropped: Volcano v1.13's constraints on these fields."""
    if isinstance(schema, dict):
        return {k: without_minimums(v) for k, v in schema.items() if k != "minimum"}
    if isinstance(schema, list):
        return [without_minimums(v) for v in schema]
    return schema


def _set_schema(env, crd: str, schema: dict) -> None:
    patch = [{"op": "replace", "path": "/spec/versions/0/schema/openAPIV3Schema", "value": schema}]
    env.kubectl("patch", "crd", crd, "--type=json", "-p", json.dumps(patch))


@contextmanager
def crds_of_volcano_1_13(env) -> Iterator[None]:
    """The Job and PodGroup CRDs without minimums while inside; today's again afterwards."""
    saved = {crd: json.loads(env.kubectl("get", "crd", crd, "-o", "json").stdout)["spec"]["versions"][0]["schema"]
             ["openAPIV3Schema"] for crd in OLD_CRDS}
    try:
        for crd, schema in saved.items():
            _set_schema(env, crd, without_minimums(schema))
        yield
    finally:
        for crd, schema in saved.items():
            _set_schema(env, crd, schema)


def created_once_accepted(env, obj: dict) -> dict:
    """Creates `obj`, again while the API server still checks the CRD it had (it takes a CRD
    change in a moment)."""
    def create():
        try:
            return env.store.create(obj)
        except InvalidObject:
            return None
    stored = env.wait(create, timeout=30)
    assert stored, f"{obj['kind']} {obj['metadata']['name']} still refused"
    return stored


def bad_job(namespace: str) -> dict:
    """Task b with replicas -1: v1.15's webhook admits it (its mutator copies minAvailable -1
    from the replicas; job minAvailable 1 is within the 2 + -1 replicas), the CRD refuses it."""
    def task(name: str, replicas: int) -> dict:
        return {"name": name, "replicas": replicas, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox",
                                                      "resources": {"requests": {"cpu": "100m"}}}]}}}
    return on_kwok({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                    "metadata": {"name": "held", "namespace": namespace},
                    "spec": {"schedulerName": "volcano", "queue": "default", "minAvailable": 1,
                             "tasks": [task("a", 2), task("b", -1)]}}, duration=None)


def warnings_on(env, namespace: str, kind: str, name: str) -> list[dict]:
    return [e for e in env.store.list("Event", namespace) if e.get("type") == "Warning"
            and e["involvedObject"].get("kind") == kind and e["involvedObject"].get("name") == name]


def field_errors(message: str) -> tuple[str, set[str]]:
    """An API server Invalid message as its head and its set of field errors (the API server
    lists several in no fixed order)."""
    head, _, errors = message.partition(" is invalid: ")
    errors = errors[1:-1] if errors.startswith("[") else errors
    return head, set(re.split(r", (?=spec\.)", errors))


def test_a_job_and_a_podgroup_stored_past_todays_crds_are_reported_on_them(env, up, namespace):
    job = bad_job(namespace)
    with pytest.raises(InvalidObject) as refused:  # today's CRD: the API server's own words
        env.store.create(job)
    pg = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
          "metadata": {"name": "negative", "namespace": namespace}, "spec": {"minMember": -1, "queue": "default"}}
    with crds_of_volcano_1_13(env):
        created_once_accepted(env, job)
        created_once_accepted(env, pg)

    # The job controller holds the job and says why, in the API server's words.
    def spec_errors() -> list[dict]:
        return [e for e in warnings_on(env, namespace, "Job", "held") if e["reason"] == "JobSpecError"]
    assert env.wait(spec_errors, timeout=30)
    [warning] = spec_errors()
    assert field_errors(warning["message"]) == field_errors(str(refused.value))
    state = env.store.get("Job", "held", namespace)["status"]["state"]
    assert (state["phase"], state["reason"], state["message"]) == ("Pending", "JobSpecError", warning["message"])
    assert pods_of(env, "held", namespace) == []
    assert [g["metadata"]["name"] for g in env.store.list("PodGroup", namespace)] == ["negative"]

    # The scheduler puts the engine's refusal on the PodGroup.
    assert env.wait(lambda: warnings_on(env, namespace, "PodGroup", "negative"), timeout=30)
    [pg_warning] = warnings_on(env, namespace, "PodGroup", "negative")
    assert (pg_warning["reason"], pg_warning["message"]) == (
        "InvalidObject", f"PodGroup {namespace}/negative: spec.minMember: must be >= 0")

    # Fixed (today's CRD and webhook pass the update), the job runs.
    env.kubectl("patch", "job.batch.volcano.sh", "held", "-n", namespace, "--type=json", "-p", json.dumps(
        [{"op": "replace", "path": "/spec/tasks/1/replicas", "value": 1},
         {"op": "replace", "path": "/spec/tasks/1/minAvailable", "value": 1}]))
    assert env.wait(lambda: phase(env, "held", namespace) == "Running", timeout=60)
    assert len(pods_of(env, "held", namespace)) == 3
    state = env.store.get("Job", "held", namespace)["status"]["state"]
    assert "reason" not in state and "message" not in state
    assert spec_errors() == [warning]
