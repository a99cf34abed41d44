"""Volcano's queue controller (reference §2.6; `pkg/controllers/queue/*.go`, `queue/state/*.go`).

Requests are `(queue name, action, event)`: Queue adds, PodGroup adds, phase changes and
deletes ask for a SyncQueue of the PodGroup's queue; a bus Command targeting a Queue is
deleted first (so it runs at most once) and then becomes an OpenQueue / CloseQueue request
with event CommandIssued. `("command", namespace, name)` requests consume Commands.

A sync patches `spec.parent` to root when empty, counts the queue's PodGroups by phase (for
the metrics, `podgroup_counts`: Volcano's syncQueue no longer writes them into status,
queue_controller_action.go), applies the state machine and writes `status.state` only when
it changed, keeping the rest of the status (the scheduler's `allocated`, `reservation`).

State machine (state "" is Open):
    state    OpenQueue   CloseQueue                        SyncQueue
    Open     Open        Closed if no PodGroups, else Closing  Open
    Closed   Open        Closed                            Closed
    Closing  Open        Closed if no PodGroups, else Closing  Closed once no PodGroups
    Unknown  Open        Closed if no PodGroups, else Closing  Unknown
"No PodGroups" counts every PodGroup of the queue, whatever its phase, as Volcano does.

Hierarchy: closing a queue closes its open children and marks them
`volcano.sh/closed-by-parent: "true"`; opening a queue re-opens the children so marked, and
sets the mark of the opened queue to "false"; a queue cannot be opened while its parent is
Closed or Closing (the request is retried with the workqueue's back-off, 15 times, then
dropped with a Warning Event); root cannot be closed. A CloseQueue Command on a queue
closed by its parent clears the mark, so re-opening the parent leaves it closed.
"""

from __future__ import annotations

from typing import Hashable

from volcanic.controllers.events import controller_manager_recorder
from volcanic.controllers.runtime import Context, Controller
from volcanic.kube.errors import NotFound, StoreError
from volcanic.kube.informers import Handler
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj, annotation, as_map, clone, spec_of, status_of
from volcanic.kube.queues import default_queues
from volcanic.kube.store import Store

OPEN, CLOSED, CLOSING, UNKNOWN = "Open", "Closed", "Closing", "Unknown"
OPEN_QUEUE, CLOSE_QUEUE, SYNC_QUEUE = "OpenQueue", "CloseQueue", "SyncQueue"
COMMAND_ISSUED, OUT_OF_SYNC = "CommandIssued", "OutOfSync"
CLOSED_BY_PARENT = "volcano.sh/closed-by-parent"
# PodGroup phase -> status field counting it.
COUNTS = {"Pending": "pending", "Running": "running", "Unknown": "unknown",
          "Inqueue": "inqueue", "Completed": "completed"}
MAX_REQUEUE = 15  # --max-requeue-num default


class QueueError(Exception):
    """A failed queue request (Volcano's `error` from handleQueue): retried, then dropped."""


def ensure_default_queues(store: Store) -> None:
    """Creates queues root and default (volcanic.kube.queues), Open, if they are missing (the
    scheduler cache's newDefaultAndRootQueue, plus the Open state the queue controller would
    give them)."""
    for queue in default_queues():
        if store.get("Queue", queue["metadata"]["name"]) is not None:
            continue
        q = store.create(queue)
        store.update_status(dict(q, status={"state": OPEN, "allocated": {}}))


def _state(q: Obj) -> str:
    return status_of(q).get("state") or ""


def _is_queue_target(cmd: Obj) -> bool:
    target = as_map(cmd.get("target"))
    return isinstance(target, dict) and target.get("kind") == "Queue" and bool(target.get("name"))


