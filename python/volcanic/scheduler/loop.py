"""The scheduler's loop: feed the engine from a Store's watch, run a session every schedule
period, and write its decisions back like Volcano's scheduler. The same loop runs in the
embedded cluster (on its virtual clock) and as `volcanic scheduler` on a real API server.

- Feeding is incremental: each watch event of a kind the engine reads is one upsert or
  delete; nothing is re-listed per cycle.
- A cycle with nothing new since a session that decided nothing is skipped: the engine is
  deterministic, so that session would decide the same nothing again.
- With `settle` (seconds), a session also starts once the watch has brought nothing new for
  that long, instead of waiting out the period, and as soon as it brings new work, busy or
  not: a new PodGroup (to enqueue) or a new pod that fills its gang up to minMember pods
  (to place), at most one such session every `settle` seconds. A Job's pods are bound a
  moment after the last one is created, not up to a period later. Without it (the embedded
  cluster's default) sessions run only every period, as Volcano's do.
- Binds go through the pods/binding call (spec.nodeName and PodScheduled), each recorded as
  a "Scheduled" Event on the pod as Volcano's cache records it. A failed bind is as in
  Volcano's SchedulerCache.Bind (pkg/scheduler/cache/cache.go): the pod gets a
  FailedScheduling Warning and PodScheduled=False with reason SchedulerError, the engine
  forgets the placement (Volcano's resyncTask: the pod is Pending again), and a later
  session places it once its gang is ready again, counting the pods already bound. Volcano
  does not evict the bound part of the gang, and neither does volcanic. Evictions set the DisruptionTarget
  condition, then delete the pod. PodGroup status, Queue status.allocated (the engine
  reports only those that changed) and the PodScheduled=False condition of unschedulable
  pods are written only when they change.
"""

from __future__ import annotations

from dataclasses import dataclass
import logging
import time
from typing import Any, Callable

from volcanic.errors import PluginError
from volcanic.kube.clock import Clock, rfc3339
from volcanic.kube.errors import StoreError
from volcanic.kube.events import Recorder
from volcanic.kube.informers import Handler, Informers
from volcanic.kube.objects import clone
from volcanic.kube.store import Store
from volcanic.scheduler.engine import SCHEDULER_KINDS, Decisions, Scheduler

log = logging.getLogger(__name__)

SCHEDULER_COMPONENT = "volcano"  # Volcano's scheduler names its event source after its scheduler names


