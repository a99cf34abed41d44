"""The scheduler's loop: feed the engine from a Store's watch, run a session when one is due,
and write its decisions back like Volcano's scheduler. The same loop runs in the embedded
cluster (on its virtual clock) and as `volcanic scheduler` on a real API server.

It is three parts, each a module with the rules it follows:
- feed.py (Feed): the watch's objects upserted into the engine, coalesced per instant;
- cadence.py (Cadence): when sessions run: at period boundaries where something changed
  since a session that decided nothing, at the instant a decision changes with time alone,
  and with `settle`, once quiet or `settle` after new work comes;
- writer.py (Writer): binds (after the pod's volumes: volume_binds.py), evictions, gate
  removals, PodGroup and Queue statuses, pod conditions and Events, sent in the background.
A session flushes the feed and collects the answers that came in first, so it sees everything
that happened before it.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Callable

from volcanic.errors import PluginError
from volcanic.kube.clock import Clock
from volcanic.kube.events import Recorder
from volcanic.kube.informers import Informers
from volcanic.kube.store import Store
from volcanic.scheduler.cadence import Cadence
from volcanic.scheduler.conf import load_conf
from volcanic.scheduler.engine import Decisions, Scheduler
from volcanic.scheduler.feed import Feed
from volcanic.scheduler.node_metrics import MetricsConf, NodeLoad, NodeMetricsPoller, Source
from volcanic.scheduler.plugins import without_unknown_plugins
from volcanic.scheduler.writer import Writer

log = logging.getLogger(__name__)

SCHEDULER_COMPONENT = "volcano"  # Volcano's scheduler names its event source after its scheduler names


class SchedulerLoop:
    def __init__(self, store: Store, informers: Informers, clock: Clock, conf: Any, period: float = 1.0,
                 recorder: Recorder | None = None, settle: float | None = None,
                 python_hook_budget: float | None = None, skip_unknown_plugins: bool = False,
                 feature_gates: frozenset[str] = frozenset(),
                 node_metrics: Callable[[MetricsConf], Source] | None = None) -> None:
        self.store, self.informers, self.clock, self.period = store, informers, clock, period
        self.feature_gates = frozenset(feature_gates)  # Volcano's that are on (Scheduler's feature_gates)
        self.python_hook_budget = python_hook_budget  # kept for the engine of a new configuration
        self.recorder = recorder or Recorder(store, clock.now, SCHEDULER_COMPONENT)
        # Called after each session with its decisions, its wall seconds (the writes are sent,
        # not answered, by then) and the binds answered since the session before it: how many
        # succeeded and how many failed (binds are answered in the background).
        self.on_session: Callable[[Decisions, float, int, int], None] | None = None
        # As Volcano's scheduler, run without a plugin the configuration names but no one
        # provides (logged at error level); otherwise such a configuration is a ConfigError.
        self.skip_unknown_plugins = skip_unknown_plugins
        self.skipped_plugins: list[str] = []
        self.engine = self._new_engine(conf)
        self.conf = conf  # the running engine's configuration (the foresight forks run it)
        self.sessions = 0
        self.seconds: dict[str, float] = {"session": 0.0}  # wall seconds, per action and in all
        self.last: Decisions | None = None
        self.cadence = Cadence(clock, period, settle, self.run_session)
        self.writer = Writer(store, informers, clock, self.recorder, self.cadence, lambda: self.engine)
        self.feed = Feed(informers, clock, self.recorder, self.cadence, lambda: self.engine, self.writer.own_echo,
                         self.writer.volumes_changed, self.writer.deleted)
        self.feed.flush()
        self.cadence.mark_dirty()
        # The nodes' load for the usage and rescheduling plugins, from the source the
        # configuration's metrics section names (node_metrics.py); the last load of each node,
        # which a new engine is given too.
        self._node_metrics = node_metrics
        self.node_loads: dict[str, NodeLoad] = {}
        self._poller: NodeMetricsPoller | None = None
        self._poll(conf)

    def reconfigure(self, conf: Any) -> None:
        """Replaces the engine by one with configuration `conf`, refilled from the cache;
        a bad configuration raises ConfigError and leaves the running engine in place."""
        engine = self._new_engine(conf)
        self.feed.refill(engine)
        self.engine, self.conf = engine, conf
        self._record_loads(self.node_loads)
        self._poll(conf)
        self.cadence.mark_dirty()

    def _poll(self, conf: Any) -> None:
        """(Re)starts asking for the nodes' load as the configuration's metrics section says."""
        metrics = MetricsConf.parse(json.loads(load_conf(conf) or "{}"))
        if self._poller is not None:
            self._poller.stop()
            self._poller = None
        if metrics is not None and self._node_metrics is not None:
            self._poller = NodeMetricsPoller(metrics, self._node_metrics(metrics), self.clock,
                                             lambda: [n["metadata"]["name"] for n in self.informers.list("Node")],
                                             self._record_loads)

    def _record_loads(self, loads: dict[str, NodeLoad]) -> None:
        self.node_loads.update(loads)
        for node, load in loads.items():
            try:
                if self.engine.set_node_usage(node, load.cpu, load.memory, load.time):
                    self.cadence.changed()
            except KeyError:
                pass  # gone, or not the engine's to see (Volcano logs it)

    def collect(self) -> None:
        """Handles the answers to earlier sessions' binds and status writes that came in,
        after upserting what the watch brought before them."""
        self.feed.flush()
        self.writer.collect()

    def run_session(self) -> None:
        """A session, if one is due (Cadence.began), after what came in is fed and collected."""
        self.informers.pump()
        self.collect()
        if not self.cadence.began():
            return
        self.sessions += 1
        start = time.perf_counter()
        try:
            # The session's metrics are what on_session reads (a metrics exporter's observe).
            d = self.engine.run_once(self.clock.now(), changed_only=True, timings=False,
                                     metrics=self.on_session is not None)
        except PluginError as e:
            # A Python plugin failed: the session changed nothing; try again next period, as a
            # scheduler would after logging it.
            self.informers.errors.append(f"scheduler: {e}")
            self.cadence.mark_dirty()
            return
        seconds = time.perf_counter() - start
        self.seconds["session"] += seconds
        for action, seconds in d.action_seconds.items():
            self.seconds[action] = self.seconds.get(action, 0.0) + seconds
        self.last = d
        self.cadence.wake_at(d.wake_at)
        if d.binds or d.evictions or d.deferred or (d.podgroups and d.pending):
            self.cadence.mark_dirty()  # the next session's view is not this one's: it may decide more
        self.writer.write(d)
        self.collect()  # on the embedded store, every write is answered already
        bound, failed = self.writer.take_answered()
        if self.on_session is not None:
            self.on_session(d, time.perf_counter() - start, bound, failed)

    def _new_engine(self, conf: Any) -> Scheduler:
        skipped: list[str] = []
        if self.skip_unknown_plugins:
            conf, skipped = without_unknown_plugins(load_conf(conf))
        engine = Scheduler(conf, python_hook_budget=self.python_hook_budget, feature_gates=self.feature_gates)
        for name in skipped:
            log.error("Failed to get plugin %s.", name)  # Volcano's words
        self.skipped_plugins = skipped
        return engine
