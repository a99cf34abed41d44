"""An in-memory object store with the API server's semantics.

What it promises, as the Kubernetes API server does:
- create fills metadata.uid, resourceVersion, generation and creationTimestamp (RFC 3339 on
  the store's clock, Unix seconds) and, for kinds with a status subresource, ignores the status sent;
- update is optimistic: a resourceVersion that is not the current one is a Conflict; a
  changed spec bumps generation; for kinds with a status subresource the status is kept
  (use update_status to change it; for other kinds update_status is an update);
- bind sets a pod's spec.nodeName and its PodScheduled condition, like pods/binding;
- delete with finalizers only sets deletionTimestamp; the object goes once its last
  finalizer is removed; dependents (ownerReferences) are deleted in cascade;
- watch lists what is stored as ADDED events, then streams ADDED / MODIFIED / DELETED
  events in commit order.

Objects are copied on the way in and out of get/list, so callers never share state with
the store. Watch events, what create/update/update_status/bind return and what `shared`
reads are the committed objects themselves, which are never changed after commit: treat
them as read-only (copy with clone() to change one). Costs: get, create, update and delete
are O(size of the object); list is O(objects of the kind); a cascade is O(dependents).
Deterministic: uids and resourceVersions come from counters, times from the clock.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Callable, Iterable

from volcanic.kube.clock import EPOCH, rfc3339
from volcanic.kube.errors import AlreadyExists, Conflict, InvalidObject, NotFound
from volcanic.kube.kinds import KINDS, Kind, kind_named
from volcanic.kube.objects import Key, Obj, annotations_of, clone, status_of
from volcanic.kube.store import Watch, done

# A fixed prefix with the version-8 (RFC 9562: custom) and variant bits set.
_UID_PREFIX = "6f1c2a52-8d0e-8c5b-9a55-"


def uid_of(n: int) -> str:
    """The uid of the store's n-th object: an RFC 9562 version-8 UUID whose last 48 bits are
    n, so the same history gives the same uids at the cost of a format (a replay makes one
    per object; a name-based UUID's SHA-1 cost several times more)."""
    return f"{_UID_PREFIX}{n:012x}"


_NOT_SPEC = ("metadata", "status", "apiVersion", "kind")  # the rest is what bumps generation


def _same_but(a: dict, b: dict, skip: tuple[str, ...]) -> bool:
    """Whether a and b are equal but for the keys in `skip`."""
    if len(a) - sum(k in a for k in skip) != len(b) - sum(k in b for k in skip):
        return False
    return all(k in skip or (k in b and b[k] == v) for k, v in a.items())


def _check_shape(obj: Obj, kind: Kind, meta: dict) -> None:
    """What the API server's validation and structural schemas refuse before anything else:
    labels and annotations that are not string maps, a spec or status that is not a map."""
    def invalid(message: str) -> InvalidObject:
        namespace = meta.get("namespace")
        return InvalidObject(f"{kind.name} {namespace + '/' if namespace else ''}{meta['name']}: {message}")
    for field in ("labels", "annotations"):
        value = meta.get(field)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise invalid(f"metadata.{field}: must be a map of strings")
        for k, v in value.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise invalid(f"metadata.{field}.{k}: must be a string, got {v!r}")
    for field in ("ownerReferences", "finalizers"):
        if meta.get(field) is not None and not isinstance(meta[field], list):
            raise invalid(f"metadata.{field}: must be a list")
    for i, ref in enumerate(meta.get("ownerReferences") or ()):
        if not isinstance(ref, dict):
            raise invalid(f"metadata.ownerReferences[{i}]: must be a map")
    for field in ("spec", "status"):
        if obj.get(field) is not None and not isinstance(obj[field], dict):
            raise invalid(f"{field}: must be a map")


class SharedReads:
    """Reads of a MemoryStore that hand out the committed objects themselves, read-only, as
    an informer's cache does: for readers that only look (admission, the embedded API's own
    checks), at no copy."""

    def __init__(self, objects: dict[str, dict[Key, Obj]]) -> None:
        self._objects = objects

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        k = kind_named(kind)
        return self._objects[k.name].get(MemoryStore._key(k, name, namespace))

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        k = kind_named(kind)
        return [o for key, o in sorted(self._objects[k.name].items())
                if namespace is None or not k.namespaced or key[0] == namespace]


class MemoryStore:
    """The embedded API server's storage. `clock` returns Unix seconds."""

    def __init__(self, clock: Callable[[], float] = lambda: EPOCH) -> None:
        self._clock = clock
        self._objects: dict[str, dict[Key, Obj]] = {name: {} for name in KINDS}
        self._dependents: dict[str, set[tuple[str, Key]]] = {}  # owner uid -> (kind, key)
        self._version = 0
        self._uids = 0
        self._watches: list[Watch] = []
        self.shared = SharedReads(self._objects)  # a Lister of the committed objects, not copies

    # Reads.
    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        obj = self.shared.get(kind, name, namespace)
        return clone(obj) if obj is not None else None

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        return [clone(o) for o in self.shared.list(kind, namespace)]

    def watch(self, kinds: Iterable[str] | None = None) -> Watch:
        """Every stored object of `kinds` as ADDED, then every change (see kube.store.Watch)."""
        w = Watch(kinds)
        for kind, objects in self._objects.items():
            if w.kinds is None or kind in w.kinds:
                for _, obj in sorted(objects.items()):
                    w.offer("ADDED", obj)
        w.synced.set()
        self._watches.append(w)
        return w

    # Writes.
    def create(self, obj: Obj) -> Obj:
        kind = kind_named(obj.get("kind") if isinstance(obj, dict) else None)
        obj = clone(obj)
        meta = self._meta(obj, kind)
        key = self._key(kind, meta["name"], meta.get("namespace"))
        if key in self._objects[kind.name]:
            raise AlreadyExists(kind.name, key[0], key[1], f'{kind.name} "{key[1]}" already exists')
        self._uids += 1
        meta["uid"] = uid_of(self._uids)
        meta["generation"] = 1
        meta["creationTimestamp"] = rfc3339(self._clock())
        meta.pop("deletionTimestamp", None)
        obj.setdefault("apiVersion", kind.api_version)
        if kind.status_subresource:
            obj.pop("status", None)
        if kind.initial_status:
            obj["status"] = dict(kind.initial_status)
        return self._commit("ADDED", kind, key, obj)

    def restore(self, obj: Obj) -> Obj:
        """Stores `obj` as another cluster had it: its uid, creationTimestamp and status kept
        (a new resourceVersion), replacing an object of the same key. What a fork of a
        cluster's state is made of; no admission, no defaults."""
        kind = kind_named(obj.get("kind") if isinstance(obj, dict) else None)
        obj = clone(obj)
        meta = self._meta(obj, kind)
        if not isinstance(meta.get("uid"), str) or not meta["uid"]:
            self._uids += 1
            meta["uid"] = uid_of(self._uids)
        meta.setdefault("creationTimestamp", rfc3339(self._clock()))
        obj.setdefault("apiVersion", kind.api_version)
        key = self._key(kind, meta["name"], meta.get("namespace"))
        event = "MODIFIED" if key in self._objects[kind.name] else "ADDED"
        return self._commit(event, kind, key, obj)

    def update(self, obj: Obj) -> Obj:
        kind = kind_named(obj.get("kind") if isinstance(obj, dict) else None)
        old = self._stored_but_status(kind, obj)
        if old is not None:
            return self._write_status(kind, old, obj.get("status"))
        obj = clone(obj)
        meta = self._meta(obj, kind)
        key = self._key(kind, meta["name"], meta.get("namespace"))
        old = self._current(kind, key)
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
        if not _same_but(obj, old, _NOT_SPEC):
            meta["generation"] = old["metadata"]["generation"] + 1
        if self._unchanged(obj, old):
            return old  # the API server does not write a no-op update
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self._commit("MODIFIED", kind, key, obj)
            self._remove(kind, key)
            return obj
        return self._commit("MODIFIED", kind, key, obj)

    def update_status(self, obj: Obj) -> Obj:
        kind = kind_named(obj.get("kind") if isinstance(obj, dict) else None)
        if not kind.status_subresource:
            return self.update(obj)
        meta = obj.get("metadata")  # only its name and version count: the status is what is written
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
            raise InvalidObject(f"{kind.name}: metadata.name: is required")
        old = self._current(kind, self._key(kind, meta["name"], meta.get("namespace")))
        self._check_version(old, meta, kind)
        return self._write_status(kind, old, obj.get("status"))

    def create_async(self, obj: Obj) -> Future[Obj]:
        return done(self.create, obj)

    def bind_async(self, namespace: str, name: str, node: str,
                   annotations: dict[str, str] | None = None) -> Future[Obj]:
        return done(self.bind, (namespace, name, node, annotations))

    def update_status_async(self, obj: Obj) -> Future[Obj]:
        return done(self.update_status, obj)

    def bind(self, namespace: str, name: str, node: str, annotations: dict[str, str] | None = None) -> Obj:
        kind = KINDS["Pod"]
        key = self._key(kind, name, namespace)
        old = self._current(kind, key)
        bound = old["spec"].get("nodeName")
        if bound:
            raise Conflict("Pod", key[0], name, f'pod {name} is already assigned to node "{bound}"')
        status = dict(status_of(old))  # committed values are shared, never changed
        conditions = [c for c in status.get("conditions", []) if c.get("type") != "PodScheduled"]
        conditions.append({"type": "PodScheduled", "status": "True",
                           "lastTransitionTime": rfc3339(self._clock())})
        status["conditions"] = conditions
        meta = dict(old["metadata"])
        if annotations:  # as the API server's binding storage merges the Binding's
            meta["annotations"] = {**annotations_of(old), **annotations}
        new = dict(old, metadata=meta, spec=dict(old["spec"], nodeName=node), status=status)
        return self._commit("MODIFIED", kind, key, new)

    def delete(self, kind: str, name: str, namespace: str | None = None,
               uid: str | None = None) -> None:
        k = kind_named(kind)
        key = self._key(k, name, namespace)
        old = self._current(k, key)
        if uid is not None and old["metadata"]["uid"] != uid:
            raise Conflict(k.name, key[0], name, f"Precondition failed: UID in precondition: {uid}, "
                           f"UID in object meta: {old['metadata']['uid']}")
        if old["metadata"].get("finalizers"):
            if not old["metadata"].get("deletionTimestamp"):
                meta = dict(old["metadata"], deletionTimestamp=rfc3339(self._clock()))
                self._commit("MODIFIED", k, key, dict(old, metadata=meta))
            return
        self._remove(k, key)

    # Internals.
    def _stored_but_status(self, kind: Kind, obj: Obj) -> Obj | None:
        """The stored object when `obj` is it with another status: everything else the very
        values stored (a writer sending what it read with a new status, as Volcano writes a
        PodGroup's), so only the status needs checking. None otherwise."""
        meta = obj.get("metadata")
        if kind.status_subresource or not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
            return None
        old = self._objects[kind.name].get(self._key(kind, meta["name"], meta.get("namespace")))
        if old is None or old["metadata"] is not meta:
            return None
        for k, v in obj.items():
            if k != "status" and old.get(k, obj) is not v:
                return None
        for k in old:
            if k != "status" and k not in obj:
                return None
        return old

    def _write_status(self, kind: Kind, old: Obj, status: Any) -> Obj:
        status = status or {}
        if not isinstance(status, dict):
            raise InvalidObject(f"{kind.name} {old['metadata']['name']}: status: must be a map")
        if status == old.get("status"):
            return old  # a no-op status write is not written either
        meta = old["metadata"]
        new = dict(old, metadata=dict(meta), status=clone(status))
        return self._commit("MODIFIED", kind, self._key(kind, meta["name"], meta.get("namespace")), new)

    def _remove(self, kind: Kind, key: Key) -> None:
        obj = self._objects[kind.name].pop(key)
        self._version += 1
        obj = dict(obj, metadata=dict(obj["metadata"], resourceVersion=str(self._version)))
        self._index_owners(kind, key, obj, add=False)
        for w in self._watches:
            w.offer("DELETED", obj)
        for dep_kind, dep_key in sorted(self._dependents.pop(obj["metadata"]["uid"], ())):
            if dep_key in self._objects[dep_kind]:
                self.delete(dep_kind, dep_key[1], dep_key[0] or None)

    def _commit(self, event: str, kind: Kind, key: Key, obj: Obj) -> Obj:
        self._version += 1
        obj["metadata"]["resourceVersion"] = str(self._version)
        old = self._objects[kind.name].get(key)
        refs = obj["metadata"].get("ownerReferences")
        old_refs = old["metadata"].get("ownerReferences") if old is not None else None
        reindex = old is None or (old_refs is not refs and old_refs != refs)  # most writes keep them
        if old is not None and reindex:
            self._index_owners(kind, key, old, add=False)
        self._objects[kind.name][key] = obj
        if reindex:
            self._index_owners(kind, key, obj, add=True)
        for w in self._watches:
            w.offer(event, obj)
        return obj

    def _index_owners(self, kind: Kind, key: Key, obj: Obj, add: bool) -> None:
        for ref in obj["metadata"].get("ownerReferences") or ():
            uid = ref.get("uid") if isinstance(ref, dict) else None
            if not uid:
                continue
            if add:
                self._dependents.setdefault(uid, set()).add((kind.name, key))
            elif uid in self._dependents:
                self._dependents[uid].discard((kind.name, key))

    def _current(self, kind: Kind, key: Key) -> Obj:
        old = self._objects[kind.name].get(key)
        if old is None:
            raise NotFound(kind.name, key[0], key[1], f'{kind.name} "{key[1]}" not found')
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
            if not isinstance(meta["namespace"], str):
                raise InvalidObject(f"{kind.name} {meta['name']}: metadata.namespace: must be a string")
        else:
            meta.pop("namespace", None)
        _check_shape(obj, kind, meta)
        return meta

    @staticmethod
    def _key(kind: Kind, name: str, namespace: str | None) -> Key:
        return ((namespace or "default") if kind.namespaced else "", name)

    @staticmethod
    def _unchanged(new: Obj, old: Obj) -> bool:
        return (_same_but(new["metadata"], old["metadata"], ("resourceVersion",))
                and _same_but(new, old, ("metadata",)))
