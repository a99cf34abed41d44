"""Every flag of Volcano v1.15.1's vc-scheduler, vc-controller-manager and vc-webhook-manager,
spelled, typed and defaulted as Volcano's, so a Deployment of Volcano's Helm chart runs
`volcanic scheduler | controller-manager | webhook` by changing only its image and command.

Sources: cmd/scheduler/app/options/options.go, cmd/controller-manager/app/options/options.go
(and the sharding controller's flags, pkg/controllers/sharding/config.go, which its main
adds), cmd/webhook-manager/app/options/options.go; what their mains add
(cmd/*/main.go): component-base's leader-election flags
(k8s.io/component-base/config/options/leaderelectionconfig.go, defaults from
pkg/util/util.go LeaderElectionDefault), klog's flags (k8s.io/klog/v2 klog.go InitFlags, with
the mains' stderrthreshold=INFO), `--log-flush-frequency` and `--feature-gates`.

A flag whose meaning volcanic gives is read by volcanic.cli.kube; the others are INERT: still
parsed and validated as Volcano parses them, and, when given, logged once at start at INFO as
"flag --X has no effect in volcanic: why" (docs/kubernetes.md has the table).
"""

from __future__ import annotations

import argparse
import logging
import re
from typing import Any, Callable

from volcanic.kube.pflag import (
    GoBool,
    StringArray,
    StringSlice,
    go_duration,
    go_float,
    go_int,
)

log = logging.getLogger("volcanic")

# The Python plugin hook budget of the daemons (--python-hook-budget): a plugin hook that
# hangs (a blocking call, an endless loop) would otherwise stall every session of a
# production scheduler for good; 1 s is far above what hooks take (microseconds a call, a few
# milliseconds a session on thousands of pods), so only a hung or runaway hook meets it, and
# the session it fails is retried next period. volcanic.schedule() and the embedded Cluster
# keep no budget (a notebook's hook may legitimately be slow).
DAEMON_HOOK_BUDGET = 1.0
# --controllers' default: every controller but the sharding one (Volcano's options.go).
DEFAULT_CONTROLLERS = ("*", "-sharding-controller")


class FlagError(ValueError):
    """A flag's value is refused: `flag` (without dashes) and why."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(f"--{flag}: {message}")
        self.flag = flag


INT32, UINT32, UINT64, INT = go_int(32), go_int(32, unsigned=True), go_int(64, unsigned=True), go_int(64)


def klog_level(text: str) -> int:
    """klog's -v: a base-10 int32 (Level.Set)."""
    if not re.fullmatch(r"[+-]?[0-9]+", text) or not -2 ** 31 <= int(text) < 2 ** 31:
        raise argparse.ArgumentTypeError(f"invalid log level {text!r} (a whole number)")
    return int(text)


SEVERITIES = ("INFO", "WARNING", "ERROR", "FATAL")


def klog_severity(text: str) -> str:
    """klog's stderrthreshold: a severity name, any case, or its number 0-3."""
    if text.upper() in SEVERITIES:
        return text.upper()
    if re.fullmatch(r"[0-9]+", text) and int(text) < len(SEVERITIES):
        return SEVERITIES[int(text)]
    raise argparse.ArgumentTypeError(f"invalid severity {text!r} (INFO, WARNING, ERROR or FATAL)")


def klog_vmodule(text: str) -> str:
    """klog's -vmodule: comma-separated pattern=N."""
    for item in filter(None, text.split(",")):
        pattern, eq, level = item.partition("=")
        if not eq or not pattern or not re.fullmatch(r"[0-9]+", level):
            raise argparse.ArgumentTypeError(f"invalid vmodule item {item!r} (pattern=N)")
    return text


def klog_trace_location(text: str) -> str:
    """klog's -log_backtrace_at: "" or file.go:N."""
    if text and not re.fullmatch(r"[^:]+\.go:[0-9]+", text):
        raise argparse.ArgumentTypeError(f"invalid trace location {text!r} (file.go:N)")
    return text


