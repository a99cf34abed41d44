"""Requests to the job controller and policy resolution (reference §2.1, §2.2)."""

from __future__ import annotations

from dataclasses import dataclass

from volcanic.cluster.store import Obj
from volcanic.controllers.duration import parse_duration

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


def apply_policies(job: Obj, req: Request) -> tuple[str, float | None]:
    """The action a request asks for, and the delay before it runs (None: at once).

    Task-level policies first, then job-level; the first match wins. A PodPending event
    only matches a policy with a timeout.
    """
    if req.action:
        return req.action, None
    if req.event in INTERNAL_EVENTS:
        return "SyncJob", None
    meta, status = job["metadata"], job.get("status") or {}
    if (req.job_uid and req.job_uid != meta.get("uid")) or req.job_version < status.get("version", 0):
        return "SyncJob", None
    policies: list[Obj] = []
    if req.task_name:
        task = next((t for t in job["spec"].get("tasks") or [] if t.get("name") == req.task_name), None)
        policies.extend((task or {}).get("policies") or [])
    policies.extend(job["spec"].get("policies") or [])
    for i, policy in enumerate(policies):
        if _matches(policy, req):
            timeout = policy.get("timeout")
            delay = parse_duration(timeout, f"policies[{i}].timeout") if timeout is not None else None
            return policy.get("action") or "SyncJob", delay
    return "SyncJob", None


def _matches(policy: Obj, req: Request) -> bool:
    """Events first (a PodPending event only for a policy with a timeout), then exitCode."""
    events = list(policy.get("events") or [])
    if policy.get("event"):
        events.append(policy["event"])
    if events and req.event and (req.event in events or "*" in events):
        if req.event != "PodPending" or policy.get("timeout") is not None:
            return True
    return policy.get("exitCode") is not None and req.exit_code is not None and policy["exitCode"] == req.exit_code
