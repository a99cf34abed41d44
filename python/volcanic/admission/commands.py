"""bus Command admission (reference §1.2 for the actions; a volcanic rule set, CREATE only).

Volcano installs no webhook for Commands: vcctl writes them and the job and queue controllers
consume whatever arrives, dropping what they cannot use. The embedded cluster checks them on
creation instead, so a mistyped command fails where it is written rather than as a Warning
Event later:
- the action is one the target's kind takes: AbortJob, RestartJob, RestartTask, RestartPod,
  RestartPartition, TerminateJob, CompleteJob, ResumeJob for a Job; OpenQueue, CloseQueue for
  a Queue (the controllers' internal actions SyncJob, EnqueueJob and SyncQueue are not
  commands);
- the target exists: a Job in the Command's namespace, or a (cluster-scoped) Queue.
The messages follow Kubernetes' field-error wording.
"""

from __future__ import annotations

from typing import Any

from volcanic.admission.chain import AdmissionRequest
from volcanic.admission.common import check_shape, not_supported, required
from volcanic.kube.objects import as_map, namespace_of

JOB_ACTIONS = ("AbortJob", "RestartJob", "RestartTask", "RestartPod", "RestartPartition",
               "TerminateJob", "CompleteJob", "ResumeJob")
QUEUE_ACTIONS = ("OpenQueue", "CloseQueue")
ACTIONS = {"Job": JOB_ACTIONS, "Queue": QUEUE_ACTIONS}

_SHAPE = {"action": "string", "target": {"apiVersion": "string", "kind": "string", "name": "string",
                                         "uid": "string"}}


def _creating(request: AdmissionRequest) -> bool:
    return request.operation == "CREATE" and isinstance(request.obj, dict)


def command_well_formed(request: AdmissionRequest) -> str | None:
    """§1.2: action is a string and target an object reference (kind, name) to a Job or a
    Queue; both are required (CREATE)."""
    if request.operation != "CREATE":
        return None
    if not isinstance(request.obj, dict):
        return "object: must be an object"
    cmd = request.obj
    message = check_shape(cmd, _SHAPE, "")
    if message:
        return message
    if not cmd.get("action"):
        return required("action")
    if cmd.get("target") is None:
        return required("target")
    target = cmd["target"]
    if not target.get("kind"):
        return required("target.kind")
    if target["kind"] not in ACTIONS:
        return not_supported("target.kind", target["kind"], ACTIONS)
    if not target.get("name"):
        return required("target.name")
    return None


def command_action_known(request: AdmissionRequest) -> str | None:
    """§1.2 actions: the action is one the target's kind takes (CREATE)."""
    if not _creating(request):
        return None
    kind, action = as_map(request.obj.get("target")).get("kind"), request.obj.get("action")
    known = ACTIONS.get(kind) if isinstance(kind, str) else None
    if known is None or not isinstance(action, str) or not action or action in known:
        return None
    return not_supported("action", action, known) + f" (for a {kind} target)"


def command_target_exists(request: AdmissionRequest) -> str | None:
    """The target exists: a Job in the Command's namespace, or a Queue (CREATE)."""
    if not _creating(request):
        return None
    target = as_map(request.obj.get("target"))
    kind, name = target.get("kind"), target.get("name")
    if kind not in ACTIONS or not isinstance(name, str) or not name:
        return None
    namespace = namespace_of(request.obj, "default") if kind == "Job" else None
    try:
        found = request.lister.get(kind, name, namespace) if namespace else request.lister.get(kind, name)
    except Exception:  # a lister that cannot answer is a missing target
        found = None
    if isinstance(found, dict):
        return None
    where = f' in namespace "{namespace}"' if namespace else ""
    return f'target: Not found: {kind} "{name}"{where}'


def mutators(conf: Any) -> list:
    return []


def validators(conf: Any) -> list:
    """Command checks (CREATE), in order."""
    return [command_well_formed, command_action_known, command_target_exists]
