"""`volcanic install | scheduler | dev-cluster`: the real-cluster commands."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading


def _client(args: argparse.Namespace):
    from volcanic.real.client import KubeClient
    return KubeClient(args.kubeconfig)


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


def _cmd_scheduler(args: argparse.Namespace) -> int:
    from volcanic.real.scheduler import SchedulerDaemon
    from volcanic.real.store import KubeStore
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    store = KubeStore(_client(args))
    stop = _stop_on_signals()
    try:
        SchedulerDaemon(store, args.scheduler_conf, args.schedule_period).run(stop)
    finally:
        store.close()
    return 0


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
    return parse_duration(text, "--schedule-period")


def add_commands(sub: argparse._SubParsersAction) -> None:
    kubeconfig = argparse.ArgumentParser(add_help=False)
    kubeconfig.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, "
                            "then in-cluster credentials)")
    i = sub.add_parser("install", parents=[kubeconfig], help="install Volcano's CRDs, RBAC, namespace and queues "
                       "on a cluster (server-side apply)")
    i.add_argument("--print", action="store_true", help="write the manifests as YAML to stdout; touch nothing")
    i.add_argument("--all", action="store_true", help="also the three components' Deployments, the webhook's "
                   "Service and the scheduler configuration ConfigMap")
    i.add_argument("--image", default="volcanic:latest", help="the image of the Deployments (with --all)")
    i.add_argument("--scheduler-conf", help="volcano-scheduler.conf for the ConfigMap (with --all)")
    i.set_defaults(func=_cmd_install)
    s = sub.add_parser("scheduler", parents=[kubeconfig], help="run the scheduler on a cluster (Volcano's "
                       "vc-scheduler)")
    s.add_argument("--scheduler-conf", help="volcano-scheduler.conf, re-read when it changes (default: Volcano's)")
    s.add_argument("--schedule-period", type=_duration, default=1.0, help="time between sessions (default 1s)")
    s.set_defaults(func=_cmd_scheduler)
    d = sub.add_parser("dev-cluster", help="a real cluster on this machine: etcd, kube-apiserver, "
                       "kube-controller-manager and kwok, built once from the Go module proxy")
    d.add_argument("action", choices=["up", "down", "env"])
    d.add_argument("--dir", help="where its state lives (default ~/.cache/volcanic/dev-cluster)")
    d.add_argument("--nodes", type=int, default=0, help="kwok nodes to create (up)")
    d.set_defaults(func=_cmd_dev_cluster)
