"""Jobs the API server would refuse today but that were stored anyway: held, and said so.

A Job gets past the CRD schema when it was stored before the CRDs were upgraded (an operator
moving from an older Volcano, or CRDs installed by Volcano's own chart), or when the schema
was relaxed while it was written. Acting on it goes wrong quietly: `replicas: -1` makes no
pod and a PodGroup the scheduler refuses, and the Job is Pending forever with nothing on it.
So before the job controller syncs a Job it checks it against the Job CRD's schema
(volcanic.kube.crds, the same validator the embedded store applies on writes), and a Job that
fails is held:

    message = spec_problem(job)        # None, or the API server's message, e.g.
                                       # 'Job.<its API group> "j" is invalid:
                                       # spec.tasks[0].replicas: Invalid value: -1:
                                       # spec.tasks[0].replicas in body should be greater
                                       # than or equal to 0'
    status = held_status(status, message, now)   # what the held Job's status says
    status = without_hold(status)                # what it says once the Job runs again

The message goes on the Job twice: a Warning Event with reason JobSpecError (Volcano has no
reason for this), and the status: `status.state.reason` JobSpecError and
`status.state.message`. Volcano's JobState has both fields (batch/v1alpha1 job.go) and never
sets them; its JobCondition has only a phase (`status`) and `lastTransitionTime` (Volcano's
CRD prunes anything else), so a new held Job gets the Pending phase and condition and the
message lives in the state.
"""

from __future__ import annotations

from volcanic.kube import crds
from volcanic.kube.errors import InvalidObject
from volcanic.kube.objects import Obj, as_map

SPEC_ERROR = "JobSpecError"  # reason of the Event and of status.state


def spec_problem(job: Obj) -> str | None:
    """The API server's message for the job's spec if its CRD schema refuses it, else None."""
    try:
        crds.validated(job)
    except InvalidObject as e:
        return str(e)
    return None


def held_status(status: Obj | None, message: str, now: str) -> Obj:
    """`status` (not changed) with state reason and message saying why the job is held; a job
    without a phase yet gets Pending and its condition, as the first sync would give it."""
    status = dict(as_map(status))
    state = dict(as_map(status.get("state")))
    if not state.get("phase"):
        state = {"phase": "Pending", "lastTransitionTime": now}
        conditions = [c for c in status.get("conditions") or [] if c.get("status") != "Pending"]
        status["conditions"] = conditions + [{"status": "Pending", "lastTransitionTime": now}]
    state["reason"], state["message"] = SPEC_ERROR, message
    status["state"] = state
    return status


def without_hold(status: Obj) -> None:
    """Drops the hold's reason and message from `status` (changed in place): the job runs
    again, or its phase moved on."""
    state = status.get("state")
    if isinstance(state, dict) and state.get("reason") == SPEC_ERROR:
        state.pop("reason", None)
        state.pop("message", None)
