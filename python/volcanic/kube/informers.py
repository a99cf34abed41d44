"""Cached listers fed by a Store's watch, as client-go's shared informers.

Readers (controllers, the scheduler's status writers) read through a `Lister`; cached objects
are shared and read-only: copy before changing (`clone`). Costs: a watch event costs
O(handlers + indexes of its kind); `by_index` is O(result).
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Protocol, Sequence

from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Key, Obj
from volcanic.kube.store import Store

IndexFn = Callable[[Obj], Sequence[str]]  # kept with the object until it is dropped
Indexes = Mapping[tuple[str, str], IndexFn]  # (kind, index name) -> values an object is filed under


class Lister(Protocol):
    """Read-only cached objects."""

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None: ...
    def list(self, kind: str, namespace: str | None = None) -> list[Obj]: ...
    # builtins.list: within the class body, `list` is the method above.
    def by_index(self, kind: str, index: str, value: str) -> builtins.list[Obj]: ...


@dataclass
class Handler:
    on_add: Callable[[Obj], None] | None = None
    on_update: Callable[[Obj, Obj], None] | None = None
    on_delete: Callable[[Obj], None] | None = None


class Informers:
    """Caches of the given kinds, fed by one watch so handlers see events in commit order.

    pump() delivers what the watch has; the cache starts empty and fills from the watch's
    initial ADDED events. An ADDED or MODIFIED event for a cached object is an update, and a
    DELETED one for an object not cached is ignored, so a watch that re-lists after a
    disconnect (and replays what it has) keeps the cache right; handlers of a DELETED
    tombstone (an object without a resourceVersion) get the last cached state.

    A handler that raises (a bug, or an object it cannot read) does not stop delivery: the
    error is recorded in `errors` with the event, and the other handlers still run.
    """

    def __init__(self, store: Store, kinds: Iterable[str], indexes: Indexes | None = None) -> None:
        self.kinds = tuple(kinds)
        self.errors: list[str] = []
        self.watch = store.watch(self.kinds)
        self._cache: dict[str, dict[Key, Obj]] = {k: {} for k in self.kinds}
        self._index: dict[tuple[str, str], dict[str, dict[Key, Obj]]] = {
            ki: {} for ki in (indexes or {}) if ki[0] in self._cache}
        # kind -> (its index's buckets, the function filing an object in them)
        self._indexes: dict[str, list[tuple[dict[str, dict[Key, Obj]], IndexFn]]] = {k: [] for k in self.kinds}
        for ki, fn in (indexes or {}).items():
            if ki in self._index:
                self._indexes[ki[0]].append((self._index[ki], fn))
        # kind -> key -> the values each of its kind's indexes filed the cached object under
        self._filed: dict[str, dict[Key, list[Sequence[str]]]] = {k: {} for k in self.kinds}
        # kind -> the handlers' callbacks per event (handlers without one are left out)
        self._on_add: dict[str, list[Callable[[Obj], None]]] = {k: [] for k in self.kinds}
        self._on_update: dict[str, list[Callable[[Obj, Obj], None]]] = {k: [] for k in self.kinds}
        self._on_delete: dict[str, list[Callable[[Obj], None]]] = {k: [] for k in self.kinds}

    def add_handler(self, kind: str, handler: Handler) -> None:
        """Handlers see events from now on; objects already cached are replayed as adds."""
        if handler.on_add is not None:
            self._on_add[kind].append(handler.on_add)
        if handler.on_update is not None:
            self._on_update[kind].append(handler.on_update)
        if handler.on_delete is not None:
            self._on_delete[kind].append(handler.on_delete)
        if handler.on_add:
            for obj in list(self._cache[kind].values()):
                try:
                    handler.on_add(obj)
                except Exception as e:  # noqa: BLE001 - see the class docstring
                    self._failed(handler.on_add, obj, e)

    def pump(self) -> bool:
        """Delivers every pending watch event; returns whether there was any."""
        if not self.watch.events:
            return False
        for event, obj in self.watch.drain():
            self.deliver(event, obj)
        return True

    def deliver(self, event: str, obj: Obj) -> None:
        kind, meta = obj["kind"], obj["metadata"]
        key = (meta.get("namespace") or "", meta["name"])  # key_of(obj), inline
        old = self._cache[kind].get(key)
        fns: list[Callable[[Obj], None]] | list[Callable[[Obj, Obj], None]]  # each called with objs
        objs: tuple[Obj, ...]
        if event == "DELETED":
            if old is None:
                return
            self._drop(kind, key)
            if "resourceVersion" not in meta:
                obj = old  # a re-list's tombstone: the last state known
            fns, objs = self._on_delete[kind], (obj,)
        elif old is None:
            self._put(kind, key, obj)
            fns, objs = self._on_add[kind], (obj,)
        elif old["metadata"].get("resourceVersion") == meta.get("resourceVersion"):
            return  # replayed by a re-list: nothing changed
        else:
            self._drop(kind, key)
            self._put(kind, key, obj)
            fns, objs = self._on_update[kind], (old, obj)
        for fn in fns:  # inline: a replay delivers some 15 events a pod
            try:
                fn(*objs)
            except Exception as e:  # noqa: BLE001 - see the class docstring
                self._failed(fn, objs[-1], e)

    def _failed(self, fn: Callable[..., None], obj: Obj, e: Exception) -> None:
        meta = obj["metadata"]
        self.errors.append(f"{getattr(fn, '__qualname__', fn)}: {obj['kind']} "
                           f"{meta.get('namespace', '')}/{meta['name']}: {type(e).__name__}: {e}")

    # Lister.
    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        return self._cache[kind].get((namespace or "default", name) if KINDS[kind].namespaced else ("", name))

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        return [o for k, o in sorted(self._cache[kind].items()) if namespace is None or k[0] in ("", namespace)]

    # builtins.list: within the class body, `list` is the method above.
    def by_index(self, kind: str, index: str, value: str) -> builtins.list[Obj]:
        """Objects filed under `value`, in the order they were last written (as repeatable
        as the history; no sort, since controllers call this per request)."""
        return list(self._index[(kind, index)].get(value, {}).values())

    def __len__(self) -> int:
        return sum(len(c) for c in self._cache.values())

    # Internals.
    def _put(self, kind: str, key: Key, obj: Obj) -> None:
        self._cache[kind][key] = obj
        indexes = self._indexes[kind]
        if not indexes:
            return
        filed = []
        for buckets, fn in indexes:
            values = fn(obj)
            filed.append(values)
            for value in values:
                buckets.setdefault(value, {})[key] = obj
        self._filed[kind][key] = filed

    def _drop(self, kind: str, key: Key) -> None:
        self._cache[kind].pop(key)
        indexes = self._indexes[kind]
        if not indexes:
            return
        for (buckets, _), values in zip(indexes, self._filed[kind].pop(key)):
            for value in values:
                bucket = buckets.get(value)
                if bucket is not None:
                    bucket.pop(key, None)
                    if not bucket:
                        del buckets[value]
