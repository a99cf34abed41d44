"""`volcanic install | up | scheduler | controller-manager | webhook --register | dev-cluster`:
the real-cluster commands."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import signal
import sys
import threading
from urllib.parse import urlparse


def _client(args: argparse.Namespace):
    from volcanic.real.client import KubeClient
    return KubeClient(args.kubeconfig, qps=getattr(args, "kube_api_qps", None),
                      burst=getattr(args, "kube_api_burst", None))


def _log_setup() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("kopf").setLevel(logging.WARNING)


def _stop_on_signals() -> threading.Event:
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def _cmd_install(args: argparse.Namespace) -> int:
    from volcanic.real.manifests import render
    conf = open(args.scheduler_conf).read() if args.scheduler_conf else None
    if args.print:  # plain data: no Kubernetes client is imported
        sys.stdout.write(render(args.all, image=args.image, scheduler_conf=conf))
        return 0
    from volcanic.real.install import install
    install(_client(args), args.all, image=args.image, scheduler_conf=conf)
    return 0


def _scheduler(process, store, args):
    from volcanic.real.components import Component
    from volcanic.real.leader import SCHEDULER_LEASE
    from volcanic.real.scheduler import SchedulerDaemon
    daemon = SchedulerDaemon(store, args.scheduler_conf, args.schedule_period, process.health, process.registry,
                             args.settle, args.python_hook_budget,
                             feature_gates=enabled_gates(getattr(args, "feature_gates", None) or {}))
    return Component("scheduler", SCHEDULER_LEASE, daemon.run)


def _controller_manager(process, store, args):
    from volcanic.real.components import Component
    from volcanic.real.leader import CONTROLLER_MANAGER_LEASE
    from volcanic.real.operator import ControllerManager
    return Component("controller-manager", CONTROLLER_MANAGER_LEASE,
                     ControllerManager(store, process.health, process.registry).run)


def _webhook(process, store, args, listen: str, url: str | None, register: bool, unregister_on_stop: bool = False):
    """The webhook component; with `unregister_on_stop` (`up`) it removes its registrations
    when the process stops cleanly."""
    from volcanic.real.components import Component
    from volcanic.real.webhook import WebhookDaemon
    tls = (args.tls_cert, args.tls_key) if getattr(args, "tls_cert", None) else None
    daemon = WebhookDaemon(store, listen, url, tls, admission_conf(args), process.health,
                           paths=_admissions(args), register=register, limits=webhook_limits(args))
    return Component("webhook", None, daemon.run, on_clean_stop=daemon.unregister if unregister_on_stop else None)


def admission_conf(args: argparse.Namespace):
    from volcanic.admission import AdmissionConf
    return AdmissionConf(scheduler_names=tuple(getattr(args, "scheduler_name", None) or ["volcano"]),
                         max_queue_depth=getattr(args, "max_queue_depth", 5),
                         root_queue_protection=getattr(args, "enable_root_queue_protection", True),
                         queue_allocated_pods_check=getattr(args, "enable_queue_allocated_pods_check", False),
                         feature_gates=enabled_gates(getattr(args, "feature_gates", None) or {}))


# Volcano v1.15.1's feature gates (pkg/features/volcano_features.go) and their defaults; the
# webhook and the scheduler act on SchedulingGatesQueueAdmission (pods.py adds the
# queue-allocation gate, the scheduler lifts it), the others belong to components that
# volcanic runs with them always at their default.
FEATURE_GATES = {
    "WorkLoadSupport": True, "VolcanoJobSupport": True, "PodDisruptionBudgetsSupport": True,
    "QueueCommandSync": True, "PriorityClass": True, "CSIStorage": False, "ResourceTopology": True,
    "CronVolcanoJobSupport": True, "SchedulingGatesQueueAdmission": False,
}
WEBHOOK_GATES = ("SchedulingGatesQueueAdmission",)  # the gates the webhook reads
SCHEDULER_GATES = ("SchedulingGatesQueueAdmission",)  # the gates the scheduler reads
_GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
             "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def feature_gates(text: str) -> dict[str, bool]:
    """`--feature-gates` as Kubernetes' component-base parses it: `Name=true,Other=false`,
    spaces around names and values ignored, empty items skipped, values as Go's
    strconv.ParseBool reads them; only Volcano's gate names."""
    gates: dict[str, bool] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        name, sep, value = (part.strip() for part in item.partition("="))
        if not sep:
            raise argparse.ArgumentTypeError(f"missing bool value for {name}")
        if name not in FEATURE_GATES:
            raise argparse.ArgumentTypeError(f"unrecognized feature gate: {name} (known: {', '.join(FEATURE_GATES)})")
        if value not in _GO_BOOLS:
            raise argparse.ArgumentTypeError(f"invalid value of {name}={value}: must be true or false")
        gates[name] = _GO_BOOLS[value]
    return gates


