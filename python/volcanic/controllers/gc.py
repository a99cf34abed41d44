"""Volcano's garbage collector (reference §2.7; `pkg/controllers/garbagecollector/`).

It deletes Jobs that set spec.ttlSecondsAfterFinished once they have been finished
(status.state.phase Completed, Failed or Terminated) for that long, counted from
status.state.lastTransitionTime. A Job not yet expired is requeued for the time left;
an expired one is re-read from the store, checked again and deleted with a UID
precondition. Volcano deletes with propagationPolicy Foreground; the store's ownerReference
cascade deletes the Job's pods, PodGroup and the rest at once, which is what a client sees
once Foreground deletion is done.
"""

from __future__ import annotations

from typing import Hashable

from volcanic.controllers.runtime import Context, Controller
from volcanic.kube.clock import seconds_of
from volcanic.kube.errors import StoreError
from volcanic.kube.informers import Handler
from volcanic.kube.objects import Obj, dig, spec_of

FINISHED = ("Completed", "Failed", "Terminated")


def needs_cleanup(job: Obj) -> bool:
    """needsCleanup: a TTL is set and the job has finished."""
    return (spec_of(job).get("ttlSecondsAfterFinished") is not None
            and dig(job, "status", "state", "phase") in FINISHED)


def expire_at(job: Obj) -> float | None:
    """lastTransitionTime + TTL in clock seconds; None when the finish time is unknown
    (Volcano reports an error for it and retries)."""
    finished = seconds_of(dig(job, "status", "state", "lastTransitionTime"))
    if finished is None:
        return None
    return finished + float(job["spec"]["ttlSecondsAfterFinished"])


class GarbageCollector(Controller):
    name = "gc-controller"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)

    def handlers(self) -> dict[str, Handler]:
        return {"Job": Handler(on_add=self._job_changed, on_update=lambda old, new: self._job_changed(new))}

    def _job_changed(self, job: Obj) -> None:
        if not job["metadata"].get("deletionTimestamp") and needs_cleanup(job):
            self.queue.add((job["metadata"]["namespace"], job["metadata"]["name"]))

    def _expired(self, key: Hashable, job: Obj) -> bool:
        """processTTL: whether the TTL has expired; requeues the job when it will later."""
        if job["metadata"].get("deletionTimestamp") or not needs_cleanup(job):
            return False
        expire = expire_at(job)
        if expire is None:
            return False
        remaining = expire - self.ctx.clock.now()
        if remaining <= 0:
            return True
        self.add_after(key, remaining)
        return False

    def process(self, request: Hashable) -> None:
        namespace, name = request
        job = self.ctx.lister.get("Job", name, namespace)
        if job is None or not self._expired(request, job):
            return
        # The cached job may be stale: check the latest before deleting.
        fresh = self.ctx.store.get("Job", name, namespace)
        if fresh is None or not self._expired(request, fresh):
            return
        try:
            self.ctx.store.delete("Job", name, namespace, uid=fresh["metadata"]["uid"])
        except StoreError as e:
            if e.reason != "NotFound":
                raise
