"""What controllers run on: cached listers fed by a watch, work queues, timers.

Controllers read through `Lister` (an informer cache, as client-go's listers) and write
through a `Store`; the same code runs on the embedded cluster and on a real API server.
Cached objects are shared and read-only: copy before changing (`clone`).

Costs: a watch event costs O(handlers + indexes of its kind); `by_index` is O(result).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterable, Protocol

from volcanic.cluster.kinds import KINDS
from volcanic.controllers import keys
from volcanic.cluster.store import Obj, Store

IndexFn = Callable[[Obj], Iterable[str]]
Key = tuple[str, str]  # namespace ("" when cluster-scoped), name


def key_of(obj: Obj) -> Key:
    meta = obj["metadata"]
    return (meta.get("namespace") or "", meta["name"])


def _label(obj: Obj, name: str) -> str | None:
    return (obj["metadata"].get("labels") or {}).get(name)


def _job_of_pod(pod: Obj) -> Iterable[str]:
    job = _label(pod, keys.JOB_NAME)
    return [f"{pod['metadata']['namespace']}/{job}"] if job else []


def _parent_of_queue(q: Obj) -> Iterable[str]:
    if q["metadata"]["name"] == "root":
        return []
    parent = (q.get("spec") or {}).get("parent") or "root"
    return [parent] if isinstance(parent, str) else []


def _node_of_pod(pod: Obj) -> Iterable[str]:
    node = (pod.get("spec") or {}).get("nodeName")
    return [node] if node and isinstance(node, str) else []


# Indexes every Lister keeps: (kind, index name) -> values an object is filed under.
INDEXES: dict[tuple[str, str], IndexFn] = {
    ("Pod", "job"): _job_of_pod,          # "ns/job" of a Volcano Job's pods
    ("Pod", "node"): _node_of_pod,
    ("Queue", "parent"): _parent_of_queue,
}


class Lister(Protocol):
    """Read-only cached objects."""

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None: ...
    def list(self, kind: str, namespace: str | None = None) -> list[Obj]: ...
    def by_index(self, kind: str, index: str, value: str) -> list[Obj]: ...


@dataclass
class Handler:
    on_add: Callable[[Obj], None] | None = None
    on_update: Callable[[Obj, Obj], None] | None = None
    on_delete: Callable[[Obj], None] | None = None


class Informers:
    """Caches of the given kinds, fed by one watch so handlers see events in commit order.

    A handler that raises (a bug, or an object it cannot read) does not stop delivery: the
    error is recorded in `errors` with the event, and the other handlers still run.
    """

    def __init__(self, store: Store, kinds: Iterable[str]) -> None:
        self.kinds = tuple(kinds)
        self.errors: list[str] = []
        self._watch = store.watch(self.kinds)
        self._cache: dict[str, dict[Key, Obj]] = {k: {} for k in self.kinds}
        self._index: dict[tuple[str, str], dict[str, dict[Key, Obj]]] = {
            ki: {} for ki in INDEXES if ki[0] in self._cache}
        self._handlers: dict[str, list[Handler]] = {k: [] for k in self.kinds}
        for kind in self.kinds:
            for obj in store.list(kind):
                self._put(kind, obj)

    def add_handler(self, kind: str, handler: Handler) -> None:
        """Handlers see events from now on; objects already cached are replayed as adds."""
        self._handlers[kind].append(handler)
        if handler.on_add:
            for obj in list(self._cache[kind].values()):
                self._call(handler.on_add, obj)

    def pump(self) -> bool:
        """Delivers every pending watch event; returns whether there was any."""
        if not self._watch:
            return False
        for event, obj in self._watch.drain():
            kind = obj["kind"]
            key = key_of(obj)
            old = self._cache[kind].get(key)
            if event == "DELETED":
                self._drop(kind, key)
                for h in self._handlers[kind]:
                    if h.on_delete:
                        self._call(h.on_delete, obj)
                continue
            if old is not None:
                self._drop(kind, key)
            self._put(kind, obj)
            for h in self._handlers[kind]:
                if old is None and h.on_add:
                    self._call(h.on_add, obj)
                elif old is not None and h.on_update:
                    self._call(h.on_update, old, obj)
        return True

    def _call(self, fn: Callable[..., None], *objs: Obj) -> None:
        try:
            fn(*objs)
        except Exception as e:  # noqa: BLE001 - see the class docstring
            meta = objs[-1]["metadata"]
            self.errors.append(f"{getattr(fn, '__qualname__', fn)}: {objs[-1]['kind']} "
                               f"{meta.get('namespace', '')}/{meta['name']}: {type(e).__name__}: {e}")

    # Lister.
    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        return self._cache[kind].get((namespace or "default", name) if self._namespaced(kind) else ("", name))

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        return [o for k, o in sorted(self._cache[kind].items()) if namespace is None or k[0] in ("", namespace)]

    def by_index(self, kind: str, index: str, value: str) -> list[Obj]:
        """Objects filed under `value`, in the order they were last written (as repeatable
        as the history; no sort, since controllers call this per request)."""
        return list(self._index[(kind, index)].get(value, {}).values())

    # Internals.
    @staticmethod
    def _namespaced(kind: str) -> bool:
        return KINDS[kind].namespaced

    def _put(self, kind: str, obj: Obj) -> None:
        key = key_of(obj)
        self._cache[kind][key] = obj
        for (k, name), fn in INDEXES.items():
            if k == kind:
                for value in fn(obj):
                    self._index[(k, name)].setdefault(value, {})[key] = obj

    def _drop(self, kind: str, key: Key) -> None:
        obj = self._cache[kind].pop(key)
        for (k, name), fn in INDEXES.items():
            if k == kind:
                for value in fn(obj):
                    bucket = self._index[(k, name)].get(value)
                    if bucket is not None:
                        bucket.pop(key, None)
                        if not bucket:
                            del self._index[(k, name)][value]


def backoff_seconds(failures: int, cap: float = 1000.0) -> float:
    """client-go's per-item exponential back-off: 5 ms doubling with each failure (the
    first failure waits 5 ms), at most `cap`."""
    return min(0.005 * 2.0 ** min(max(failures - 1, 0), 40), cap)


@dataclass(order=True)
class Timer:
    """Work due at a virtual time; cancel() makes it a no-op."""

    due: float
    seq: int
    fn: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


class Clock(Protocol):
    def now(self) -> float: ...
    def after(self, delay: float, fn: Callable[[], None]) -> Timer: ...


class WorkQueue:
    """Requests in arrival order; a request already waiting is not added twice."""

    def __init__(self) -> None:
        self._items: deque[Hashable] = deque()
        self._waiting: set[Hashable] = set()

    def add(self, request: Hashable) -> None:
        if request not in self._waiting:
            self._waiting.add(request)
            self._items.append(request)

    def pop(self) -> Hashable | None:
        if not self._items:
            return None
        request = self._items.popleft()
        self._waiting.discard(request)
        return request

    def __len__(self) -> int:
        return len(self._items)


@dataclass
class Context:
    """What a controller is given: where to write, where to read, and the time."""

    store: Store
    lister: Lister
    clock: Clock
    scheduler_names: tuple[str, ...] = ("volcano",)
    extra: dict[str, Any] = field(default_factory=dict)


class Controller:
    """Base of the controllers: handlers fill `queue`; the runner calls process() for each
    request. A StoreError (conflict, not found) makes the runner retry the request later."""

    name = "controller"

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.queue = WorkQueue()
        self._failures: dict[Hashable, int] = {}

    def handlers(self) -> dict[str, Handler]:
        return {}

    def retry_later(self, request: Hashable, limit: int | None = None, cap: float = 1000.0) -> int | None:
        """client-go's AddRateLimited: requeues `request` after the back-off of its failure
        count and returns that count; past `limit` failures it forgets the request instead
        and returns None (the caller gives up)."""
        n = self._failures.get(request, 0) + 1
        if limit is not None and n > limit:
            self.forget(request)
            return None
        self._failures[request] = n
        self.ctx.clock.after(backoff_seconds(n, cap=cap), lambda: self.queue.add(request))
        return n

    def forget(self, request: Hashable) -> None:
        """client-go's Forget: the request succeeded (or was dropped); its back-off restarts."""
        self._failures.pop(request, None)

    def process(self, request: Hashable) -> None:
        raise NotImplementedError


