"""Volcano Job admission (reference §3.1, §3.2)."""

from __future__ import annotations

import copy
from typing import Any, Callable

from volcanic.cluster.admission import AdmissionRequest

Obj = dict[str, Any]
DISTRIBUTED_PLUGINS = ("tensorflow", "mpi", "pytorch", "ray")


def mutators(conf: Any) -> list[Callable[[AdmissionRequest], Obj]]:
    """Volcano's job defaults, applied on CREATE only (reference §3.2)."""

    def mutate(request: AdmissionRequest) -> Obj:
        if request.operation != "CREATE" or not isinstance(request.obj.get("spec"), dict):
            return request.obj
        return default_job(request.obj, conf.scheduler_names[0])

    return [mutate]


def validators(conf: Any) -> list[Callable[[AdmissionRequest], "str | None"]]:
    """Volcano's job validation (reference §3.1); filled in by the admission work."""
    return []


def default_job(job: Obj, scheduler_name: str = "volcano") -> Obj:
    """A copy of `job` with Volcano's defaults filled in (reference §3.2)."""
    job = copy.deepcopy(job)
    spec = job["spec"]
    spec["queue"] = spec.get("queue") or "default"
    spec["schedulerName"] = spec.get("schedulerName") or scheduler_name
    spec["maxRetry"] = spec.get("maxRetry") or 3
    tasks = spec.get("tasks") if isinstance(spec.get("tasks"), list) else []
    for i, task in enumerate(tasks):
        if not isinstance(task, dict):
            continue
        task["name"] = task.get("name") or f"default{i}"
        pod_spec = (task.get("template") or {}).get("spec")
        if isinstance(pod_spec, dict) and pod_spec.get("hostNetwork") and not pod_spec.get("dnsPolicy"):
            pod_spec["dnsPolicy"] = "ClusterFirstWithHostNet"
        if task.get("minAvailable") is None:
            partition = task.get("partitionPolicy") or {}
            if (partition.get("minPartitions") or 0) > 0:
                task["minAvailable"] = partition["minPartitions"] * (partition.get("partitionSize") or 0)
            else:
                task["minAvailable"] = task.get("replicas") or 0
        task["maxRetry"] = task.get("maxRetry") or 3
    if not spec.get("minAvailable"):
        spec["minAvailable"] = sum(t.get("minAvailable") or 0 for t in tasks if isinstance(t, dict))
    plugins = spec.get("plugins")
    if isinstance(plugins, dict):
        if any(p in plugins for p in DISTRIBUTED_PLUGINS):
            plugins.setdefault("svc", [])
        if "mpi" in plugins:
            plugins.setdefault("ssh", [])
    return job
