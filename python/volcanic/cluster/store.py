"""An in-memory object store with the API server's semantics.

What it promises, as the Kubernetes API server does:
- create fills metadata.uid, resourceVersion, generation and creationTimestamp (RFC 3339 on
  the store's clock) and, for kinds with a status subresource, ignores the status sent;
- update is optimistic: a resourceVersion that is not the current one is a Conflict; a
  changed spec bumps generation; for kinds with a status subresource the status is kept
  (use update_status to change it);
- delete with finalizers only sets deletionTimestamp; the object goes once its last
  finalizer is removed; dependents (ownerReferences) are deleted in cascade;
- watch streams ADDED / MODIFIED / DELETED events in commit order.

Objects are copied on the way in and out, so callers never share state with the store.
Deterministic: uids and resourceVersions come from counters, times from the clock.
"""

from __future__ import annotations

import copy
import uuid
from collections import deque
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterable, Protocol

from volcanic.cluster.kinds import KINDS, Kind
from volcanic.errors import InvalidObject

EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc)
_UID_NAMESPACE = uuid.UUID("6f1c2a52-8d0e-4c5b-9a55-2f0e4c7d9b10")

Obj = dict[str, Any]
Key = tuple[str, str, str]  # kind, namespace ("" when cluster-scoped), name


