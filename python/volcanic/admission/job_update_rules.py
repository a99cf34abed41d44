"""Volcano's Job rules of UPDATE (reference §3.1, validateJobUpdate): each returns None or
Volcano's message; volcanic.admission.jobs.validate_job_update runs them in Volcano's order.
Volcano's webhook also refuses negative replicas and minAvailable here; the CRD schema
(volcanic.kube.crds), which the API server checks first on every update, refuses them
before, so those checks are the schema's alone."""

from __future__ import annotations

import copy
from typing import Any

from volcanic.admission.job_schema import as_int, is_int, task_name, tasks_of
from volcanic.admission.job_task_rules import validate_task_partition_policy
from volcanic.kube.objects import Obj, spec_of

UPDATE_FIELDS_MESSAGE = ("job updates may not change fields other than `minAvailable`, "
                         "`tasks[*].replicas under spec` and `PriorityClassName`")


def validate_update_task_min_available(job: Obj) -> str | None:
    """reference §3.1 UPDATE: task.minAvailable <= replicas."""
    for task in tasks_of(job):
        value = task.get("minAvailable")
        if not is_int(value):
            continue
        if value > as_int(task.get("replicas")):
            return f"'minAvailable' must be <= 'replicas' in task: {task_name(task)}"
    return None


def validate_update_partition_policy(job: Obj) -> str | None:
    """reference §3.1 UPDATE: partitionPolicy is re-checked (validate_task_partition_policy)."""
    for i, task in enumerate(tasks_of(job)):
        message = validate_task_partition_policy(job, i, task)
        if message:
            return message
    return None


def validate_update_job_min_available(job: Obj) -> str | None:
    """reference §3.1 UPDATE: job.minAvailable <= the total replicas."""
    value = as_int(spec_of(job).get("minAvailable"))
    if value > sum(as_int(t.get("replicas")) for t in tasks_of(job)):
        return "job 'minAvailable' must not be greater than total replicas"
    return None


def validate_update_task_count(old: Obj, new: Obj) -> str | None:
    """reference §3.1 UPDATE: the number of tasks cannot change."""
    if len(tasks_of(old)) != len(tasks_of(new)):
        return "job updates may not add or remove tasks"
    return None


# Fields that are Go maps: an entry with an empty value is still an entry.
_MAP_FIELDS = frozenset({"plugins", "labels", "annotations", "nodeSelector", "requests", "limits"})


def _semantic(value: Any, is_map: bool = False) -> Any:
    """A spec as Go's typed comparison (apiequality.Semantic) sees it: a struct field that is
    null, "", [] or {} is unset; map entries are kept."""
    if isinstance(value, dict):
        out = {k: _semantic(v, k in _MAP_FIELDS) for k, v in value.items()}
        if is_map:
            return out
        return {k: v for k, v in out.items() if v not in (None, "", [], {})}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def _comparable_spec(job: Obj, allowed_from: Obj) -> Any:
    """job.spec with the fields an update may change taken from `allowed_from`, and
    volumeClaimName dropped where volumeClaim is set (the controller fills it in)."""
    spec = copy.deepcopy(spec_of(job))
    source = spec_of(allowed_from)
    for key in ("minAvailable", "priorityClassName"):
        spec.pop(key, None)
        if key in source:
            spec[key] = copy.deepcopy(source[key])
    tasks, source_tasks = spec.get("tasks"), source.get("tasks")
    if isinstance(tasks, list) and isinstance(source_tasks, list):
        for task, src in zip(tasks, source_tasks):
            if isinstance(task, dict) and isinstance(src, dict):
                for key in ("replicas", "minAvailable"):
                    task.pop(key, None)
                    if key in src:
                        task[key] = copy.deepcopy(src[key])
    volumes = spec.get("volumes")
    for v in volumes if isinstance(volumes, list) else []:
        if isinstance(v, dict) and v.get("volumeClaim") is not None:
            v.pop("volumeClaimName", None)
    return _semantic(spec)


def validate_update_immutable_fields(old: Obj, new: Obj) -> str | None:
    """reference §3.1 UPDATE: only minAvailable, tasks[*].replicas, tasks[*].minAvailable and
    priorityClassName may change (volumeClaimName is ignored where volumeClaim is set)."""
    if _comparable_spec(new, old) != _comparable_spec(old, old):
        return UPDATE_FIELDS_MESSAGE
    return None
