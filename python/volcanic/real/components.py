"""Running volcanic's components on a cluster: one per process (`volcanic scheduler`,
`controller-manager`, `webhook`, what a production Deployment runs) or all three in one
(`volcanic up`), each under Lease leader election with `--leader-elect`, and the process's
`/metrics` and `/healthz` endpoints (`--metrics-address`; Volcano's `--listen-address` and
`--healthz-address`).

When one component stops (a lost Lease, a crash, a signal) the others are stopped too and the
process exits, non-zero unless it was asked to stop: Kubernetes restarts the whole process,
as it restarts Volcano's binaries that exit on a lost Lease. Asked to stop (SIGTERM, SIGINT)
and stopped cleanly, each component then undoes what it declared (Component.on_clean_stop).
"""

from __future__ import annotations

from dataclasses import dataclass
import logging
import threading
from typing import Any, Callable

from prometheus_client import CollectorRegistry

from volcanic.real.client import KubeClient
from volcanic.real.leader import LeaderElection, LostLease, run_maybe_elected
from volcanic.real.metrics import ApiRequestMetrics
from volcanic.real.serving import Endpoint, Health, merged, serve

log = logging.getLogger("volcanic")


@dataclass
class Component:
    name: str
    lease: str | None                      # its Lease under --leader-elect (None: never elected)
    run: Callable[[threading.Event], None]  # runs until the event is set
    # What it undoes once the process was asked to stop and every component ended without a
    # failure (`volcanic up`'s webhook removes its registrations); not after a crash or a lost
    # Lease, when Kubernetes restarts the process and it takes over what it left.
    on_clean_stop: Callable[[], None] | None = None


@dataclass
class Process:
    """What the components of one process share."""

    client: KubeClient
    health: Health
    registry: CollectorRegistry
    # The scheduler's foresight answers (a volcanic.foresight.Foresight, None before its
    # caches sync), served beside /metrics; None in a process without a scheduler.
    foresight: Callable[[], Any] | None = None

    @classmethod
    def of(cls, client: KubeClient) -> "Process":
        registry = CollectorRegistry()
        ApiRequestMetrics(registry, client.connections.counts)
        return cls(client, Health(), registry)

    def run(self, components: list[Component], stop: threading.Event, election: LeaderElection | bool | None = None,
            endpoints: list[Endpoint] | str | None = None) -> int:
        """Runs the components until `stop` or until one of them ends; returns the exit code.
        `election`: a LeaderElection (True: Volcano's defaults) elects each component with a
        Lease; `endpoints` (or one HOST:PORT serving both paths) are served meanwhile."""
        if election is True:
            election = LeaderElection()
        if isinstance(endpoints, str):
            endpoints = [Endpoint(endpoints)]
        servers = [serve(e.address, self.registry, self.health, e.metrics, e.healthz, e.tls, self.foresight)
                   for e in merged(endpoints or [])]
        failures: list[str] = []
        stopping = threading.Event()

        def main(c: Component) -> None:
            try:
                run_maybe_elected(self.client, c.lease if election else None, stopping, c.run, election or None)
            except LostLease as e:
                failures.append(f"{c.name}: {e}")
            except Exception as e:  # noqa: BLE001 - reported, and the process exits non-zero
                log.exception("%s failed", c.name)
                failures.append(f"{c.name}: {type(e).__name__}: {e}")
            finally:
                stopping.set()

        threads = [threading.Thread(target=main, args=(c,), name=c.name, daemon=True) for c in components]
        for t in threads:
            t.start()
        while not stopping.wait(0.5):
            if stop.is_set():
                stopping.set()
        for t in threads:
            t.join(15)
        clean = stop.is_set() and not failures
        if clean:
            self._clean_up(components, threads, failures)
        for server in servers:
            server.shutdown()
            server.server_close()
        for failure in failures:
            log.error("%s", failure)
        return 1 if failures or not stop.is_set() else 0

    @staticmethod
    def _clean_up(components: list[Component], threads: list[threading.Thread], failures: list[str]) -> None:
        """Runs the on_clean_stop of each component that has ended."""
        for c, t in zip(components, threads):
            if c.on_clean_stop is None or t.is_alive():
                continue
            try:
                c.on_clean_stop()
            except Exception as e:  # noqa: BLE001 - reported, and the process exits non-zero
                log.exception("%s: clean-up failed", c.name)
                failures.append(f"{c.name}: clean-up: {type(e).__name__}: {e}")