class QueueController(Controller):
    name = "queue-controller"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._recorder = controller_manager_recorder(ctx)
        # queue -> PodGroup phase -> count, kept from the PodGroup events (a sync would
        # otherwise walk every PodGroup of the queue).
        self._phases: dict[str, dict[str, int]] = {}

    # Event handlers.
    def handlers(self) -> dict[str, Handler]:
        return {
            "Queue": Handler(on_add=self._queue_added, on_update=self._queue_updated, on_delete=self._queue_deleted),
            "PodGroup": Handler(on_add=self._pg_added, on_update=self._pg_updated,
                                on_delete=self._pg_deleted),
            "Command": Handler(on_add=self._command_added),
        }

    def _sync(self, name: str) -> None:
        self.queue.add((name, SYNC_QUEUE, OUT_OF_SYNC))

    def _queue_added(self, q: Obj) -> None:
        self._sync(q["metadata"]["name"])

    def _queue_deleted(self, q: Obj) -> None:
        if metrics := self.ctx.extra.get("queue_metrics"):
            metrics.remove(q["metadata"]["name"])

    def _queue_updated(self, old: Obj, new: Obj) -> None:
        if spec_of(old).get("parent") != spec_of(new).get("parent"):
            self._sync(new["metadata"]["name"])

    @staticmethod
    def _pg_queue(pg: Obj) -> str:
        return spec_of(pg).get("queue") or "default"

    def _count(self, pg: Obj, delta: int) -> None:
        phases = self._phases.setdefault(self._pg_queue(pg), {})
        phase = status_of(pg).get("phase") or ""
        phases[phase] = phases.get(phase, 0) + delta

    def _pg_added(self, pg: Obj) -> None:
        self._count(pg, 1)
        self._sync(self._pg_queue(pg))

    def _pg_deleted(self, pg: Obj) -> None:
        self._count(pg, -1)
        self._sync(self._pg_queue(pg))

    def _pg_updated(self, old: Obj, new: Obj) -> None:
        old_queue, new_queue = self._pg_queue(old), self._pg_queue(new)
        old_phase, new_phase = status_of(old).get("phase"), status_of(new).get("phase")
        if old_queue == new_queue and old_phase == new_phase:
            return  # the counts and the queue's state stay
        self._count(old, -1)
        self._count(new, 1)
        if old_queue != new_queue:
            self._sync(old_queue)
        self._sync(new_queue)

    def _command_added(self, cmd: Obj) -> None:
        if _is_queue_target(cmd):
            self.queue.add(("command", cmd["metadata"].get("namespace") or "default", cmd["metadata"]["name"]))

    # Requests.
    def process(self, request: Hashable) -> None:
        if request[0] == "command":
            self._consume_command(request[1], request[2])
            return
        try:
            self._handle_queue(*request)
        except QueueError as e:
            self._failed(request, str(e))
            return
        self.forget(request)

    def _consume_command(self, namespace: str, name: str) -> None:
        cmd = self.ctx.lister.get("Command", name, namespace)
        if cmd is None:
            return
        try:
            self.ctx.store.delete("Command", name, namespace, uid=cmd["metadata"].get("uid"))
        except StoreError as e:
            if e.reason in ("NotFound", "Conflict"):
                return  # consumed already (or replaced by another Command of that name)
            raise
        action = cmd.get("action") or ""
        target = cmd["target"]["name"]
        if action not in (OPEN_QUEUE, CLOSE_QUEUE):
            # Volcano runs any other action as a SyncQueue, silently; we say so.
            q = self.ctx.lister.get("Queue", target)
            self._recorder.event(q if q is not None else cmd, "Warning", action or "UnknownAction",
                   f"Command {namespace}/{name}: action {action!r} is not a queue action "
                   f"(OpenQueue, CloseQueue); queue {target} is synced instead")
            action = SYNC_QUEUE
        self.queue.add((target, action, COMMAND_ISSUED))

    def _failed(self, request: Hashable, message: str) -> None:
        """handleQueueErr: retried with client-go's per-item back-off (5 ms doubling) up to
        --max-requeue-num times, then dropped with a Warning Event."""
        if self.retry_later(request, limit=MAX_REQUEUE) is not None:
            return
        name, action, _ = request
        q = self.ctx.lister.get("Queue", name)
        if q is not None:
            self._recorder.event(q, "Warning", action, f"{action} queue failed for {message}")

    def _handle_queue(self, name: str, action: str, event: str) -> None:
        q = self.ctx.lister.get("Queue", name)
        if q is None:
            return
        state = _state(q)
        if state not in ("", OPEN, CLOSED, CLOSING, UNKNOWN):
            raise QueueError(f"queue {name} state {state} is invalid")
        if event == COMMAND_ISSUED and action == CLOSE_QUEUE and annotation(q, CLOSED_BY_PARENT) == "true":
            # A manual close: re-opening the parent must not re-open this queue.
            q = self._set_annotation(q, CLOSED_BY_PARENT, "false")
        try:
            self._act(q, state, action)
        except QueueError as e:  # handleQueue's error wrapping
            raise QueueError(f"sync queue {name} failed for {e}, event is {event}, action is {action}") from None

    def _act(self, q: Obj, state: str, action: str) -> None:
        """The state machine of the module docstring: the action for `state`, and the state
        its sync moves the queue to."""
        if action == OPEN_QUEUE:
            if state in ("", OPEN):
                self._sync_queue(q, OPEN)
            else:
                self._open_queue(q)
        elif action == CLOSE_QUEUE:
            if state == CLOSED:
                self._sync_queue(q, CLOSED)
            elif state == CLOSING:
                self._sync_queue(q, self._closed_or_closing(q))
            else:
                self._close_queue(q)
        elif state in ("", OPEN):
            self._sync_queue(q, OPEN)
        else:  # Closed stays Closed, Unknown stays Unknown
            self._sync_queue(q, self._closed_or_closing(q) if state == CLOSING else state)

    # The three queue actions (queue_controller_action.go).
    def _podgroups(self, name: str) -> int:
        """How many PodGroups the queue has (all phases)."""
        return sum(self._phases.get(name, {}).values())

    def _closed_or_closing(self, q: Obj) -> str:
        return CLOSING if self._podgroups(q["metadata"]["name"]) else CLOSED

    def podgroup_counts(self, name: str) -> dict[str, int]:
        """The queue's PodGroups by phase (`pending`, `running`, `unknown`, `inqueue`,
        `completed`; zero counts omitted), what Volcano exports as queue metrics."""
        phases = self._phases.get(name, {})
        return {COUNTS[p]: n for p, n in sorted(phases.items()) if p in COUNTS and n}

    def _sync_queue(self, q: Obj, state: str) -> None:
        if metrics := self.ctx.extra.get("queue_metrics"):  # Volcano's UpdateQueueMetrics in syncQueue
            metrics.set(q["metadata"]["name"], self.podgroup_counts(q["metadata"]["name"]))
        q = self._ensure_parent(q)
        old = status_of(q)
        status = dict(old, state=state)
        status.setdefault("allocated", {})
        if status != old:
            q = self.ctx.store.update_status(dict(q, status=status))
        self._sync_hierarchy(q)

    def _open_queue(self, q: Obj) -> None:
        self._open_children(q)
        if _state(q) != OPEN:
            self._write_state(q, OPEN)
        self._set_annotation(q, CLOSED_BY_PARENT, "false")

    def _close_queue(self, q: Obj) -> None:
        name = q["metadata"]["name"]
        if _state(q) not in (CLOSED, CLOSING):
            if name == "root":
                return  # "Root queue cannot be closed"
            for child in self._children(name):
                if _state(child) not in (CLOSED, CLOSING):
                    self._set_annotation(child, CLOSED_BY_PARENT, "true")
                    self.queue.add((child["metadata"]["name"], CLOSE_QUEUE, ""))
        state = self._closed_or_closing(q)
        if state != _state(q):
            self._write_state(q, state)
            self._recorder.event(q, "Normal", CLOSE_QUEUE, "Close queue succeed")

    # Hierarchy (syncHierarchicalQueue, openHierarchicalQueue).
    def _children(self, name: str) -> list[Obj]:
        return [c for c in self.ctx.lister.by_index("Queue", "parent", name) if c["metadata"]["name"] != name]

    def _parent_of(self, q: Obj) -> str:
        return spec_of(q).get("parent") or "root"

    def _sync_hierarchy(self, q: Obj) -> None:
        name = q["metadata"]["name"]
        if name == "root":
            return
        parent_name = self._parent_of(q)
        parent = self.ctx.lister.get("Queue", parent_name)
        if parent is None:
            raise QueueError(KINDS["Queue"].not_found(parent_name, plural=False))
        parent_state, state = _state(parent), _state(q)
        if parent_state in (CLOSED, CLOSING):
            if state not in (CLOSED, CLOSING):
                self._set_annotation(q, CLOSED_BY_PARENT, "true")
                self.queue.add((name, CLOSE_QUEUE, ""))
        elif parent_state == OPEN:
            if state in (CLOSED, CLOSING) and annotation(q, CLOSED_BY_PARENT) == "true":
                self.queue.add((name, OPEN_QUEUE, ""))

    def _open_children(self, q: Obj) -> None:
        name, parent_name = q["metadata"]["name"], spec_of(q).get("parent") or ""
        if parent_name not in ("", "root"):
            parent = self.ctx.lister.get("Queue", parent_name)
            if parent is None:
                raise QueueError(f"Failed to get parent queue {parent_name} of queue {name}: "
                                 + KINDS["Queue"].not_found(parent_name, plural=False))
            if _state(parent) in (CLOSING, CLOSED):
                raise QueueError(f"Failed to open queue {name} because its parent queue {parent_name} "
                                 "is closing or closed. Open the parent queue first.")
        for child in self._children(name):
            if annotation(child, CLOSED_BY_PARENT) == "true":
                self.queue.add((child["metadata"]["name"], OPEN_QUEUE, ""))

    # Writes.
    def _write_state(self, q: Obj, state: str) -> Obj:
        """Sets status.state, keeping the rest of the status (read-modify-write of the cached
        object: a Conflict, e.g. with the scheduler's allocated, is retried by the Runner)."""
        status = dict(status_of(q), state=state)
        status.setdefault("allocated", {})
        return self.ctx.store.update_status(dict(q, status=status))

    def _ensure_parent(self, q: Obj) -> Obj:
        """updateQueueParent: a JSON patch adding spec.parent=root."""
        if q["metadata"]["name"] == "root" or spec_of(q).get("parent"):
            return q
        def add_parent(o: Obj) -> None:
            spec = o.setdefault("spec", {})
            if not spec.get("parent"):
                spec["parent"] = "root"
        return self._patch(q["metadata"]["name"], add_parent)

    def _set_annotation(self, q: Obj, key: str, value: str) -> Obj:
        """updateQueueAnnotation: a patch unless the annotation already has the value."""
        if annotation(q, key) == value:
            return q
        return self._patch(q["metadata"]["name"],
                           lambda o: o["metadata"].setdefault("annotations", {}).__setitem__(key, value))

    def _patch(self, name: str, change) -> Obj:
        """A patch: applied to the stored object, so no resourceVersion precondition."""
        current = self.ctx.store.get("Queue", name)
        if current is None:
            raise NotFound("Queue", "", name, f'Queue "{name}" not found')
        obj = clone(current)
        change(obj)
        return self.ctx.store.update(obj)
