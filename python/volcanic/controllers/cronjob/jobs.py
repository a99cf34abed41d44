"""A CronJob's Jobs as Volcano names, marks and tracks them (cronjob_controller_util.go and
_handler.go): the Job of an activation, its reference in status.active, which Jobs a CronJob
controls, and which are finished.

A Job is `<cronjob>-<activation in Unix minutes>` in the CronJob's namespace, with the
template's labels and annotations, the annotation `volcano.sh/cronjob-scheduled-timestamp`
(the activation in RFC 3339, in the CronJob's time zone) and the CronJob as its controller
(blockOwnerDeletion, so deleting the CronJob deletes its Jobs).
"""

from __future__ import annotations

import functools

from volcanic.controllers.cronjob.schedule import go_rfc3339, location
from volcanic.kube.clock import seconds_of
from volcanic.kube.keys import CRONJOB_SCHEDULED, JOB_API_VERSION
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj, clone, meta_of, spec_of, status_of

CRONJOB_API_VERSION = KINDS["CronJob"].api_version
SCHEDULED_TIMESTAMP = CRONJOB_SCHEDULED  # CronJobScheduledTimestampAnnotation
FINISHED = ("Completed", "Failed", "Terminated")
# RFC 3339 timestamps as Unix seconds (None for none), parsed once: a sync reads the same few
# (creation and finish times, the last schedule time) again and again.
seconds = functools.lru_cache(maxsize=4096)(seconds_of)


def job_name(cron_name: str, scheduled: float) -> str:
    """getJobName: the activation's Unix minute, so that one activation makes one Job."""
    return f"{cron_name}-{int(scheduled) // 60}"


def job_from_template(cron: Obj, scheduled: float) -> Obj:
    """getJobFromTemplate: the Job of the activation at `scheduled`. ScheduleError for a time
    zone that is no longer known."""
    meta, template = meta_of(cron), spec_of(cron).get("jobTemplate") or {}
    template_meta = meta_of(template)
    annotations = dict(template_meta.get("annotations") or {})
    annotations[SCHEDULED_TIMESTAMP] = go_rfc3339(scheduled, location(spec_of(cron).get("timeZone") or ""))
    owner = {"apiVersion": CRONJOB_API_VERSION, "kind": "CronJob", "name": meta["name"], "uid": meta.get("uid", ""),
             "controller": True, "blockOwnerDeletion": True}
    return {"apiVersion": JOB_API_VERSION, "kind": "Job",
            "metadata": {"name": job_name(meta["name"], scheduled), "namespace": meta.get("namespace") or "default",
                         "labels": dict(template_meta.get("labels") or {}), "annotations": annotations,
                         "ownerReferences": [owner]},
            "spec": clone(spec_of(template))}


def reference(job: Obj) -> Obj:
    """ref.GetReference: the Job's ObjectReference, as status.active holds it."""
    meta = meta_of(job)
    ref = {"kind": "Job", "namespace": meta.get("namespace"), "name": meta["name"], "uid": meta.get("uid"),
           "apiVersion": job.get("apiVersion") or JOB_API_VERSION, "resourceVersion": meta.get("resourceVersion")}
    return {k: v for k, v in ref.items() if v}


def controller_of(obj: Obj) -> Obj | None:
    """metav1.GetControllerOf: the owner reference with controller true."""
    for ref in meta_of(obj).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return None


def controlled_by(job: Obj, cron: Obj) -> bool:
    """metav1.IsControlledBy: the Job's controller is the CronJob (by UID)."""
    ref = controller_of(job)
    return ref is not None and ref.get("uid") == meta_of(cron).get("uid")


def phase_of(job: Obj) -> str:
    return (status_of(job).get("state") or {}).get("phase") or ""


def is_finished(job: Obj) -> bool:
    """isJobFinished: Completed, Failed or Terminated."""
    return phase_of(job) in FINISHED


def finished_at(job: Obj) -> float | None:
    """When the Job finished: status.state.lastTransitionTime (None if unset)."""
    return seconds((status_of(job).get("state") or {}).get("lastTransitionTime"))


def by_creation(job: Obj) -> tuple:
    """byJobCreationTimestamp: oldest first, Jobs without a creation time last, ties by name."""
    created = seconds(meta_of(job).get("creationTimestamp"))
    return created is None, created or 0.0, meta_of(job).get("name", "")


def add_active(cron: Obj, ref: Obj) -> None:
    """Appends a Job's reference to status.active."""
    if not isinstance(cron.get("status"), dict):
        cron["status"] = {}
    cron["status"].setdefault("active", []).append(ref)


def in_active(cron: Obj, uid: str | None) -> bool:
    """inActiveList: a reference with the Job's UID is in status.active."""
    return bool(uid) and any(ref.get("uid") == uid for ref in status_of(cron).get("active") or ())


def in_active_by_name(cron: Obj, name: str, namespace: str) -> bool:
    """inActiveListByName."""
    return any(ref.get("name") == name and ref.get("namespace") == namespace
               for ref in status_of(cron).get("active") or ())


def remove_from_active(cron: Obj, uid: str | None) -> None:
    """deleteFromActiveList: drops the references with the Job's UID (an empty list is kept
    out of the status, as Go's omitempty)."""
    if not uid or not status_of(cron).get("active"):
        return
    kept = [ref for ref in cron["status"]["active"] if ref.get("uid") != uid]
    if kept:
        cron["status"]["active"] = kept
    else:
        del cron["status"]["active"]