def enabled_gates(given: dict[str, bool]) -> frozenset[str]:
    """The names of the gates that are on: the given values over Volcano's defaults."""
    return frozenset(name for name, default in FEATURE_GATES.items() if given.get(name, default))


def add_feature_gates_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--feature-gates", type=feature_gates, metavar="NAME=BOOL,...",
                        help="Volcano's feature gates, e.g. SchedulingGatesQueueAdmission=true (Alpha, off by "
                        "default): the webhook gives pods annotated scheduling.volcano.sh/queue-allocation-gate: "
                        "\"true\" that scheduling gate, and the scheduler removes it once their queue has room; "
                        "see docs/admission.md and docs/scheduler.md")


def _warn_inert_gates(args: argparse.Namespace, component: str, reads: tuple[str, ...]) -> None:
    """A gate set away from its default that `component` does not read is said so in the log."""
    _log_setup()
    log = logging.getLogger(f"volcanic.{component}")
    for name, on in (getattr(args, "feature_gates", None) or {}).items():
        if name not in reads and on != FEATURE_GATES[name]:
            log.warning("feature gate %s=%s has no effect in volcanic's %s (the other components keep its "
                        "default)", name, str(on).lower(), component)


def _positive_duration(text: str) -> float:
    try:
        seconds = _duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text!r}")
    return seconds


def positive_int(text: str) -> int:
    if not (text.strip().isascii() and text.strip().isdigit()) or int(text) <= 0:
        raise argparse.ArgumentTypeError(f"must be a whole number more than 0, got {text!r}")
    return int(text)


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number more than 0, got {text!r}")
    return value


# --kube-api-qps/--kube-api-burst defaults per command: Volcano v1.15.1's
# (cmd/scheduler/app/options/options.go: 2000/2000; cmd/controller-manager/app/options and
# cmd/webhook-manager/app/options: 50/100). `up` runs the three on one client: the scheduler's.
KUBE_API_LIMITS = {"scheduler": (2000.0, 2000), "controller-manager": (50.0, 100), "webhook": (50.0, 100),
                   "up": (2000.0, 2000)}


def add_kube_api_flags(parser: argparse.ArgumentParser, command: str) -> None:
    """client-go's client-side rate limit (rest.Config QPS/Burst) for every request of the
    process, as Volcano's components take it."""
    qps, burst = KUBE_API_LIMITS[command]
    parser.add_argument("--kube-api-qps", type=positive_float, default=qps, help="requests a second to the API "
                        f"server, on average (default {qps:g}, as Volcano's {command})")
    parser.add_argument("--kube-api-burst", type=positive_int, default=burst, help="requests to the API server at "
                        f"once before --kube-api-qps paces them (default {burst})")


# The webhook's connection limits (volcanic.httpd.server.Limits) by flag: (type, help).
LIMIT_FLAGS = {
    "handshake_timeout": (_positive_duration, "time for a client's TLS handshake (default 10s)"),
    "header_timeout": (_positive_duration, "time for a request's line and headers, all of them (default 10s)"),
    "read_timeout": (_positive_duration, "time for a request's body, after its headers (default 10s)"),
    "idle_timeout": (_positive_duration, "time a keep-alive connection waits for its next request (default 90s)"),
    "max_connections": (positive_int, "connections open at once (default 1024)"),
    "max_connections_per_address": (positive_int, "connections open at once from one client address "
                                                   "(default 128)"),
}


