"""A Volcano Job's shape (reference §3.1, "CRD/VAP-level rules"): the types of every field the
controller and its plugins read, so that no job rule meets a value of the wrong type; and
the small readers the job rules share once the shape has passed. The CRD's value
constraints are the CRD schema's (volcanic.kube.crds), which the API server (and the
embedded cluster) checks before admission."""

from __future__ import annotations

from typing import Any

from volcanic.admission.common import (
    MapOf,
    check_shape,
    deny,
    expect,
    not_supported,
    required,
)
from volcanic.kube.duration import parse_duration
from volcanic.kube.objects import Obj, as_map, meta_of, spec_of

DEPENDS_ON_ITERATIONS = ("any", "all")


def is_int(value: Any) -> bool:
    """An integer that is not a bool (JSON's integers)."""
    return isinstance(value, int) and not isinstance(value, bool)


# --- Small readers (the schema check has run: values are of the right type or None) --------

def tasks_of(job: Obj) -> list[Obj]:
    tasks = spec_of(job).get("tasks")
    return [t for t in tasks if isinstance(t, dict)] if isinstance(tasks, list) else []


def job_name(job: Obj) -> str:
    name = meta_of(job).get("name")
    return name if isinstance(name, str) else ""


def as_int(value: Any, default: int = 0) -> int:
    return value if is_int(value) else default


def task_name(task: Obj) -> str:
    name = task.get("name")
    return name if isinstance(name, str) else ""


def plugins_of_job(job: Obj) -> dict[str, Any]:
    return as_map(spec_of(job).get("plugins"))


# --- CRD schema: types ----------------------------------------------------------------------

def _duration(value: Any, field: str) -> str | None:
    """A metav1.Duration: a Go duration string ("90s", "1h30m"; Go takes a sign, "-5s", and
    the controller runs a negative delay at once with a warning). volcanic's controller also
    reads a plain number of seconds."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return expect(value, "string", field)
    text = value.strip() if isinstance(value, str) else str(abs(value))
    if text[:1] in ("+", "-"):
        text = text[1:]
    try:
        parse_duration(text, field)
    except ValueError:
        shown = f'"{value}"' if isinstance(value, str) else repr(value)
        return deny(field, f'invalid duration {shown} (use e.g. "90s", "5m", "1h30m")')
    return None


# What the job controller and its plugins read of a pod template, and the resources.
_CONTAINER = {"name": "string", "image": "string", "command": ["string"], "args": ["string"],
              "env": [{"name": "string", "value": "string"}],
              "ports": [{"name": "string", "containerPort": "integer"}],
              "volumeMounts": [{"name": "string", "mountPath": "string"}],
              "resources": {"requests": MapOf("quantity"), "limits": MapOf("quantity")}}
_POD_TEMPLATE = {
    "metadata": {"labels": MapOf("string"), "annotations": MapOf("string")},
    "spec": {"containers": [_CONTAINER], "initContainers": [_CONTAINER], "restartPolicy": "string",
             "hostNetwork": "boolean", "dnsPolicy": "string", "schedulerName": "string",
             "priorityClassName": "string", "nodeSelector": MapOf("string"), "nodeName": "string",
             "hostname": "string", "subdomain": "string", "volumes": [{"name": "string"}],
             "tolerations": ["object"], "affinity": "object"},
}
_POLICY = {"action": "string", "event": "string", "events": ["string"], "exitCode": "integer",
           "timeout": _duration}
_NETWORK_TOPOLOGY = {"mode": "string", "highestTierAllowed": "integer", "highestTierName": "string"}
_TASK = {"name": "string", "replicas": "integer", "minAvailable": "integer", "maxRetry": "integer",
         "template": _POD_TEMPLATE, "policies": [_POLICY], "topologyPolicy": "string",
         "dependsOn": {"name": ["string"], "iteration": "string"},
         "partitionPolicy": {"totalPartitions": "integer", "partitionSize": "integer",
                             "minPartitions": "integer", "networkTopology": _NETWORK_TOPOLOGY}}
JOB_SCHEMA = {
    "metadata": {"name": "string", "namespace": "string", "labels": MapOf("string"),
                 "annotations": MapOf("string")},
    "spec": {"schedulerName": "string", "minAvailable": "integer", "queue": "string", "maxRetry": "integer",
             "ttlSecondsAfterFinished": "integer", "priorityClassName": "string", "minSuccess": "integer",
             "runningEstimate": _duration, "networkTopology": _NETWORK_TOPOLOGY,
             "volumes": [{"mountPath": "string", "volumeClaimName": "string", "volumeClaim": "object"}],
             "tasks": [_TASK], "policies": [_POLICY], "plugins": MapOf(["string"])},
}


def check_job_shape(job: Any) -> str | None:
    """reference §1.1 / §3.1 CRD schema: every field of a known type has that type
    (JOB_SCHEMA; a null counts as absent), e.g. "spec.tasks[0].replicas: must be an integer,
    got string". Fields volcanic does not read are not checked."""
    if not isinstance(job, dict):
        return expect(job, "object", "Job")
    message = check_shape(job, JOB_SCHEMA, "")
    if message:
        return message
    if not job_name(job):
        return required("metadata.name")
    return None


# --- Rules beside the CRD's value constraints ------------------------------------------------
# The CRD's value constraints (queue and priorityClassName patterns, schedulerName's length,
# minSuccess >= 1, networkTopology's mode and highestTierAllowed, topologyPolicy's enum,
# minPartitions >= 0, ...) are the CRD schema's (volcanic.kube.crds), checked by the API
# server before admission with its own messages; they are not repeated here.

def validate_depends_on_iteration(job: Obj) -> str | None:
    """volcanic's rule: a task's dependsOn.iteration is "any" or "all" (Volcano's CRD types it
    as a plain string; its controller reads anything but "any" as "all")."""
    for i, task in enumerate(tasks_of(job)):
        depends = task.get("dependsOn")
        iteration = depends.get("iteration") if isinstance(depends, dict) else None
        if iteration not in (None, "") and iteration not in DEPENDS_ON_ITERATIONS:
            return not_supported(f"spec.tasks[{i}].dependsOn.iteration", iteration, DEPENDS_ON_ITERATIONS)
    return None