def sharding_mode(text: str) -> str:
    if text not in ("none", "hard", "soft"):
        raise argparse.ArgumentTypeError(f"invalid sharding mode {text!r} (none, hard or soft)")
    return text


KINDS: dict[str, dict[str, Any]] = {
    "bool": {"action": GoBool}, "string": {}, "int": {"type": INT}, "int32": {"type": INT32},
    "uint32": {"type": UINT32}, "uint64": {"type": UINT64}, "float32": {"type": go_float},
    "duration": {"type": go_duration}, "array": {"action": StringArray}, "slice": {"action": StringSlice},
    "level": {"type": klog_level}, "severity": {"type": klog_severity}, "vmodule": {"type": klog_vmodule},
    "traceloc": {"type": klog_trace_location}, "sharding": {"type": sharding_mode},
}

# Why a flag changes nothing in volcanic (logged when the flag is given).
NO_SAMPLING = ("volcanic's engine finds the best feasible node at a cost that does not grow with the node "
               "count, so it never samples nodes")
NO_WORKERS = ("volcanic's controllers run in one thread; their API writes are sent concurrently in the "
              "background")
KLOG_FORMAT = "volcanic logs through Python's logging, one line a record (time, logger, level, message)"
NO_SHARDING = "volcanic has no node sharding: one scheduler schedules every node"

# (name, kind, Volcano's default, why it changes nothing in volcanic, or None when it acts)
Flag = tuple[str, str, Any, "str | None"]

CLIENT: list[Flag] = [
    ("master", "string", "", None),
    ("kubeconfig", "string", "", None),
    ("ca-cert-file", "string", "", None),
    ("tls-cert-file", "string", "", None),
    ("tls-private-key-file", "string", "", None),
    ("version", "bool", False, None),
]

LEADER_ELECTION: list[Flag] = [
    ("leader-elect", "bool", True, None),
    ("leader-elect-lease-duration", "duration", 15.0, None),
    ("leader-elect-renew-deadline", "duration", 10.0, None),
    ("leader-elect-retry-period", "duration", 2.0, None),
    ("leader-elect-resource-lock", "string", "leases", None),
    ("leader-elect-resource-name", "string", None, None),  # the component's Lease
    ("leader-elect-resource-namespace", "string", "volcano-system", None),
    ("lock-object-namespace", "string", "", None),
]

KLOG: list[Flag] = [
    ("v", "level", 0, None),
    ("logtostderr", "bool", True, None),
    ("alsologtostderr", "bool", False, None),
    ("log-dir", "string", "", None),
    ("log-file", "string", "", None),
    ("log-file-max-size", "uint64", 1800, "volcanic does not rotate its log file"),
    ("add-dir-header", "bool", False, KLOG_FORMAT),
    ("skip-headers", "bool", False, KLOG_FORMAT),
    ("skip-log-headers", "bool", False, KLOG_FORMAT),
    ("one-output", "bool", False, "volcanic writes each record once"),
    ("stderrthreshold", "severity", "INFO", "volcanic writes every record at or above -v's level to stderr"),
    ("alsologtostderrthreshold", "severity", "INFO", "volcanic writes every record at or above -v's level to "
                                                      "stderr"),
    ("legacy-stderr-threshold-behavior", "bool", False, "volcanic writes every record at or above -v's level to "
                                                         "stderr"),
    ("vmodule", "vmodule", "", "volcanic's levels are per process (-v), not per Go file"),
    ("log-backtrace-at", "traceloc", "", "volcanic has no Go source lines; Python tracebacks are logged with errors"),
    ("log-flush-frequency", "duration", 5.0, "Python's logging writes each record at once"),
]