class StoreError(Exception):
    """An API error: `reason` is the Kubernetes status reason."""

    reason = "InternalError"

    def __init__(self, kind: str, namespace: str, name: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.namespace, self.name = kind, namespace, name


class NotFound(StoreError):
    reason = "NotFound"


class AlreadyExists(StoreError):
    reason = "AlreadyExists"


class Conflict(StoreError):
    reason = "Conflict"


def rfc3339(seconds: float) -> str:
    """The store's clock reading as an RFC 3339 timestamp (second precision)."""
    return (EPOCH + timedelta(seconds=int(seconds))).strftime("%Y-%m-%dT%H:%M:%SZ")


class Store(Protocol):
    """What controllers need from an API server; the embedded store and a real-cluster
    adapter both provide it."""

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None: ...
    def list(self, kind: str, namespace: str | None = None) -> list[Obj]: ...
    def create(self, obj: Obj) -> Obj: ...
    def update(self, obj: Obj) -> Obj: ...
    def update_status(self, obj: Obj) -> Obj: ...
    def delete(self, kind: str, name: str, namespace: str | None = None) -> None: ...
    def watch(self, kinds: Iterable[str] | None = None) -> "Watch": ...


class Watch:
    """A stream of (type, object) events; read it with drain()."""

    def __init__(self, kinds: Iterable[str] | None) -> None:
        self.kinds = set(kinds) if kinds is not None else None
        self._events: deque[tuple[str, Obj]] = deque()

    def _offer(self, event: str, obj: Obj) -> None:
        if self.kinds is None or obj["kind"] in self.kinds:
            self._events.append((event, copy.deepcopy(obj)))

    def drain(self) -> list[tuple[str, Obj]]:
        events = list(self._events)
        self._events.clear()
        return events


def _kind_of(obj: Any) -> Kind:
    if not isinstance(obj, dict):
        raise InvalidObject(f"object: must be a map, got {type(obj).__name__}")
    name = obj.get("kind")
    if name not in KINDS:
        known = ", ".join(sorted(KINDS))
        raise InvalidObject(f"object: unknown kind {name!r}; known kinds: {known}")
    return KINDS[name]


class MemoryStore:
    """The embedded API server's storage. `clock` returns virtual seconds since EPOCH."""

    def __init__(self, clock: Callable[[], float] = lambda: 0.0) -> None:
        self._clock = clock
        self._objects: dict[Key, Obj] = {}
        self._version = 0
        self._uids = 0
        self._watches: list[Watch] = []

    # Reads.
    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        obj = self._objects.get(self._key(KINDS[kind], name, namespace))
        return copy.deepcopy(obj) if obj is not None else None

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        k = KINDS[kind]
        return [copy.deepcopy(o) for key, o in sorted(self._objects.items())
                if key[0] == kind and (namespace is None or not k.namespaced or key[1] == namespace)]

    def watch(self, kinds: Iterable[str] | None = None) -> Watch:
        w = Watch(kinds)
        self._watches.append(w)
        return w

    # Writes.
    def create(self, obj: Obj) -> Obj:
        kind = _kind_of(obj)
        obj = copy.deepcopy(obj)
        meta = self._meta(obj, kind)
        key = self._key(kind, meta["name"], meta.get("namespace"))
        if key in self._objects:
            raise AlreadyExists(kind.name, key[1], key[2], f'{kind.name} "{key[2]}" already exists')
        self._uids += 1
        meta["uid"] = str(uuid.uuid5(_UID_NAMESPACE, str(self._uids)))
        meta["generation"] = 1
        meta["creationTimestamp"] = rfc3339(self._clock())
        meta.pop("deletionTimestamp", None)
        obj.setdefault("apiVersion", kind.api_version)
        if kind.status_subresource:
            obj.pop("status", None)
        return self._commit("ADDED", key, obj)

    def update(self, obj: Obj) -> Obj:
        kind = _kind_of(obj)
        obj = copy.deepcopy(obj)
        meta = self._meta(obj, kind)
        key = self._key(kind, meta["name"], meta.get("namespace"))
        old = self._current(key, kind)
        self._check_version(old, meta, kind)
        for field in ("uid", "creationTimestamp", "generation", "deletionTimestamp"):
            if field in old["metadata"]:
                meta[field] = old["metadata"][field]
            else:
                meta.pop(field, None)
        if kind.status_subresource:
            obj.pop("status", None)
            if "status" in old:
                obj["status"] = old["status"]
        if self._spec(obj) != self._spec(old):
            meta["generation"] = old["metadata"]["generation"] + 1
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self._remove(key)
            return obj
        return self._commit("MODIFIED", key, obj)

    def update_status(self, obj: Obj) -> Obj:
        kind = _kind_of(obj)
        meta = self._meta(copy.deepcopy(obj), kind)
        key = self._key(kind, meta["name"], meta.get("namespace"))
        old = self._current(key, kind)
        self._check_version(old, meta, kind)
        new = copy.deepcopy(old)
        new["status"] = copy.deepcopy(obj.get("status", {}))
        return self._commit("MODIFIED", key, new)

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        k = KINDS[kind]
        key = self._key(k, name, namespace)
        old = self._current(key, k)
        if old["metadata"].get("finalizers"):
            if not old["metadata"].get("deletionTimestamp"):
                new = copy.deepcopy(old)
                new["metadata"]["deletionTimestamp"] = rfc3339(self._clock())
                self._commit("MODIFIED", key, new)
            return
        self._remove(key)

    # Internals.
    def _remove(self, key: Key) -> None:
        obj = self._objects.pop(key)
        self._version += 1
        obj["metadata"]["resourceVersion"] = str(self._version)
        for w in self._watches:
            w._offer("DELETED", obj)
        uid = obj["metadata"]["uid"]
        dependents = [k for k, o in sorted(self._objects.items())
                      if any(ref.get("uid") == uid for ref in o["metadata"].get("ownerReferences") or [])]
        for dep in dependents:
            if dep in self._objects:
                self.delete(dep[0], dep[2], dep[1] or None)

    def _commit(self, event: str, key: Key, obj: Obj) -> Obj:
        self._version += 1
        obj["metadata"]["resourceVersion"] = str(self._version)
        self._objects[key] = obj
        for w in self._watches:
            w._offer(event, obj)
        return copy.deepcopy(obj)

    def _current(self, key: Key, kind: Kind) -> Obj:
        old = self._objects.get(key)
        if old is None:
            raise NotFound(kind.name, key[1], key[2], f'{kind.name} "{key[2]}" not found')
        return old

    @staticmethod
    def _check_version(old: Obj, meta: dict, kind: Kind) -> None:
        sent = meta.get("resourceVersion")
        current = old["metadata"]["resourceVersion"]
        if sent and sent != current:
            raise Conflict(kind.name, old["metadata"].get("namespace", ""), old["metadata"]["name"],
                           f'Operation cannot be fulfilled on {kind.name} "{old["metadata"]["name"]}": '
                           "the object has been modified; please apply your changes to the latest version "
                           "and try again")

    @staticmethod
    def _meta(obj: Obj, kind: Kind) -> dict:
        meta = obj.get("metadata")
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
            raise InvalidObject(f"{kind.name}: metadata.name: is required")
        if kind.namespaced:
            meta["namespace"] = meta.get("namespace") or "default"
        else:
            meta.pop("namespace", None)
        return meta

    @staticmethod
    def _key(kind: Kind, name: str, namespace: str | None) -> Key:
        return (kind.name, (namespace or "default") if kind.namespaced else "", name)

    @staticmethod
    def _spec(obj: Obj) -> Any:
        return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}
