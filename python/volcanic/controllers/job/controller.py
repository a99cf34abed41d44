"""The job controller: turns watch events into requests (reference §2.1), resolves them to
actions through the job's policies (§2.2), delays or runs them through the state machine
(§2.3), and consumes bus Commands that target Jobs.

Failures: an action that fails in a way a retry may cure (a store conflict, a refused pod,
a missing claim, a plugin error) is requeued with back-off and, after MAX_REQUEUE failures,
turned into TerminateJob; a job whose spec the Job CRD's schema refuses (stored past it:
older CRDs, volcanic.controllers.job.held) is held: a Warning Event JobSpecError with the API
server's message and status.state reason and message, no pods, no PodGroup, nothing retried,
until an update fixes it; a job the controller still cannot read (a malformed pod template)
is one Warning Event JobSpecError and the request is dropped; a bad policy timeout is a Warning
Event PolicyError and the action runs at once; a Command with an unknown action is
consumed with a Warning Event UnknownAction and nothing else.

Its queue holds three kinds of request, one class each: Request (a job's event or action),
ConsumeCommand (a bus Command to consume) and Answered (a job's work out was answered). A
job's actions run one after another: what an action sent and did not wait for (SyncJob's
pod creates and status write) is filed in the controller's JobExpectations
(volcanic.controllers.job.expectations), and the job's next requests wait aside there until
it is answered, while the controller goes on with other jobs."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Hashable

from volcanic.controllers.events import controller_manager_recorder
from volcanic.controllers.job import state
from volcanic.controllers.job.expectations import Answered, JobExpectations, Out
from volcanic.controllers.job.held import SPEC_ERROR
from volcanic.controllers.job.plugins import PluginError
from volcanic.controllers.job.plugins.common import task_named
from volcanic.controllers.job.policy import Request, apply_policies
from volcanic.controllers.job.sync import CreatesOut, JobActions, SyncError, Target, job_key
from volcanic.controllers.runtime import Context, Controller
from volcanic.kube.clock import Timer
from volcanic.kube.duration import format_duration
from volcanic.kube.errors import AdmissionError, InvalidObject, NotFound, StoreError
from volcanic.kube.informers import Handler
from volcanic.kube.keys import JOB_API_VERSION, JOB_NAME, JOB_VERSION, OUT_OF_SYNC, PARTITION_ID, TASK_SPEC
from volcanic.kube.objects import Obj, annotation, annotations_of, as_map, dig, key_of, labels_of, spec_of, status_of

MAX_REQUEUE = 15            # --max-requeue-num
# The actions a bus Command may ask of a Job; any other is dropped with a Warning Event.
COMMAND_ACTIONS = ("AbortJob", "RestartJob", "RestartTask", "RestartPod", "RestartPartition",
                   "TerminateJob", "CompleteJob", "ResumeJob")
# Errors a retry may cure (a conflict, a pod refused while a PriorityClass is missing, a
# missing claim, a plugin): requeued with back-off, then TerminateJob.
RETRIABLE = (StoreError, SyncError, PluginError, AdmissionError)
# Errors of a malformed job (a spec the controller cannot read): one Warning Event, and the
# request is dropped; retrying would fail the same way.
MALFORMED = (TypeError, AttributeError, ValueError, KeyError)
# Actions the controller makes for itself (isInternalAction): they cancel no delayed action.
INTERNAL_ACTIONS = ("SyncJob", "EnqueueJob", "SyncQueue", "OpenQueue", "CloseQueue")
# Events about one pod's phase (isPodEvent): the only ones that cancel a pod's delayed action.
POD_EVENTS = ("PodPending", "PodRunning", "PodFailed", "PodEvicted")
# The moves Volcano's job state machine counts (pkg/controllers/job/state/metrics.go: every way
# into these phases), counted here as the watch brings each: once per move, after its write.
COUNTED_OUTCOMES = ("Completed", "Failed")
# GetActionType: after an action runs, the delayed actions of the same type are dropped.
_ACTION_TYPES = {"RestartTask": "task", "RestartPod": "pod", "RestartPartition": "partition"}


def _action_type(action: str) -> str:
    return _ACTION_TYPES.get(action, "job")


@dataclass(frozen=True)
class ConsumeCommand:
    """A request to the job controller: consume the bus Command `namespace/name`, which
    targets a Job (delete it, then queue its action for the job)."""

    namespace: str
    name: str


@dataclass
class _Delayed:
    """A policy action waiting for its timeout (delayAction); one per job and pod name."""

    req: Request
    action: str
    timer: Timer | None = None


def _phase(obj: Obj) -> str:
    return status_of(obj).get("phase") or ""


def _controller_job(obj: Obj) -> Obj | None:
    group = JOB_API_VERSION.split("/")[0] + "/"
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == "Job" and str(ref.get("apiVersion", "")).startswith(group):
            return ref
    return None


def _count(value: object) -> int:
    """A replica or retry count as an int; anything else (a malformed job) is 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class JobController(Controller):
    name = "job-controller"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.recorder = controller_manager_recorder(ctx)
        self.actions = JobActions(ctx, self.recorder)
        self._delayed: dict[str, dict[str, _Delayed]] = {}  # job key -> pod name -> waiting action
        # Per job: its work out, the requests waiting for it, the syncs that coalesce requests.
        self.expectations = JobExpectations()

    def handlers(self) -> dict[str, Handler]:
        return {"Job": Handler(self._job_added, self._job_updated, self._job_deleted),
                "Pod": Handler(self._pod_added, self._pod_updated, self._pod_deleted),
                "PodGroup": Handler(self._podgroup_added, self._podgroup_updated),
                "Command": Handler(on_add=self._command_added)}

    # Events (§2.1).
    def _job_added(self, job: Obj) -> None:
        self._enqueue(self._job_request(job, "OutOfSync"))

    def _job_updated(self, old: Obj, new: Obj) -> None:
        # As Volcano's updateJob: an update with an unchanged resourceVersion is an informer
        # resync, not a write. Our informers do not resync and the store writes no no-op
        # update, so this only guards a replayed object; the checks below decide.
        if old["metadata"]["resourceVersion"] == new["metadata"]["resourceVersion"]:
            return
        old_phase = dig(old, "status", "state", "phase")
        new_phase = dig(new, "status", "state", "phase")
        if old.get("spec") != new.get("spec") or old_phase != new_phase:
            self._enqueue(self._job_request(new, "OutOfSync"))
        metrics = self.ctx.extra.get("job_metrics")
        if metrics is not None and new_phase in COUNTED_OUTCOMES and old_phase != new_phase:
            metrics.finished(job_key(new), spec_of(new).get("queue", ""), new_phase)

    def _job_deleted(self, job: Obj) -> None:
        key = job_key(job)
        self.expectations.forget(key)
        metrics = self.ctx.extra.get("job_metrics")
        if metrics is not None:
            metrics.forget(key, spec_of(job).get("queue", ""))
        for waiting in self._delayed.pop(key, {}).values():
            if waiting.timer is not None:
                waiting.timer.cancel()
        self.actions.forget(job)

    def _pod_added(self, pod: Obj) -> None:
        req = self._pod_request(pod, "PodPending")
        if req is not None:
            self.actions.observed(req.job_key, req.pod_name)
            event = "OutOfSync" if annotation(pod, OUT_OF_SYNC) else "PodPending"
            self._enqueue(replace(req, event=event))

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        if old["metadata"]["resourceVersion"] == new["metadata"]["resourceVersion"]:
            return  # a resync, not a write (see _job_updated)
        req = self._pod_request(new, "OutOfSync")
        if req is None:
            return
        old_phase, new_phase = _phase(old), _phase(new)
        event, exit_code = "OutOfSync", None
        if new_phase == "Failed" and old_phase != "Failed":
            event, exit_code = "PodFailed", _exit_code(new)
        elif new_phase == "Succeeded" and old_phase != "Succeeded" and self._task_completed(new, req):
            event = "TaskCompleted"
        elif new_phase in ("Pending", "Running") and self._task_failed(req):
            event = "TaskFailed"
        if old_phase != "Running" and new_phase == "Running":
            event = "PodRunning"
        elif old_phase != "Pending" and new_phase == "Pending":
            event = "PodPending"
        self._enqueue(replace(req, event=event, exit_code=exit_code))

    def _pod_deleted(self, pod: Obj) -> None:
        req = self._pod_request(pod, "PodEvicted")
        if req is None:
            return
        job = self.ctx.lister.get("Job", req.job_name, req.namespace)
        out_of_sync = annotation(pod, OUT_OF_SYNC) or job is None
        self._enqueue(replace(req, event="OutOfSync" if out_of_sync else "PodEvicted"))

    def _podgroup_added(self, pg: Obj) -> None:
        """A PodGroup first seen past Pending stands for the update from Pending that Volcano's
        handler acts on, which this controller will not see: a list (the controller-manager's
        first, kopf's, any re-list) gives only an object's latest state. After a restart, a
        PodGroup whose create (by the controller-manager that was killed) landed after the new
        one listed, and that the scheduler made Inqueue before kopf listed, comes that way."""
        if _phase(pg) not in ("", "Pending"):
            self._podgroup_phase_changed(pg)

    def _podgroup_updated(self, old: Obj, new: Obj) -> None:
        if _phase(old) != _phase(new):
            self._podgroup_phase_changed(new)

    def _podgroup_phase_changed(self, pg: Obj) -> None:
        """Volcano queues a request for the Job owning the PodGroup, else for a Job of the
        PodGroup's name. A PodGroup no Job owns and no Job is named after (a bare pod's) is
        not queued: its request would find no job (processNextReq returns), and a Job made
        later is synced by its own add."""
        ref = _controller_job(pg)
        name = ref["name"] if ref else pg["metadata"]["name"]
        if ref is None and self.ctx.lister.get("Job", name, pg["metadata"]["namespace"]) is None:
            return
        self._enqueue(Request(pg["metadata"]["namespace"], name,
                              event="Unknown" if _phase(pg) == "Unknown" else ""))

    def _command_added(self, cmd: Obj) -> None:
        target = as_map(cmd.get("target"))
        if target.get("kind") == "Job":
            self.queue.add(ConsumeCommand(*key_of(cmd)))

    # Requests.
    def _enqueue(self, req: Request) -> None:
        """Queues the request of a watch event, stamped with the event's count (again when it
        is already waiting: the newer event is what it stands for)."""
        self.expectations.stamp(req)
        self.queue.add(req)

    def _already_synced(self, req: Request, queued: int | None, job: Obj, action: str) -> bool:
        """True when the request asks for a SyncJob that a SyncJob of the same job, started
        after its event, has done already: that sync read the pods, PodGroup and job as they
        were after the event, and any later change has queued a request of its own. Volcano
        runs one full sync per pod event, so a burst of N pod events costs N syncs of N pods
        each; coalesced, it is one. Only where SyncJob is sync_job (Pending, Running,
        Restarting): elsewhere it is a KillJob, which bumps the job's version each time."""
        phase = dig(job, "status", "state", "phase") or "Pending"
        return action == "SyncJob" and phase in state.SYNCING and self.expectations.synced_since(req.job_key, queued)

    def _job_request(self, job: Obj, event: str) -> Request:
        meta = job["metadata"]
        return Request(meta["namespace"], meta["name"], job_uid=meta["uid"], event=event)

    def _pod_request(self, pod: Obj, event: str) -> Request | None:
        ann = annotations_of(pod)
        job_name, version, task = ann.get(JOB_NAME), ann.get(JOB_VERSION), ann.get(TASK_SPEC)
        if not (job_name and version is not None and task):
            return None
        ref = _controller_job(pod)
        try:
            job_version = int(version)
        except (TypeError, ValueError):
            return None
        meta = pod["metadata"]
        partition = labels_of(pod).get(PARTITION_ID, "")
        return Request(meta["namespace"], job_name, job_uid=ref["uid"] if ref else "", task_name=task,
                       pod_name=meta["name"], pod_uid=meta["uid"], partition_id=partition, event=event,
                       job_version=job_version)

    def _task_pods(self, req: Request) -> list[Obj]:
        return [p for p in self.ctx.lister.by_index("Pod", "job", req.job_key)
                if annotation(p, TASK_SPEC) == req.task_name]

    def _task_spec(self, req: Request) -> Obj | None:
        job = self.ctx.lister.get("Job", req.job_name, req.namespace)
        task = task_named(job, req.task_name) if job is not None else None
        return task if isinstance(task, dict) else None

    def _task_completed(self, pod: Obj, req: Request) -> bool:
        task = self._task_spec(req)
        replicas = _count(as_map(task).get("replicas"))
        done = sum(1 for p in self._task_pods(req) if _phase(p) == "Succeeded")
        return replicas > 0 and done >= replicas

    def _task_failed(self, req: Request) -> bool:
        task = self._task_spec(req)
        if task is None or not _count(task.get("replicas")):
            return False
        max_retry = _count(task.get("maxRetry")) or 3
        if max_retry == -1:
            return False
        restarted = self.ctx.lister.by_index("Pod", "restarted-task", f"{req.job_key}/{req.task_name}")
        restarts = sum(_count(c.get("restartCount")) for p in restarted
                       for c in (status_of(p).get("initContainerStatuses") or [])
                       + (status_of(p).get("containerStatuses") or []))
        return restarts >= max_retry

    def process(self, request: Hashable) -> None:
        if isinstance(request, Request):
            self._run(request)
        elif isinstance(request, Answered):  # (more of the job's work may be out by now)
            self._collect(request.job_key)
        elif isinstance(request, ConsumeCommand):
            self._consume_command(request)
        else:
            raise TypeError(f"not a job controller request: {request!r}")

    def _run(self, req: Request) -> None:
        """Resolves a job's request to an action and runs it, unless the job's earlier work
        is still out: then the request waits aside (see _park)."""
        key = req.job_key
        if not self.expectations.has_parked(key):
            self._collect(key)  # may send the job's next work (a sync resumed after its creates)
        if self.expectations.has_parked(key) or not self.expectations.satisfied(key):
            self._park(req)
            return
        queued = self.expectations.take_stamp(req)
        self._cancel_on_pod_event(req)
        job = self.ctx.lister.get("Job", req.job_name, req.namespace)
        if job is None:
            self.forget(req)
            return
        action = req.action or "SyncJob"
        problem = self._spec_problem(req, job)
        if problem is not None:
            self._hold(req, job, problem)
            return
        try:
            action, delay = apply_policies(
                job, req, warn=lambda message: self.recorder.event(job, "Warning", "PolicyError", message))
            if delay:
                self._delay(job, req, action, delay)
                return
            if self._already_synced(req, queued, job, action):
                self.forget(req)
                return
        except MALFORMED as e:
            self._malformed(req, job, action, e)
            return
        if action != "SyncJob":
            self.recorder.event(job, "Normal", "ExecuteAction", f"Start to execute action {action} ")
        self._execute(req, job, action)

    def _execute(self, req: Request, job: Obj, action: str) -> None:
        """Runs the action; the request is done when the work it sent out is answered (a
        sync stopped at its creates runs again then)."""
        started = self.expectations.sync_starts()
        try:
            sent = state.execute(self.actions, job, action, _target(req, action))
        except RETRIABLE as e:
            self._requeue(req, job, action, e)
            return
        except MALFORMED as e:
            self._malformed(req, job, action, e)
            return
        if isinstance(sent, CreatesOut):
            self._wait_for(Out(sent, req, job, action))
            return
        if action == "SyncJob":
            self.expectations.synced(req.job_key, started)
        if sent is not None:
            self._wait_for(Out(sent, req, job, action))
        else:
            self._done(req, action)

    def _spec_problem(self, req: Request, job: Obj) -> str | None:
        """The API server's message when the job's spec fails the Job CRD's schema and the
        request could sync it (create its PodGroup and pods): in Pending, Running or
        Restarting, unless it asks to abort, complete or terminate the job, which only
        deletes (so a held job can still be stopped). A job past those phases is only
        cleaned up, whatever its spec."""
        phase = dig(job, "status", "state", "phase") or "Pending"
        if phase not in state.SYNCING or req.action in state.FINISHING:
            return None
        return self.actions.spec_problem(job)

    def _hold(self, req: Request, job: Obj, problem: str) -> None:
        """Holds a job whose spec the API server would refuse (see held.py): says so on the
        job and drops the request; an update of the job brings a new request. A status write
        the store refuses is retried with back-off, at most MAX_REQUEUE times; one refused for
        the very spec (an API server that checks the whole object on a status write, without
        validation ratcheting) is left unwritten: the Event says it all."""
        try:
            self.actions.hold(job, problem)
        except StoreError:
            self.retry_later(req, limit=MAX_REQUEUE)
            return
        except InvalidObject:
            pass
        self.forget(req)
        if req.action:  # a Command's or a delayed policy's action: say it was not run
            self.recorder.event(job, "Warning", SPEC_ERROR,
                                f"action {req.action} not executed: the job's spec is invalid (status.state.message)")

    def _malformed(self, req: Request, job: Obj, action: str, e: Exception) -> None:
        self.forget(req)
        meta = job["metadata"]
        self.recorder.event(job, "Warning", "JobSpecError",
                            f"job {meta.get('namespace')}/{meta.get('name')}: action {action} failed on the job's spec "
                            f"({type(e).__name__}: {e}); the request is dropped until the job changes")

    def _done(self, req: Request, action: str) -> None:
        self.forget(req)
        if action not in INTERNAL_ACTIONS:
            self._cancel_after(req, action)

    def _wait_for(self, out: Out) -> None:
        """A job's pod creates or status write not waited for: its request is done when they
        are answered, collected at once when the store answered already (the embedded one),
        else once the answer comes (an Answered request) or the job acts again."""
        key = out.req.job_key
        self.expectations.expect(out)
        if out.answered.done():
            self._collect(key)
            return
        out.answered.add_done_callback(lambda _: self.ctx.clock.after(0.0, lambda: self.queue.add(Answered(key))))

    def _park(self, req: Request) -> None:
        """A job's actions run one after another, its creates and status writes included: a
        request for a job with work out waits for it aside, and the controller goes on with
        other jobs (one job's creates must not hold up every job's pods)."""
        self.expectations.park(req)
        self._collect(req.job_key)

    def _collect(self, job_key: str) -> None:
        """Takes the answer to the job's work out, if it is answered: a status write's answer
        completes its request (a failed one requeues it); answered creates let the stopped sync
        run again. Then, once nothing is out, the requests that waited are queued again, in
        order. Nothing while the work is still out."""
        out = self.expectations.observe(job_key)
        try:
            if out is not None:
                self._answered(out)
        finally:
            for req in self.expectations.release(job_key):
                self.queue.add(req)

    def _answered(self, out: Out) -> None:
        if isinstance(out.sent, CreatesOut):
            self._created(out, out.sent)
            return
        try:
            self.actions.written(out.sent.answered.result())
        except RETRIABLE as e:
            self._requeue(out.req, out.job, out.action, e)
        else:
            self._done(out.req, out.action)

    def _created(self, out: Out, sent: CreatesOut) -> None:
        """Creates answered: the stopped sync runs again, unless the job went meanwhile (its
        answers are then no one's to count)."""
        job = self.ctx.lister.get("Job", out.req.job_name, out.req.namespace)
        if job is None or job["metadata"]["uid"] != out.job["metadata"]["uid"]:
            self.forget(out.req)
            return
        try:
            self.actions.created(out.job, sent.creates)
        except RETRIABLE as e:
            self._requeue(out.req, out.job, out.action, e)
            return
        self._execute(out.req, job, out.action)

    def _consume_command(self, request: ConsumeCommand) -> None:
        namespace, name = request.namespace, request.name
        cmd = self.ctx.lister.get("Command", name, namespace)
        if cmd is None:
            return
        try:
            self.ctx.store.delete("Command", name, namespace)
        except NotFound:
            return  # consumed already: a command runs at most once
        target = as_map(cmd.get("target"))
        job = self.ctx.lister.get("Job", target.get("name", ""), namespace)
        action = cmd.get("action") or ""
        if action not in COMMAND_ACTIONS:
            # Volcano would run it through the state machine (a SyncJob that also drops the
            # job's delayed actions); an unknown action does nothing here but say so.
            self.recorder.event(job if job is not None else cmd, "Warning", "UnknownAction",
                   f"Command {namespace}/{name}: unknown action {action!r} for job "
                   f"{namespace}/{target.get('name', '')}; known actions: {', '.join(COMMAND_ACTIONS)}; "
                   "the command is dropped")
            return
        if job is None:
            return
        self.recorder.event(job, "Normal", "CommandIssued",
                            f"Start to execute command {action}, "
                            "and clean it up to make sure executed not more than once.")
        self.queue.add(Request(namespace, job["metadata"]["name"], job_uid=job["metadata"]["uid"],
                               event="CommandIssued", action=action))

    def _requeue(self, req: Request, job: Obj, action: str, error: Exception) -> None:
        """A failed action is retried with the workqueue's back-off up to MAX_REQUEUE times;
        then the job is terminated ("Job failed on action X for retry limit reached."). A
        TerminateJob that fails as often is dropped, so a job that cannot be terminated
        does not loop forever."""
        if self.retry_later(req, limit=MAX_REQUEUE) is not None:
            return
        self.recorder.event(job, "Warning", action, f"Job failed on action {action} for retry limit reached.")
        if action != "TerminateJob":
            self.queue.add(replace(req, action="TerminateJob", event=""))

    # Delayed actions (§2.2, `AddDelayActionForJob`, `CleanPodDelayActionsIfNeed`,
    # `cleanupDelayActions`).
    def _delay(self, job: Obj, req: Request, action: str, delay: float) -> None:
        """Runs `action` after `delay`: one waiting action per job and pod; the same action
        for the same pod keeps its first timer, another one replaces it."""
        self.recorder.event(job, "Normal", "ExecuteAction", f"Execute action {action} after {format_duration(delay)}")
        waiting = self._delayed.setdefault(req.job_key, {})
        old = waiting.get(req.pod_name)
        if old is not None:
            if old.action == action:
                return
            if old.timer is not None:
                old.timer.cancel()
        entry = _Delayed(req, action)
        entry.timer = self.ctx.clock.after(delay, lambda: self._fire(entry))
        waiting[req.pod_name] = entry

    def _fire(self, entry: _Delayed) -> None:
        waiting = self._delayed.get(entry.req.job_key, {})
        if waiting.get(entry.req.pod_name) is entry:
            del waiting[entry.req.pod_name]
            if not waiting:
                self._delayed.pop(entry.req.job_key, None)
        self.queue.add(replace(entry.req, action=entry.action))

    def _cancel_on_pod_event(self, req: Request) -> None:
        """A pod event cancels that pod's waiting action: a PodPending one when the same pod
        (same UID) reports any other phase event, a PodFailed or PodEvicted one when the pod
        (or its replacement of the same name) is Running."""
        if req.event not in POD_EVENTS or req.event == "PodPending":
            return
        waiting = self._delayed.get(req.job_key, {})
        entry = waiting.get(req.pod_name)
        if entry is None:
            return
        if entry.req.event == "PodPending":
            cancel = entry.req.pod_uid == req.pod_uid
        else:
            cancel = entry.req.event in ("PodFailed", "PodEvicted") and req.event == "PodRunning"
        if cancel:
            self._cancel(req.job_key, lambda w: w is entry)

    def _cancel_after(self, req: Request, action: str) -> None:
        """After a (non-internal) action ran, the waiting actions of the same type go: all
        job-level ones; task, pod and partition ones only for the same task, pod, partition."""
        kind = _action_type(action)

        def same(waiting: _Delayed) -> bool:
            if _action_type(waiting.action) != kind:
                return False
            if kind == "task":
                return waiting.req.task_name == req.task_name
            if kind == "pod":
                return waiting.req.pod_name == req.pod_name
            if kind == "partition":
                return (waiting.req.task_name, waiting.req.partition_id) == (req.task_name, req.partition_id)
            return True
        self._cancel(req.job_key, same)

    def _cancel(self, job_key: str, match) -> None:
        waiting = self._delayed.get(job_key, {})
        for pod_name, entry in list(waiting.items()):
            if match(entry):
                if entry.timer is not None:
                    entry.timer.cancel()
                del waiting[pod_name]
        if not waiting:
            self._delayed.pop(job_key, None)


def _target(req: Request, action: str) -> Target:
    """GetStateAction: what a targeted restart removes."""
    if action == "RestartTask":
        return Target(task=req.task_name)
    if action == "RestartPod":
        return Target(pod=req.pod_name)
    if action == "RestartPartition":
        return Target(task=req.task_name, partition=req.partition_id)
    return Target()


def _exit_code(pod: Obj) -> int | None:
    statuses = status_of(pod).get("containerStatuses") or []
    if statuses:
        terminated = dig(statuses[0], "state", "terminated")
        if terminated:
            return terminated.get("exitCode")
    return None
