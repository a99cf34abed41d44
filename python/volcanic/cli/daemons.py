"""What `volcanic scheduler | controller-manager | webhook | up` build from their flags, as
plain data and without starting anything (tests read it offline): each command's
configuration, and the flags' checks (FlagError names the flag; argparse reports it, exit 2).

Volcano's checks are kept (cmd/*/app/options: CheckOptionOrDie; component-base's
ValidateLeaderElectionConfiguration and client-go's leaderelection.NewLeaderElector for the
leader-election timings; CheckPortOrDie), and a few of volcanic's own where Volcano would
fail later or spin (a schedule period of 0, an address without a port).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
import logging
import os
from typing import Any, Callable

from volcanic.admission.volcano import read_resource_groups
from volcanic.cli.volcano import (
    DAEMON_HOOK_BUDGET,
    DEFAULT_CONTROLLERS,
    VOLCANIC_CONTROLLERS,
    FlagError,
    check_controllers,
    controller_enabled,
    python_log_level,
)
from volcanic.real.leader import LeaderElection
from volcanic.real.manifests.names import NAMESPACE, SERVICE
from volcanic.real.scheduler_view import EngineView, node_selector
from volcanic.real.serving import Endpoint

JITTER_FACTOR = 1.2  # client-go leaderelection.JitterFactor


@dataclass
class ProcessConfig:
    """What every component of a process shares."""

    kubeconfig: str | None = None
    master: str | None = None                 # --master: the API server's address over the kubeconfig's
    qps: float | None = None
    burst: int | None = None
    election: LeaderElection | None = None    # None: not elected
    endpoints: list[Endpoint] = field(default_factory=list)
    log_level: int = logging.INFO             # volcanic's loggers (-v)
    log_file: str | None = None               # also written here (--logtostderr=false with --log-file/--log-dir)
    given: set[str] = field(default_factory=set)   # the flags on the command line, without dashes
    ignored: list[str] = field(default_factory=list)  # positional arguments, ignored as Volcano's mains do


@dataclass
class SchedulerConfig:
    process: ProcessConfig
    conf_path: str | None = None
    period: float = 1.0
    settle: float | None = None
    python_hook_budget: float | None = DAEMON_HOOK_BUDGET
    feature_gates: frozenset[str] = frozenset()
    view: EngineView = field(default_factory=EngineView)
    plugins_dir: str | None = None


@dataclass
class ControllerManagerConfig:
    process: ProcessConfig
    scheduler_names: tuple[str, ...] = ("volcano",)
    controllers: list[str] = field(default_factory=lambda: list(DEFAULT_CONTROLLERS))
    inherit_owner_annotations: bool = True
    feature_gates: frozenset[str] = frozenset()

    @property
    def enabled(self) -> Callable[[str], bool]:
        return controller_enabled(self.controllers)

    def running(self) -> list[str]:
        """volcanic's controllers that --controllers turns on."""
        return [name for name in VOLCANIC_CONTROLLERS if self.enabled(name)]


@dataclass
class WebhookConfig:
    process: ProcessConfig
    listen: str = "0.0.0.0:8443"
    url: str | None = None
    tls: tuple[str, str] | None = None
    ca_cert: str | None = None
    register: bool = False
    fill_ca_bundle: bool = False               # Volcano's way: the chart's configurations, caBundle filled in
    service: tuple[str, str] = (SERVICE, NAMESPACE)  # --webhook-service-name, --webhook-namespace
    admission_conf: str | None = None          # --admission-conf, read again when it changes
    paths: tuple[str, ...] = ()
    admission: Any = None                      # volcanic.admission.AdmissionConf
    limits: dict[str, Any] = field(default_factory=dict)


def _get(args: argparse.Namespace, name: str, default: Any = None) -> Any:
    value = getattr(args, name.replace("-", "_"), None)
    return default if value is None else value


