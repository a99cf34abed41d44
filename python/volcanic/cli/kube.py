"""`volcanic install | up | scheduler | controller-manager | webhook --register | dev-cluster`:
the real-cluster commands."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from urllib.parse import urlparse


def _client(args: argparse.Namespace):
    from volcanic.real.client import KubeClient
    return KubeClient(args.kubeconfig)


def _log_setup() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("kopf").setLevel(logging.WARNING)


def _stop_on_signals() -> threading.Event:
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def _cmd_install(args: argparse.Namespace) -> int:
    from volcanic.real.install import install, render
    conf = open(args.scheduler_conf).read() if args.scheduler_conf else None
    if args.print:
        sys.stdout.write(render(args.all, image=args.image, scheduler_conf=conf))
        return 0
    install(_client(args), args.all, image=args.image, scheduler_conf=conf)
    return 0


def _scheduler(process, store, args):
    from volcanic.real.components import Component
    from volcanic.real.leader import SCHEDULER_LEASE
    from volcanic.real.scheduler import SchedulerDaemon
    daemon = SchedulerDaemon(store, args.scheduler_conf, args.schedule_period, process.health, process.registry,
                             args.settle, args.python_hook_budget)
    return Component("scheduler", SCHEDULER_LEASE, daemon.run)


def _controller_manager(process, store, args):
    from volcanic.real.components import Component
    from volcanic.real.leader import CONTROLLER_MANAGER_LEASE
    from volcanic.real.operator import ControllerManager
    return Component("controller-manager", CONTROLLER_MANAGER_LEASE,
                     ControllerManager(store, process.health, process.registry).run)


def _webhook(process, store, args, listen: str, url: str | None, register: bool):
    from volcanic.real.components import Component
    from volcanic.real.webhook import WebhookDaemon
    tls = (args.tls_cert, args.tls_key) if getattr(args, "tls_cert", None) else None
    daemon = WebhookDaemon(store, listen, url, tls, admission_conf(args), process.health,
                           paths=_admissions(args), register=register, limits=webhook_limits(args))
    return Component("webhook", None, daemon.run)


def admission_conf(args: argparse.Namespace):
    from volcanic.admission import AdmissionConf
    return AdmissionConf(scheduler_names=tuple(getattr(args, "scheduler_name", None) or ["volcano"]),
                         max_queue_depth=getattr(args, "max_queue_depth", 5),
                         root_queue_protection=getattr(args, "enable_root_queue_protection", True),
                         queue_allocated_pods_check=getattr(args, "enable_queue_allocated_pods_check", False))


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


# The webhook's connection limits (volcanic.admission.http_server.Limits) by flag: (type, help).
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
    from volcanic.real.registrations import DEFAULT_ADMISSIONS
    text = getattr(args, "enabled_admission", None)
    return tuple(p.strip() for p in text.split(",") if p.strip()) if text else DEFAULT_ADMISSIONS


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
    return _run(args, lambda process, store: [_scheduler(process, store, args)])


def _cmd_controller_manager(args: argparse.Namespace) -> int:
    return _run(args, lambda process, store: [_controller_manager(process, store, args)])


def cmd_cluster_webhook(args: argparse.Namespace) -> int:
    """`volcanic webhook` with --register or --kubeconfig: admission reading the cluster."""
    return _run(args, lambda process, store: [_webhook(process, store, args, args.listen, args.url, args.register)])


def _cmd_up(args: argparse.Namespace) -> int:
    from volcanic.real.install import install, installed
    client = _client(args)
    if not installed(client):
        install(client, log=lambda s: print(s, file=sys.stderr))
    # Outside a cluster the API server calls the webhook on this machine; in a pod, through
    # the Service (`install --print --all` has one).
    url = args.webhook_url or (None if os.environ.get("KUBERNETES_SERVICE_HOST") else "https://127.0.0.1:8443")
    port = (urlparse(url).port if url else None) or 8443
    return _run(args, lambda process, store: [
        _scheduler(process, store, args), _controller_manager(process, store, args),
        _webhook(process, store, args, f"0.0.0.0:{port}", url, register=True)])


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
    p.add_argument("--python-hook-budget", type=_positive_duration, help="the time all Python plugin hooks of one session "
                   "may take together; past it the session fails and is rolled back (default: no limit)")
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
                   "in a pod, the volcano-admission-service Service)")
    u.set_defaults(func=_cmd_up)
    s = sub.add_parser("scheduler", parents=[_daemon_flags(), _scheduler_flags()], help="run the scheduler on a "
                       "cluster (Volcano's vc-scheduler)")
    s.set_defaults(func=_cmd_scheduler)
    c = sub.add_parser("controller-manager", parents=[_daemon_flags()], help="run the job, PodGroup, queue and GC "
                       "controllers on a cluster as a kopf operator (Volcano's vc-controller-manager)")
    c.set_defaults(func=_cmd_controller_manager)
    d = sub.add_parser("dev-cluster", help="a real cluster on this machine: etcd, kube-apiserver, "
                       "kube-controller-manager and kwok, built once from the Go module proxy")
    d.add_argument("action", choices=["up", "down", "env"])
    d.add_argument("--dir", help="where its state lives (default ~/.cache/volcanic/dev-cluster)")
    d.add_argument("--nodes", type=int, default=0, help="kwok nodes to create (up)")
    d.set_defaults(func=_cmd_dev_cluster)
