"""Requests to the job controller and policy resolution (reference §2.1, §2.2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from volcanic.controllers.job.plugins.common import tasks
from volcanic.kube.duration import parse_duration
from volcanic.kube.objects import Obj, status_of

# Events the controller makes for itself: they always mean SyncJob.
INTERNAL_EVENTS = ("OutOfSync", "CommandIssued", "PodRunning")


@dataclass(frozen=True)
class Request:
    """apis.Request: what happened to which job (and task, pod) and what to do about it."""

    namespace: str
    job_name: str
    job_uid: str = ""
    task_name: str = ""
    pod_name: str = ""
    pod_uid: str = ""
    partition_id: str = ""  # the pod's volcano.sh/partition-id label
    event: str = ""
    exit_code: int | None = None
    action: str = ""
    job_version: int = 0

    @property
    def job_key(self) -> str:
        return f"{self.namespace}/{self.job_name}"


def apply_policies(job: Obj, req: Request,
                   warn: Callable[[str], None] | None = None) -> tuple[str, float | None]:
    """The action a request asks for, and the delay before it runs (None: at once).

    Task-level policies first, then job-level; the first match wins. A PodPending event
    only matches a policy with a timeout. A timeout that is not a duration ("abc", "-5s")
    is treated as absent, so the action runs at once, and `warn` is told, with a message
    naming the job and the field (spec.policies[i].timeout or
    spec.tasks[j].policies[i].timeout): a bad policy must not lose the request.
    """
    if req.action:
        return req.action, None
    if req.event in INTERNAL_EVENTS:
        return "SyncJob", None
    meta, status = job["metadata"], status_of(job)
    if (req.job_uid and req.job_uid != meta.get("uid")) or req.job_version < status.get("version", 0):
        return "SyncJob", None
    policies: list[tuple[str, Obj]] = []  # (field path, policy)
    if req.task_name:
        for j, task in enumerate(tasks(job)):
            if task.get("name") == req.task_name:  # the first task of that name
                policies.extend((f"spec.tasks[{j}].policies[{i}]", p)
                                for i, p in enumerate(task.get("policies") or []))
                break
    policies.extend((f"spec.policies[{i}]", p) for i, p in enumerate(job["spec"].get("policies") or []))
    for where, policy in policies:
        if _matches(policy, req):
            action = policy.get("action") or "SyncJob"
            return action, _timeout(job, policy, f"{where}.timeout", action, warn)
    return "SyncJob", None


def _timeout(job: Obj, policy: Obj, where: str, action: str, warn: Callable[[str], None] | None) -> float | None:
    timeout = policy.get("timeout")
    if timeout is None:
        return None
    try:
        return parse_duration(timeout, where)
    except ValueError as e:
        if warn is not None:
            meta = job["metadata"]
            warn(f"job {meta.get('namespace')}/{meta['name']}: {e}; action {action} runs at once")
        return None


def _matches(policy: Obj, req: Request) -> bool:
    """Events first (a PodPending event only for a policy with a timeout), then exitCode."""
    events = list(policy.get("events") or [])
    if policy.get("event"):
        events.append(policy["event"])
    if events and req.event and (req.event in events or "*" in events):
        if req.event != "PodPending" or policy.get("timeout") is not None:
            return True
    return policy.get("exitCode") is not None and req.exit_code is not None and policy["exitCode"] == req.exit_code
