"""`volcanic install | up | scheduler | controller-manager | webhook --register | dev-cluster`:
the real-cluster commands. `scheduler`, `controller-manager` and `webhook` also take every flag
of Volcano's vc-scheduler, vc-controller-manager and vc-webhook-manager (volcanic.cli.volcano),
read as Volcano's Go binaries read them (volcanic.kube.pflag); what they build is
volcanic.cli.daemons' configuration, made at parse time (main.parse_args)."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import signal
import sys
import threading
from typing import Any
from urllib.parse import urlparse

from volcanic.cli.volcano import (
    DAEMON_HOOK_BUDGET,
    VOLCANIC_CONTROLLERS,
    VOLCANO_CONTROLLERS,
    add_volcano_flags,
    log_inert,
)
from volcanic.kube.pflag import GoBool, StringArray
from volcanic.real.devcluster.operators import OPERATORS


def _client(args: Any):
    """A KubeClient from the command's flags or a daemon's ProcessConfig."""
    from volcanic.real.client import KubeClient
    qps = getattr(args, "kube_api_qps", getattr(args, "qps", None))
    burst = getattr(args, "kube_api_burst", getattr(args, "burst", None))
    return KubeClient(args.kubeconfig, qps=qps, burst=burst, master=getattr(args, "master", None))


LOG_FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"


def _log_setup(level: int = logging.INFO, log_file: str | None = None) -> None:
    """Records to stderr (and `log_file`); volcanic's loggers at `level` (-v 4: DEBUG)."""
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    logging.getLogger("volcanic").setLevel(level)
    logging.getLogger("kopf").setLevel(logging.WARNING)
    if log_file:
        handler = logging.FileHandler(log_file)
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        logging.getLogger().addHandler(handler)


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


def _scheduler(process, store, cfg):
    """The scheduler component of a daemons.SchedulerConfig."""
    from volcanic.real.components import Component
    from volcanic.real.leader import SCHEDULER_LEASE
    from volcanic.real.scheduler import SchedulerDaemon
    from volcanic.real.scheduler_view import ensure_queues
    daemon = SchedulerDaemon(store, cfg.conf_path, cfg.period, process.health, process.registry, cfg.settle,
                             cfg.python_hook_budget, feature_gates=cfg.feature_gates, view=cfg.view)
    process.foresight = lambda: _answers(daemon)

    def run(stop: threading.Event) -> None:
        if cfg.view.default_queue != "default":  # `volcanic install` made root and default
            ensure_queues(store, cfg.view.default_queue)
        daemon.run(stop)
    return Component("scheduler", SCHEDULER_LEASE, run)


def _answers(daemon):
    """The foresight answers from the scheduler's cache and last session (served beside its
    /metrics); None until its caches have synced (a standby replica's never do)."""
    if not daemon.informers.watch.synced.is_set():
        return None
    from volcanic.foresight import Answers, Foresight
    from volcanic.foresight.forecast import FORKED_KINDS
    informers, loop = daemon.informers, daemon.loop
    return Answers(Foresight(lambda: (o for kind in FORKED_KINDS if kind in informers.kinds
                                      for o in informers.list(kind)),
                             lambda: loop.conf, daemon.clock.now, lambda: loop.last.why if loop.last else {}))


def _controller_manager(process, store, cfg):
    """The controller-manager component of a daemons.ControllerManagerConfig."""
    from volcanic.real.components import Component
    from volcanic.real.leader import CONTROLLER_MANAGER_LEASE
    from volcanic.real.operator import ControllerManager
    manager = ControllerManager(store, process.health, process.registry, cfg.scheduler_names, cfg.enabled,
                                cfg.inherit_owner_annotations)
    return Component("controller-manager", CONTROLLER_MANAGER_LEASE, manager.run)


