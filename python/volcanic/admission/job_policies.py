"""Lifecycle policy rules of a Volcano Job (reference §3.1, "Policies rules"; Volcano's
validatePolicies and the VAP's event and action lists)."""

from __future__ import annotations

from typing import Any, Iterable

from volcanic.admission.common import go_list, invalid
from volcanic.kube.objects import Obj

# Policy events and actions a user may write (util.go policyEventMap / policyActionMap, the
# VAP's validEvents, and RestartPod / RestartPartition of reference §3.1).
POLICY_EVENTS = ("*", "PodFailed", "PodEvicted", "PodPending", "Unknown", "TaskCompleted", "TaskFailed",
                 "JobUpdated")
POLICY_ACTIONS = ("AbortJob", "RestartJob", "RestartTask", "RestartPod", "RestartPartition", "TerminateJob",
                  "CompleteJob", "ResumeJob")


# --- Lifecycle policies ("Policies rules" of reference §3.1) ------------------------------

def _events_of(policy: Obj) -> list[str]:
    """The policy's events (events then event), without repeats."""
    out: list[str] = []
    for e in list(policy.get("events") or []) + ([policy["event"]] if policy.get("event") else []):
        if e not in out:
            out.append(e)
    return out


def policy_event_and_exit_code_exclusive(policy: Obj) -> str | None:
    """reference §3.1 policies: event (or events) and exitCode are not both set."""
    if _events_of(policy) and policy.get("exitCode") is not None:
        return "must not specify event and exitCode simultaneously"
    return None


def policy_has_event_or_exit_code(policy: Obj) -> str | None:
    """reference §3.1 policies: one of event, events, exitCode is set."""
    if not _events_of(policy) and policy.get("exitCode") is None:
        return "either event and exitCode should be specified"
    return None


def policy_event_allowed(event: Any, field: str) -> str | None:
    """reference §3.1 policies: the event is one users may write (POLICY_EVENTS; OutOfSync,
    CommandIssued and PodRunning are not)."""
    if event not in POLICY_EVENTS:
        return invalid(field, event, "invalid policy event")
    return None


def policy_action_allowed(action: Any, field: str) -> str | None:
    """reference §3.1 policies: the action is one users may write (POLICY_ACTIONS; SyncJob,
    EnqueueJob, SyncQueue, OpenQueue and CloseQueue are not)."""
    if action not in POLICY_ACTIONS:
        return invalid(field, action if action is not None else "", "invalid policy action")
    return None


def policy_exit_code_nonzero(policy: Obj) -> str | None:
    """reference §3.1 policies: exitCode != 0."""
    if policy.get("exitCode") == 0:
        return "0 is not a valid error code"
    return None


def policy_any_event_alone(events: Iterable[str]) -> str | None:
    """reference §3.1 policies: with the event "*", no other event policy."""
    events = set(events)
    if "*" in events and len(events) > 1:
        return "if there's * here, no other policy should be here"
    return None


def validate_policies(policies: Any, field: str) -> str | None:
    """reference §3.1 "Policies rules" (util.go validatePolicies): each policy in turn; the
    first error stops the walk; then the "*" rule. A denial lists the valid events and
    actions, as Volcano's does."""
    if not isinstance(policies, list):
        return None
    errors: list[str] = []
    events: list[str] = []
    exit_codes: set[int] = set()
    for policy in policies:
        if not isinstance(policy, dict):
            continue
        error = policy_event_and_exit_code_exclusive(policy) or policy_has_event_or_exit_code(policy)
        if not error and _events_of(policy):
            for event in _events_of(policy):
                error = policy_event_allowed(event, field) or policy_action_allowed(policy.get("action"), field)
                if not error and event in events:
                    error = f"duplicate event {event}  across different policy"
                if error:
                    break
                events.append(event)
        elif not error:
            error = policy_exit_code_nonzero(policy)
            if not error and policy.get("action") not in (None, ""):
                error = policy_action_allowed(policy.get("action"), field)  # the VAP checks every action
            if not error and policy["exitCode"] in exit_codes:
                error = f"duplicate exitCode {policy['exitCode']}"
            exit_codes.add(policy["exitCode"])
        if error:
            errors.append(error)
            break
    error = policy_any_event_alone(events)
    if error:
        errors.append(error)
    if not errors:
        return None
    return (f"{'; '.join(errors)}; valid events are {go_list(POLICY_EVENTS)}, "
            f"valid actions are {go_list(POLICY_ACTIONS)}")
