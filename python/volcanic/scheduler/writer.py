"""Writing what a scheduling session decided back to the Store (the last part of
volcanic.scheduler.loop), as Volcano's scheduler does.

- Binds and status writes are sent without waiting for their answers (Volcano binds in the
  background too; status writes go through volcanic.kube.status_writes, one out per object,
  the latest winning); collect() handles the answers as they come, at the next session or when
  the daemon's wait is woken. On the embedded store they are answered at once, within the
  session that sent them. The echo of a status written is no change for the engine (it takes
  what it reported as written; a write that fails is forgotten, so decided again).
- Binds go through the pods/binding call (spec.nodeName and PodScheduled), each recorded as a
  "Scheduled" Event on the pod as Volcano's cache records it. A failed bind is as in Volcano's
  SchedulerCache.Bind (pkg/scheduler/cache/cache.go): the pod gets a FailedScheduling Warning
  and PodScheduled=False with reason SchedulerError, the engine forgets the placement
  (Volcano's resyncTask: the pod is Pending again), and a later session places it once its
  gang is ready again, counting the pods already bound. Volcano does not evict the bound part
  of the gang, and neither does volcanic.
- A bound pod with claims to bind (Decisions.volume_binds) is bound only once its volumes are
  (volcanic.scheduler.volume_binds); until then the engine holds its placement. A volume bind
  that fails is a failed bind.
- Evictions set the DisruptionTarget condition, then delete the pod. PodGroup status, Queue
  status.allocated (the engine reports only those that changed) and the PodScheduled=False
  condition of unschedulable pods are written only when they change. PodGroups get Volcano's
  Unschedulable and Scheduled Events (Decisions.podgroup_events), each only when it differs
  from the last.
- With the SchedulingGatesQueueAdmission feature gate, the queue-allocation gate of the pods a
  session let through (Decisions.ungate) is removed by an update of the pod that keeps its
  other gates (Volcano's SchGateManager, best effort). Its echo is a change: the next session
  places the pod. A pod that changed meanwhile (a Conflict) comes back through the watch and
  is decided again; one that is gone is dropped.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future
import logging
from typing import Callable

from volcanic.kube.clock import Clock, rfc3339
from volcanic.kube.errors import StoreError
from volcanic.kube.events import Recorder
from volcanic.kube.informers import Informers
from volcanic.kube.keys import QUEUE_ALLOCATION_GATE
from volcanic.kube.objects import describe, spec_of, status_of
from volcanic.kube.status_writes import StatusWrite, StatusWrites
from volcanic.kube.store import Store
from volcanic.scheduler.cadence import Cadence
from volcanic.scheduler.engine import Decisions, Scheduler
from volcanic.scheduler.feed import VOLUME_KINDS
from volcanic.scheduler.volume_binds import VolumeBinds

log = logging.getLogger(__name__)


class Writer:
    """`engine()` is the engine whose decisions are written (to forget what failed)."""

    def __init__(self, store: Store, informers: Informers, clock: Clock, recorder: Recorder, cadence: Cadence,
                 engine: Callable[[], Scheduler]) -> None:
        self.store, self.informers, self.clock, self.recorder, self.cadence = store, informers, clock, recorder, cadence
        self._engine = engine
        self._answered: deque[tuple[str, str, Future]] = deque()  # bind answers: ("ns/pod", node, answer)
        self._binds_answered = [0, 0]  # binds collected since take_answered: succeeded, failed
        self._status = StatusWrites(store, wake=informers.watch.wake)
        self._volume_binds = VolumeBinds(store, informers, clock, self._send_bind, self._bind_failed)

    def collect(self) -> None:
        """Handles the answers to earlier sessions' binds and status writes that came in."""
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
            self._engine().forget_status(obj["kind"], f"{meta['namespace']}/{meta['name']}" if obj["kind"] == "PodGroup"
                                      else meta["name"])
            self.cadence.mark_dirty()

    def write(self, d: Decisions) -> None:
        """Sends what the session decided: binds, evictions, gate removals, statuses and Events."""
        self._bind(d)
        self._evict(d)
        self._ungate(d)
        self._write_statuses(d)

    def take_answered(self) -> tuple[int, int]:
        """The binds answered since the last call: how many succeeded, how many failed."""
        (bound, failed), self._binds_answered = self._binds_answered, [0, 0]
        return bound, failed

    def own_echo(self, obj: dict) -> bool:
        """Whether `obj` is the echo of a status this writer wrote."""
        return self._status.wrote(obj)

    def volumes_changed(self) -> None:
        self._volume_binds.check_all()

    def deleted(self, obj: dict) -> None:
        """A watched object is gone: a pod waiting for its volumes is not bound; a claim or a
        volume gone may fail one."""
        if obj["kind"] == "Pod":
            meta = obj["metadata"]
            self._volume_binds.drop(f"{meta.get('namespace')}/{meta['name']}")
        elif obj["kind"] in VOLUME_KINDS:
            self._volume_binds.check_all()

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
            lambda answer: self._answer(key, node, answer))

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
            self._engine().forget(key)
            self.cadence.mark_dirty()
            self._unschedulable(pod, "SchedulerError", f"failed to bind to node {node}: {error}")

    def _evict(self, d: Decisions) -> None:
        if not d.evictions:
            return
        now = rfc3339(self.clock.now())
        for key in d.evictions:
            namespace, name = key.split("/", 1)
            pod = self.informers.get("Pod", name, namespace)
            if pod is None:
                self._engine().forget(key)
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
                self._engine().forget(key)

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
                self.cadence.mark_dirty()

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
