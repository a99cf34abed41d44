"""The controller-manager's kopf-fed informers after a re-list: what vanished while the watch
was away is delivered as deleted, as client-go's reflector does (k8s.io/client-go
tools/cache/reflector.go: a re-list replaces the store, and DeltaFIFO.Replace emits Deleted
for the keys it no longer has). Issue 33, "Faults on a real API server" 3: kopf re-listed
after a 410 Gone without reporting the deletion of a Job, so the job controller kept it and
re-created its pods, owned by the deleted Job's uid, until the 300 s resync.

kopf's own watch generators run here (kopf/_cogs/clients/watching.py), with the API calls
beneath them replaced: a kopf whose watcher no longer goes through `continuous_watch`, or
that stops yielding its listing before Bookmark.LISTED, fails these tests."""

from __future__ import annotations

import asyncio
import threading

import kopf
from kopf._cogs.clients import watching
from kopf._cogs.structs import references

from volcanic.kube.informers import Informers
from volcanic.real.operator import KopfSource


def _job(name: str, rv: str, namespace: str = "ns") -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "resourceVersion": rv}}


class _Store:
    """What KopfSource asks of a KubeStore before kopf runs: the first listing."""

    class client:  # noqa: N801 - stands for KubeStore.client
        pass

    def __init__(self, jobs: list[dict]) -> None:
        self.jobs = jobs

    def list(self, kind: str) -> list[dict]:
        return [dict(j) for j in self.jobs] if kind == "Job" else []

    def reflect(self, kinds, into, listed: threading.Event) -> None:
        listed.set()


def _primed(jobs: list[dict]) -> tuple[KopfSource, Informers]:
    """A KopfSource feeding informers (their watch() registers kopf's handlers and the listing
    observer), primed with `jobs`."""
    source = KopfSource(_Store(jobs))
    informers = Informers(source, ["Job", "Pod"])
    assert source.prime(threading.Event())
    informers.pump()
    return source, informers


def _kopf_watch(monkeypatch, listings: list[list[dict]], events_after: list[dict]) -> list:
    """Runs kopf's infinite_watch for Jobs over `listings` (each listing's watch ends with 410
    Gone, so kopf lists again; the last one's watch brings `events_after` first): what it
    yields."""
    listings = list(listings)

    async def fetch_objs(**_):
        yield listings[0], "100"

    async def watch_objs(**_):
        listings.pop(0)
        for event in ([] if listings else events_after):
            yield event
        yield {"type": "ERROR", "object": {"code": 410, "message": "too old resource version"}}

    monkeypatch.setattr(watching.fetching, "fetch_objs", fetch_objs)
    monkeypatch.setattr(watching, "watch_objs", watch_objs)
    settings = kopf.OperatorSettings()
    settings.watching.reconnect_backoff = 0.0
    resource = references.Resource("batch.volcano.sh", "v1alpha1", "jobs")

    async def run() -> list:
        seen = []
        async for raw in watching.infinite_watch(settings=settings, resource=resource, namespace=None,
                                                 _iterations=len(listings)):
            seen.append(raw)
        return seen
    return asyncio.run(run())


def test_a_job_deleted_while_the_watch_was_away_is_deleted_at_the_relist(monkeypatch):
    """Jobs a and b held; the watch expires (410); kopf's re-list has only a: b is offered as
    deleted at the listing's end, before any later watch event, and leaves the informers."""
    source, informers = _primed([_job("a", "1"), _job("b", "2")])
    feed_at_listed = []
    original_listed = source.listed
    monkeypatch.setattr(source, "listed", lambda name, keys: (original_listed(name, keys),
                                                               feed_at_listed.extend(source.feed.events)))
    yielded = _kopf_watch(monkeypatch, [[_job("a", "1"), _job("b", "2")], [_job("a", "3")]],
                          [{"type": "ADDED", "object": _job("c", "4")}])
    assert [r.get("type") if isinstance(r, dict) else r for r in yielded] == [
        None, None, watching.Bookmark.LISTED, None, watching.Bookmark.LISTED, "ADDED"]
    assert feed_at_listed == [("DELETED", {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                                           "metadata": {"name": "b", "namespace": "ns"}})]
    informers.pump()
    assert [j["metadata"]["name"] for j in informers.list("Job")] == ["a"]


def test_a_job_deleted_between_the_first_list_and_kopfs_is_deleted(monkeypatch):
    """prime() listed a and b; kopf's first listing has only a (b deleted in between)."""
    source, informers = _primed([_job("a", "1"), _job("b", "2")])
    deleted = []
    informers.add_handler("Job", type("H", (), {"on_add": None, "on_update": None,
                                                 "on_delete": lambda self, o: deleted.append(o)})())
    _kopf_watch(monkeypatch, [[_job("a", "1")]], [])
    informers.pump()
    assert [j["metadata"]["name"] for j in informers.list("Job")] == ["a"]
    assert [(o["metadata"]["name"], o["metadata"]["uid"]) for o in deleted] == [("b", "uid-b")]  # its last state


def test_an_empty_relist_deletes_everything_held(monkeypatch):
    """The last Job deleted while away: the listing has nothing, and still ends with LISTED."""
    source, informers = _primed([_job("a", "1")])
    _kopf_watch(monkeypatch, [[_job("a", "1")], []], [])
    informers.pump()
    assert informers.list("Job") == []


def test_what_kopf_delivered_and_deleted_is_not_held():
    """Objects added by kopf's handlers are held; a DELETED from the watch drops them; a
    listing that has everything held deletes nothing."""
    source, informers = _primed([])
    source.offer("ADDED", _job("x", "5"))
    source.offer("ADDED", _job("y", "6"))
    source.offer("DELETED", _job("y", "7"))
    source.listed("Job", {("ns", "x")})
    informers.pump()
    assert [j["metadata"]["name"] for j in informers.list("Job")] == ["x"]
    assert [e for e, _ in source.feed.events] == []