class SchedulerLoop:
    def __init__(self, store: Store, informers: Informers, clock: Clock, conf: Any, period: float = 1.0,
                 recorder: Recorder | None = None, settle: float | None = None,
                 python_hook_budget: float | None = None) -> None:
        self.store, self.informers, self.clock, self.period = store, informers, clock, period
        self.settle = settle
        self.python_hook_budget = python_hook_budget  # kept for the engine of a new configuration
        self._settling = False  # a settle check is queued on the clock
        self._work_session = False  # a session for new work is queued on the clock
        self._gangs_filled = 0  # the engine's gangs_filled() the loop has answered
        self._changed_at = self._session_at = float("-inf")
        self.recorder = recorder or Recorder(store, clock.now, SCHEDULER_COMPONENT)
        # Called after each session with its decisions, its wall seconds (writes included) and
        # how many of its binds failed.
        self.on_session: Callable[[Decisions, float, int], None] | None = None
        self.engine = Scheduler(conf, python_hook_budget=python_hook_budget)
        self.sessions = 0
        self.seconds: dict[str, float] = {"session": 0.0}  # wall seconds, per action and in all
        self.last: Decisions | None = None
        self._dirty = True
        for kind in SCHEDULER_KINDS:
            informers.add_handler(kind, Handler(on_add=self._added, on_update=lambda old, new: self._upsert(new),
                                                on_delete=self._delete))
        clock.after(0.0, self._cycle)

    def reconfigure(self, conf: Any) -> None:
        """Replaces the engine by one with configuration `conf`, refilled from the cache;
        a bad configuration raises ConfigError and leaves the running engine in place."""
        engine = Scheduler(conf, python_hook_budget=self.python_hook_budget)
        for kind in SCHEDULER_KINDS:
            for obj in self.informers.list(kind):
                engine.upsert(obj)
        self.engine = engine
        self._gangs_filled = engine.gangs_filled()
        self._dirty = True

    def _changed(self) -> None:
        self._dirty = True
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
        """Only a new PodGroup, or a new pod (which alone can fill its gang), is new work."""
        self._upsert(obj)
        if obj["kind"] == "PodGroup":
            self._new_work()
        elif obj["kind"] == "Pod":
            filled = self.engine.gangs_filled()
            if filled != self._gangs_filled:
                self._gangs_filled = filled
                self._new_work()

    def _upsert(self, obj: dict) -> None:
        self._changed()
        try:
            self.engine.upsert(obj)
        except ValueError as e:  # a malformed object: the engine keeps what it had
            self.informers.errors.append(f"scheduler: {e}")

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
        self._changed()
        meta = obj["metadata"]
        self.engine.delete(obj["kind"], meta["name"], meta.get("namespace"))

    def _cycle(self) -> None:
        self.clock.after(self.period, self._cycle)
        self._session()

    def _session(self) -> None:
        self.informers.pump()
        if not self._dirty:
            return
        self._dirty = False
        self._session_at = self.clock.now()
        self.sessions += 1
        start = time.perf_counter()
        try:
            d = self.engine.run_once(self.clock.now(), changed_only=True)
        except PluginError as e:
            # A Python plugin failed: the session changed nothing; try again next period, as a
            # scheduler would after logging it.
            self.informers.errors.append(f"scheduler: {e}")
            self._dirty = True
            return
        seconds = time.perf_counter() - start
        self.seconds["session"] += seconds
        for action, seconds in d.action_seconds.items():
            self.seconds[action] = self.seconds.get(action, 0.0) + seconds
        self.last = d
        if d.binds or d.evictions or d.deferred:
            self._dirty = True
        failed = self._bind(d)
        self._evict(d)
        self._write_statuses(d, failed)
        if self.on_session is not None:
            self.on_session(d, time.perf_counter() - start, len(failed))

    def _bind(self, d: Decisions) -> list[tuple[dict | None, str]]:
        """Sends the session's binds; returns the pods whose bind failed (None for a pod no
        longer cached), each with why."""
        binds = [(*key.split("/", 1), node) for key, node in d.binds.items()]
        failed = []
        for (namespace, name, node), result in zip(binds, self.store.bind_many(binds)):
            if isinstance(result, Exception) and not isinstance(result, StoreError):
                raise result
            pod = self.informers.get("Pod", name, namespace)
            if isinstance(result, StoreError):
                log.info("scheduler: bind of %s/%s to %s failed: %s", namespace, name, node, result)
                self.engine.forget(f"{namespace}/{name}")
                failed.append((pod, f"failed to bind to node {node}: {result}"))
            elif pod is not None:
                self.recorder.event(pod, "Normal", "Scheduled", f"Successfully assigned {namespace}/{name} to {node}")
        return failed

    def _evict(self, d: Decisions) -> None:
        now = rfc3339(self.clock.now())
        for key in d.evictions:
            namespace, name = key.split("/", 1)
            pod = self.informers.get("Pod", name, namespace)
            if pod is None:
                self.engine.forget(key)
                continue
            status = clone(pod.get("status") or {})
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

    def _write_statuses(self, d: Decisions, failed_binds: list[tuple[dict | None, str]]) -> None:
        """PodGroup and Queue status and the PodScheduled=False conditions, sent as one
        concurrent batch (Volcano's job updater writes them from 16 workers); a write that
        fails (the object changed meanwhile) is made again by the next session that decides it."""
        writes: list[_StatusWrite] = []
        for key, status in d.podgroups.items():
            namespace, name = key.split("/", 1)
            pg = self.informers.get("PodGroup", name, namespace)
            if pg is not None:
                writes.append(_StatusWrite(dict(pg, status=dict(pg.get("status") or {}, **status))))
        for name, status in d.queues.items():
            q = self.informers.get("Queue", name)
            if q is not None:
                writes.append(_StatusWrite(dict(q, status=dict(q.get("status") or {}, allocated=status["allocated"]))))
        unschedulable = [(pod, "SchedulerError", message) for pod, message in failed_binds if pod is not None]
        for key, message in d.unschedulable.items():
            namespace, name = key.split("/", 1)
            pod = self.informers.get("Pod", name, namespace)
            if pod is not None:
                unschedulable.append((pod, "Unschedulable", message))
        writes += [w for w in (self._unschedulable(*u) for u in unschedulable) if w is not None]
        for write, result in zip(writes, self.store.update_status_many([w.obj for w in writes])):
            if isinstance(result, Exception) and not isinstance(result, StoreError):
                raise result
            if isinstance(result, StoreError):
                meta = write.obj["metadata"]
                log.info("scheduler: status of %s %s not written: %s", write.obj["kind"],
                         "/".join(filter(None, (meta.get("namespace"), meta["name"]))), result)
            elif write.warning is not None:
                self.recorder.event(write.obj, "Warning", "FailedScheduling", write.warning)

    def _unschedulable(self, pod: dict, reason: str, message: str) -> "_StatusWrite | None":
        """PodScheduled=False with `reason` and `message`, and a FailedScheduling Warning once
        written, unless the pod says so already (Volcano's taskUnschedulable)."""
        status = pod.get("status") or {}
        conds = status.get("conditions") or []
        if any(c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == reason
               and c.get("message") == message for c in conds):
            return None
        new = [c for c in conds if c.get("type") != "PodScheduled"]
        new.append({"type": "PodScheduled", "status": "False", "reason": reason, "message": message,
                    "lastTransitionTime": rfc3339(self.clock.now())})
        return _StatusWrite(dict(pod, status=dict(status, conditions=new)), warning=message)


@dataclass
class _StatusWrite:
    obj: dict                   # the object with the status to write
    warning: str | None = None  # a FailedScheduling Warning to record once it is written