def add_limit_flags(parser: argparse.ArgumentParser) -> None:
    for name, (kind, text) in LIMIT_FLAGS.items():
        parser.add_argument("--" + name.replace("_", "-"), type=kind, help=text)


def webhook_limits(args: argparse.Namespace) -> dict:
    """The limits given as flags; the others keep their defaults."""
    return {name: getattr(args, name) for name in LIMIT_FLAGS if getattr(args, name, None) is not None}


def _admissions(args: argparse.Namespace) -> tuple[str, ...]:
    """--enabled-admission, else Volcano's chart's paths, and /pods/mutate, which applies it,
    when SchedulingGatesQueueAdmission is on."""
    from volcanic.real.manifests.webhooks import DEFAULT_ADMISSIONS
    text = getattr(args, "enabled_admission", None)
    if text:
        return tuple(p.strip() for p in text.split(",") if p.strip())
    if "SchedulingGatesQueueAdmission" in admission_conf(args).feature_gates:
        return (*DEFAULT_ADMISSIONS, "/pods/mutate")
    return DEFAULT_ADMISSIONS


def _run(args: argparse.Namespace, make) -> int:
    """Runs the components `make(process, store)` returns until a signal."""
    from volcanic.real.components import Process
    from volcanic.real.store import KubeStore
    _log_setup()
    store = KubeStore(_client(args))
    process = Process.of(store.client)
    stop = _stop_on_signals()
    try:
        return process.run(make(process, store), stop, getattr(args, "leader_elect", False), args.metrics_address)
    finally:
        store.close()


def _cmd_scheduler(args: argparse.Namespace) -> int:
    _warn_inert_gates(args, "scheduler", SCHEDULER_GATES)
    return _run(args, lambda process, store: [_scheduler(process, store, args)])


def _cmd_controller_manager(args: argparse.Namespace) -> int:
    return _run(args, lambda process, store: [_controller_manager(process, store, args)])


def cmd_cluster_webhook(args: argparse.Namespace) -> int:
    """`volcanic webhook` with --register or --kubeconfig: admission reading the cluster."""
    _warn_inert_gates(args, "webhook", WEBHOOK_GATES)
    return _run(args, lambda process, store: [_webhook(process, store, args, args.listen, args.url, args.register)])


def webhook_listen(url: str | None) -> str:
    """Where `up`'s webhook listens (HOST:PORT) for the URL the API server is given: on the
    URL's address when it names one (127.0.0.1 keeps it on this machine; `localhost` is
    127.0.0.1), on every address for a host name, which may reach this machine by any of
    them, or for the Service (no URL). Port 8443 unless the URL names one."""
    from volcanic.errors import ConfigError
    parsed = urlparse(url) if url else None
    try:
        port = (parsed.port if parsed else None) or 8443
    except ValueError as e:
        raise ConfigError(f"--webhook-url {url!r}: {e}") from None
    host = (parsed.hostname or "") if parsed else ""
    if host == "localhost":
        return f"127.0.0.1:{port}"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return f"0.0.0.0:{port}"
    if address.version != 4:
        raise ConfigError(f"--webhook-url {url!r}: the webhook listens on IPv4 only; give an IPv4 address")
    return f"{address}:{port}"


def _cmd_up(args: argparse.Namespace) -> int:
    from volcanic.real.install import install, installed
    # Outside a cluster the API server calls the webhook on this machine; in a pod, through
    # the Service (`install --print --all` has one).
    url = args.webhook_url or (None if os.environ.get("KUBERNETES_SERVICE_HOST") else "https://127.0.0.1:8443")
    listen = webhook_listen(url)
    _warn_inert_gates(args, "up", WEBHOOK_GATES + SCHEDULER_GATES)
    client = _client(args)
    if not installed(client):
        install(client, log=lambda s: print(s, file=sys.stderr))
    return _run(args, lambda process, store: [
        _scheduler(process, store, args), _controller_manager(process, store, args),
        _webhook(process, store, args, listen, url, register=True, unregister_on_stop=True)])


