"""The job controller's two workhorses, SyncJob and KillJob (reference §2.3,
`job_controller_actions.go`), plus the targeted kill of RestartTask and RestartPod.

Both finish the same way: recount the job's pods into status, let the state's update
function move the phase (appending a condition when it does), write the status. SyncJob's
pod creates and status write are not waited for: sync_job returns what it sent (CreatesOut,
when it stopped at creates not answered yet; WriteOut, its status write), and the controller
files it in its JobExpectations and takes the answers before the job's next action. On a
real API server a wait of tens of milliseconds per sync kept the controller from the next
job's pods. A write goes with the resourceVersion of the job as last known, the informer's
copy or, when newer, the answer to the controller's own last write, so a job synced again
before the watch brings that write back is not a conflict.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Callable

from volcanic.controllers.job import build
from volcanic.controllers.job.held import SPEC_ERROR, held_status, spec_problem, without_hold
from volcanic.controllers.job.plugins import JobPlugin, PluginError, plugins_of
from volcanic.controllers.job.plugins.common import task_named
from volcanic.controllers.runtime import Context
from volcanic.kube.clock import rfc3339, seconds_of
from volcanic.kube.duration import format_duration
from volcanic.kube.errors import AdmissionError, AlreadyExists, InvalidObject, NotFound, StoreError
from volcanic.kube.events import Recorder
from volcanic.kube.keys import OUT_OF_SYNC, PARTITION_ID, TASK_SPEC
from volcanic.kube.objects import Obj, annotation, as_map, clone, dig, label, resource_version, spec_of, status_of
from volcanic.kube.store import all_done

UpdateFn = Callable[[dict], bool]  # changes status in place; True when the phase changed
RETAIN_NONE: frozenset[str] = frozenset()
RETAIN_SOFT = frozenset({"Succeeded", "Failed"})
COUNTERS = ("pending", "running", "succeeded", "failed", "terminating", "unknown")
_PHASE_COUNTER = {"Pending": "pending", "Running": "running", "Succeeded": "succeeded", "Failed": "failed"}


class SyncError(Exception):
    """An action could not finish (a pod not created, a missing claim); it is retried."""


@dataclass(frozen=True)
class CreatesOut:
    """SyncJob stopped at pod creates not answered yet: `answered` is done when they all
    are; the controller then takes them (JobActions.created) and runs the sync again."""

    creates: list[tuple[Obj, Future[Obj]]]
    answered: Future[None]

    @classmethod
    def of(cls, creates: list[tuple[Obj, Future[Obj]]]) -> "CreatesOut":
        return cls(creates, all_done([created for _, created in creates]))


@dataclass(frozen=True)
class WriteOut:
    """SyncJob's status write, sent and not waited for: `answered` gives the written job."""

    answered: Future[Obj]


# What an action sent and did not wait for; None when it waited for all it sent.
Sent = CreatesOut | WriteOut | None


# A created pod the watch has not brought after this long is no longer counted (client-go's
# ExpectationsTimeout): the watch missed it, and the informer's view is the truth again.
UNSEEN_SECONDS = 300.0

# Reason of the Event recorded when pods could not be created (FailedCreatePodReason).
FAILED_CREATE = "FailedCreate"


@dataclass(frozen=True)
class Target:
    """What a targeted kill removes: the pods of a task, one pod, or (partition set, even to
    "") the pods of one partition of a task."""

    task: str = ""
    pod: str = ""
    partition: str | None = None

    def matches(self, pod: Obj) -> bool:
        if self.pod:
            return pod["metadata"]["name"] == self.pod
        if annotation(pod, TASK_SPEC) != self.task:
            return False
        return self.partition is None or label(pod, PARTITION_ID) == self.partition


