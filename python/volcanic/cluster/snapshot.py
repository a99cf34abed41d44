"""A fixed, in-memory view of a cluster for admission without one (`volcanic webhook --state`)."""

from __future__ import annotations

from typing import Any, Iterable

from volcanic.cluster.store import MemoryStore
from volcanic.controllers.queue import ensure_default_queues
from volcanic.kube.errors import InvalidObject
from volcanic.kube.kinds import kind_named
from volcanic.kube.objects import Obj, as_map, meta_of


def snapshot_lister(objects: Iterable[Obj] = ()) -> Any:
    """A MemoryStore with the default Namespace, the root and default queues (Open) and
    `objects`, statuses as given; a Queue without status.state is Open, as Volcano's queue
    controller would make it. It does not follow any cluster. Raises
    volcanic.errors.InvalidObject for an object of a kind the store does not know."""
    store = MemoryStore()
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"},
                  "status": {"phase": "Active"}})
    ensure_default_queues(store)
    for obj in objects:
        if not isinstance(obj, dict):
            raise InvalidObject(f"state: expected an object, got {type(obj).__name__}")
        kind = kind_named(obj.get("kind"))
        obj = dict(obj)
        status = obj.get("status")
        if kind.name == "Queue":
            status = dict(as_map(status))
            status.setdefault("state", "Open")
        meta = meta_of(obj)
        existing = store.get(kind.name, meta.get("name", ""), meta.get("namespace")) \
            if isinstance(meta.get("name"), str) and meta.get("name") else None
        if existing is not None:
            meta = dict(meta)
            meta.pop("resourceVersion", None)
            stored = store.update(dict(obj, metadata=meta))
        else:
            stored = store.create(obj)
        if kind.status_subresource and isinstance(status, dict) and status:
            store.update_status(dict(stored, status=status))
    return store
