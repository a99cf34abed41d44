"""Kubernetes Events recorded for what components do (`c.list("Event", ns)`).

An Event names the object it is about (involvedObject), a reason and a message, as
client-go's recorder writes them. Names are `<object>.<hex>`, the hex of the time in
nanoseconds as client-go's recorder names them, plus a counter (the next free name, as
several recorders write about the same objects), so the same history gives the same names.
"""

from __future__ import annotations

from typing import Callable

from volcanic.kube.clock import rfc3339
from volcanic.kube.errors import AlreadyExists, StoreError
from volcanic.kube.objects import Obj, meta_of
from volcanic.kube.store import Store


class Recorder:
    """Writes v1 Events for one component (source.component)."""

    def __init__(self, store: Store, clock: Callable[[], float], component: str) -> None:
        self._store, self._clock, self.component = store, clock, component
        self._count = 0

    def event(self, obj: Obj, type_: str, reason: str, message: str) -> None:
        """Records an Event of `type_` ("Normal" or "Warning") about `obj`. Best effort, as
        client-go's recorder: a failed write is dropped, never fails the caller."""
        meta = meta_of(obj)
        now = rfc3339(self._clock())
        event: Obj = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"namespace": meta.get("namespace") or "default"},
            "involvedObject": {"kind": obj.get("kind"), "apiVersion": obj.get("apiVersion"),
                               "name": meta.get("name"), "namespace": meta.get("namespace"),
                               "uid": meta.get("uid"), "resourceVersion": meta.get("resourceVersion")},
            "reason": reason, "message": message, "type": type_,
            "source": {"component": self.component},
            "firstTimestamp": now, "lastTimestamp": now, "count": 1,
        }
        while True:
            self._count += 1
            event["metadata"]["name"] = f"{meta.get('name', '')}.{int(self._clock() * 1e9) + self._count:x}"
            try:
                self._store.create(event)
                return
            except AlreadyExists:
                continue
            except StoreError:
                return