SCHEDULER: list[Flag] = CLIENT + LEADER_ELECTION + KLOG + [
    ("scheduler-name", "array", ["volcano"], None),
    ("scheduler-conf", "string", "", None),
    ("schedule-period", "duration", 1.0, None),
    ("resync-period", "duration", 0.0, "volcanic's informers are fed by watches and never resync"),
    ("default-queue", "string", "default", None),
    ("listen-address", "string", ":8080", None),
    ("healthz-address", "string", ":11251", None),
    ("priority-class", "bool", True, None),
    ("kube-api-qps", "float32", 2000.0, None),
    ("kube-api-burst", "int", 2000, None),
    ("minimum-feasible-nodes", "int32", 100, NO_SAMPLING),
    ("minimum-percentage-nodes-to-find", "int32", 5, NO_SAMPLING),
    ("percentage-nodes-to-find", "int32", 0, NO_SAMPLING),
    ("plugins-dir", "string", "", None),
    ("csi-storage", "bool", False, "volcanic's volume binding does not read CSIStorageCapacity (every node "
                                   "has room)"),
    ("enable-healthz", "bool", False, None),
    ("enable-metrics", "bool", False, None),
    ("enable-pprof", "bool", False, "volcanic is not a Go program; profile it with py-spy or perf"),
    ("node-selector", "slice", [], None),
    ("cache-dumper", "bool", True, "volcanic has no cache dumper (SIGUSR2)"),
    ("cache-dump-dir", "string", "/tmp", "volcanic has no cache dumper (SIGUSR2)"),
    ("node-worker-threads", "uint32", 20, "node events are applied to the cache as they come, in one thread"),
    ("gate-removal-worker-num", "int", 5, "scheduling-gate removals are sent in the background with the "
                                           "session's other writes"),
    ("ignored-provisioners", "slice", [], "volcanic does not count CSI volumes against node volume limits"),
    ("resource-sync-timeout", "duration", 60.0, "volcanic starts scheduling once every list is in, however "
                                                 "long that takes"),
    ("disable-default-scheduler-config", "bool", False, "volcanic never falls back to the default "
                                                         "configuration: one that does not parse is an error at "
                                                         "start, and a reload that does not parse keeps the "
                                                         "running one"),
    ("scheduler-sharding-mode", "sharding", "none", NO_SHARDING),
    ("scheduler-sharding-name", "string", "volcano", NO_SHARDING),
]

CONTROLLER_MANAGER: list[Flag] = CLIENT + LEADER_ELECTION + KLOG + [
    ("kube-api-qps", "float32", 50.0, None),
    ("kube-api-burst", "int", 100, None),
    ("worker-threads", "uint32", 3, NO_WORKERS),
    ("worker-threads-for-cronjob", "uint32", 3, NO_WORKERS),
    ("scheduler-name", "array", ["volcano"], None),
    ("max-requeue-num", "int", 15, "volcanic retries a failed request with back-off (up to a minute) and never "
                                   "drops it"),
    ("healthz-address", "string", ":11251", None),
    ("enable-healthz", "bool", False, None),
    ("enable-metrics", "bool", False, None),
    ("listen-address", "string", ":8081", None),
    ("inherit-owner-annotations", "bool", True, None),
    ("worker-threads-for-podgroup", "uint32", 5, NO_WORKERS),
    ("worker-threads-for-gc", "uint32", 1, NO_WORKERS),
    ("worker-threads-for-queue", "uint32", 5, NO_WORKERS),
    ("controllers", "slice", list(DEFAULT_CONTROLLERS), None),
    # the sharding controller's (a FlagProvider the main adds)
    ("scheduler-configs", "slice", ["volcano:volcano:0.0:0.6:false:2:100", "agent-scheduler:agent:0.7:1.0:true:2:100"],
     NO_SHARDING),
    ("shard-sync-period", "duration", 60.0, NO_SHARDING),
    ("enable-node-event-trigger", "bool", True, NO_SHARDING),
    ("sharding-configmap", "string", "volcano-sharding-configmap", NO_SHARDING),
    ("sharding-configmap-namespace", "string", "volcano-system", NO_SHARDING),
]

