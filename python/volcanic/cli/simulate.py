"""`volcanic simulate`: replay a trace through one or more scheduler configurations."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from volcanic.errors import ConfigError


def add_simulate(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("simulate", help="replay a trace in the embedded cluster under scheduler policies "
                       "(docs/simulation.md)")
    s.add_argument("--nodes", required=True, metavar="FILE", help="the trace's nodes (openb: its node CSV; jobs: "
                   "name,cpu,memory[,gpu][,labels] CSV, or YAML Nodes, Queues and PriorityClasses)")
    s.add_argument("--pods", required=True, metavar="FILE", help="the trace's pods (openb: its pod CSV), or jobs "
                   "(jobs: .csv or .jsonl)")
    s.add_argument("--format", choices=["openb", "jobs"], default="openb",
                   help="openb: the Alibaba GPU trace; jobs: volcanic's job format (docs/simulation.md)")
    s.add_argument("--conf", action="append", default=[], metavar="FILE",
                   help="a volcano-scheduler.conf to run; repeatable")
    s.add_argument("--policy", action="append", default=[], metavar="NAME",
                   help="a named configuration (volcano, binpack) to run; repeatable (default: volcano)")
    s.add_argument("--mode", choices=["replay"], default="replay",
                   help="replay: arrivals at their times, each pod running its lifetime")
    s.add_argument("--json", action="store_true", help="one JSON line per configuration")
    s.add_argument("--out", metavar="DIR", help="write DIR/<configuration>/pods.csv (a row per pod) and "
                   "summary.json")
    s.set_defaults(func=cmd_simulate)


def cmd_simulate(args: argparse.Namespace) -> int:
    from volcanic.sim.frames import write_run
    from volcanic.sim.jobs import read_jobs
    from volcanic.sim.metrics import summary
    from volcanic.sim.openb import read_openb
    from volcanic.sim.policies import policy_conf
    from volcanic.sim.replay import replay

    runs = [(name, policy_conf(name)) for name in args.policy]
    for path in args.conf:
        with open(path, encoding="utf-8") as f:
            runs.append((os.path.basename(path), f.read()))
    if not runs:
        runs = [("volcano", policy_conf("volcano"))]
    trace = (read_openb if args.format == "openb" else read_jobs)(args.nodes, args.pods)
    failed = False
    for name, conf in runs:
        try:
            with _progress(name, len(trace.arrivals), quiet=args.json) as bar:
                run = replay(trace, conf, progress=bar.update)
        except ConfigError as e:
            raise ConfigError(f"{name}: {e}") from None
        result = summary(run, name)
        if args.out:
            write_run(run, result, os.path.join(args.out, name))
        failed = failed or bool(run.cluster.errors)
        for error in run.cluster.errors:
            print(f"{name}: controller error: {error}", file=sys.stderr)
        print(json.dumps(result) if args.json else _text(result), flush=True)
    return 1 if failed else 0


def _progress(name: str, arrivals: int, quiet: bool) -> Any:
    """A tqdm bar over the arrivals on stderr, off with --json or when stderr is no terminal."""
    from tqdm import tqdm

    return tqdm(total=arrivals, desc=name, unit=" arrivals", disable=quiet or not sys.stderr.isatty(),
                leave=False)


def _text(r: dict) -> str:
    wait = "-" if r["wait_p50_s"] is None else f"p50 {r['wait_p50_s']:g} s, p99 {r['wait_p99_s']:g} s"
    use = ", ".join(f"{name} {share:.1%}" for name, share in r["utilization"].items())
    return (f"{r['policy']} on {r['trace']}: {r['pods_total']} pods, {r['pods_scheduled']} scheduled, "
            f"{r['pods_succeeded']} succeeded, {r['pods_failed']} failed, {r['pods_unschedulable']} never placed\n"
            f"  {r['simulated_s']:g} simulated s in {r['wall_s']:.2f} wall s ({r['sessions']} sessions)\n"
            f"  wait {wait}\n  utilization {use}")
