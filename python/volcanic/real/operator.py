"""`volcanic controller-manager`: Volcano's vc-controller-manager as a kopf operator.

kopf watches what the controllers read (Jobs, PodGroups, Queues, Commands, PriorityClasses,
PVCs; HyperNodes and the hyperNode-controller's one ConfigMap when that controller runs;
JobFlows and JobTemplates when the jobflow or jobtemplate controller runs; CronJobs when the
cronjob-controller runs) and its handlers only hand each object to the same Informers the
embedded cluster uses.
Pods, with several events each (created, bound, running, finished) and so most of all events,
and Nodes come through the scheduler's plain reflector (real/store.py) into the same informers:
kopf's per-event machinery costs about a millisecond of CPU an event, which left the
controller-manager behind the API server in a burst of pods. The controllers (job with its
plugins and Command handling, PodGroup, queue, GC, hyperNode, jobflow, jobtemplate, cronjob) run
unchanged in one thread on the wall clock and write through KubeStore, so the logic lives in
one place and kopf's handlers are a few lines.

Starting on a full cache (client-go's WaitForCacheSync): before kopf starts, each kind is
listed once (Pods by their reflector) and every object handed to the informers, then the
controllers start; kopf's own first listing and every later event follow, and the informers
ignore a version they already have. (kopf's index handlers would give the same barrier, at
the cost of a second trip through kopf's machinery for every event.)

A re-list turns what vanished into deletions, as client-go's reflector (and volcanic's, in
real/store.py) does. kopf lists a kind again when its watch expires (410 Gone, as after the
controller-manager was stopped or cut off for a while, or an API server restart) but reports
only what the list has, never what it lacks: a Job deleted meanwhile stayed in the informers,
and the job controller re-created its pods, owned by the deleted Job, until the next resync.
So KopfSource keeps, per kind, the keys it has offered and not seen deleted, and sees each of
kopf's listings whole (kopf's watcher yields the listed objects, then a LISTED bookmark,
before any watch event; volcanic wraps kopf's `continuous_watch`, one listing and its watch,
to read them): at the bookmark, every key held that the list lacks is offered as a DELETED
tombstone. That covers an object deleted between the first list (prime()) and kopf's too.
As a last resort, every RESYNC seconds the cache is compared with a list and an object
missing from it whose resourceVersion is not newer than the list's is deleted
(resourceVersions compared as numbers, as etcd gives them).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from typing import Any, AsyncIterator, Callable, Iterable

import kopf
from kopf._cogs.clients import watching as kopf_watching  # the one kopf internal used: see _observe_listings
from prometheus_client import CollectorRegistry

from volcanic.controllers.cronjob import CronJobController
from volcanic.controllers.hypernode import HyperNodeController
from volcanic.controllers.hypernode.config import configmap_location
from volcanic.controllers.jobflow import JobFlowController, JobTemplateController
from volcanic.controllers.manager import volcano_controllers
from volcanic.controllers.metrics import controller_metrics
from volcanic.controllers.queuebinding import QueueBindingController
from volcanic.controllers.runtime import INDEXES, Context, Runner
from volcanic.kube.errors import StoreError
from volcanic.kube.informers import Informers
from volcanic.kube.kinds import kind_named
from volcanic.kube.objects import Key, key_of, resource_version
from volcanic.kube.store import Watch
from volcanic.real import heap
from volcanic.real.clock import LINGER, WallClock
from volcanic.real.events import BackgroundEvents
from volcanic.real.metrics import ControllerMetrics
from volcanic.real.serving import Health
from volcanic.real.store import KubeStore, received, tombstone

log = logging.getLogger("volcanic.controller-manager")

KINDS = ("Job", "Pod", "PodGroup", "Queue", "Command", "PriorityClass", "PersistentVolumeClaim",
         "ReplicaSet", "StatefulSet")  # the last two for the PodGroup controller (WorkLoadSupport)
# The hyperNode-controller's, watched when it runs; of ConfigMaps only its own (SCOPED).
HYPERNODE_KINDS = ("HyperNode", "Node", "ConfigMap")
FLOW_KINDS = ("JobFlow", "JobTemplate")  # the jobflow and jobtemplate controllers', watched when either runs
CRON_KINDS = ("CronJob",)  # the cronjob-controller's (with Jobs), watched when it runs
BINDING_KINDS = ("QueueBinding", "Namespace")  # the queuebinding-controller's, watched when it runs
REFLECTED = ("Pod", "Node")  # watched by a plain reflector, not by kopf (see the module docstring)
RESYNC = 300.0


class KopfSource:
    """The `watch` of a Store, fed by kopf's handlers (from kopf's event-loop thread) after
    prime() has listed what exists; each of kopf's listings ends with what it lacks offered as
    deleted (see the module docstring)."""

    def __init__(self, store: KubeStore, scoped: dict[str, tuple[str, str]] | None = None) -> None:
        self.store = store
        # kind -> (namespace, name): the one object of that kind offered (kopf watches them all)
        self.scoped = scoped or {}
        self.client = store.client
        self.registry = kopf.OperatorRegistry()
        self.feed: Watch | None = None
        self._reflected: threading.Event | None = None  # set once the reflectors listed
        # kind -> keys offered and not deleted since: prime()'s, then kopf's thread's alone
        self._held: dict[str, set[Key]] = {}

    def watch(self, kinds: Iterable[str]) -> Watch:
        self.feed = Watch(kinds)
        for name in self.feed.kinds - set(REFLECTED):
            self._register(name)
        kopf.on.login(registry=self.registry)(self._login)
        return self.feed

    def prime(self, stop: threading.Event) -> bool:
        """Offers every existing object of the watched kinds (starting the reflectors), then
        marks the feed synced; False if stopped first."""
        if self._reflected is None:
            self._reflected = threading.Event()
            self.store.reflect(sorted(self.feed.kinds & set(REFLECTED)), self.feed, self._reflected)
        for name in sorted(self.feed.kinds - set(REFLECTED)):
            scope = self.scoped.get(name)
            for obj in self.store.list(name, scope[0]) if scope else self.store.list(name):
                self.offer("ADDED", obj)
        while not self._reflected.wait(0.2):
            if stop.is_set():
                return False
        self.feed.synced.set()
        return True

    def offer(self, event: str, obj: dict) -> None:
        """Into the feed, keeping the keys held up to date."""
        scope = self.scoped.get(obj["kind"])
        if scope is not None and key_of(obj) != scope:
            return
        held = self._held.setdefault(obj["kind"], set())
        if event == "DELETED":
            held.discard(key_of(obj))
        else:
            held.add(key_of(obj))
        self.feed.offer(event, obj)

    def listed(self, name: str, keys: set[Key]) -> None:
        """kopf listed kind `name` whole (`keys`; its objects reach the handlers after this):
        what is held and not listed was deleted while the watch was away."""
        held = self._held.setdefault(name, set())
        vanished = held - keys
        if vanished:
            log.info("controller-manager: %d %s deleted while the watch was away", len(vanished),
                     kind_named(name).plural)
        for key in sorted(vanished):
            self.offer("DELETED", tombstone(kind_named(name), key))

    def _register(self, name: str) -> None:
        k = kind_named(name)
        resource = {"group": k.group, "version": k.api_version.rpartition("/")[2], "plural": k.plural}

        async def event(event: dict, **_: Any) -> None:  # cheap enough for kopf's loop
            self.offer(event.get("type") or "ADDED", _plain(event["object"], k))

        kopf.on.event(**resource, id=f"event-{name}", registry=self.registry)(event)
        _observe_listings()
        _LISTINGS[(k.group, k.plural)] = lambda keys: self.listed(name, keys)

    def _login(self, **_: Any) -> kopf.ConnectionInfo:
        """kopf connects with the credentials volcanic found (the --kubeconfig order)."""
        c = self.client.configuration
        token = self.client.headers().get("authorization", "").removeprefix("Bearer ").strip() or None
        return kopf.ConnectionInfo(server=self.client.host, ca_path=c.ssl_ca_cert, insecure=not c.verify_ssl,
                                   token=token, certificate_path=c.cert_file, private_key_path=c.key_file)


# (API group, plural) -> what to tell when kopf has listed that resource whole: the keys listed.
_LISTINGS: dict[tuple[str, str], Callable[[set[Key]], None]] = {}


def _observe_listings() -> None:
    """Wraps kopf's `continuous_watch` (kopf/_cogs/clients/watching.py: one listing, its
    objects yielded as events of type None, then Bookmark.LISTED, then the watch from the
    list's resourceVersion; kopf's infinite_watch calls it again after a 410 Gone or a failed
    listing) so that each complete listing is told to _LISTINGS. kopf has no public hook for
    this; tests/python/test_operator_relist.py runs kopf's own generator through the wrapper,
    so a kopf that changes it fails there. Installed once per process."""
    original = kopf_watching.continuous_watch
    if getattr(original, "volcanic_listings", False):
        return

    async def continuous_watch(**kwargs: Any) -> AsyncIterator[Any]:
        resource = kwargs.get("resource")
        observer = _LISTINGS.get((getattr(resource, "group", None), getattr(resource, "plural", None)))
        keys: set[Key] = set()
        async for raw in original(**kwargs):
            if observer is not None:
                if raw is kopf_watching.Bookmark.LISTED:
                    observer(keys)
                elif isinstance(raw, dict) and raw.get("type") is None and isinstance(raw.get("object"), dict):
                    keys.add(key_of(raw["object"]))
            yield raw

    continuous_watch.volcanic_listings = True  # type: ignore[attr-defined]
    kopf_watching.continuous_watch = continuous_watch


def _plain(obj: Any, k: Any) -> dict:
    """kopf's object as the informers keep it (store.received), on a copy down to metadata:
    kopf keeps the original."""
    out = dict(obj)
    if isinstance(out.get("metadata"), dict):
        out["metadata"] = dict(out["metadata"])
    return received(k, out)


class NoDiffBase(kopf.DiffBaseStorage):
    """No diff-base: with only event and index handlers nothing detects changes, and kopf's
    default storage deep-copies every object of every event to build one (three quarters of
    the controller-manager's time in the gang benchmark)."""

    def build(self, *, body: kopf.Body, extra_fields: Any = None) -> None:
        return None

    def fetch(self, *, body: kopf.Body) -> None:
        return None

    def store(self, *, body: kopf.Body, patch: kopf.Patch, essence: Any) -> None:
        pass


def settings() -> kopf.OperatorSettings:
    s = kopf.OperatorSettings()
    s.persistence.diffbase_storage = NoDiffBase()
    s.peering.standalone = True          # one active replica is --leader-elect's job
    s.scanning.disabled = True           # the kinds are fixed; no CRD or namespace scans
    s.posting.enabled = False            # the controllers write their own Events
    s.watching.server_timeout = 300
    s.watching.client_timeout = 330
    return s


class ControllerManager:
    """The controllers over kopf's events; run() until stop is set.

    `scheduler_names` (`--scheduler-name`): the pods the PodGroup controller makes groups for;
    `enabled(name)` (`--controllers`): which of the controllers, by Volcano's names
    (job-controller, pg-controller, queue-controller, gc-controller, hyperNode-controller,
    jobflow-controller, jobtemplate-controller, cronjob-controller), run;
    `inherit_owner_annotations` (`--inherit-owner-annotations`): the PodGroup controller's."""

    def __init__(self, store: KubeStore, health: Health | None = None,
                 registry: CollectorRegistry | None = None, scheduler_names: tuple[str, ...] = ("volcano",),
                 enabled: Callable[[str], bool] = lambda name: True, inherit_owner_annotations: bool = True) -> None:
        self.store, self.health = store, health or Health()
        self.clock = WallClock()
        self.source = KopfSource(store, scoped={"ConfigMap": configmap_location(os.environ)})
        flows = enabled(JobFlowController.name) or enabled(JobTemplateController.name)
        self.kinds = (KINDS + (HYPERNODE_KINDS if enabled(HyperNodeController.name) else ())
                      + (FLOW_KINDS if flows else ()) + (CRON_KINDS if enabled(CronJobController.name) else ())
                      + (BINDING_KINDS if enabled(QueueBindingController.name) else ()))
        self.informers = Informers(self.source, self.kinds, INDEXES)
        self.clock.on_timer = self.source.feed.wake
        registry = registry or CollectorRegistry()
        ctx = Context(store=store, lister=self.informers, clock=self.clock, scheduler_names=scheduler_names,
                      extra={"event_sink": BackgroundEvents(store), **controller_metrics(registry)})
        controllers = [c for c in volcano_controllers(ctx) if enabled(c.name)]
        for c in controllers:
            if hasattr(c, "inherit_owner_annotations"):
                c.inherit_owner_annotations = inherit_owner_annotations
        self.runner = Runner(self.informers, controllers, self.clock)
        self.metrics = ControllerMetrics(registry, self.runner)

    def run(self, stop: threading.Event) -> None:
        log.info("controller-manager: listing what exists")
        heap.loading()
        if not self._prime(stop):
            return
        kopf_stop = threading.Event()
        thread = threading.Thread(target=self._kopf, args=(kopf_stop,), name="kopf", daemon=True)
        thread.start()
        try:
            log.info("controller-manager: caches synced; controllers started")
            heap.started()
            self.clock.after(RESYNC, self._resync)
            while not stop.is_set() and thread.is_alive():
                self.health.beat("controller-manager")
                self.runner.settle()
                self._log_errors()
                self.source.feed.wait(self.clock.run_due(), LINGER)
        finally:
            kopf_stop.set()
            thread.join(5)

    def _prime(self, stop: threading.Event) -> bool:
        """Lists every kind into the informers, retrying while the API server is unavailable;
        False if stopped first."""
        failures = 0
        while not stop.is_set():
            try:
                return self.source.prime(stop)
            except StoreError as e:
                failures += 1
                log.warning("controller-manager: listing failed (%s); retrying", e)
                stop.wait(min(0.2 * 2 ** min(failures, 5), 5.0))
        return False

    def _kopf(self, stop: threading.Event) -> None:
        asyncio.run(kopf.operator(registry=self.source.registry, settings=settings(), clusterwide=True,
                                  standalone=True, stop_flag=stop))

    def _log_errors(self) -> None:
        for error in self.runner.errors:
            log.error("controller-manager: %s", error)
        self.metrics.errors.inc(len(self.runner.errors))
        self.runner.errors.clear()

    def _resync(self) -> None:
        """Deletes cached objects a list no longer has (what kopf's re-lists do not report)."""
        self.clock.after(RESYNC, self._resync)
        for name in self.kinds:
            items, version = self.store.list_with_version(kind_named(name), self.source.scoped.get(name, (None,))[0])
            present = {key_of(o) for o in items}
            for obj in self.informers.list(name):
                if key_of(obj) not in present and _older(obj, version):
                    self.informers.deliver("DELETED", obj)


def _older(obj: dict, version: str) -> bool:
    cached = resource_version(obj)
    return cached is not None and version.isdigit() and cached <= int(version)