class Runner:
    """Delivers watch events and processes controllers' requests until nothing is left.

    A request that fails with a StoreError (a conflict, an object gone) is retried after a
    back-off, as client-go's rate-limited queue does. Any other exception is a bug or a
    malformed object: it is recorded in `errors` with the controller and request, and the
    request is dropped, so one bad object never stops the cluster.
    """

    MAX_STEPS = 1_000_000  # requests in one settle; more means controllers feed each other

    def __init__(self, informers: Informers, controllers: Iterable[Controller], clock: Clock) -> None:
        self.informers = informers
        self.controllers = list(controllers)
        self.clock = clock
        self.errors = informers.errors  # one list: handler and request failures, in order
        self._retries: dict[tuple[str, Hashable], int] = {}
        for c in self.controllers:
            for kind, handler in c.handlers().items():
                informers.add_handler(kind, handler)

    def settle(self) -> int:
        """Runs until no event or request is pending; returns how many requests ran."""
        from volcanic.cluster.store import StoreError
        steps = 0
        self.informers.pump()
        while True:
            ran = False
            for c in self.controllers:
                request = c.queue.pop()
                if request is None:
                    continue
                ran = True
                steps += 1
                try:
                    c.process(request)
                    self._retries.pop((c.name, request), None)
                except StoreError:
                    self._retry(c, request)
                except Exception as e:  # noqa: BLE001 - see the class docstring
                    self.errors.append(f"{c.name}: {request!r}: {type(e).__name__}: {e}")
                self.informers.pump()
            if not ran:
                return steps
            if steps > self.MAX_STEPS:
                raise RuntimeError(f"controllers did not settle after {steps} requests")

    def _retry(self, c: Controller, request: Hashable) -> None:
        n = self._retries.get((c.name, request), 0) + 1
        self._retries[(c.name, request)] = n
        self.clock.after(backoff_seconds(n, cap=60.0), lambda: c.queue.add(request))