def _webhook(process, store, cfg, unregister_on_stop: bool = False):
    """The webhook component of a daemons.WebhookConfig; with `unregister_on_stop` (`up`) it
    removes its registrations when the process stops cleanly."""
    from volcanic.real.components import Component
    from volcanic.real.webhook import WebhookDaemon
    daemon = WebhookDaemon(store, cfg.listen, cfg.url, cfg.tls, cfg.admission, process.health, paths=cfg.paths,
                           register=cfg.register, limits=cfg.limits, ca_cert=cfg.ca_cert,
                           fill_ca_bundle=cfg.fill_ca_bundle, service=cfg.service,
                           admission_conf=cfg.admission_conf)
    return Component("webhook", None, daemon.run, on_clean_stop=daemon.unregister if unregister_on_stop else None)


def admission_conf(args: argparse.Namespace, resource_groups: tuple = ()):
    from volcanic.admission import AdmissionConf
    return AdmissionConf(scheduler_names=tuple(getattr(args, "scheduler_name", None) or ["volcano"]),
                         max_queue_depth=getattr(args, "max_queue_depth", 5),
                         root_queue_protection=getattr(args, "enable_root_queue_protection", True),
                         queue_allocated_pods_check=getattr(args, "enable_queue_allocated_pods_check", False),
                         resource_groups=resource_groups,
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


def _start_logging(cfg, component: str) -> None:
    """Logging as -v and --log-file/--log-dir ask; then, once, what the command line holds
    that changes nothing here."""
    _log_setup(cfg.log_level, cfg.log_file)
    log = logging.getLogger("volcanic")
    if cfg.ignored:
        log.info("ignoring the arguments %s: not flags (Volcano's binaries ignore them too)", " ".join(cfg.ignored))
    if component in ("scheduler", "controller-manager", "webhook"):
        log_inert(cfg.given, component)


def _run(cfg, make) -> int:
    """Runs the components `make(process, store)` returns until a signal; `cfg` is the
    daemons.ProcessConfig."""
    from volcanic.real.components import Process
    from volcanic.real.store import KubeStore
    store = KubeStore(_client(cfg))
    process = Process.of(store.client)
    stop = _stop_on_signals()
    try:
        return process.run(make(process, store), stop, cfg.election, cfg.endpoints)
    finally:
        store.close()


def load_plugins_dir(path: str | None) -> None:
    """--plugins-dir: every *.py in it registers volcanic scheduler plugins (Volcano loads Go
    plugins, *.so, which volcanic cannot: they are skipped, and said so)."""
    from volcanic.bench.run import load_plugin_file
    from volcanic.errors import ConfigError
    if not path:
        return
    try:
        names = sorted(os.listdir(path))
    except OSError as e:
        raise ConfigError(f"--plugins-dir: {e}") from None
    for name in names:
        if name.endswith(".py"):
            load_plugin_file(os.path.join(path, name))
        elif name.endswith(".so"):
            logging.getLogger("volcanic").info("--plugins-dir: %s is a Go plugin; volcanic loads Python plugins "
                                               "(*.py) only", name)


def _cmd_scheduler(args: argparse.Namespace) -> int:
    cfg = args.config
    _start_logging(cfg.process, "scheduler")
    _warn_inert_gates(args, "scheduler", SCHEDULER_GATES)
    load_plugins_dir(cfg.plugins_dir)
    return _run(cfg.process, lambda process, store: [_scheduler(process, store, cfg)])


def _cmd_controller_manager(args: argparse.Namespace) -> int:
    cfg = args.config
    _start_logging(cfg.process, "controller-manager")
    _warn_inert_gates(args, "controller-manager", ())
    missing = [name for name in VOLCANO_CONTROLLERS if cfg.enabled(name) and name not in VOLCANIC_CONTROLLERS]
    logging.getLogger("volcanic").info("controllers: running %s%s", ", ".join(cfg.running()) or "none",
                                       f"; volcanic has no {', '.join(missing)}" if missing else "")
    return _run(cfg.process, lambda process, store: [_controller_manager(process, store, cfg)])


def cmd_cluster_webhook(args: argparse.Namespace) -> int:
    """`volcanic webhook` reading the cluster (--register, --kubeconfig, or Volcano's flags)."""
    cfg = args.config
    _start_logging(cfg.process, "webhook")
    _warn_inert_gates(args, "webhook", WEBHOOK_GATES)
    return _run(cfg.process, lambda process, store: [_webhook(process, store, cfg)])


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
    from volcanic.cli.daemons import ControllerManagerConfig, WebhookConfig
    cfg = args.config  # the scheduler's, with the process's
    _start_logging(cfg.process, "up")
    _warn_inert_gates(args, "up", WEBHOOK_GATES + SCHEDULER_GATES)
    webhook = WebhookConfig(cfg.process, listen=webhook_listen(url), url=url, register=True,
                            paths=_admissions(args), admission=admission_conf(args))
    manager = ControllerManagerConfig(cfg.process, scheduler_names=cfg.view.scheduler_names,
                                      feature_gates=cfg.feature_gates)
    client = _client(cfg.process)
    if not installed(client):
        install(client, log=lambda s: print(s, file=sys.stderr))
    load_plugins_dir(cfg.plugins_dir)
    return _run(cfg.process, lambda process, store: [
        _scheduler(process, store, cfg), _controller_manager(process, store, manager),
        _webhook(process, store, webhook, unregister_on_stop=True)])


def _cmd_dev_cluster(args: argparse.Namespace) -> int:
    from volcanic.real.devcluster.cluster import DevCluster
    cluster = DevCluster(args.dir)
    if args.action == "up":
        cluster.up(args.nodes, log=lambda s: print(s, file=sys.stderr), operators=args.operator)
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


def _daemon_flags(leader_elect: bool) -> argparse.ArgumentParser:
    """--leader-elect defaults to Volcano's (on) for the scheduler and the controller-manager,
    off for `up`."""
    p = argparse.ArgumentParser(add_help=False, parents=[kubeconfig_flag()])
    p.add_argument("--leader-elect", action=GoBool, default=leader_elect, help="run only while holding the "
                   f"component's Lease (--leader-elect=false: always; default {str(leader_elect).lower()})")
    p.add_argument("--metrics-address", metavar="HOST:PORT", help="serve Prometheus /metrics and /healthz here")
    return p


def _scheduler_flags() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--scheduler-conf", help="volcano-scheduler.conf, re-read when it changes (default: Volcano's)")
    p.add_argument("--schedule-period", type=_duration, default=1.0, help="time between sessions (default 1s)")
    p.add_argument("--settle", type=_duration, help="also start a session once the cluster has not "
                   "changed for this long, and this long after a new pod fills its gang (default 200ms; "
                   "0: only every --schedule-period, as Volcano)")
    p.add_argument("--python-hook-budget", type=_positive_duration, default=DAEMON_HOOK_BUDGET,
                   help="the time all Python plugin hooks of one session may take together; past it the session "
                   f"fails, is rolled back and is tried again next period (default {DAEMON_HOOK_BUDGET:g}s)")
    p.add_argument("--scheduler-name", action=StringArray, default=["volcano"], metavar="NAME",
                   help="the scheduler serves pods whose spec.schedulerName is NAME; repeatable (default volcano)")
    return p


def _build_scheduler(args: argparse.Namespace):
    from volcanic.cli.daemons import scheduler_config
    return scheduler_config(args, enabled_gates(args.feature_gates or {}))


def _build_controller_manager(args: argparse.Namespace):
    from volcanic.cli.daemons import controller_manager_config
    return controller_manager_config(args, enabled_gates(args.feature_gates or {}))


def build_webhook(args: argparse.Namespace):
    """The webhook's daemons.WebhookConfig (its cluster mode; the offline mode reads the
    admission and the limits from it too)."""
    from volcanic.cli.daemons import WebhookConfig, process_config, resource_groups, webhook_listen
    from volcanic.cli.volcano import FlagError
    from volcanic.real.manifests.names import NAMESPACE, SERVICE
    from volcanic.real.manifests.webhooks import WEBHOOKS
    from volcanic.real.webhook import UNRULED
    groups = resource_groups(getattr(args, "admission_conf", None))
    tls = (args.tls_cert, args.tls_key) if args.tls_cert and args.tls_key else None
    paths = _admissions(args)
    for path in paths:  # volcanic registers only what it has rules for; it answers Volcano's others
        if path not in WEBHOOKS and (args.register or path not in UNRULED):
            known = sorted(WEBHOOKS) + ([] if args.register else sorted(UNRULED))
            raise FlagError("enabled-admission", f"unknown admission path {path!r} (known: {', '.join(known)})")
    return WebhookConfig(process_config(args, "webhook"), listen=webhook_listen(args), url=args.url or None,
                         tls=tls, ca_cert=args.ca_cert_file or None, register=args.register,
                         fill_ca_bundle=not args.register and bool(args.ca_cert_file), paths=paths,
                         admission=admission_conf(args, groups), limits=webhook_limits(args),
                         service=(args.webhook_service_name or SERVICE, args.webhook_namespace or NAMESPACE),
                         admission_conf=getattr(args, "admission_conf", None) or None)


def webhook_on_cluster(args: argparse.Namespace) -> bool:
    """`volcanic webhook` reads the cluster unless it was given only offline flags (--state)."""
    return bool(args.register or args.kubeconfig or args.master or args.url or args.webhook_namespace
                or args.webhook_service_name or args.ca_cert_file)


def add_commands(sub: argparse._SubParsersAction) -> None:
    i = sub.add_parser("install", parents=[kubeconfig_flag()], help="install Volcano's CRDs, RBAC, namespace and "
                       "queues on a cluster (server-side apply)")
    i.add_argument("--print", action="store_true", help="write the manifests as YAML to stdout; touch nothing")
    i.add_argument("--all", action="store_true", help="also the three components' Deployments, the webhook's "
                   "Service and the scheduler configuration ConfigMap")
    i.add_argument("--image", default="volcanic:latest", help="the image of the Deployments (with --all)")
    i.add_argument("--scheduler-conf", help="volcano-scheduler.conf for the ConfigMap (with --all)")
    i.set_defaults(func=_cmd_install)
    u = sub.add_parser("up", parents=[_daemon_flags(False), _scheduler_flags()], help="install if needed, then run "
                       "the scheduler, the controller-manager and the webhook in one process")
    u.add_argument("--webhook-url", help="where the API server calls the webhook (default https://127.0.0.1:8443; "
                   "in a pod, the volcano-admission-service Service); the webhook listens on its address "
                   "(on all addresses for a host name or the Service), and its registrations are removed "
                   "when `up` is stopped")
    add_feature_gates_flag(u)
    add_kube_api_flags(u, "up")
    u.set_defaults(func=_cmd_up, build=_build_scheduler)
    s = sub.add_parser("scheduler", parents=[_daemon_flags(True), _scheduler_flags()], allow_abbrev=False,
                       help="run the scheduler on a cluster (Volcano's vc-scheduler; takes its flags)")
    add_feature_gates_flag(s)
    add_kube_api_flags(s, "scheduler")
    add_volcano_flags(s, "scheduler")
    s.set_defaults(func=_cmd_scheduler, build=_build_scheduler)
    c = sub.add_parser("controller-manager", parents=[_daemon_flags(True)], allow_abbrev=False,
                       help="run the job, PodGroup, queue and GC controllers on a cluster as a kopf operator "
                       "(Volcano's vc-controller-manager; takes its flags)")
    add_feature_gates_flag(c)
    add_kube_api_flags(c, "controller-manager")
    add_volcano_flags(c, "controller-manager")
    c.set_defaults(func=_cmd_controller_manager, build=_build_controller_manager)
    d = sub.add_parser("dev-cluster", help="a real cluster on this machine: etcd, kube-apiserver, "
                       "kube-controller-manager and kwok, built once from the Go module proxy")
    d.add_argument("action", choices=["up", "down", "env"])
    d.add_argument("--dir", help="where its state lives (default ~/.cache/volcanic/dev-cluster)")
    d.add_argument("--nodes", type=int, default=0, help="kwok nodes to create (up)")
    d.add_argument("--operator", action="append", default=[], choices=sorted(OPERATORS),
                   help="also run this workload operator, set for Volcano gang scheduling (up; repeatable)")
    d.set_defaults(func=_cmd_dev_cluster)
