"""`volcanic what-if --conf NEW.conf`: the cluster's state forecast under its running scheduler
configuration and under NEW.conf, job by job, and the waits side by side: a shadow A/B test
before a rollout (docs/foresight.md).

The state is the live cluster's, asked of volcanic's scheduler (its cache, its configuration;
$VOLCANIC_SCHEDULER_ADDRESS, else through the API server's proxy), or, with --state, YAML
files read here and forecast under --current (default Volcano's configuration).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from volcanic.kube.clock import rfc3339

CHANGES = ("earlier", "later", "same", "starts", "never")


def add_what_if(sub: argparse._SubParsersAction) -> None:
    from volcanic.cli.kube import kubeconfig_flag
    w = sub.add_parser("what-if", parents=[kubeconfig_flag()], help="forecast the cluster's pending jobs under "
                       "another scheduler configuration, beside the running one (docs/foresight.md)")
    w.add_argument("--conf", required=True, metavar="FILE", help="the proposed volcano-scheduler.conf")
    w.add_argument("--state", nargs="+", metavar="FILE", help="YAML files of a cluster's objects to forecast "
                   "instead of the live cluster's")
    w.add_argument("--current", metavar="FILE", help="with --state: the running configuration (default: "
                   "Volcano's default)")
    w.add_argument("--now", type=float, metavar="SECONDS", help="with --state: the state's time, Unix seconds "
                   "(default: now)")
    w.add_argument("--json", action="store_true", help="print the comparison as JSON")
    w.set_defaults(func=cmd_what_if)


def cmd_what_if(args: argparse.Namespace) -> int:
    with open(args.conf, encoding="utf-8") as f:
        proposed = f.read()
    if args.state:
        summary = _from_files(args, proposed)
    else:
        from volcanic.cli.vcctl import scheduler_foresight
        from volcanic.real.client import KubeClient
        summary = scheduler_foresight(KubeClient(args.kubeconfig, protobuf=False)).what_if(proposed)
    if args.json:
        json.dump(summary, sys.stdout)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(report(summary))
    return 0


def _from_files(args: argparse.Namespace, proposed: str) -> dict[str, Any]:
    from volcanic.cluster.cluster import documents
    from volcanic.foresight import what_if
    objects = [o for path in args.state for o in documents(open(path, encoding="utf-8").read())]
    current = open(args.current, encoding="utf-8").read() if args.current else None
    return what_if(objects, current, proposed, time.time() if args.now is None else args.now).to_dict()


def report(summary: dict[str, Any]) -> str:
    """A table of the jobs whose start changes, the counts of each change, and the waits."""
    jobs = summary["jobs"]
    lines = [f"{'JOB':<40} {'QUEUE':<16} {'CURRENT START':<22} {'PROPOSED START':<22} CHANGE"]
    for j in jobs:
        if j["change"] != "same":
            lines.append(f"{j['job']:<40} {j['queue']:<16} {_when(j['current']):<22} {_when(j['proposed']):<22} "
                         f"{j['change']}")
    counts = {c: sum(1 for j in jobs if j["change"] == c) for c in CHANGES}
    lines.append(f"{len(jobs)} pending job(s): " + ", ".join(f"{n} {c}" for c, n in counts.items()))
    lines.append(f"{'WAIT':<6} {'CURRENT':>10} {'PROPOSED':>10}")
    for p in ("50", "90", "99"):
        cur, new = (_waits(summary[k]).get(p) for k in ("current_waits", "proposed_waits"))
        lines.append(f"{'p' + p:<6} {_minutes(cur):>10} {_minutes(new):>10}")
    return "\n".join(lines) + "\n"


def _waits(waits: dict) -> dict[str, Any]:
    return {str(k): v for k, v in waits.items()}  # JSON's keys are strings, the API's ints


def _when(t: float | None) -> str:
    return "-" if t is None else rfc3339(t)


def _minutes(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds / 60:.1f}m"