WEBHOOK: list[Flag] = CLIENT + KLOG + [
    ("listen-address", "string", "", None),
    ("port", "int", 8443, None),
    ("kube-api-qps", "float32", 50.0, None),
    ("kube-api-burst", "int", 100, None),
    ("webhook-namespace", "string", "", None),
    ("webhook-service-name", "string", "", None),
    ("webhook-url", "string", "", None),
    ("enabled-admission", "string", None, None),  # None: the chart's list (volcanic.cli.kube._admissions)
    ("scheduler-name", "array", ["volcano"], None),
    ("admission-conf", "string", "", None),
    ("enable-healthz", "bool", False, None),
    ("healthz-address", "string", ":11251", None),
    ("graceful-shutdown-time", "duration", 30.0, "volcanic's webhook answers the requests it has read, then stops "
                                                  "at once"),
    ("enable-queue-allocated-pods-check", "bool", False, None),
    ("max-queue-depth", "int", 5, None),
    ("enable-root-queue-protection", "bool", True, None),
]

FLAGS = {"scheduler": SCHEDULER, "controller-manager": CONTROLLER_MANAGER, "webhook": WEBHOOK}

# Volcano v1.15.1's controllers (what the controller-manager's --controllers names), and the
# ones volcanic runs (volcanic.controllers.manager; the same names).
VOLCANO_CONTROLLERS = ("colocation-config-controller", "cronjob-controller", "gc-controller", "hyperNode-controller",
                       "job-controller", "jobflow-controller", "jobtemplate-controller", "pg-controller",
                       "queue-controller", "sharding-controller")
VOLCANIC_CONTROLLERS = ("job-controller", "pg-controller", "queue-controller", "gc-controller", "hyperNode-controller",
                        "jobflow-controller", "jobtemplate-controller", "cronjob-controller",
                        "queuebinding-controller")  # the last, volcanic's own


def add_volcano_flags(parser: argparse.ArgumentParser, component: str) -> None:
    """Volcano's flags of `component` that `parser` does not have yet (volcanic's own
    definitions of the same flags come first and win)."""
    known = parser._option_string_actions  # noqa: SLF001 - argparse has no public table
    for name, kind, default, inert in FLAGS[component]:
        option = "--" + name
        if option in known:
            continue
        names = [option, "-v"] if name == "v" else [option]
        default = list(default) if isinstance(default, list) else default
        text = f"Volcano's --{name}" + (f"; no effect in volcanic: {inert}" if inert else "")
        parser.add_argument(*names, default=default, help=text, **KINDS[kind])


def inert_flags(component: str) -> dict[str, str]:
    return {name: why for name, _, _, why in FLAGS[component] if why}


def log_inert(given: set[str], component: str, extra: dict[str, str] | None = None) -> None:
    """Says once, at INFO, for each flag given that changes nothing here, why."""
    reasons = {**inert_flags(component), **(extra or {})}
    for name in sorted(given & set(reasons)):
        log.info("flag --%s has no effect in volcanic: %s", name, reasons[name])


def controller_enabled(controllers: list[str]) -> Callable[[str], bool]:
    """Volcano's isControllerEnabled (cmd/controller-manager/app/server.go): the first entry
    naming the controller decides (`name` or `+name` on, `-name` off), else `*` turns on
    every controller not named; an empty list turns on all."""
    def enabled(name: str) -> bool:
        if not controllers:
            return True
        star = False
        for entry in controllers:
            if entry in (name, "+" + name):
                return True
            if entry == "-" + name:
                return False
            star = star or entry == "*"
        return star
    return enabled


def check_controllers(controllers: list[str]) -> str | None:
    """Volcano's checkControllers: a name given twice (with or without a sign) is an error."""
    seen: set[str] = set()
    for entry in controllers:
        if entry == "*":
            continue
        name = entry[1:] if entry[:1] in "+-" else entry
        if name in seen:
            return f"controllers option {entry} cannot have both '-' and '+' prefixes"
        seen.add(name)
    return None


def python_log_level(v: int) -> int:
    """klog's -v as Python's level for volcanic's loggers: 0-3 INFO (klog's V(0)-V(3): what
    an operator reads), 4 and more DEBUG (V(4)+: per-object detail)."""
    return logging.DEBUG if v >= 4 else logging.INFO
