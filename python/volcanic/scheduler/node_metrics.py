"""The nodes' measured load for the usage and rescheduling plugins (docs/scheduler.md, "Node
metrics").

As in Volcano (pkg/scheduler/cache GetMetricsData), the scheduler configuration's `metrics:`
section names the monitoring system: `type` (prometheus, prometheus_adaptor or elasticsearch),
`address`, and `interval` (how often to ask, default 30s). Every interval the scheduler asks
it for each node's CPU and memory load, in percent averaged over 10 minutes, and records it in
its engine (Scheduler.set_node_usage). Without a type nothing is collected and the plugins
see no load, as in Volcano.

A source answers `collect(nodes) -> {node: NodeLoad}`: the remote ones are in
volcanic.real.node_metrics; the embedded cluster's simulated kubelets are one too
(volcanic.cluster.node_load), standing in for whichever system the configuration names.
"""

from __future__ import annotations

from dataclasses import dataclass
import logging
import threading
from typing import Any, Callable, Mapping, Protocol

from volcanic.errors import ConfigError
from volcanic.kube.clock import Clock, Timer
from volcanic.kube.duration import parse_duration

log = logging.getLogger(__name__)

TYPES = ("prometheus", "prometheus_adaptor", "elasticsearch")
DEFAULT_INTERVAL = 30.0  # Volcano's defaultMetricsInternal
_KEYS = ("type", "address", "interval", "tls.insecureSkipVerify", "elasticsearch.index",
         "elasticsearch.hostnameFieldName", "elasticsearch.username", "elasticsearch.password")


@dataclass(frozen=True)
class NodeLoad:
    cpu: float  # percent of the node's capacity
    memory: float
    time: float  # when measured, Unix seconds


@dataclass(frozen=True)
class MetricsConf:
    """The `metrics:` section: `fields` are its values as text, by Volcano's key names."""
    type: str
    interval: float
    fields: Mapping[str, str]

    def get(self, key: str, default: str = "") -> str:
        return self.fields.get(key) or default

    @staticmethod
    def parse(conf: Mapping[str, Any] | None) -> MetricsConf | None:
        """The section of a parsed scheduler configuration; None when it names no type.
        ConfigError names the key for an unknown key, a value that is not text, an unknown
        type, a missing address or a bad interval (Volcano logs these at every interval)."""
        section = (conf or {}).get("metrics")
        if section is None:
            return None
        if not isinstance(section, dict):
            raise ConfigError("scheduler configuration: metrics: must be a map such as "
                              "{type: prometheus, address: http://prometheus:9090}")
        fields: dict[str, str] = {}
        for key, value in section.items():
            if key not in _KEYS:
                raise ConfigError(f'scheduler configuration: metrics: unknown key "{key}"; known: {", ".join(_KEYS)}')
            if isinstance(value, bool):
                value = "true" if value else "false"
            if not isinstance(value, str):
                raise ConfigError(f"scheduler configuration: metrics.{key}: must be text, got {value!r}")
            fields[key] = value
        kind = fields.get("type", "")
        if not kind:
            return None
        if kind not in TYPES:
            raise ConfigError(f'scheduler configuration: metrics.type: "{kind}" is not a monitoring system volcanic '
                              f'can read; known: {", ".join(TYPES)}')
        if kind != "prometheus_adaptor" and not fields.get("address"):
            raise ConfigError(f"scheduler configuration: metrics.address: required for type {kind}")
        interval = DEFAULT_INTERVAL
        if fields.get("interval"):
            try:
                interval = parse_duration(fields["interval"], "scheduler configuration: metrics.interval")
            except ValueError as e:
                raise ConfigError(str(e)) from None
            interval = interval if interval > 0 else DEFAULT_INTERVAL  # Volcano's rule for <= 0
        return MetricsConf(kind, interval, fields)


class Source(Protocol):
    # True for a system across the network: it is asked in a thread of its own.
    remote: bool

    def collect(self, nodes: list[str]) -> dict[str, NodeLoad]: ...


class NodeMetricsPoller:
    """Asks `source` for the load of the nodes `nodes()` names every `conf.interval` on the
    clock, and hands what it answers to `record` (the loop's engine). A remote source's each
    ask runs in its own thread (a remote system may be slow; the loop never waits for it) and
    its answer comes back on the clock; an ask still running when the next is due is not
    doubled. A failed ask is logged and changes nothing, as in Volcano."""

    def __init__(self, conf: MetricsConf, source: Source, clock: Clock, nodes: Callable[[], list[str]],
                 record: Callable[[dict[str, NodeLoad]], None]) -> None:
        self.conf, self.source, self.clock = conf, source, clock
        self._nodes, self._record = nodes, record
        self._asking = False
        # The first ask once the instant's other work is done (what the watch brought is in).
        self._timer: Timer | None = clock.after(0.0, self._tick, last=True)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _tick(self) -> None:
        self._timer = self.clock.after(self.conf.interval, self._tick)
        if self._asking:
            return
        nodes = self._nodes()
        if not self.source.remote:
            self._answer(self._ask(nodes))
            return
        self._asking = True
        threading.Thread(target=lambda: self._in_background(nodes), name="node-metrics", daemon=True).start()

    def _in_background(self, nodes: list[str]) -> None:
        loads = self._ask(nodes)
        self.clock.after(0.0, lambda: self._answer(loads))

    def _ask(self, nodes: list[str]) -> dict[str, NodeLoad] | None:
        try:
            return self.source.collect(nodes)
        except Exception as e:  # a monitoring system down must not stop the scheduler
            log.error("Error getting node metrics from %s: %s", self.conf.type, e)
            return None

    def _answer(self, loads: dict[str, NodeLoad] | None) -> None:
        self._asking = False
        if loads and self._timer is not None:
            self._record(loads)
