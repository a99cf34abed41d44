"""The job state machine (reference §2.3, `pkg/controllers/job/state/*.go`): given the job's
phase and an action, which of KillJob, the targeted kill or SyncJob runs, and how it moves
the phase."""

from __future__ import annotations

from volcanic.controllers.job.build import task_min_available
from volcanic.controllers.job.sync import RETAIN_NONE, RETAIN_SOFT, JobActions, Sent, Target, UpdateFn
from volcanic.kube.objects import Obj, as_map, dig

TARGETED = ("RestartTask", "RestartPod", "RestartPartition")
FINISHING = {"AbortJob": "Aborting", "CompleteJob": "Completing", "TerminateJob": "Terminating"}
# Phases in which the SyncJob action is sync_job (elsewhere it is a KillJob).
SYNCING = ("Pending", "Running", "Restarting")
# Phases whose KillJob ends in a final phase once no pod is alive.
DRAINING = {"Aborting": "Aborted", "Completing": "Completed", "Terminating": "Terminated"}


def _set(phase: str, retry: bool = False) -> UpdateFn:
    def update(status: dict) -> bool:
        if retry:
            status["retryCount"] = status.get("retryCount", 0) + 1
        status.setdefault("state", {})["phase"] = phase
        return True
    return update


def _when_drained(phase: str) -> UpdateFn:
    def update(status: dict) -> bool:
        if status.get("terminating") or status.get("pending") or status.get("running"):
            return False
        status["state"]["phase"] = phase
        return True
    return update


def _total_replicas(job: Obj) -> int:
    return sum(t.get("replicas") or 0 for t in job["spec"].get("tasks") or [])


def _total_task_min_available(job: Obj) -> int:
    """TotalTaskMinAvailable. Volcano counts all replicas of a task without minAvailable;
    build.task_min_available also honours a partitionPolicy's minPartitions there, which is
    the default the job mutator writes, so the two agree on every admitted job."""
    return sum(task_min_available(t) for t in job["spec"].get("tasks") or [])


def pending_update(job: Obj) -> UpdateFn:
    def update(status: dict) -> bool:
        if job["spec"].get("minAvailable", 0) <= (status.get("running", 0) + status.get("succeeded", 0)
                                                  + status.get("failed", 0)):
            status["state"]["phase"] = "Running"
            return True
        return False
    return update


def running_update(job: Obj) -> UpdateFn:
    """The Running state's default branch, in Volcano's order."""
    spec = job["spec"]
    tasks = spec.get("tasks") or []
    total = _total_replicas(job)
    job_min = spec.get("minAvailable", 0)
    min_success = spec.get("minSuccess")

    def update(status: dict) -> bool:
        if total == 0:
            return False
        succeeded, failed = status.get("succeeded", 0), status.get("failed", 0)
        phase = None
        if min_success is not None and succeeded >= min_success:
            phase = "Completed"
        elif succeeded + failed == total:
            if job_min >= _total_task_min_available(job):
                task_counts = as_map(status.get("taskStatusCount"))
                short = any(t["name"] in task_counts and t.get("minAvailable") is not None and
                            as_map(task_counts[t["name"]].get("phase")).get("Succeeded", 0) < t["minAvailable"]
                            for t in tasks)
                phase = "Failed" if short else None
            if phase is None:
                if min_success is not None and succeeded < min_success:
                    phase = "Failed"
                elif succeeded >= job_min:
                    phase = "Completed"
                else:
                    phase = "Failed"
        elif status.get("pending", 0) > total - job_min:
            phase = "Pending"
        if phase is None or phase == status["state"].get("phase"):
            return False
        status["state"]["phase"] = phase
        return True
    return update


def restarting_update(job: Obj) -> UpdateFn:
    def update(status: dict) -> bool:
        if status.get("retryCount", 0) >= job["spec"].get("maxRetry", 3):
            status["state"]["phase"] = "Failed"
            return True
        if _total_replicas(job) - status.get("terminating", 0) >= status.get("minAvailable", 0):
            status["state"]["phase"] = "Pending"
            return True
        return False
    return update


def execute(actions: JobActions, job: Obj, action: str, target: Target) -> Sent:
    """Runs `action` on `job` from its current phase (an empty phase is Pending); returns
    what it sent and did not wait for (only SyncJob's sync_job sends any)."""
    phase = dig(job, "status", "state", "phase") or "Pending"
    if phase in ("Pending", "Running"):
        if action == "RestartJob":
            actions.kill_job(job, RETAIN_NONE, _set("Restarting", retry=True))
        elif action in TARGETED:
            actions.kill_target(job, target, _set("Restarting", retry=True))
        elif action in FINISHING:
            actions.kill_job(job, RETAIN_SOFT, _set(FINISHING[action]))
        else:
            return actions.sync_job(job, pending_update(job) if phase == "Pending" else running_update(job))
    elif phase == "Restarting":
        if action == "SyncJob":
            return actions.sync_job(job, restarting_update(job))
        elif action in TARGETED:
            actions.kill_target(job, target, restarting_update(job))
        else:
            actions.kill_job(job, RETAIN_NONE, restarting_update(job))
    elif phase in ("Aborting", "Aborted") and action == "ResumeJob":
        actions.kill_job(job, RETAIN_SOFT, _set("Restarting", retry=True))
    elif phase in DRAINING:
        actions.kill_job(job, RETAIN_SOFT, _when_drained(DRAINING[phase]))
    else:  # Aborted, Completed, Terminated, Failed: terminal
        actions.kill_job(job, RETAIN_SOFT, None)
    return None  # the kills wait for their writes
