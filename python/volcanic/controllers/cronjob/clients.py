"""What the cronjob-controller reads and writes past its listers (Volcano's injection.go): Jobs
created, read fresh and deleted, and the CronJob read fresh, through the API server (a Store).
Tests put fakes in their place, as Volcano's unit tests do."""

from __future__ import annotations

from volcanic.kube.errors import NotFound
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj
from volcanic.kube.store import Store


class StoreClient:
    """jobClientInterface (kind Job) or cronjobClientInterface (kind CronJob, whose status the
    controller writes itself) over a Store."""

    def __init__(self, store: Store, kind: str) -> None:
        self.store = store
        self.kind = kind

    def get(self, namespace: str, name: str) -> Obj:
        obj = self.store.get(self.kind, name, namespace)
        if obj is None:
            raise NotFound(self.kind, namespace, name, KINDS[self.kind].not_found(name))
        return obj

    def create(self, obj: Obj) -> Obj:
        return self.store.create(obj)

    def delete(self, namespace: str, name: str) -> None:
        self.store.delete(self.kind, name, namespace)