def check_address(flag: str, address: str) -> str:
    """HOST:PORT as Go's net.Listen takes it (":8080", "0.0.0.0:8080", "[::1]:8080")."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535 or ("[" in host) != host.startswith("["):
        raise FlagError(flag, f"invalid address {address!r} (HOST:PORT, e.g. :8080)")
    return address


def leader_election(args: argparse.Namespace, component: str) -> LeaderElection | None:
    """--leader-elect and its timings, checked as component-base and client-go check them."""
    if not _get(args, "leader-elect", False):
        return None
    lease = _get(args, "leader-elect-lease-duration", 15.0)
    renew = _get(args, "leader-elect-renew-deadline", 10.0)
    retry = _get(args, "leader-elect-retry-period", 2.0)
    for flag, value in (("leader-elect-lease-duration", lease), ("leader-elect-renew-deadline", renew),
                        ("leader-elect-retry-period", retry)):
        if value <= 0:
            raise FlagError(flag, "must be greater than zero")
    if lease <= renew:
        raise FlagError("leader-elect-lease-duration",
                        f"must be greater than --leader-elect-renew-deadline ({renew:g}s)")
    if renew <= JITTER_FACTOR * retry:
        raise FlagError("leader-elect-renew-deadline", f"must be greater than --leader-elect-retry-period x "
                        f"{JITTER_FACTOR} ({JITTER_FACTOR * retry:g}s)")
    lock = _get(args, "leader-elect-resource-lock", "leases")
    # The controller-manager makes its lock of this type; the scheduler always uses a Lease.
    if not lock or (component == "controller-manager" and lock != "leases"):
        raise FlagError("leader-elect-resource-lock", f"invalid lock type {lock!r}: only 'leases' is supported")
    namespace = _get(args, "lock-object-namespace") or _get(args, "leader-elect-resource-namespace", NAMESPACE)
    if not namespace:
        raise FlagError("leader-elect-resource-namespace", "required")
    name = getattr(args, "leader_elect_resource_name", None)
    if name == "":
        raise FlagError("leader-elect-resource-name", "required")
    return LeaderElection(namespace=namespace, name=name, lease=lease, renew_deadline=renew, retry=retry)


def endpoints(args: argparse.Namespace) -> list[Endpoint]:
    """--metrics-address (volcanic's: /metrics and /healthz), Volcano's --listen-address with
    --enable-metrics (/metrics) and --healthz-address with --enable-healthz (/healthz, over
    HTTPS when --ca-cert-file, --tls-cert-file and --tls-private-key-file are all given, as
    Volcano's StartHealthz)."""
    out = []
    if _get(args, "metrics-address"):
        out.append(Endpoint(check_address("metrics-address", args.metrics_address)))
    if _get(args, "enable-metrics", False):
        out.append(Endpoint(check_address("listen-address", args.listen_address), metrics=True, healthz=False))
    if _get(args, "enable-healthz", False):
        certs = (_get(args, "ca-cert-file"), _get(args, "tls-cert-file") or _get(args, "tls-cert"),
                 _get(args, "tls-private-key-file") or _get(args, "tls-key"))
        tls = (certs[1], certs[2]) if all(certs) else None
        out.append(Endpoint(check_address("healthz-address", args.healthz_address), metrics=False, healthz=True,
                            tls=tls))
    return out


def log_file(args: argparse.Namespace, component: str) -> str | None:
    """klog's files: only with --logtostderr=false; --log-file, else a file in --log-dir."""
    if _get(args, "logtostderr", True):
        return None
    if _get(args, "log-file"):
        return args.log_file
    if _get(args, "log-dir"):
        return os.path.join(args.log_dir, f"volcanic-{component}.log")
    return None


def process_config(args: argparse.Namespace, component: str) -> ProcessConfig:
    return ProcessConfig(kubeconfig=_get(args, "kubeconfig") or None, master=_get(args, "master") or None,
                         qps=_get(args, "kube-api-qps"), burst=_get(args, "kube-api-burst"),
                         election=leader_election(args, component), endpoints=endpoints(args),
                         log_level=python_log_level(_get(args, "v", 0)), log_file=log_file(args, component),
                         given=set(getattr(args, "given_flags", set())),
                         ignored=list(getattr(args, "ignored_arguments", [])))


def scheduler_config(args: argparse.Namespace, gates: frozenset[str]) -> SchedulerConfig:
    period = _get(args, "schedule-period", 1.0)
    if period <= 0:
        raise FlagError("schedule-period", f"must be more than 0, got {period:g}s")
    budget = _get(args, "python-hook-budget", DAEMON_HOOK_BUDGET)
    names = tuple(_get(args, "scheduler-name", ["volcano"]))
    view = EngineView(scheduler_names=names, node_selector=node_selector(_get(args, "node-selector", [])),
                      default_queue=_get(args, "default-queue", "default") or "default",
                      priority_classes=_get(args, "priority-class", True) and "PriorityClass" in gates)
    return SchedulerConfig(process_config(args, "scheduler"), conf_path=_get(args, "scheduler-conf") or None,
                           period=period, settle=_get(args, "settle"), python_hook_budget=budget,
                           feature_gates=gates, view=view, plugins_dir=_get(args, "plugins-dir") or None)


def controller_manager_config(args: argparse.Namespace, gates: frozenset[str]) -> ControllerManagerConfig:
    controllers = list(_get(args, "controllers", DEFAULT_CONTROLLERS))
    problem = check_controllers(controllers)
    if problem:
        raise FlagError("controllers", problem)
    return ControllerManagerConfig(process_config(args, "controller-manager"),
                                   scheduler_names=tuple(_get(args, "scheduler-name", ["volcano"])),
                                   controllers=controllers,
                                   inherit_owner_annotations=_get(args, "inherit-owner-annotations", True),
                                   feature_gates=gates)


def resource_groups(path: str | None) -> tuple[dict[str, Any], ...]:
    """--admission-conf: Volcano's admission configuration file (resourceGroups) as it is at
    start (the webhook reads it again when it changes: volcanic.real.webhook)."""
    if not path:
        return ()
    try:
        return read_resource_groups(path)
    except ValueError as e:
        raise FlagError("admission-conf", str(e)) from None


def webhook_listen(args: argparse.Namespace) -> str:
    """--listen (volcanic's), else Volcano's --listen-address and --port ("" is every address)."""
    if _get(args, "listen"):
        return check_address("listen", args.listen)
    port = _get(args, "port", 8443)
    if not 1 <= port <= 65535:
        raise FlagError("port", "the port should be in the range of 1 and 65535")
    return f"{_get(args, 'listen-address', '') or '0.0.0.0'}:{port}"
