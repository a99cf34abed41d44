"""Volcano's cronjob-controller (pkg/controllers/cronjob/: cronjob_controller.go, _handler.go;
the timing in timing.py, the Jobs' names and marks in jobs.py), v1.15.1.

Requests are "namespace/name" keys of CronJobs: a CronJob added or deleted; a CronJob updated
(at once, or, when its schedule or time zone changed, at its next activation); a Job a CronJob
controls added, updated or deleted. A sync (syncCronJob) of a CronJob that exists and is not
being deleted:
1. finished Jobs (Completed, Failed, Terminated) leave status.active (Normal SawCompletedJob);
   the latest finish of a Completed one is status.lastSuccessfulTime; the oldest finished Jobs
   beyond successfulJobsHistoryLimit / failedJobsHistoryLimit are deleted (SuccessfulDelete);
2. a running Job it controls but does not list is a Warning OrphanedJob; a listed Job that is
   gone, or is another Job of that name, leaves status.active (Warning StaleReference);
3. unless suspended: the most recent activation not after now and not already run (and, with
   startingDeadlineSeconds, not older than that) gets its Job: with concurrencyPolicy Forbid
   none while a Job is active (Warning ForbidConcurrent), with Replace the active Jobs are
   deleted first (Warning ReplaceConcurrent); the Job is listed in status.active and its
   activation becomes status.lastScheduleTime (Normal SuccessfulCreate);
4. the CronJob is asked about again 100 ms after its next activation (a timer on the
   controllers' clock: the embedded cluster's virtual one runs a day of `*/5 * * * *` at once).
A failed sync (a Job admission refuses, a conflict on the status, an unknown time zone, a
schedule without activations) is retried with client-go's back-off, without limit.

Where volcanic differs from Volcano v1.15.1 (docs/workflows.md): a failed status write is
retried (Volcano drops the request and waits for the next event); an unchanged status is not
written; with Replace every active Job is deleted (Volcano's loop may skip one of several); a
Job's update syncs its CronJob only when something a sync reads changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable

from volcanic.controllers.cronjob.clients import StoreClient
from volcanic.controllers.cronjob.jobs import (
    CRONJOB_API_VERSION,
    add_active,
    by_creation,
    controlled_by,
    controller_of,
    finished_at,
    in_active,
    in_active_by_name,
    is_finished,
    job_from_template,
    job_name,
    phase_of,
    reference,
    remove_from_active,
    seconds,
)
from volcanic.controllers.cronjob.schedule import ScheduleError, parse_standard
from volcanic.controllers.cronjob.timing import (
    format_schedule,
    next_schedule_time,
    next_schedule_time_duration,
    tz_and_schedule,
)
from volcanic.controllers.events import controller_manager_recorder
from volcanic.controllers.runtime import Context, Controller
from volcanic.kube.clock import rfc3339
from volcanic.kube.errors import AdmissionError, AlreadyExists, InvalidObject, NotFound, StoreError
from volcanic.kube.informers import Handler
from volcanic.kube.objects import Obj, clone, meta_of, spec_of, status_of

NAMESPACE_TERMINATING = "because it is being terminated"  # the API server's NamespaceTerminating refusal


class CronJobError(Exception):
    """A failed sync, in Volcano's words."""


# What a sync may fail with and a retry may cure.
SYNC_ERRORS = (StoreError, AdmissionError, InvalidObject, ScheduleError, CronJobError)


@dataclass
class SyncResult:
    """syncCronJob's answer: when to ask again (seconds, None: not until an event), whether
    the status changed, and the error that ended the sync."""

    requeue_after: float | None = None
    update_status: bool = False
    error: Exception | None = None


def key_of(obj: Obj) -> str:
    meta = meta_of(obj)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


def _what_a_sync_reads(job: Obj) -> tuple:
    state = status_of(job).get("state") or {}
    return (state.get("phase"), state.get("lastTransitionTime"), controller_of(job),
            meta_of(job).get("deletionTimestamp"))


