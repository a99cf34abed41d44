"""`volcanic scheduler`: Volcano's vc-scheduler on a real API server.

The same SchedulerLoop as the embedded cluster's, on the wall clock: informers fed by
list+watch of the kinds the engine reads (re-listing on 410 Gone and after disconnects),
one session per period once the caches are synced (and one as soon as the watch has been
quiet for `settle` seconds, so new work waits a fraction of a period), binds through
pods/binding (sent in the background), evictions, PodGroup and Queue status, PodScheduled=False
conditions, Events (sent in the background) and Volcano's scheduler metrics. A failed bind
is handled as Volcano's cache does (see volcanic.scheduler.loop).

The configuration file is re-read when it changes (Volcano mounts it from a ConfigMap): the
engine is rebuilt with the new configuration and refilled from the informers' caches. A file
that does not parse is logged and the running configuration kept. A plugin the configuration
names but nothing provides is skipped, as Volcano's scheduler skips it: logged at error level
("Failed to get plugin <name>.") and counted by the gauge volcanic_scheduler_skipped_plugins.

`feature_gates` (`--feature-gates`): with SchedulingGatesQueueAdmission, the queue-allocation
gate of opted-in pods is removed once their queue has room (see volcanic.scheduler.loop).
`view` (`--scheduler-name`, `--node-selector`, `--default-queue`, `--priority-class`): what
the engine is shown of each object (volcanic.real.scheduler_view).
"""

from __future__ import annotations

import logging
import os
import threading

from prometheus_client import CollectorRegistry

from volcanic.errors import ConfigError
from volcanic.kube.events import Recorder
from volcanic.kube.informers import Informers
from volcanic.real import heap
from volcanic.real.clock import LINGER, WallClock
from volcanic.real.events import BackgroundEvents
from volcanic.real.node_metrics import remote_source
from volcanic.real.scheduler_view import EngineView, component_name
from volcanic.real.serving import Health
from volcanic.real.store import KubeStore
from volcanic.scheduler.engine import SCHEDULER_KINDS
from volcanic.scheduler.loop import SCHEDULER_COMPONENT, SchedulerLoop
from volcanic.scheduler.metrics import SchedulerMetrics

log = logging.getLogger("volcanic.scheduler")

SETTLE = 0.2  # seconds of a quiet watch after which a session starts before its period (--settle)


class ConfFile:
    """A scheduler configuration file, read again when its modification time changes."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._stamp: float | None = None

    def text(self) -> str | None:
        if self.path is None:
            return None
        self._stamp = os.stat(self.path).st_mtime
        with open(self.path, encoding="utf-8") as f:
            return f.read()

    def changed(self) -> bool:
        if self.path is None:
            return False
        try:
            return os.stat(self.path).st_mtime != self._stamp
        except OSError:
            return False


class SchedulerDaemon:
    """The scheduler on a real cluster; run() until stop is set."""

    def __init__(self, store: KubeStore, conf_path: str | None = None, period: float = 1.0,
                 health: Health | None = None, registry: CollectorRegistry | None = None,
                 settle: float | None = None, python_hook_budget: float | None = None,
                 feature_gates: frozenset[str] = frozenset(), view: EngineView | None = None) -> None:
        self.store, self.conf = store, ConfFile(conf_path)
        self.health = health or Health()
        self.clock = WallClock()
        # Volcano Jobs too, unfed to the engine: a forecast forks them (volcanic.foresight).
        self.informers = Informers(store, SCHEDULER_KINDS | {"Job"})
        self.clock.on_timer = self.informers.watch.wake
        source = component_name(view.scheduler_names) if view else SCHEDULER_COMPONENT
        recorder = Recorder(BackgroundEvents(store), self.clock.now, source)
        settle = SETTLE if settle is None else settle  # 0: only every period
        self.loop = SchedulerLoop(store, self.informers, self.clock, self.conf.text(), period, recorder,
                                  settle or None, python_hook_budget, skip_unknown_plugins=True,
                                  feature_gates=feature_gates,
                                  node_metrics=lambda conf: remote_source(conf, store.client, self.clock.now))
        # Before the first objects come (run() pumps them); none when it would show every
        # object as it is (the flags' defaults), so the hot path calls nothing per object.
        self.loop.feed.view = view if view is not None and view != EngineView() else None
        self.metrics = SchedulerMetrics(registry or CollectorRegistry(), self.clock.now)
        self.metrics.skipped(self.loop.skipped_plugins)
        self.loop.on_session = self._first_session
        self.clock.after(period, self._watch_conf)

    def _first_session(self, decisions, seconds: float, bound: int, failed: int) -> None:
        """Logs the first session (the cold-start benchmark times it), then leaves the
        sessions to the metrics."""
        log.info("scheduler: first session: %d binds in %.3f s", bound, seconds)
        self.loop.on_session = self._session
        self.metrics.observe(decisions, seconds, bound, failed)

    def _session(self, decisions, seconds: float, bound: int, failed: int) -> None:
        log.debug("scheduler: session: %d binds decided in %.3f s, %d answered since the last",
                  len(decisions.binds), seconds, bound)
        self.metrics.observe(decisions, seconds, bound, failed)

    def run(self, stop: threading.Event) -> None:
        log.info("scheduler: waiting for the caches to sync")
        heap.loading()
        watch = self.informers.watch
        while not watch.synced.is_set():  # the lists stream into the engine as their pages come
            if stop.is_set():
                return
            watch.wait(0.2, LINGER)
            self.informers.pump()
            self.loop.feed.flush()
        log.info("scheduler: caches synced; scheduling every %.1f s", self.loop.period)
        heap.started()
        while not stop.is_set():
            self.health.beat("scheduler")
            self.informers.watch.wait(self.clock.run_due(), LINGER)
            self.informers.pump()
            self.loop.collect()
            self._log_errors()

    def _log_errors(self) -> None:
        for error in self.informers.errors:
            log.error("%s", error)
        self.informers.errors.clear()

    def _watch_conf(self) -> None:
        self.clock.after(self.loop.period, self._watch_conf)
        if not self.conf.changed():
            return
        try:
            self.loop.reconfigure(self.conf.text())
        except (ConfigError, OSError, ValueError) as e:
            log.error("scheduler: %s not reloaded, keeping the running configuration: %s", self.conf.path, e)
            return
        self.metrics.skipped(self.loop.skipped_plugins)
        log.info("scheduler: configuration %s reloaded", self.conf.path)

