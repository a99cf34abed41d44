"""Volcano's per-task Job rules of CREATE (reference §3.1, validateJobCreate's loop over
tasks): each takes (job, index, task) and returns None or Volcano's message. The order and
the early stops are volcanic.admission.jobs.validate_job_create's. The task name's pattern
and length, replicas >= 0 and minAvailable >= 0 are the CRD schema's (volcanic.kube.crds)."""

from __future__ import annotations

from typing import Any

from volcanic.admission.common import go_list, qualified_name_errors, quantity
from volcanic.admission.job_policies import validate_policies
from volcanic.admission.job_schema import as_int, is_int, job_name, task_name, tasks_of
from volcanic.admission.pod_template import pod_template_errors
from volcanic.kube.objects import Obj, as_map, spec_of


def _in_task(task: Obj, job: Obj) -> str:
    return f"in task: {task_name(task)}, job: {job_name(job)}"


def validate_task_min_available(job: Obj, index: int, task: Obj) -> str | None:
    """reference §3.1: task.minAvailable <= replicas (when minAvailable is set). Replicas and
    minAvailable >= 0 are the CRD schema's (volcanic.kube.crds), as in Volcano v1.15.1."""
    value = task.get("minAvailable")
    if not is_int(value):
        return None
    if value > as_int(task.get("replicas")):
        return f"'minAvailable' is greater than 'replicas' {_in_task(task, job)}"
    return None


def validate_task_partition_policy(job: Obj, index: int, task: Obj) -> str | None:
    """reference §3.1 partitionPolicy: replicas == totalPartitions*partitionSize; with
    minPartitions > 0 and minAvailable set, minAvailable == minPartitions*partitionSize.
    (totalPartitions and partitionSize are required and >= 1 by the CRD schema, as in
    Volcano v1.15.1, whose webhook also checks them, unreachably, after the schema.)"""
    partition = task.get("partitionPolicy")
    if not isinstance(partition, dict):
        return None
    total, size = as_int(partition.get("totalPartitions")), as_int(partition.get("partitionSize"))
    if as_int(task.get("replicas")) != total * size:
        return f"'Replicas' are not equal to TotalPartitions*PartitionSize {_in_task(task, job)}"
    min_partitions, min_available = as_int(partition.get("minPartitions")), task.get("minAvailable")
    if min_partitions > 0 and is_int(min_available) and min_available != min_partitions * size:
        return f"'MinAvailable' is not equal to MinPartitions*PartitionSize {_in_task(task, job)}"
    return None


def validate_task_name_unique(job: Obj, index: int, task: Obj) -> str | None:
    """reference §3.1: task names are unique ("duplicated task name")."""
    name = task_name(task)
    if any(task_name(t) == name for t in tasks_of(job)[:index]):
        return f"duplicated task name {name}"
    return None


def validate_task_policies(job: Obj, index: int, task: Obj) -> str | None:
    """reference §3.1: the task's lifecycle policies are valid (validate_policies)."""
    return validate_policies(task.get("policies"), f"spec.tasks[{index}].policies")


def validate_pod_name(job: Obj, index: int, task: Obj) -> str | None:
    """reference §3.1: the pod name "<job>-<task>-<task index>" is a qualified name (so at
    most 63 characters)."""
    pod = f"{job_name(job)}-{task_name(task)}-{index}"
    errs = qualified_name_errors(pod)
    if errs:
        return f"create pod with name {pod} validate failed {go_list(errs)}"
    return None


def validate_task_template(job: Obj, index: int, task: Obj) -> str | None:
    """reference §3.1: the pod template passes Kubernetes' ValidatePodTemplate (a subset, see
    pod_template_errors), reported as Volcano does: "spec.task[<i>]." then each error."""
    errs = pod_template_errors(task.get("template"))
    if errs:
        return f"spec.task[{index}]." + "".join(f"{e}. " for e in errs).rstrip()
    return None


def validate_task_topology_policy(job: Obj, index: int, task: Obj) -> str | None:
    """reference §3.1: with a topologyPolicy other than none, the pod is Guaranteed (as
    Volcano checks; requests taken from limits when a container has none) and every
    container's and init container's CPU request is a whole number of CPUs."""
    policy = task.get("topologyPolicy")
    if policy in (None, "", "none"):
        return None
    spec = spec_of(task.get("template"))
    all_containers = []
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            if isinstance(c, dict):
                all_containers.append(c)
    resources = []
    for c in all_containers:
        res = as_map(c.get("resources"))
        limits = as_map(res.get("limits"))
        requests = as_map(res.get("requests")) or limits
        resources.append((requests, limits))
    qos = pod_qos(resources)
    if qos != "Guaranteed":
        return f"spec.task[{index}] isn't Guaranteed pod, kind={qos}"
    for i, (requests, _) in enumerate(resources):
        cpu = quantity(requests.get("cpu", 0))
        if cpu is None or cpu == 0 or cpu.denominator != 1:
            return f"the cpu request isn't  an integer in spec.task[{index}] container[{i}]."
    return None


def pod_qos(resources: list[tuple[dict, dict]]) -> str:
    """Kubernetes' GetPodQOS over (requests, limits) of every container: BestEffort without
    cpu/memory requests and limits; Guaranteed when every container limits cpu and memory
    and the summed requests equal the summed limits; Burstable otherwise."""
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    guaranteed = True
    for reqs, lims in resources:
        for into, values in ((requests, reqs), (limits, lims)):
            for name in ("cpu", "memory"):
                q = quantity(values.get(name))
                if q is not None and q > 0:
                    into[name] = into.get(name, 0) + q
        if not all((quantity(lims.get(n)) or 0) > 0 for n in ("cpu", "memory")):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and requests == limits:
        return "Guaranteed"
    return "Burstable"
