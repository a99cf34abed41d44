"""What the cronjob-controller reads and writes past its listers (Volcano's injection.go): Jobs
created, read fresh and deleted, and the CronJob read fresh, through the API server (a Store).
Tests put fakes in their place, as Volcano's unit tests do."""

from __future__ import annotations

from volcanic.kube.errors import NotFound
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj
from volcanic.kube.store import Store


class StoreJobs:
    """jobClientInterface over a Store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, namespace: str, name: str) -> Obj:
        job = self.store.get("Job", name, namespace)
        if job is None:
            raise NotFound("Job", namespace, name, KINDS["Job"].not_found(name))
        return job

    def create(self, job: Obj) -> Obj:
        return self.store.create(job)

    def delete(self, namespace: str, name: str) -> None:
        self.store.delete("Job", name, namespace)


class StoreCronJobs:
    """cronjobClientInterface over a Store (its reads; the status is written by the controller)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, namespace: str, name: str) -> Obj:
        cron = self.store.get("CronJob", name, namespace)
        if cron is None:
            raise NotFound("CronJob", namespace, name, KINDS["CronJob"].not_found(name))
        return cron
