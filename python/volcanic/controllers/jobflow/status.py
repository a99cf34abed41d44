"""A JobFlow's status as Volcano writes it, from the Jobs it created (getAllJobStatus and
getRunningHistories, pkg/controllers/jobflow/jobflow_controller_action.go), and how its phase
moves (pkg/controllers/jobflow/state/). Pure functions of their arguments.

    status = flow_status(jobflow, jobs, now)   # the phase kept: status["state"]
    phase = next_phase(jobflow, status)         # the phase after a sync; None: not synced

The lists name the Jobs by phase: pendingJobs, runningJobs, failedJobs, completedJobs and
terminatedJobs; Completing and Terminating Jobs are in none of them, and a Job in any other
phase (Aborted, Restarting, ... or none yet) is in unKnowJobs. jobStatusList keeps an entry
per Job ever seen, in the order first seen: its phase, its creation as startTimestamp, its
creation plus status.runningDuration as endTimestamp (once the job controller has written a
duration), status.retryCount as restartCount, and a history of the phases the controller saw
it in, each from the sync that first saw it (the clock's time) to the next. `conditions` maps
each Job to its phase, creation time, running duration and task counts.

Empty lists and maps are left out and a time not known yet is absent, as Go's omitempty and
the API server's pruning of nulls leave them; `state` is always there.

Phases (state/*.go): a JobFlow with no phase is Pending. A sync of a Pending one makes it
Running once a Job runs or completed and none failed, else Failed if one failed or was
terminated, else Pending; of a Running one, Succeed once as many Jobs completed as there are
flows, Failed once one failed (a terminated Job does not fail it there); a Succeed one keeps
its phase. Failed and Terminating JobFlows are not synced at all (Volcano never sets
Terminating).

Counted outcomes (state/metrics.go, called from state/running.go and state/pending.go): a sync
that makes a Running JobFlow Succeed counts a success, one that makes a Pending (or phase-less)
JobFlow Failed counts a failure; a Running JobFlow made Failed is not counted, as in Volcano.
"""

from __future__ import annotations

from typing import Callable

from volcanic.kube.clock import rfc3339, seconds_of
from volcanic.kube.duration import parse_duration
from volcanic.kube.objects import Obj, as_map, dig, meta_of, spec_of, status_of

# Job phase -> the status list that names Jobs in it.
LISTED = {"Pending": "pendingJobs", "Running": "runningJobs", "Failed": "failedJobs",
          "Completed": "completedJobs", "Terminated": "terminatedJobs"}
KNOWN = (*LISTED, "Completing", "Terminating")  # statusListJobMap's phases
PENDING, RUNNING, SUCCEED, TERMINATING, FAILED = "Pending", "Running", "Succeed", "Terminating", "Failed"
NOT_SYNCED = (TERMINATING, FAILED)  # their Execute does nothing


def job_phase(job: Obj) -> str:
    phase = dig(job, "status", "state", "phase")
    return phase if isinstance(phase, str) else ""


def _present(fields: dict) -> Obj:
    """The fields with a value (omitempty): None, "", 0, [] and {} left out."""
    return {k: v for k, v in fields.items() if v not in (None, "", 0, [], {})}


def end_time(job: Obj) -> str | None:
    """The Job's creation plus its running duration; None until a duration is written."""
    duration, created = status_of(job).get("runningDuration"), seconds_of(meta_of(job).get("creationTimestamp"))
    if duration is None or created is None:
        return None
    try:
        return rfc3339(created + parse_duration(duration, "status.runningDuration"))
    except ValueError:
        return None  # a duration Volcano's decoder would refuse: no end known


def running_histories(previous: list[Obj], job: Obj, now: float) -> list[Obj]:
    """getRunningHistories: the Job's history as the last status has it, closed and extended
    with a new entry when the Job's phase changed; a first entry when the status has none and
    the Job has a phase."""
    name, phase, stamp = meta_of(job).get("name"), job_phase(job), rfc3339(now)
    for entry in previous:
        histories = entry.get("runningHistories")
        if entry.get("name") != name or not histories:
            continue
        histories = [dict(h) for h in histories]
        if histories[-1].get("state", "") != phase:
            histories[-1]["endTimestamp"] = stamp
            histories.append(_present({"startTimestamp": stamp, "state": phase}))
        return histories
    return [{"startTimestamp": stamp, "state": phase}] if phase else []


def _job_status(previous: list[Obj], job: Obj, now: float) -> Obj:
    meta, status = meta_of(job), status_of(job)
    return _present({"name": meta.get("name"), "state": job_phase(job),
                     "startTimestamp": meta.get("creationTimestamp"), "endTimestamp": end_time(job),
                     "restartCount": status.get("retryCount"),
                     "runningHistories": running_histories(previous, job, now)})


def _condition(job: Obj) -> Obj:
    status = status_of(job)
    return _present({"phase": job_phase(job), "createTime": meta_of(job).get("creationTimestamp"),
                     "runningDuration": status.get("runningDuration"),
                     "taskStatusCount": status.get("taskStatusCount")})


def flow_status(jobflow: Obj, jobs: list[Obj], now: float) -> Obj:
    """getAllJobStatus: the status of `jobflow` from the Jobs it created, its phase kept."""
    lists: dict[str, list[str]] = {field: [] for field in (*LISTED.values(), "unKnowJobs")}
    for job in jobs:
        phase = job_phase(job)
        if phase in LISTED:
            lists[LISTED[phase]].append(meta_of(job)["name"])
        elif phase not in KNOWN:
            lists["unKnowJobs"].append(meta_of(job)["name"])
    old = status_of(jobflow)
    previous = [as_map(s) for s in old.get("jobStatusList") or ()]
    statuses = [dict(s) for s in previous]
    for job in jobs:
        entry = _job_status(previous, job, now)
        at = next((i for i, s in enumerate(statuses) if s.get("name") == entry["name"]), None)
        if at is None:
            statuses.append(entry)
        else:
            statuses[at] = entry
    status = _present({**lists, "jobStatusList": statuses,
                       "conditions": {meta_of(job)["name"]: _condition(job) for job in jobs}})
    status["state"] = dict(as_map(old.get("state")))
    return status


def _after_pending(status: Obj, flows: int, phase: str) -> str:
    if (status.get("runningJobs") or status.get("completedJobs")) and not status.get("failedJobs"):
        return RUNNING
    if status.get("failedJobs") or status.get("terminatedJobs"):
        return FAILED
    return PENDING


def _after_running(status: Obj, flows: int, phase: str) -> str:
    if len(status.get("completedJobs") or ()) == flows:
        return SUCCEED
    return FAILED if status.get("failedJobs") else phase


def _after_succeed(status: Obj, flows: int, phase: str) -> str:
    return phase


# The phases a sync runs from, and what it makes of the new status (state/*.go).
SYNCED: dict[str, Callable[[Obj, int, str], str]] = {
    "": _after_pending, PENDING: _after_pending, RUNNING: _after_running, SUCCEED: _after_succeed}


# The (phase synced from, phase it becomes) moves Volcano counts, in the counter of the latter.
COUNTED = frozenset({(RUNNING, SUCCEED), ("", FAILED), (PENDING, FAILED)})


def phase_of(jobflow: Obj) -> str:
    phase = dig(jobflow, "status", "state", "phase")
    return phase if isinstance(phase, str) else ""


def next_phase(jobflow: Obj, status: Obj) -> str:
    """The JobFlow's phase once `status` is written (its phase is one of SYNCED)."""
    phase = phase_of(jobflow)
    return SYNCED[phase](status, len(spec_of(jobflow).get("flows") or ()), phase)