class CronJobController(Controller):
    name = "cronjob-controller"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.recorder = controller_manager_recorder(ctx)
        self.jobs = StoreClient(ctx.store, "Job")  # what tests replace, as injection.go's fakes
        self.cronjobs = StoreClient(ctx.store, "CronJob")
        self.now = ctx.clock.now

    # Event handlers (cronjob_controller_handler.go).
    def handlers(self) -> dict[str, Handler]:
        return {"CronJob": Handler(on_add=self.enqueue_object, on_update=self.update_cronjob,
                                   on_delete=self.enqueue_object),
                "Job": Handler(on_add=self.add_job, on_update=self.update_job, on_delete=self.delete_job)}

    def enqueue_object(self, obj: Obj, delay: float = 0.0) -> None:
        self.enqueue(key_of(obj), delay)

    def enqueue(self, key: str, delay: float = 0.0) -> None:
        """addCronjobcontrollerQueue: at once, or after `delay` seconds (workqueue.AddAfter:
        of several pending times for a key, the earliest wins)."""
        if delay <= 0:
            self.queue.add(key)
        else:
            self.add_after(key, delay)

    def update_cronjob(self, old: Obj, new: Obj) -> None:
        """updateCronJob: a new schedule or time zone is synced at its next activation."""
        if meta_of(new).get("resourceVersion") == meta_of(old).get("resourceVersion"):
            return
        old_spec, new_spec = spec_of(old), spec_of(new)
        if (old_spec.get("schedule"), old_spec.get("timeZone")) == (new_spec.get("schedule"), new_spec.get("timeZone")):
            self.enqueue_object(new)
            return
        try:
            schedule = parse_standard(format_schedule(new))
        except ScheduleError:
            self.recorder.event(new, "Warning", "UnParseableCronJobSchedule",
                                f"unparseable schedule for cronjob: {new_spec.get('schedule')}")
            return
        self.enqueue_object(new, next_schedule_time_duration(new, self.now(), schedule))

    def add_job(self, job: Obj) -> None:
        """addJob (and deleteJob, for a Job being deleted): its CronJob is synced."""
        self._sync_controller_of(job)

    def update_job(self, old: Obj, new: Obj) -> None:
        """updateJob: its CronJob, and the one that controlled it before, are synced. Unlike
        Volcano, only when something a sync reads changed (the phase, when it changed, the
        controller, a deletion), not for each new count of the Job's pods."""
        if meta_of(new).get("resourceVersion") == meta_of(old).get("resourceVersion"):
            return
        if _what_a_sync_reads(old) == _what_a_sync_reads(new):
            return
        self._sync_controller_of(new)
        if controller_of(old) != controller_of(new):
            self._sync_controller_of(old)

    def delete_job(self, job: Obj) -> None:
        """deleteJob: its CronJob is synced."""
        self._sync_controller_of(job)

    def _sync_controller_of(self, job: Obj) -> None:
        cron = self.controlling_cronjob(job)
        if cron is not None:
            self.enqueue_object(cron)

    def controlling_cronjob(self, job: Obj) -> Obj | None:
        """isControlledBy: the CronJob (from the lister) that is the Job's controller."""
        ref = controller_of(job)
        if ref is None or ref.get("apiVersion") != CRONJOB_API_VERSION or ref.get("kind") != "CronJob":
            return None
        cron = self.ctx.lister.get("CronJob", ref.get("name", ""), meta_of(job).get("namespace"))
        return cron if cron is not None and meta_of(cron).get("uid") == ref.get("uid") else None

    # Requests (cronjob_controller.go).
    def process(self, request: Hashable) -> None:
        """processNextReq: a failure is retried with back-off; otherwise the CronJob is asked
        about again when its next activation is due."""
        assert isinstance(request, str)
        try:
            requeue_after = self.sync(request)
        except SYNC_ERRORS:
            self.retry_later(request)
            return
        self.forget(request)
        if requeue_after is not None:
            self.enqueue(request, requeue_after)

    def sync(self, key: str) -> float | None:
        """sync: syncCronJob on a copy of the cached CronJob (a sync changes only its status),
        then its status written."""
        namespace, _, name = key.partition("/")
        cached = self.ctx.lister.get("CronJob", name, namespace)
        if cached is None or meta_of(cached).get("deletionTimestamp"):
            return None
        cron = dict(cached, status=clone(status_of(cached)))
        result = self.sync_cronjob(cron, self.jobs_of(cron))
        if result.error is not None:
            raise result.error
        if result.update_status and status_of(cron) != status_of(cached):
            self.ctx.store.update_status(cron)
        return result.requeue_after

    def jobs_of(self, cron: Obj) -> list[Obj]:
        """getJobsByCronJob: the Jobs of the CronJob's namespace whose controller it is."""
        meta = meta_of(cron)
        owned = []
        for job in self.ctx.lister.list("Job", meta.get("namespace") or "default"):
            ref = controller_of(job)
            if (ref is not None and ref.get("kind") == "CronJob" and ref.get("name") == meta.get("name")
                    and ref.get("uid") == meta.get("uid")):
                owned.append(job)
        return owned

    def sync_cronjob(self, cron: Obj, jobs: list[Obj]) -> SyncResult:
        """syncCronJob: updates `cron`'s status in place (see the module docstring)."""
        now = self.now()
        update = self.process_finished_jobs(cron, jobs)
        try:
            update = self.process_owned_and_active_jobs(cron, jobs) or update
        except SYNC_ERRORS as e:
            return SyncResult(None, update, e)
        if spec_of(cron).get("suspend"):
            return SyncResult(None, update)
        try:
            schedule = tz_and_schedule(cron, self.recorder)
        except ScheduleError as e:
            return SyncResult(None, update, e)
        try:
            scheduled = next_schedule_time(cron, now, schedule, self.recorder)
        except ScheduleError as e:
            self.recorder.event(cron, "Warning", "InvalidSchedule", f"Error getting schedule time: {e}")
            return SyncResult(None, update, e)
        if scheduled is None or self._already_run(cron, scheduled):
            return SyncResult(next_schedule_time_duration(cron, now, schedule), update)
        try:
            wait, replaced = self.process_concurrency_policy(cron)
            update = update or replaced
            job = None if wait else self.create_job(cron, scheduled)
        except SYNC_ERRORS as e:
            return SyncResult(None, update, e)
        if job is None or in_active(cron, meta_of(job).get("uid")):
            return SyncResult(next_schedule_time_duration(cron, now, schedule), update)
        add_active(cron, reference(job))
        cron["status"]["lastScheduleTime"] = rfc3339(scheduled)
        return SyncResult(next_schedule_time_duration(cron, now, schedule), True)

    @staticmethod
    def _already_run(cron: Obj, scheduled: float) -> bool:
        """The activation's Job is listed, or the activation is the last schedule time."""
        meta = meta_of(cron)
        name = job_name(meta.get("name", ""), scheduled)
        return (in_active_by_name(cron, name, meta.get("namespace") or "default")
                or seconds(status_of(cron).get("lastScheduleTime")) == scheduled)

    # Finished Jobs and history limits.
    def process_finished_jobs(self, cron: Obj, jobs: list[Obj]) -> bool:
        """processFinishedJobs; True if the status changed."""
        update = False
        succeeded, failed = [], []
        for job in jobs:
            if not is_finished(job):
                continue
            uid = meta_of(job).get("uid")
            if in_active(cron, uid):
                remove_from_active(cron, uid)
                self.recorder.event(cron, "Normal", "SawCompletedJob",
                                    f"Saw completed job: {meta_of(job)['name']} in active, remove")
                update = True
            if phase_of(job) == "Completed":
                update = self._saw_success(cron, job) or update
                succeeded.append(job)
            elif phase_of(job) == "Failed":
                failed.append(job)
        spec = spec_of(cron)
        for finished, limit in ((succeeded, spec.get("successfulJobsHistoryLimit")),
                                (failed, spec.get("failedJobsHistoryLimit"))):
            if limit is not None and self.remove_oldest_jobs(cron, finished, int(limit)):
                update = True
        return update

    @staticmethod
    def _saw_success(cron: Obj, job: Obj) -> bool:
        """status.lastSuccessfulTime: the latest finish of a Completed Job."""
        finished = finished_at(job)
        last = seconds(status_of(cron).get("lastSuccessfulTime"))
        if finished is None or (last is not None and finished <= last):
            return False
        if not isinstance(cron.get("status"), dict):
            cron["status"] = {}
        cron["status"]["lastSuccessfulTime"] = rfc3339(finished)
        return True

    def remove_oldest_jobs(self, cron: Obj, jobs: list[Obj], limit: int) -> bool:
        """removeOldestJobs: the oldest beyond `limit` deleted; True if any was."""
        excess = len(jobs) - limit
        if excess <= 0:
            return False
        deleted = [self.delete_job_by_client(cron, job) for job in sorted(jobs, key=by_creation)[:excess]]
        return any(deleted)

    def delete_job_by_client(self, cron: Obj, job: Obj) -> bool:
        """deleteJobByClient: True if deleted (then it leaves status.active)."""
        meta = meta_of(job)
        try:
            self.jobs.delete(meta.get("namespace") or "default", meta["name"])
        except StoreError as e:
            self.recorder.event(cron, "Warning", "FailedDelete", f'Error deleting job "{meta["name"]}": {e}')
            return False
        remove_from_active(cron, meta.get("uid"))
        self.recorder.event(cron, "Normal", "SuccessfulDelete", f'Deleted job "{meta["name"]}"')
        return True

    # Jobs the CronJob controls but does not list, and listed Jobs that are gone.
    def process_owned_and_active_jobs(self, cron: Obj, jobs: list[Obj]) -> bool:
        """processCtlJobAndActiveJob; True if the status changed. A running Job missing from
        the cached CronJob's list but in the API server's is not an orphan (the cache lags)."""
        meta = meta_of(cron)
        for job in jobs:
            uid = meta_of(job).get("uid")
            if in_active(cron, uid) or is_finished(job):
                continue
            fresh = self.cronjobs.get(meta.get("namespace") or "default", meta["name"])
            if in_active(fresh, uid):
                continue
            self.recorder.event(cron, "Warning", "OrphanedJob",
                                f"Detected orphaned job forgotten or not managed by controller: "
                                f"{meta_of(job)['name']} (UID: {uid})")
        owned = {meta_of(job).get("uid") for job in jobs}
        update = False
        for ref in list(status_of(cron).get("active") or ()):
            if ref.get("uid") in owned:
                continue
            job = self.ctx.lister.get("Job", ref.get("name", ""), ref.get("namespace"))
            if job is None:
                message = f'Active job "{ref.get("name")}" no longer exists (UID: {ref.get("uid")})'
            elif meta_of(job).get("uid") != ref.get("uid"):
                message = (f'Active job reference "{ref.get("name")}" points to a different UID '
                           f'(expected: {ref.get("uid")}, actual: {meta_of(job).get("uid")})')
            else:
                continue  # it exists and is not this CronJob's: left listed, as in Volcano
            self.recorder.event(cron, "Warning", "StaleReference", message)
            remove_from_active(cron, ref.get("uid"))
            update = True
        return update

    # Concurrency and creation.
    def process_concurrency_policy(self, cron: Obj) -> tuple[bool, bool]:
        """processConcurrencyPolicy: (whether to wait for the next activation, whether the
        status changed). Replace deletes every active Job; a failure raises."""
        policy, active = spec_of(cron).get("concurrencyPolicy"), status_of(cron).get("active") or []
        if policy == "Forbid" and active:
            self.recorder.event(cron, "Warning", "ForbidConcurrent",
                                "Skipping job creation because another job is already running")
            return True, False
        if policy != "Replace" or not active:
            return False, False
        self.recorder.event(cron, "Warning", "ReplaceConcurrent", "Replacing active job for CronJob")
        for ref in list(active):
            try:
                job = self.jobs.get(ref.get("namespace") or "default", ref.get("name", ""))
            except StoreError as e:
                self.recorder.event(cron, "Warning", "FailedGet", f"Get job: {e}")
                raise
            if not self.delete_job_by_client(cron, job):
                raise CronJobError(f"could not replace job {meta_of(job).get('namespace')}/{meta_of(job)['name']}")
        return False, True

    def create_job(self, cron: Obj, scheduled: float) -> Obj | None:
        """createJob: the activation's Job, or the one of that name already there if this
        CronJob controls it and it has not finished; None when there is nothing to list."""
        meta = meta_of(cron)
        namespace = meta.get("namespace") or "default"
        try:
            template = job_from_template(cron, scheduled)
        except ScheduleError as e:
            self.recorder.event(cron, "Warning", "FailedCreate", f"Failed to create job from template: {e}")
            raise
        try:
            job = self.jobs.create(template)
        except AlreadyExists:
            return self._existing_job(cron, template)
        except SYNC_ERRORS as e:
            if isinstance(e, StoreError) and NAMESPACE_TERMINATING in str(e):
                self.recorder.event(cron, "Warning", "NamespaceTerminating",
                                    f"Namespace {namespace} is terminating, skipping job creation")
            else:
                self.recorder.event(cron, "Warning", "FailedCreate", f"Failed to create job: {e}")
            raise
        if not controlled_by(job, cron):
            try:
                self.jobs.delete(namespace, meta_of(job)["name"])
            except StoreError:
                pass  # Volcano logs it; the error below is what counts
            raise CronJobError("created job missing owner reference")
        self.recorder.event(cron, "Normal", "SuccessfulCreate",
                            f"Created job {meta_of(job)['name']} for CronJob {namespace}/{meta['name']}")
        return job

    def _existing_job(self, cron: Obj, template: Obj) -> Obj | None:
        """createJob's AlreadyExists case."""
        meta = meta_of(template)
        try:
            existing = self.jobs.get(meta["namespace"], meta["name"])
        except NotFound:
            raise
        except StoreError as e:
            raise CronJobError(f"failed to fetch conflicting job: {e}") from e
        if not controlled_by(existing, cron):
            ref = controller_of(existing)
            self.recorder.event(cron, "Warning", "ForeignJob",
                                f"Job {meta_of(existing)['name']} exists but is not owned by this CronJob "
                                f"(current owner: {ref.get('name') if ref else 'none'})")
            return None
        return None if is_finished(existing) else existing