def _cmd_dev_cluster(args: argparse.Namespace) -> int:
    from volcanic.real.devcluster.cluster import DevCluster
    cluster = DevCluster(args.dir)
    if args.action == "up":
        cluster.up(args.nodes, log=lambda s: print(s, file=sys.stderr))
        print(cluster.env())
    elif args.action == "down":
        cluster.down()
    else:
        print(cluster.env())
    return 0


def _duration(text: str) -> float:
    from volcanic.kube.duration import parse_duration
    return parse_duration(text, "duration")


def kubeconfig_flag() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, "
                   "then in-cluster credentials)")
    return p


def _daemon_flags() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False, parents=[kubeconfig_flag()])
    p.add_argument("--leader-elect", action="store_true", help="run only while holding the component's Lease in "
                   "volcano-system (for several replicas)")
    p.add_argument("--metrics-address", metavar="HOST:PORT", help="serve Prometheus /metrics and /healthz here")
    return p


def _scheduler_flags() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--scheduler-conf", help="volcano-scheduler.conf, re-read when it changes (default: Volcano's)")
    p.add_argument("--schedule-period", type=_duration, default=1.0, help="time between sessions (default 1s)")
    p.add_argument("--settle", type=_duration, help="also start a session once the cluster has not "
                   "changed for this long, and this long after a new pod fills its gang (default 200ms; "
                   "0: only every --schedule-period, as Volcano)")
    p.add_argument("--python-hook-budget", type=_positive_duration,
                   help="the time all Python plugin hooks of one session may take together; past it the session "
                   "fails and is rolled back (default: no limit)")
    return p


def add_commands(sub: argparse._SubParsersAction) -> None:
    i = sub.add_parser("install", parents=[kubeconfig_flag()], help="install Volcano's CRDs, RBAC, namespace and "
                       "queues on a cluster (server-side apply)")
    i.add_argument("--print", action="store_true", help="write the manifests as YAML to stdout; touch nothing")
    i.add_argument("--all", action="store_true", help="also the three components' Deployments, the webhook's "
                   "Service and the scheduler configuration ConfigMap")
    i.add_argument("--image", default="volcanic:latest", help="the image of the Deployments (with --all)")
    i.add_argument("--scheduler-conf", help="volcano-scheduler.conf for the ConfigMap (with --all)")
    i.set_defaults(func=_cmd_install)
    u = sub.add_parser("up", parents=[_daemon_flags(), _scheduler_flags()], help="install if needed, then run the "
                       "scheduler, the controller-manager and the webhook in one process")
    u.add_argument("--webhook-url", help="where the API server calls the webhook (default https://127.0.0.1:8443; "
                   "in a pod, the volcano-admission-service Service); the webhook listens on its address "
                   "(on all addresses for a host name or the Service), and its registrations are removed "
                   "when `up` is stopped")
    add_feature_gates_flag(u)
    add_kube_api_flags(u, "up")
    u.set_defaults(func=_cmd_up)
    s = sub.add_parser("scheduler", parents=[_daemon_flags(), _scheduler_flags()], help="run the scheduler on a "
                       "cluster (Volcano's vc-scheduler)")
    add_feature_gates_flag(s)
    add_kube_api_flags(s, "scheduler")
    s.set_defaults(func=_cmd_scheduler)
    c = sub.add_parser("controller-manager", parents=[_daemon_flags()], help="run the job, PodGroup, queue and GC "
                       "controllers on a cluster as a kopf operator (Volcano's vc-controller-manager)")
    add_kube_api_flags(c, "controller-manager")
    c.set_defaults(func=_cmd_controller_manager)
    d = sub.add_parser("dev-cluster", help="a real cluster on this machine: etcd, kube-apiserver, "
                       "kube-controller-manager and kwok, built once from the Go module proxy")
    d.add_argument("action", choices=["up", "down", "env"])
    d.add_argument("--dir", help="where its state lives (default ~/.cache/volcanic/dev-cluster)")
    d.add_argument("--nodes", type=int, default=0, help="kwok nodes to create (up)")
    d.set_defaults(func=_cmd_dev_cluster)