class JobActions:
    def __init__(self, ctx: Context, recorder: Recorder) -> None:
        self.ctx, self.recorder = ctx, recorder
        # job uid -> the last PodGroupPending message recorded (one Event per new message);
        # dropped by forget() when the job is deleted.
        self._pending_notes: dict[str, str] = {}
        # job uid -> (generation, message) of the last JobSpecError Event recorded (see hold()),
        # and (generation, the schema's message or None) of the last spec checked.
        self._spec_notes: dict[str, tuple[Any, str]] = {}
        self._spec_checked: dict[str, tuple[Any, str | None]] = {}
        # What a job's spec determines, made once: see _memo(). Bounded (cleared when full),
        # so entries of deleted jobs need not be dropped.
        self._derived: dict[tuple, Any] = {}
        self._written: dict[str, Obj] = {}  # job key -> the answer to its last status write
        # job key -> pod name -> (when, pod) for pods this controller created that the watch
        # has not brought yet (client-go's ControllerExpectations): a sync in between counts
        # them instead of creating them again (a 409 each) and writing a lower pending count.
        self._unseen: dict[str, dict[str, tuple[float, Obj]]] = {}

    def forget(self, job: Obj) -> None:
        """Drops what is kept about a deleted job."""
        self._pending_notes.pop(job["metadata"].get("uid", ""), None)
        self._spec_notes.pop(job["metadata"].get("uid", ""), None)
        self._spec_checked.pop(job["metadata"].get("uid", ""), None)
        self._written.pop(job_key(job), None)
        self._unseen.pop(job_key(job), None)

    def observed(self, key: str, pod_name: str) -> None:
        """The watch brought a pod of job `key`: it is the informer's to count from now on."""
        unseen = self._unseen.get(key)
        if unseen is not None:
            unseen.pop(pod_name, None)
            if not unseen:
                del self._unseen[key]

    def written(self, job: Obj) -> None:
        """Remembers the answer to a status write (see _latest)."""
        self._written[job_key(job)] = job

    # Jobs stored past the CRD schema (volcanic.controllers.job.held).
    def spec_problem(self, job: Obj) -> str | None:
        """The API server's message if the Job CRD's schema refuses the job's spec, else
        None; checked once per spec generation (about 30 us a job)."""
        meta = job["metadata"]
        checked = self._spec_checked.get(meta["uid"])
        if checked is None or checked[0] != meta.get("generation") or meta.get("generation") is None:
            checked = self._spec_checked[meta["uid"]] = (meta.get("generation"), spec_problem(job))
        return checked[1]

    def hold(self, job: Obj, message: str) -> None:
        """Says on the job why it is held: a Warning Event JobSpecError, once per message and
        spec generation, and status.state's reason and message (written only when they
        change, so a held job costs nothing more per sync). Nothing else is done with it."""
        meta = job["metadata"]
        note = (meta.get("generation"), message)
        current = self._latest(job) or job
        status = held_status(current.get("status"), message, self._now())
        if status == current.get("status"):
            return
        if self._spec_notes.get(meta["uid"]) != note:
            self._spec_notes[meta["uid"]] = note
            self.recorder.event(job, "Warning", SPEC_ERROR, message)
        self.written(self.ctx.store.update_status(dict(current, status=status)))

    def pods_of(self, job: Obj) -> list[Obj]:
        return self.ctx.lister.by_index("Pod", "job", job_key(job))

    # KillJob and the targeted kill.
    def kill_job(self, job: Obj, retain: frozenset[str], update: UpdateFn | None = None) -> None:
        """Deletes the job's pods but those in a retained phase; bumps status.version;
        deletes the PodGroup."""
        if job["metadata"].get("deletionTimestamp"):
            return
        job = clone(job)
        status = job.setdefault("status", {})
        if status.get("retryCount", 0) >= job["spec"].get("maxRetry", 3) - 1:
            retain = RETAIN_SOFT  # the last retry keeps finished pods for inspection
        counts = self._kill(job, lambda pod: True, retain)
        status["version"] = status.get("version", 0) + 1
        for plugin in self._plugins(job, killing=True):
            plugin.on_job_delete(job, self.ctx.store)
        self._finish(job, counts, update, killed=True)
        try:
            self.ctx.store.delete("PodGroup", build.podgroup_name(job), job["metadata"]["namespace"])
        except NotFound:
            pass

    def kill_target(self, job: Obj, target: Target, update: UpdateFn | None = None) -> None:
        """Deletes the pods of one task, one pod or one partition (RestartTask, RestartPod,
        RestartPartition), whatever their phase; no version bump, the PodGroup stays. A
        partition that names no pod is skipped, status and phase untouched."""
        if job["metadata"].get("deletionTimestamp"):
            return
        if target.partition is not None and not any(target.matches(p) for p in self.pods_of(job)):
            return
        job = clone(job)
        job.setdefault("status", {})
        self._finish(job, self._kill(job, target.matches, RETAIN_NONE), update, killed=True)

    def _kill(self, job: Obj, selected: Callable[[Obj], bool], retain: frozenset[str]) -> "_Counts":
        return self._count(job, lambda pod: selected(pod) and status_of(pod).get("phase") not in retain)

    def _count(self, job: Obj, kill: Callable[[Obj], bool] = lambda pod: False) -> "_Counts":
        """The job's pods as status counters; a pod `kill` selects is deleted and counted as
        terminating."""
        counts = _Counts()
        for pod in self.pods_of(job):
            if pod["metadata"].get("deletionTimestamp"):
                counts.terminating += 1
            elif kill(pod):
                self.delete_pod(pod)
                counts.terminating += 1
            else:
                counts.add(pod)
        return counts

    def delete_pod(self, pod: Obj) -> None:
        """Marks the pod out of sync (so its deletion is not taken as an eviction), then
        deletes it."""
        meta = pod["metadata"]
        marked = clone(pod)
        marked["metadata"].setdefault("annotations", {})[OUT_OF_SYNC] = "true"
        try:
            self.ctx.store.update(marked)
            self.ctx.store.delete("Pod", meta["name"], meta["namespace"])
        except NotFound:
            pass

    # SyncJob.
    def sync_job(self, job: Obj, update: UpdateFn | None = None) -> Sent:
        """Initialises the job, keeps its PodGroup in line and, once the PodGroup is
        admitted (Inqueue or later), creates the pods it lacks and deletes extra ones.
        Returns what it sent and did not wait for: the pod creates it stopped at
        (CreatesOut), else its status write (WriteOut), else None (nothing to write).

        Before that, the job's pods are still counted into status. Volcano's syncJob
        writes the old counters back instead, so a job restarted while its queue no longer
        admits it keeps `terminating` for pods long gone and stays Restarting until
        something else changes; counting lets the Restarting update see them gone."""
        if job["metadata"].get("deletionTimestamp"):
            return None
        job = clone(job)
        status = job.setdefault("status", {})
        phase = dig(status, "state", "phase") or ""
        if phase in ("", "Pending"):
            self._initiate(job)
        else:
            self._on_update(job)
        pg = self._podgroup(job)
        pg_phase = dig(pg, "status", "phase") or ""
        self._note_pending(job, pg)
        admitted = pg_phase not in ("", "Pending")
        counts = self._create_and_delete_pods(job) if admitted else self._count(job)
        if isinstance(counts, CreatesOut):
            return counts
        write = self._finish(job, counts, update, background=True)
        return None if write is None else WriteOut(write)

    def _initiate(self, job: Obj) -> None:
        status = job["status"]
        if not dig(status, "state", "phase"):
            status["state"] = {"phase": "Pending", "lastTransitionTime": self._now()}
            status["minAvailable"] = job["spec"].get("minAvailable", 0)
            _add_condition(status, "Pending", self._now())
        for plugin in self._plugins(job):
            plugin.on_job_add(job, self.ctx.store)
        self._ensure_volumes(job)
        self._ensure_podgroup(job)

    def _on_update(self, job: Obj) -> None:
        for plugin in self._plugins(job):
            plugin.on_job_update(job, self.ctx.store)
        self._ensure_podgroup(job)

    def _plugins(self, job: Obj, killing: bool = False) -> list[JobPlugin]:
        """The job's plugins. A plugin list that cannot be built (an unknown plugin, a bad
        argument) is a Warning Event and fails SyncJob, which is retried and, after the
        retries, terminated; a kill (`killing`) goes on without plugins, so that a job
        whose plugins never parse can still be killed (Volcano would fail the kill too and
        retry it forever)."""
        try:
            return self._memo("plugins", job, lambda: plugins_of(job))
        except PluginError as e:
            if killing:
                self.recorder.event(job, "Warning", "PluginError", f"{e}; the job is killed without its plugins")
                return []
            self.recorder.event(job, "Warning", "PluginError", str(e))
            raise SyncError(str(e)) from None

    def _ensure_volumes(self, job: Obj) -> None:
        """createJobIOIfNotExist: a named claim must exist; a claim template becomes a PVC
        named `<job>-pvc-<index>` whose name is written back into the job's spec."""
        meta, volumes = job["metadata"], job["spec"].get("volumes") or []
        named = False
        for i, v in enumerate(volumes):
            claim = v.get("volumeClaimName")
            if claim:
                if self.ctx.lister.get("PersistentVolumeClaim", claim, meta["namespace"]) is None:
                    message = f"pvc {claim} is not found, the job will be in the Pending state until the PVC is created"
                    self.recorder.event(job, "Warning", "PVCError", message)
                    raise SyncError(message)
                continue
            if v.get("volumeClaim") is None:
                continue
            claim = f"{meta['name']}-pvc-{i}"
            try:
                self.ctx.store.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                       "metadata": {"name": claim, "namespace": meta["namespace"],
                                                    "ownerReferences": [build.owner_reference(job)]},
                                       "spec": clone(v["volumeClaim"])})
            except AlreadyExists:
                pass
            v["volumeClaimName"] = claim
            job["status"].setdefault("controlledResources", {})[f"volume-pvc-{claim}"] = claim
            named = True
        if named:
            latest = clone(self.ctx.lister.get("Job", meta["name"], meta["namespace"]) or job)
            latest["spec"]["volumes"] = volumes
            updated = self.ctx.store.update(latest)
            meta["resourceVersion"] = updated["metadata"]["resourceVersion"]

    def _podgroup(self, job: Obj) -> Obj | None:
        ns = job["metadata"]["namespace"]
        return (self.ctx.lister.get("PodGroup", build.podgroup_name(job), ns)
                or self.ctx.lister.get("PodGroup", job["metadata"]["name"], ns))

    def _memo(self, what: str, job: Obj, make: Callable[[], Any], inputs: tuple = ()) -> Any:
        """What a job's spec determines (its plugins, its minResources) is made once per spec
        generation and `inputs` (what else it depends on, e.g. PriorityClass values): every
        sync would otherwise re-parse flags and quantities."""
        key = (what, job["metadata"]["uid"], job["metadata"].get("generation"), inputs)
        if key not in self._derived:
            if len(self._derived) >= 8192:
                self._derived.clear()
            self._derived[key] = make()
        return self._derived[key]

    def _ensure_podgroup(self, job: Obj) -> None:
        # Task order in minResources follows the values of the templates' PriorityClasses,
        # which can change while the job does not.
        min_res = self._memo("minResources", job, lambda: build.min_resources(job, self.ctx.lister),
                             inputs=build.template_priorities(job, self.ctx.lister))
        want = build.build_podgroup(job, self.ctx.lister, min_res)
        have = self._podgroup(job)
        if have is None:
            try:
                self.ctx.store.create(want)
            except AlreadyExists:
                pass
            return
        fields = ("priorityClassName", "minMember", "minResources", "minTaskMember", "subGroupPolicy")
        spec = spec_of(have)
        if all(spec.get(f) == want["spec"].get(f) for f in fields):
            return
        new = clone(have)
        for f in fields:
            if f in want["spec"]:
                new["spec"][f] = want["spec"][f]
            else:
                new["spec"].pop(f, None)
        self.ctx.store.update(new)

    def _note_pending(self, job: Obj, pg: Obj | None) -> None:
        for c in dig(pg, "status", "conditions") or []:
            if c.get("type") == "Unschedulable" and c.get("status") == "True":
                message = (f"PodGroup {job['metadata']['namespace']}:{job['metadata']['name']} "
                           f"unschedule,reason: {c.get('message', '')}")
                if self._pending_notes.get(job["metadata"]["uid"]) != message:
                    self._pending_notes[job["metadata"]["uid"]] = message
                    self.recorder.event(job, "Warning", "PodGroupPending", message)
                return

    def _create_and_delete_pods(self, job: Obj) -> "_Counts | CreatesOut":
        """Creates the pods the tasks lack and deletes the out-of-sync and scaled-down ones;
        returns the job's pods as counters. The creates go out together; while some are
        unanswered (a real API server) the sync stops and returns them (CreatesOut), to run
        again once they are: as Volcano's syncJob waits for its creates before it deletes
        pods or writes status. A refused pod fails the sync (see created())."""
        counts = _Counts()
        existing = {p["metadata"]["name"]: p for p in self.pods_of(job)}
        existing.update((name, pod) for name, pod in self._unseen_pods(job_key(job)) if name not in existing)
        alive = sum(1 for p in existing.values() if not p["metadata"].get("deletionTimestamp"))
        to_delete: list[Obj] = []
        to_create: list[tuple[int, Obj]] = []  # (whether past its task's minAvailable, pod)
        for task in job["spec"].get("tasks") or []:
            missing = []
            for i in range(task.get("replicas") or 0):
                name = build.pod_name(job, task["name"], i)
                pod = existing.pop(name, None)
                if pod is None:
                    missing.append((int(i >= (task.get("minAvailable") or 0)), self._new_pod(job, task, i)))
                elif pod["metadata"].get("deletionTimestamp"):
                    counts.terminating += 1
                elif annotation(pod, OUT_OF_SYNC):
                    to_delete.append(pod)
                else:
                    counts.add(pod)
            if missing and self._dependencies_ready(job, task):
                to_create += missing
            for pod in [p for p in existing.values()
                        if annotation(p, TASK_SPEC) == task["name"]]:
                to_delete.append(existing.pop(pod["metadata"]["name"]))  # scaled down
        # The pods that bring the job to its minAvailable go out first (each task's own
        # minimum first), the rest once they are answered: Jobs created together then each
        # have their gang's pods before any has its extras, so a session amid the burst sees
        # every gang (Volcano's e2e "Schedule Multiple Jobs"; Volcano's workers create
        # several Jobs' pods at once).
        to_create.sort(key=lambda entry: entry[0])
        gang = max(0, (job["spec"].get("minAvailable") or 0) - alive)
        creates = self._create([pod for _, pod in to_create[:gang]]) if gang < len(to_create) else []
        if not all(created.done() for _, created in creates):
            return CreatesOut.of(creates)
        creates += self._create([pod for _, pod in to_create[len(creates):]])
        if not all(created.done() for _, created in creates):
            return CreatesOut.of(creates)
        self.created(job, creates, counts)
        for pod in to_delete:
            if not pod["metadata"].get("deletionTimestamp"):
                self.delete_pod(pod)
                counts.terminating += 1
        return counts

    def _create(self, pods: list[Obj]) -> list[tuple[Obj, Future[Obj]]]:
        return [(pod, self.ctx.store.create_async(pod)) for pod in pods]

    def created(self, job: Obj, creates: list[tuple[Obj, Future[Obj]]], counts: "_Counts | None" = None) -> None:
        """Takes the answers to a sync's pod creates: each created pod is counted (into
        `counts`) and expected until the watch brings it. A pod the API server refused
        (admission, validation) is a FailedCreate Warning Event listing every refused pod,
        and a SyncError (retried, then TerminateJob)."""
        failures = []
        for pod, answer in creates:
            result = answer.exception() or answer.result()
            if isinstance(result, AlreadyExists):
                self._expect(job, pod)  # made by an earlier create: the watch will bring it
            elif isinstance(result, (AdmissionError, InvalidObject, StoreError)):
                failures.append(f"failed to create pod {pod['metadata']['name']}, err: {result}")
            elif isinstance(result, Exception):
                raise result
            else:
                if counts is not None:
                    counts.add(result)
                self._expect(job, result)
                self._observe_creation(job, result)
        if failures:
            self.recorder.event(job, "Warning", FAILED_CREATE, f"Error creating pods: [{' '.join(failures)}]")
            raise SyncError(f"failed to create {len(failures)} pods of job "
                            f"{job['metadata']['namespace']}/{job['metadata']['name']}")

    def _observe_creation(self, job: Obj, pod: Obj) -> None:
        """Volcano's job-to-pod creation latency: the two creationTimestamps apart (whole
        seconds, as the API server writes them), in milliseconds."""
        metrics = self.ctx.extra.get("job_metrics")
        created = seconds_of(pod["metadata"].get("creationTimestamp"))
        made = seconds_of(job["metadata"].get("creationTimestamp"))
        if metrics is not None and created is not None and made is not None:
            metrics.pod_created((created - made) * 1000)

    def _expect(self, job: Obj, pod: Obj) -> None:
        """A pod of the job exists that the watch may not have brought yet: counted, not
        created again, until it does (or UNSEEN_SECONDS pass)."""
        meta = pod["metadata"]
        if self.ctx.lister.get("Pod", meta["name"], meta["namespace"]) is None:
            self._unseen.setdefault(job_key(job), {})[meta["name"]] = (self.ctx.clock.now(), pod)

    def _unseen_pods(self, key: str) -> list[tuple[str, Obj]]:
        """Job `key`'s pods created but not brought by the watch yet, lapsed ones dropped."""
        unseen = self._unseen.get(key, {})
        for name in [n for n, (created, _) in unseen.items() if self.ctx.clock.now() - created > UNSEEN_SECONDS]:
            del unseen[name]
        return [(name, pod) for name, (_, pod) in unseen.items()]

    def _new_pod(self, job: Obj, task: Obj, index: int) -> Obj:
        pod = build.build_pod(job, task, index)
        for plugin in self._plugins(job):
            plugin.on_pod_create(pod, job)
        return pod

    def _dependencies_ready(self, job: Obj, task: Obj) -> bool:
        depends = as_map(task.get("dependsOn"))
        names = depends.get("name") or []
        if not names:
            return True
        ready = [self._task_ready(job, n) for n in names]
        if depends.get("iteration") == "any" and len(names) > 1:
            return any(ready)
        return all(ready)

    def _task_ready(self, job: Obj, task_name: str) -> bool:
        task = task_named(job, task_name)
        if task is None:
            return False
        need = task.get("minAvailable") if task.get("minAvailable") is not None else task.get("replicas") or 0
        ready = 0
        for pod in self.pods_of(job):
            if annotation(pod, TASK_SPEC) != task_name:
                continue
            status = status_of(pod)
            if status.get("phase") == "Succeeded" or (status.get("phase") == "Running" and all(
                    c.get("ready") for c in status.get("containerStatuses") or [])):
                ready += 1
        return ready >= need

    # Status.
    def _finish(self, job: Obj, counts: "_Counts", update: UpdateFn | None, killed: bool = False,
                background: bool = False) -> Future[Obj] | None:
        """Writes the counted status; returns the write when it went in the background."""
        status = job["status"]
        without_hold(status)  # the job runs (its spec passes), or its phase moves on
        for name in COUNTERS:
            status.pop(name, None)
            if getattr(counts, name):
                status[name] = getattr(counts, name)
        status["taskStatusCount"] = counts.by_task
        if not status["taskStatusCount"]:
            del status["taskStatusCount"]
        status["minAvailable"] = job["spec"].get("minAvailable", 0)
        return self._write_status(job, update, killed, background)

    def _write_status(self, job: Obj, update: UpdateFn | None, killed: bool,
                      background: bool) -> Future[Obj] | None:
        """Writes the status unless it is what the job has already; a `background` write is
        sent and returned, not waited for."""
        status = job["status"]
        if update is not None and update(status):
            now = self._now()
            status["state"]["lastTransitionTime"] = now
            _add_condition(status, status["state"]["phase"], now)
        if killed:  # KillJob: runningDuration = last transition - creation
            end = seconds_of(dig(status, "state", "lastTransitionTime"))
            start = seconds_of(job["metadata"].get("creationTimestamp"))
            status["runningDuration"] = format_duration(max(0.0, (self.ctx.clock.now() if end is None else end)
                                                        - (start or 0.0)))
        current = self._latest(job)
        if current is not None:
            if current.get("status") == status:
                return None
            job["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        if background:
            return self.ctx.store.update_status_async(job)
        self.written(self.ctx.store.update_status(job))
        return None

    def _latest(self, job: Obj) -> Obj | None:
        """The job as last known: the informer's copy or, when newer, the answer to our own
        last status write, which the watch may not have brought yet."""
        meta = job["metadata"]
        cached = self.ctx.lister.get("Job", meta["name"], meta["namespace"])
        written = self._written.get(job_key(job))
        if cached is None or written is None or written["metadata"].get("uid") != cached["metadata"].get("uid"):
            return cached
        return written if (resource_version(written) or 0) > (resource_version(cached) or 0) else cached

    def _now(self) -> str:
        return rfc3339(self.ctx.clock.now())


def job_key(job: Obj) -> str:
    """"namespace/name", the key a job's requests and pods are filed under."""
    return f"{job['metadata']['namespace']}/{job['metadata']['name']}"


class _Counts:
    """classifyAndAddUpPodBaseOnPhase and calcPodStatus."""

    def __init__(self) -> None:
        self.pending = self.running = self.succeeded = self.failed = self.terminating = self.unknown = 0
        self.by_task: dict[str, Any] = {}

    def add(self, pod: Obj) -> "_Counts":
        phase = status_of(pod).get("phase") or "Pending"
        counter = _PHASE_COUNTER.get(phase, "unknown")
        setattr(self, counter, getattr(self, counter) + 1)
        task = annotation(pod, TASK_SPEC)
        if task:
            phases = self.by_task.setdefault(task, {"phase": {}})["phase"]
            phases[phase] = phases.get(phase, 0) + 1
        return self


def _add_condition(status: dict, phase: str, now: str) -> None:
    """Each phase appears once among the conditions; the newest goes last."""
    conditions = [c for c in status.get("conditions") or [] if c.get("status") != phase]
    conditions.append({"status": phase, "lastTransitionTime": now})
    status["conditions"] = conditions
