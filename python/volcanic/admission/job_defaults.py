"""Volcano's Job defaults (reference §3.2, jobs/mutate/mutate_job.go), applied by the job
mutator on CREATE."""

from __future__ import annotations

import copy
from typing import Any

from volcanic.admission.job_schema import is_int
from volcanic.kube.objects import Obj, as_map, spec_of

DISTRIBUTED_PLUGINS = ("tensorflow", "mpi", "pytorch", "ray")


def _unset(value: Any) -> bool:
    """Go's zero value for a string or int32 field: absent, null, "" or 0."""
    return value is None or value == "" or (is_int(value) and value == 0)


def default_job(job: Obj, scheduler_name: str = "volcano") -> Obj:
    """A copy of `job` with Volcano's defaults filled in (reference §3.2). A field of the
    wrong type is left as it is, for the validator to deny; this never raises."""
    job = copy.deepcopy(job)
    spec = job.get("spec")
    if not isinstance(spec, dict):
        return job
    if _unset(spec.get("queue")):
        spec["queue"] = "default"
    if _unset(spec.get("schedulerName")):
        spec["schedulerName"] = scheduler_name
    if _unset(spec.get("maxRetry")):
        spec["maxRetry"] = 3
    tasks = spec.get("tasks") if isinstance(spec.get("tasks"), list) else []
    for i, task in enumerate(tasks):
        if isinstance(task, dict):
            _default_task(task, i)
    if _unset(spec.get("minAvailable")):
        values = [t.get("minAvailable") for t in tasks if isinstance(t, dict)]
        if all(is_int(v) for v in values) and all(isinstance(t, dict) for t in tasks):
            spec["minAvailable"] = sum(values)
    plugins = spec.get("plugins")
    if isinstance(plugins, dict):
        if any(p in plugins for p in DISTRIBUTED_PLUGINS):
            plugins.setdefault("svc", [])
        if "mpi" in plugins:
            plugins.setdefault("ssh", [])
    return job


def _default_task(task: Obj, index: int) -> None:
    """A task's defaults: name, dnsPolicy with hostNetwork, minAvailable, maxRetry."""
    if _unset(task.get("name")):
        task["name"] = f"default{index}"
    pod_spec = spec_of(task.get("template"))
    if pod_spec.get("hostNetwork") is True and _unset(pod_spec.get("dnsPolicy")):
        pod_spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    if task.get("minAvailable") is None:
        partition = as_map(task.get("partitionPolicy"))
        replicas = task["replicas"] if task.get("replicas") is not None else 0
        min_partitions, size = partition.get("minPartitions"), partition.get("partitionSize")
        if is_int(min_partitions) and min_partitions > 0:
            if is_int(size) or size is None:
                task["minAvailable"] = min_partitions * (size or 0)
        elif is_int(replicas):
            task["minAvailable"] = replicas
    if _unset(task.get("maxRetry")):
        task["maxRetry"] = 3
