"""A Volcano Job's CRD schema (reference §3.1, "CRD/VAP-level rules"): the types of every
field the controller and its plugins read, then the CRD's value constraints (patterns,
enums, minimums); and the small readers the job rules share once the schema has passed.
Messages are Kubernetes' CRD validation wording."""

from __future__ import annotations

from typing import Any

from volcanic.admission.common import (MapOf, check_shape, deny, dns1123_subdomain_errors, expect, invalid,
                                       not_supported, required)
from volcanic.kube.duration import parse_duration

Obj = dict[str, Any]

TOPOLOGY_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")   # CRD enum
NETWORK_TOPOLOGY_MODES = ("hard", "soft")                                       # CRD enum
DEPENDS_ON_ITERATIONS = ("any", "all")                                          # CRD enum
SCHEDULER_NAME_MAX = 63
DNS1123_SUBDOMAIN_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"


def is_int(value: Any) -> bool:
    """An integer that is not a bool (JSON's integers)."""
    return isinstance(value, int) and not isinstance(value, bool)


# --- Small readers (the schema check has run: values are of the right type or None) --------

def spec_of(job: Obj) -> Obj:
    spec = job.get("spec") if isinstance(job, dict) else None
    return spec if isinstance(spec, dict) else {}


def tasks_of(job: Obj) -> list[Obj]:
    tasks = spec_of(job).get("tasks")
    return [t for t in tasks if isinstance(t, dict)] if isinstance(tasks, list) else []


def job_name(job: Obj) -> str:
    meta = job.get("metadata") if isinstance(job, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""


def as_int(value: Any, default: int = 0) -> int:
    return value if is_int(value) else default


def task_name(task: Obj) -> str:
    name = task.get("name")
    return name if isinstance(name, str) else ""


def plugins_of_job(job: Obj) -> dict[str, Any]:
    plugins = spec_of(job).get("plugins")
    return plugins if isinstance(plugins, dict) else {}


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


# --- CRD schema: values ---------------------------------------------------------------------

def _crd_minimum(field: str, value: int, minimum: int) -> str:
    return invalid(field, value, f"{field} in body should be greater than or equal to {minimum}")


def _crd_pattern(field: str, value: str, pattern: str) -> str:
    return invalid(field, value, f"{field} in body should match '{pattern}'")


def validate_queue_name(job: Obj) -> str | None:
    """reference §1.1 / §3.1 CRD: spec.queue matches the DNS-1123 subdomain pattern and has at
    most 253 characters."""
    queue = spec_of(job).get("queue")
    if not isinstance(queue, str) or queue == "":
        return None
    if len(queue) > 253:
        return deny("spec.queue", "Too long: may not be longer than 253")
    if dns1123_subdomain_errors(queue):
        return _crd_pattern("spec.queue", queue, DNS1123_SUBDOMAIN_PATTERN)
    return None


def validate_priority_class_name(job: Obj) -> str | None:
    """reference §3.1 CRD: spec.priorityClassName matches the DNS-1123 subdomain pattern."""
    name = spec_of(job).get("priorityClassName")
    if not isinstance(name, str) or name == "":
        return None
    if dns1123_subdomain_errors(name):
        return _crd_pattern("spec.priorityClassName", name, DNS1123_SUBDOMAIN_PATTERN)
    return None


def validate_scheduler_name(job: Obj) -> str | None:
    """reference §1.1 CRD: spec.schedulerName has at most 63 characters."""
    name = spec_of(job).get("schedulerName")
    if isinstance(name, str) and len(name) > SCHEDULER_NAME_MAX:
        return deny("spec.schedulerName", f"Too long: may not be longer than {SCHEDULER_NAME_MAX}")
    return None


def validate_min_success(job: Obj) -> str | None:
    """reference §1.1 CRD: spec.minSuccess, when set, is >= 1."""
    value = spec_of(job).get("minSuccess")
    if is_int(value) and value < 1:
        return _crd_minimum("spec.minSuccess", value, 1)
    return None


def _network_topology_field_error(topology: Any, field: str) -> str | None:
    if not isinstance(topology, dict):
        return None
    mode = topology.get("mode")
    if mode not in (None, "") and mode not in NETWORK_TOPOLOGY_MODES:
        return not_supported(f"{field}.mode", mode, NETWORK_TOPOLOGY_MODES)
    tier = topology.get("highestTierAllowed")
    if is_int(tier) and tier < 0:
        return _crd_minimum(f"{field}.highestTierAllowed", tier, 0)
    return None


def validate_network_topology_fields(job: Obj) -> str | None:
    """reference §1.1 CRD: networkTopology.mode is hard or soft and highestTierAllowed >= 0,
    for the job and for every task's partitionPolicy."""
    message = _network_topology_field_error(spec_of(job).get("networkTopology"), "spec.networkTopology")
    if message:
        return message
    for i, task in enumerate(tasks_of(job)):
        partition = task.get("partitionPolicy")
        if isinstance(partition, dict):
            message = _network_topology_field_error(partition.get("networkTopology"),
                                                    f"spec.tasks[{i}].partitionPolicy.networkTopology")
            if message:
                return message
    return None


def validate_task_crd_fields(job: Obj) -> str | None:
    """reference §1.1 CRD: per task, topologyPolicy is one of none, best-effort, restricted,
    single-numa-node; dependsOn.iteration is any or all; partitionPolicy.minPartitions >= 0."""
    for i, task in enumerate(tasks_of(job)):
        policy = task.get("topologyPolicy")
        if policy not in (None, "") and policy not in TOPOLOGY_POLICIES:
            return not_supported(f"spec.tasks[{i}].topologyPolicy", policy, TOPOLOGY_POLICIES)
        depends = task.get("dependsOn")
        iteration = depends.get("iteration") if isinstance(depends, dict) else None
        if iteration not in (None, "") and iteration not in DEPENDS_ON_ITERATIONS:
            return not_supported(f"spec.tasks[{i}].dependsOn.iteration", iteration, DEPENDS_ON_ITERATIONS)
        partition = task.get("partitionPolicy")
        min_partitions = partition.get("minPartitions") if isinstance(partition, dict) else None
        if is_int(min_partitions) and min_partitions < 0:
            return _crd_minimum(f"spec.tasks[{i}].partitionPolicy.minPartitions", min_partitions, 0)
    return None
