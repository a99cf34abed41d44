"""The scheduler's loop: feed the engine from a Store's watch, run a session every schedule
period, and write its decisions back like Volcano's scheduler. The same loop runs in the
embedded cluster (on its virtual clock) and as `volcanic scheduler` on a real API server.

- Feeding is incremental: objects of the kinds the engine reads are upserted or deleted as
  the watch brings them; nothing is re-listed per cycle. Updates are coalesced: the objects
  the watch brought are upserted once the instant's other work is done (a timer at the same
  instant, run last), each at its latest version, in the order they first came; a delete
  first upserts what came before it. Every session starts with them upserted. A pod's
  creation and its group annotation, or its bind and its start, are then one upsert, and
  what a session reads and when it runs are as if each event had been upserted at once.
- Sessions run at period boundaries (start + k * period), and only at those where something
  the engine reads changed since a session that decided nothing: the engine is
  deterministic, so that session would decide the same nothing again. The echo of a status
  the loop wrote is no change (the engine takes what it reported as written; a write that
  fails is forgotten, so decided again) and is not even read again, nor is a status field
  the engine does not read a change. The cycle is armed only then, so an idle cluster
  costs no timer at all (a simulated month of it is free) and the sessions that run, and
  when, are those of a loop woken every period. At its boundary the cycle runs after every
  other timer due then, so a session sees everything that happened at that instant; what
  comes once the clock is done with the instant (Cluster.apply() after run() returned at a
  boundary) waits for the next one, as it would for a cycle that ran.
- Time alone can change a decision (sla's waiting time running out): the engine reports the
  earliest such instant after each session (Decisions.wake_at), and the loop arms a timer for
  it that marks the next boundary's session due, as a change would. The latest session's
  instant replaces the one before; a loop without such decisions arms nothing.
- With `settle` (seconds), a session also starts once the watch has brought nothing new for
  that long, instead of waiting out the period, and as soon as it brings new work, busy or
  not: a new PodGroup (to enqueue) or a new pod that fills its gang up to minMember pods
  (to place), at most one such session every `settle` seconds. A Job's pods are bound a
  moment after the last one is created, not up to a period later. Without it (the embedded
  cluster's default) sessions run only every period, as Volcano's do.
- Binds and status writes are sent without waiting for their answers (Volcano binds in the
  background too; status writes go through volcanic.kube.status_writes, one out per object,
  the latest winning); collect() handles the answers as they come, at the next session or
  when the daemon's wait is woken. On the embedded store they are answered at once, within
  the session that sent them.
- Binds go through the pods/binding call (spec.nodeName and PodScheduled), each recorded as
  a "Scheduled" Event on the pod as Volcano's cache records it. A failed bind is as in
  Volcano's SchedulerCache.Bind (pkg/scheduler/cache/cache.go): the pod gets a
  FailedScheduling Warning and PodScheduled=False with reason SchedulerError, the engine
  forgets the placement (Volcano's resyncTask: the pod is Pending again), and a later
  session places it once its gang is ready again, counting the pods already bound. Volcano
  does not evict the bound part of the gang, and neither does volcanic. Evictions set the DisruptionTarget
  condition, then delete the pod. PodGroup status, Queue status.allocated (the engine
  reports only those that changed) and the PodScheduled=False condition of unschedulable
  pods are written only when they change. PodGroups get Volcano's Unschedulable and
  Scheduled Events (Decisions.podgroup_events), each only when it differs from the last.
- A bound pod with claims to bind (Decisions.volume_binds) is bound only once its volumes are
  (volcanic.scheduler.volume_binds: the PV's claimRef or the claim's selected-node annotation
  is written at once, the pod's binding once the PV controller has bound every claim); until
  then the engine holds its placement. A volume bind that fails is a failed bind.
- With the SchedulingGatesQueueAdmission feature gate, the queue-allocation gate of the pods
  a session let through (Decisions.ungate) is removed by an update of the pod that keeps its
  other gates (Volcano's SchGateManager, best effort). Its echo is a change: the next session
  places the pod. A pod that changed meanwhile (a Conflict) comes back through the watch and
  is decided again; one that is gone is dropped.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future
import logging
import math
import time
from typing import Any, Callable

from volcanic.errors import PluginError
from volcanic.kube.clock import Clock, Timer, rfc3339
from volcanic.kube.errors import StoreError
from volcanic.kube.events import Recorder
from volcanic.kube.informers import Handler, Informers
from volcanic.kube.keys import QUEUE_ALLOCATION_GATE
from volcanic.kube.objects import Key, describe, key_of, meta_of, spec_of, status_of
from volcanic.kube.status_writes import StatusWrite, StatusWrites
from volcanic.kube.store import Store
from volcanic.scheduler.conf import load_conf
from volcanic.scheduler.engine import SCHEDULER_KINDS, Decisions, Scheduler
from volcanic.scheduler.plugins import without_unknown_plugins
from volcanic.scheduler.volume_binds import VolumeBinds

log = logging.getLogger(__name__)

SCHEDULER_COMPONENT = "volcano"  # Volcano's scheduler names its event source after its scheduler names


class SchedulerLoop:
    def __init__(self, store: Store, informers: Informers, clock: Clock, conf: Any, period: float = 1.0,
                 recorder: Recorder | None = None, settle: float | None = None,
                 python_hook_budget: float | None = None, skip_unknown_plugins: bool = False,
                 feature_gates: frozenset[str] = frozenset()) -> None:
        self.store, self.informers, self.clock, self.period = store, informers, clock, period
        self.feature_gates = frozenset(feature_gates)  # Volcano's that are on (Scheduler's feature_gates)
        self.settle = settle
        self.python_hook_budget = python_hook_budget  # kept for the engine of a new configuration
        self._settling = False  # a settle check is queued on the clock
        self._work_session = False  # a session for new work is queued on the clock
        self._gangs_filled = 0  # the engine's gangs_filled() the loop has answered
        self._changed_at = self._session_at = float("-inf")
        self.recorder = recorder or Recorder(store, clock.now, SCHEDULER_COMPONENT)
        # Called after each session with its decisions, its wall seconds (the writes are sent,
        # not answered, by then) and the binds answered since the session before it: how many
        # succeeded and how many failed (binds are answered in the background).
        self.on_session: Callable[[Decisions, float, int, int], None] | None = None
        # As Volcano's scheduler, run without a plugin the configuration names but no one
        # provides (logged at error level); otherwise such a configuration is a ConfigError.
        self.skip_unknown_plugins = skip_unknown_plugins
        self.skipped_plugins: list[str] = []
        self.engine = self._new_engine(conf)
        self.sessions = 0
        self.seconds: dict[str, float] = {"session": 0.0}  # wall seconds, per action and in all
        self.last: Decisions | None = None
        self._dirty = False
        self._start = clock.now()
        self._next_cycle = 0  # the first boundary (start + k * period) a cycle may still run at
        self._cycle_timer: Timer | None = None
        self._wake_timer: Timer | None = None  # for the instant a decision changes with time alone
        self._answered: deque[tuple[str, str, Future]] = deque()  # bind answers: ("ns/pod", node, answer)
        self._binds_answered = [0, 0]  # binds collected since the last session: succeeded, failed
        self._status = StatusWrites(store, wake=informers.watch.wake)
        self._volume_binds = VolumeBinds(store, informers, clock, self._send_bind, self._bind_failed)
        # (kind, key_of) -> (its latest version, whether it is new), in first-event order
        self._pending: dict[tuple[str, Key], tuple[dict, bool]] = {}
        self._flush_timer: Timer | None = None
        # (kind, namespace, name) -> (resourceVersion, message) of the last malformed-object
        # Event (see _refused)
        self._refused_seen: dict[tuple, tuple] = {}
        for kind in SCHEDULER_KINDS:
            informers.add_handler(kind, Handler(on_add=self._added, on_update=self._updated,
                                                on_delete=self._delete))
        self._flush()
        self._mark_dirty()

    def reconfigure(self, conf: Any) -> None:
        """Replaces the engine by one with configuration `conf`, refilled from the cache;
        a bad configuration raises ConfigError and leaves the running engine in place."""
        engine = self._new_engine(conf)
        self._flush()  # the running engine is current until it is replaced
        for kind in SCHEDULER_KINDS:
            for obj in self.informers.list(kind):
                try:
                    engine.upsert(obj)
                except ValueError:
                    pass  # malformed: refused by the running engine too, and reported then (_upsert)
        self.engine = engine
        self._gangs_filled = engine.gangs_filled()
        self._mark_dirty()

    def _new_engine(self, conf: Any) -> Scheduler:
        skipped: list[str] = []
        if self.skip_unknown_plugins:
            conf, skipped = without_unknown_plugins(load_conf(conf))
        engine = Scheduler(conf, python_hook_budget=self.python_hook_budget, feature_gates=self.feature_gates)
        for name in skipped:
            log.error("Failed to get plugin %s.", name)  # Volcano's words
        self.skipped_plugins = skipped
        return engine

    def _mark_dirty(self) -> None:
        """A session is due at the next boundary: the cycle is armed for it."""
        self._dirty = True
        if self._cycle_timer is not None:
            return
        now = self.clock.now()
        k = max(self._next_cycle, math.ceil((now - self._start) / self.period))
        while self._boundary(k) < now or self.clock.passed(self._boundary(k)):
            k += 1  # a quotient rounded down, or a boundary at now that the clock is done with
        self._next_cycle = k
        self._cycle_timer = self.clock.after(self._boundary(k) - now, self._cycle, last=True)

    def _boundary(self, k: int) -> float:
        return self._start + k * self.period

    def _changed(self) -> None:
        self._mark_dirty()
        if self.settle is None:
            return
        self._changed_at = self.clock.now()
        if not self._settling:
            self._settling = True
            self.clock.after(self.settle, self._settled)

    def _settled(self) -> None:
        """A session once nothing changed for `settle` seconds since the last change and the
        last session; checked again later while changes keep coming."""
        quiet_from = max(self._changed_at, self._session_at) + self.settle
        if self._dirty and self.clock.now() < quiet_from:
            self.clock.after(quiet_from - self.clock.now(), self._settled)
            return
        self._settling = False
        self._session()

    def _added(self, obj: dict) -> None:
        self._record(obj, added=True)

    def _updated(self, old: dict, obj: dict) -> None:
        """The echo of the loop's own status write carries what the engine took as written on
        top of what it had seen (the watch brings events in order): nothing to read, unless
        an earlier version waits to be upserted (this one then replaces it)."""
        if not self._status.wrote(obj) or (obj["kind"], key_of(obj)) in self._pending:
            self._record(obj, added=False)

    def _record(self, obj: dict, added: bool) -> None:
        key = (obj["kind"], key_of(obj))
        waiting = self._pending.get(key)
        self._pending[key] = (obj, added or (waiting is not None and waiting[1]))
        if self._flush_timer is None:
            self._flush_timer = self.clock.after(0.0, self._flush, last=True)

    def _flush(self) -> None:
        """Upserts what the watch brought. Only a new PodGroup, or a new pod (which alone can
        fill its gang), is new work; a new object is a change even when the engine ignores it."""
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        pending, self._pending = self._pending, {}
        pods_added = volumes = False
        for obj, added in pending.values():
            volumes = volumes or obj["kind"] in ("PersistentVolumeClaim", "PersistentVolume")
            if added:
                self._changed()
            self._upsert(obj)
            if added and obj["kind"] == "PodGroup":
                self._new_work()
            pods_added = pods_added or (added and obj["kind"] == "Pod")
        if volumes:
            self._volume_binds.check_all()
        if pods_added:
            filled = self.engine.gangs_filled()
            if filled != self._gangs_filled:
                self._gangs_filled = filled
                self._new_work()

    def _upsert(self, obj: dict) -> None:
        """An update that leaves the engine's view as it was (a status field it does not read,
        the echo of a status it wrote) needs no session: it would decide what the last did."""
        try:
            if self.engine.upsert(obj):
                self._changed()
        except ValueError as e:  # a malformed object: the engine keeps what it had
            self.informers.errors.append(f"scheduler: {e}")
            self._refused(obj, str(e))

    def _refused(self, obj: dict, message: str) -> None:
        """Says on an object the engine refused as malformed why (the engine's message names
        the field): a Warning Event, FailedScheduling on a pod, InvalidObject on anything
        else, once per message and version of the object. Only on errors, so it costs
        nothing on the usual path."""
        meta = meta_of(obj)
        key, seen = (obj.get("kind"), meta.get("namespace"), meta.get("name")), (meta.get("resourceVersion"), message)
        if self._refused_seen.get(key) == seen:
            return
        if len(self._refused_seen) >= 4096:  # bounded: entries of deleted objects are not dropped
            self._refused_seen.clear()
        self._refused_seen[key] = seen
        self.recorder.event(obj, "Warning", "FailedScheduling" if obj.get("kind") == "Pod" else "InvalidObject",
                            message)

    def _new_work(self) -> None:
        """With settle: a session once the events in hand are in, at most one every settle."""
        if self.settle is None or self._work_session:
            return
        self._work_session = True
        self.clock.after(max(0.0, self._session_at + self.settle - self.clock.now()), self._work_arrived)

    def _work_arrived(self) -> None:
        self._work_session = False
        self._session()

    def _delete(self, obj: dict) -> None:
        """What came before the delete is upserted first, but not the object's own versions."""
        self._pending.pop((obj["kind"], key_of(obj)), None)
        self._flush()
        self._changed()
        meta = obj["metadata"]
        self.engine.delete(obj["kind"], meta["name"], meta.get("namespace"))
        if obj["kind"] == "Pod":
            self._volume_binds.drop(f"{meta.get('namespace')}/{meta['name']}")
        elif obj["kind"] in ("PersistentVolumeClaim", "PersistentVolume"):
            self._volume_binds.check_all()

    def _cycle(self) -> None:
        self._cycle_timer = None
        self._next_cycle += 1
        self._session()

    def _session(self) -> None:
        self.informers.pump()
        self.collect()
        if not self._dirty:
            return
        self._dirty = False
        self._session_at = self.clock.now()
        self.sessions += 1
        start = time.perf_counter()
        try:
            d = self.engine.run_once(self.clock.now(), changed_only=True, timings=False)
        except PluginError as e:
            # A Python plugin failed: the session changed nothing; try again next period, as a
            # scheduler would after logging it.
            self.informers.errors.append(f"scheduler: {e}")
            self._mark_dirty()
            return
        seconds = time.perf_counter() - start
        self.seconds["session"] += seconds
        for action, seconds in d.action_seconds.items():
            self.seconds[action] = self.seconds.get(action, 0.0) + seconds
        self.last = d
        self._wake_at(d.wake_at)
        if d.binds or d.evictions or d.deferred or (d.podgroups and d.pending):
            self._mark_dirty()  # the next session's view is not this one's: it may decide more
        self._bind(d)
        self._evict(d)
        self._ungate(d)
        self._write_statuses(d)
        self.collect()  # on the embedded store, every write is answered already
        (bound, failed), self._binds_answered = self._binds_answered, [0, 0]
        if self.on_session is not None:
            self.on_session(d, time.perf_counter() - start, bound, failed)

    def _wake_at(self, at: float | None) -> None:
        """A session is due at `at` (None: no decision waits on time): the latest session's
        answer replaces the one before."""
        if self._wake_timer is not None:
            self._wake_timer.cancel()
            self._wake_timer = None
        if at is not None:
            self._wake_timer = self.clock.after(max(0.0, at - self.clock.now()), self._woken)

    def _woken(self) -> None:
        self._wake_timer = None
        self._mark_dirty()

    def collect(self) -> None:
        """Handles the answers to earlier sessions' binds and status writes that came in,
        after upserting what the watch brought before them."""
        self._flush()
        while self._answered:
            self._binds_answered[0 if self._bound(*self._answered.popleft()) else 1] += 1
        for write, result in self._status.collect():
            if isinstance(result, StoreError):
                log.info("scheduler: status of %s not written: %s", describe(write.obj), result)
                self._status_not_written(write.obj)
            elif isinstance(result, Exception):
                raise result
            elif write.warning is not None:
                self.recorder.event(write.obj, "Warning", "FailedScheduling", write.warning)

    def _status_not_written(self, obj: dict) -> None:
        """The engine took the status as written (its echo is no change): undo that, so the
        next session decides it again."""
        if obj["kind"] in ("PodGroup", "Queue"):
            meta = obj["metadata"]
            self.engine.forget_status(obj["kind"], f"{meta['namespace']}/{meta['name']}" if obj["kind"] == "PodGroup"
                                      else meta["name"])
            self._mark_dirty()

    def _bind(self, d: Decisions) -> None:
        """Sends the session's binds without waiting for them (Volcano binds in the background
        too); collect() handles each answer. A pod with volumes to bind waits for them."""
        for key, node in d.binds.items():
            claims = d.volume_binds.get(key)
            if claims:
                self._volume_binds.start(key, node, claims, d.volume_bind_timeout, d.bind_annotations.get(key))
            else:
                self._send_bind(key, node, d.bind_annotations.get(key))

    def _send_bind(self, key: str, node: str, annotations: dict[str, str] | None) -> None:
        namespace, name = key.split("/", 1)
        self.store.bind_async(namespace, name, node, annotations).add_done_callback(
            lambda answer, key=key, node=node: self._answer(key, node, answer))

    def _answer(self, key: str, node: str, answer: Future) -> None:
        """From the thread that got the answer: queue it for collect(), wake the loop."""
        self._answered.append((key, node, answer))
        self.informers.watch.wake()

    def _bound(self, key: str, node: str, future: Future) -> bool:
        """A bind's answer: a Scheduled Event, or, for a failed bind, the placement forgotten
        and the pod's condition written (Volcano's resyncTask); False for a failed one."""
        error = future.exception()
        if error is not None and not isinstance(error, StoreError):
            raise error
        namespace, name = key.split("/", 1)
        pod = self.informers.get("Pod", name, namespace)
        if error is None:
            if pod is not None:
                self.recorder.event(pod, "Normal", "Scheduled", f"Successfully assigned {key} to {node}")
            return True
        self._bind_failed(key, node, str(error))
        return False

    def _bind_failed(self, key: str, node: str, error: str) -> None:
        """Volcano's resyncTask: the placement forgotten, the pod's condition written."""
        log.info("scheduler: bind of %s to %s failed: %s", key, node, error)
        namespace, name = key.split("/", 1)
        pod = self.informers.get("Pod", name, namespace)
        if pod is not None:  # else deleted meanwhile: the engine has dropped it already
            self.engine.forget(key)
            self._mark_dirty()
            self._unschedulable(pod, "SchedulerError", f"failed to bind to node {node}: {error}")

    def _evict(self, d: Decisions) -> None:
        if not d.evictions:
            return
        now = rfc3339(self.clock.now())
        for key in d.evictions:
            namespace, name = key.split("/", 1)
            pod = self.informers.get("Pod", name, namespace)
            if pod is None:
                self.engine.forget(key)
                continue
            status = dict(status_of(pod))  # conditions are replaced, not changed
            status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != "DisruptionTarget"]
            status["conditions"].append({"type": "DisruptionTarget", "status": "True", "lastTransitionTime": now,
                                         "reason": "PreemptionByScheduler",
                                         "message": "volcano: preempting to accommodate a higher priority pod"})
            try:
                self.store.update_status(dict(pod, status=status))
                self.store.delete("Pod", name, namespace)
            except StoreError as e:
                log.info("scheduler: eviction of %s failed: %s", key, e)
                self.engine.forget(key)

    def _ungate(self, d: Decisions) -> None:
        """Removes the queue-allocation gate of each pod the session let through, keeping any
        other gate (Volcano's RemoveVolcanoSchGate). Best effort, as Volcano's: a failed update is
        logged; the pod's next version, or the next session, decides it again."""
        for key in d.ungate:
            namespace, name = key.split("/", 1)
            pod = self.informers.get("Pod", name, namespace)
            if pod is None:
                continue  # gone: the engine drops it with the watch's delete
            spec = dict(spec_of(pod))
            gates = [g for g in spec.pop("schedulingGates", None) or []
                     if not (isinstance(g, dict) and g.get("name") == QUEUE_ALLOCATION_GATE)]
            if gates:
                spec["schedulingGates"] = gates
            try:
                self.store.update(dict(pod, spec=spec))
            except StoreError as e:
                log.info("scheduler: queue-allocation gate of %s not removed: %s", key, e)
                self._mark_dirty()

    def _write_statuses(self, d: Decisions) -> None:
        """PodGroup and Queue status, PodGroup Events and the PodScheduled=False conditions, sent
        in the background (Volcano's job updater writes them from 16 workers); a write that
        fails (the object changed meanwhile) is made again by the next session that decides it."""
        for key, status in d.podgroups.items():
            namespace, name = key.split("/", 1)
            pg = self.informers.get("PodGroup", name, namespace)
            if pg is not None:
                self._status.write(StatusWrite(dict(pg, status=dict(status_of(pg), **status))))
        for key, (type_, reason, message) in d.podgroup_events.items():
            namespace, name = key.split("/", 1)
            pg = self.informers.get("PodGroup", name, namespace)
            if pg is not None:
                self.recorder.event(pg, type_, reason, message)
        for name, status in d.queues.items():
            q = self.informers.get("Queue", name)
            if q is not None:
                self._status.write(StatusWrite(dict(q, status=dict(status_of(q),
                                                                   allocated=status["allocated"]))))
        for key, message in d.unschedulable.items():
            namespace, name = key.split("/", 1)
            pod = self.informers.get("Pod", name, namespace)
            if pod is not None:
                self._unschedulable(pod, "Unschedulable", message)

    def _unschedulable(self, pod: dict, reason: str, message: str) -> None:
        """PodScheduled=False with `reason` and `message`, and a FailedScheduling Warning once
        written, unless the pod says so already (Volcano's taskUnschedulable)."""
        status = status_of(pod)
        conds = status.get("conditions") or []
        if any(c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == reason
               and c.get("message") == message for c in conds):
            return
        new = [c for c in conds if c.get("type") != "PodScheduled"]
        new.append({"type": "PodScheduled", "status": "False", "reason": reason, "message": message,
                    "lastTransitionTime": rfc3339(self.clock.now())})
        self._status.write(StatusWrite(dict(pod, status=dict(status, conditions=new)), warning=message))
