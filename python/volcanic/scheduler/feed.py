"""Feeding the scheduler's engine from a Store's watch (the first part of
volcanic.scheduler.loop).

Feeding is incremental: objects of the kinds the engine reads are upserted or deleted as the
watch brings them; nothing is re-listed per cycle. Updates are coalesced: the objects the watch
brought are upserted once the instant's other work is done (a timer at the same instant, run
last), each at its latest version, in the order they first came; a delete first upserts what
came before it. Every session starts with them upserted (flush). A pod's creation and its
group annotation, or its bind and its start, are then one upsert, and what a session reads and
when it runs are as if each event had been upserted at once.

An upsert that leaves the engine's view as it was (a status field it does not read, the echo
of a status the loop wrote, which is not even read again) is no change; a new object is a
change even when the engine ignores it. A new PodGroup, or a new pod that fills its gang up to
minMember pods, is new work (Cadence.new_work). A malformed object is refused by the engine
and said so on the object: a Warning Event, FailedScheduling on a pod, InvalidObject on
anything else, once per message and version of the object.
"""

from __future__ import annotations

from typing import Callable

from volcanic.kube.clock import Clock, Timer
from volcanic.kube.events import Recorder
from volcanic.kube.informers import Handler, Informers
from volcanic.kube.objects import Key, key_of, meta_of
from volcanic.scheduler.cadence import Cadence
from volcanic.scheduler.engine import SCHEDULER_KINDS, Scheduler

VOLUME_KINDS = ("PersistentVolumeClaim", "PersistentVolume")


class Feed:
    """`engine()` is the engine to feed (replaced on reconfiguration); `own_echo(obj)` tells the
    echo of the loop's own status write; `volumes_changed()` and `deleted(obj)` tell the
    writer what it may be waiting for."""

    def __init__(self, informers: Informers, clock: Clock, recorder: Recorder, cadence: Cadence,
                 engine: Callable[[], Scheduler], own_echo: Callable[[dict], bool],
                 volumes_changed: Callable[[], None], deleted: Callable[[dict], None]) -> None:
        self.informers, self.clock, self.recorder, self.cadence = informers, clock, recorder, cadence
        self._engine, self._own_echo = engine, own_echo
        self._volumes_changed, self._deleted = volumes_changed, deleted
        self._gangs_filled = 0  # the engine's gangs_filled() the feed has answered
        # (kind, key_of) -> (its latest version, whether it is new), in first-event order
        self._pending: dict[tuple[str, Key], tuple[dict, bool]] = {}
        self._flush_timer: Timer | None = None
        # (kind, namespace, name) -> (resourceVersion, message) of the last malformed-object Event
        self._refused_seen: dict[tuple, tuple] = {}
        # What the engine is shown of an object, None for nothing (the daemon's flags:
        # --scheduler-name, --node-selector, --default-queue, --priority-class): None shows all.
        self.view: Callable[[dict], dict | None] | None = None
        for kind in SCHEDULER_KINDS:
            informers.add_handler(kind, Handler(on_add=self._added, on_update=self._updated, on_delete=self._delete))

    def flush(self) -> None:
        """Upserts what the watch brought."""
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        pending, self._pending = self._pending, {}
        pods_added = volumes = False
        for obj, added in pending.values():
            volumes = volumes or obj["kind"] in VOLUME_KINDS
            if added:
                self.cadence.changed()
            self._upsert(obj)
            if added and obj["kind"] == "PodGroup":
                self.cadence.new_work()
            pods_added = pods_added or (added and obj["kind"] == "Pod")
        if volumes:
            self._volumes_changed()
        if pods_added:
            filled = self._engine().gangs_filled()
            if filled != self._gangs_filled:
                self._gangs_filled = filled
                self.cadence.new_work()

    def refill(self, engine: Scheduler) -> None:
        """Fills a new engine with everything the informers hold (the running one is current:
        flushed first)."""
        self.flush()
        for kind in SCHEDULER_KINDS:
            for obj in self.informers.list(kind):
                shown = obj if self.view is None else self.view(obj)
                if shown is None:
                    continue
                try:
                    engine.upsert(shown)
                except ValueError:
                    pass  # malformed: refused by the running engine too, and reported then (_upsert)
        self._gangs_filled = engine.gangs_filled()

    def _added(self, obj: dict) -> None:
        self._record(obj, added=True)

    def _updated(self, old: dict, obj: dict) -> None:
        """The echo of the loop's own status write carries what the engine took as written on
        top of what it had seen (the watch brings events in order): nothing to read, unless
        an earlier version waits to be upserted (this one then replaces it)."""
        if not self._own_echo(obj) or (obj["kind"], key_of(obj)) in self._pending:
            self._record(obj, added=False)

    def _record(self, obj: dict, added: bool) -> None:
        key = (obj["kind"], key_of(obj))
        waiting = self._pending.get(key)
        self._pending[key] = (obj, added or (waiting is not None and waiting[1]))
        if self._flush_timer is None:
            self._flush_timer = self.clock.after(0.0, self.flush, last=True)

    def _delete(self, obj: dict) -> None:
        """What came before the delete is upserted first, but not the object's own versions."""
        self._pending.pop((obj["kind"], key_of(obj)), None)
        self.flush()
        self.cadence.changed()
        meta = obj["metadata"]
        self._engine().delete(obj["kind"], meta["name"], meta.get("namespace"))
        self._deleted(obj)

    def _upsert(self, obj: dict) -> None:
        shown = obj if self.view is None else self.view(obj)
        if shown is None:  # not the engine's to see: gone from it, if it was there
            meta = obj["metadata"]
            self._engine().delete(obj["kind"], meta["name"], meta.get("namespace"))
            return
        try:
            if self._engine().upsert(shown):
                self.cadence.changed()
        except ValueError as e:  # a malformed object: the engine keeps what it had
            self.informers.errors.append(f"scheduler: {e}")
            self._refused(obj, str(e))

    def _refused(self, obj: dict, message: str) -> None:
        """Says on an object the engine refused why (its message names the field); only on
        errors, so it costs nothing on the usual path."""
        meta = meta_of(obj)
        key, seen = (obj.get("kind"), meta.get("namespace"), meta.get("name")), (meta.get("resourceVersion"), message)
        if self._refused_seen.get(key) == seen:
            return
        if len(self._refused_seen) >= 4096:  # bounded: entries of deleted objects are not dropped
            self._refused_seen.clear()
        self._refused_seen[key] = seen
        self.recorder.event(obj, "Warning", "FailedScheduling" if obj.get("kind") == "Pod" else "InvalidObject",
                            message)
