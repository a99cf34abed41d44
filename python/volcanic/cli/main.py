"""`volcanic`: run YAML in the embedded cluster, schedule it with the native engine once,
serve Volcano's admission webhook, or run the benchmark."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, Sequence

import yaml

from volcanic.cli.kube import (
    add_commands,
    add_feature_gates_flag,
    add_kube_api_flags,
    add_limit_flags,
    build_webhook,
    cmd_cluster_webhook,
    kubeconfig_flag,
    positive_int,
    webhook_on_cluster,
)
from volcanic.cli.simulate import add_simulate
from volcanic.cli.volcano import add_volcano_flags
from volcanic.cli.what_if import add_what_if
from volcanic.cluster.cluster import documents
from volcanic.errors import AdmissionError, ConfigError, InvalidObject, PluginError
from volcanic.kube.errors import StoreError
from volcanic.kube.pflag import GoBool, StringArray, go_argv


def _load_objects(paths: Sequence[str]) -> list[dict[str, Any]]:
    """The objects of YAML files (documents, lists, `kind: List`), as Cluster.apply reads them."""
    objs: list[dict[str, Any]] = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            try:
                objs.extend(documents(f.read()))
            except InvalidObject as e:
                raise InvalidObject(f"{path}: {e}") from None
    return objs


def _table(title: str, header: Sequence[str], rows: list[Sequence[Any]]) -> str:
    if not rows:
        return f"{title}: none\n"
    cells = [list(map(str, header))] + [list(map(str, r)) for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = [f"{title}:"]
    for r in cells:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return "\n".join(lines) + "\n"


def _cmd_schedule(args: argparse.Namespace) -> int:
    from volcanic.scheduler import schedule

    conf = None
    if args.conf:
        with open(args.conf) as f:
            conf = f.read()
    d = schedule(_load_objects(args.files), conf, now=args.now, bare_pods_as_groups=args.bare_pods_as_groups)
    if args.json:
        print(json.dumps(d.outcome(), indent=2, sort_keys=True))
        return 0
    sys.stdout.write(_table("Binds", ["POD", "NODE"], sorted(d.binds.items())))
    sys.stdout.write(_table("Pipelined", ["POD", "NODE"], sorted(d.pipelined.items())))
    sys.stdout.write(_table("Evictions", ["POD"], [[e] for e in d.evictions]))
    pgs = [[k, v["phase"], v["running"], v["succeeded"], v["failed"]] for k, v in sorted(d.podgroups.items())]
    sys.stdout.write(_table("PodGroups", ["PODGROUP", "PHASE", "RUNNING", "SUCCEEDED", "FAILED"], pgs))
    queues = [[k, ", ".join(f"{r}={q}" for r, q in v["allocated"].items()) or "-"]
              for k, v in sorted(d.queues.items())]
    sys.stdout.write(_table("Queues", ["QUEUE", "ALLOCATED"], queues))
    sys.stdout.write(_table("Unschedulable", ["POD", "REASON"], sorted(d.unschedulable.items())))
    return 0


# What `volcanic run` applies and settles before the rest.
SETUP_KINDS = ("Namespace", "Node", "Queue", "PriorityClass")


def _cmd_run(args: argparse.Namespace) -> int:
    from volcanic.cluster import Cluster
    from volcanic.cluster.report import all_finished, job_report

    conf = None
    if args.conf:
        with open(args.conf) as f:
            conf = f.read()
    cluster = Cluster(conf)
    objects = _load_objects(args.files)
    # Cluster-scoped objects first, as `kubectl apply -f` users order them: Volcano admits
    # a Job only into a queue the queue controller has opened.
    first = [o for o in objects if isinstance(o, dict) and o.get("kind") in SETUP_KINDS]
    if first:
        cluster.apply(first)
        cluster.run(0)
    rest = [o for o in objects if not (isinstance(o, dict) and o.get("kind") in SETUP_KINDS)]
    if rest:
        cluster.apply(rest)
    cluster.run_until(all_finished, limit=args.seconds)
    rows = job_report(cluster)
    if args.json:
        print(json.dumps({"now": cluster.now, "jobs": rows, "errors": cluster.errors}, indent=2))
        return 0 if not cluster.errors else 1

    def at(t: float | None) -> str:
        return "-" if t is None else f"{t:g}s"
    table = [[r["job"], r["queue"], r["phase"], at(r["start"]), at(r["end"]), r["restarts"]] for r in rows]
    sys.stdout.write(_table(f"Jobs after {cluster.now:g} simulated seconds",
                            ["JOB", "QUEUE", "PHASE", "START", "END", "RESTARTS"], table))
    for error in cluster.errors:
        print(f"controller error: {error}", file=sys.stderr)
    return 0 if not cluster.errors else 1


def _cmd_webhook(args: argparse.Namespace) -> int:
    from volcanic.cluster.snapshot import snapshot_lister
    from volcanic.real.serving import host_port
    from volcanic.webhook import serve

    if webhook_on_cluster(args):
        return cmd_cluster_webhook(args)
    if not (args.tls_cert and args.tls_key):
        raise ConfigError("webhook: --tls-cert and --tls-key are required without --register")
    lister = snapshot_lister(_load_objects(args.state or []))

    def ready(server: Any) -> None:
        print(f"serving {server.url}", flush=True)
    cfg = args.config
    host, port = host_port(cfg.listen)
    serve(port, args.tls_cert, args.tls_key, cfg.admission, lister, host=host, ready=ready, **cfg.limits)
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from volcanic.bench import ADMISSION_PRESETS, E2E_PRESETS, run_admission, run_bench, run_e2e
    from volcanic.bench.cold_start import COLD_START_PRESETS, run_cold_start
    from volcanic.bench.forecast import FORECAST_PRESETS, run_forecast
    from volcanic.bench.real import REAL_PRESETS, run_real
    from volcanic.bench.replay import REPLAY_PRESETS, run_replay
    from volcanic.bench.run import load_plugin_file
    from volcanic.bench.topology import TOPOLOGY_PRESETS, run_topology

    def progress(line: str) -> None:
        print(line, file=sys.stderr)

    def session() -> dict[str, Any]:
        for path in args.plugin or []:
            load_plugin_file(path)
        return run_bench(args.preset, seed=args.seed, scorer=args.scorer)

    benches: list[tuple[Any, Callable[[], dict[str, Any]], Callable[[dict[str, Any], argparse.Namespace], None]]] = [
        (ADMISSION_PRESETS, lambda: run_admission(args.preset), _show_admission),
        (REAL_PRESETS, lambda: run_real(args.preset, floor=args.floor, log=progress, rounds=args.rounds), _show_real),
        (COLD_START_PRESETS, lambda: run_cold_start(args.preset, log=progress), _show_cold_start),
        (REPLAY_PRESETS, lambda: run_replay(args.preset), _show_replay),
        (FORECAST_PRESETS, lambda: run_forecast(args.preset), _show_forecast),
        (E2E_PRESETS, lambda: run_e2e(args.preset, seed=args.seed), _show_e2e),
        (TOPOLOGY_PRESETS, lambda: run_topology(args.preset), _show_topology)]
    run, show = next(((r, sh) for presets, r, sh in benches if args.preset in presets), (session, _show_session))
    result = run()
    if args.json:
        print(json.dumps(result))
    else:
        show(result, args)
    return 0


def _show_admission(result: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"preset {result['preset']}: {result['jobs']} jobs, {result['reviews']} reviews over HTTPS "
          f"from {result['clients']} clients")
    print(f"  wall      {result['wall_s']:.2f} s, {result['reviews_per_s']} reviews/s")
    print(f"  latency   p50 {result['p50_ms']} ms, p99 {result['p99_ms']} ms")
    for path in ("mutate", "validate"):
        print(f"  {path:<9} p50 {result[path]['p50_ms']} ms, p99 {result[path]['p99_ms']} ms")
    print(f"  answers   {result['patched']} patched, {result['denied']} denied, {result['errors']} errors")


def _show_real(result: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"preset {result['preset']}: Volcano's gang benchmark on a dev cluster ({result['cores']} cores)")
    for r in result["sizes"]:
        floor = f"; floor {r['floor_bound_s']:.2f} s, ratio {r['ratio_to_floor']}" if "floor_bound_s" in r else ""
        print(f"  {r['jobs']} jobs, {r['pods']} pods on {r['nodes']} nodes, median of {len(r['rounds'])} "
              f"rounds: last bound {r['last_bound_s']:.2f} s, last Running {r['last_running_s']:.2f} s, "
              f"{r['binds_per_s']} binds/s{floor}")


def _show_cold_start(result: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"preset {result['preset']}: {result['nodes']} nodes, {result['pods']} pods, "
          f"{result['podgroups']} PodGroups on a dev cluster ({result['cores']} cores)")
    print(f"  setup          {result['setup']['create_s']:.1f} s to create, "
          f"{result['setup']['running_s']:.1f} s more to write the pods' Running status")
    print(f"  API server     lists in {result['lists_s']:.2f} s")
    print(f"  scheduler      synced {result['synced_s']:.2f} s, first session {result['first_session_s']:.2f} s, "
          f"first bind {result['first_bind_s']:.2f} s after its start")
    print(f"  after lists    first session {result['first_session_after_lists_s']:.2f} s")


def _show_replay(result: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"preset {result['preset']}: {result['trace']} on {result['nodes']} nodes, {result['pods_total']} pods")
    print(f"  wall      {result['wall_s']:.2f} s for {result['simulated_s']:g} simulated s "
          f"({result['speedup']}x real time, {result['sessions']} sessions)")
    print(f"  pods      {result['pods_succeeded']} succeeded, {result['pods_failed']} failed, "
          f"{result['pods_unschedulable']} never placed")


def _show_forecast(result: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"preset {result['preset']}: the openb trace at load {result['load']:g}, half replayed: "
          f"{result['nodes']} nodes, {result['pods']} pods ({result['running']} running), "
          f"{result['waiting_jobs']} jobs waiting")
    print(f"  forecast  {result['forecast_s']:.2f} s (median of {', '.join(f'{s:.2f}' for s in result['rounds'])}); "
          f"{result['started_in_forecast']} of the waiting jobs start in it")
    print(f"  replay    {result['replay_s']:.1f} s to make the state")


def _show_e2e(result: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"preset {result['preset']}: {result['nodes']} nodes, {result['jobs']} jobs, "
          f"{result['pods']} pods (seed {args.seed})")
    print(f"  wall      {result['wall_s']:.2f} s for {result['simulated_s']:g} simulated s "
          f"({result['sessions']} sessions)")
    print(f"  completed {result['pods_completed']} pods, {result['pods_per_wall_s']} pods per wall s")
    print(f"  jobs      {', '.join(f'{k} {v}' for k, v in sorted(result['job_phases'].items()))}")
    print(f"  peak RSS  {result['peak_rss_mb']} MB")


def _show_topology(result: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"preset {result['preset']}: network-topology gangs on leaves and spines, one session")
    for r in result["sizes"]:
        print(f"  {r['nodes']} nodes, {r['jobs']} jobs, {r['pods']} pods: allocate {r['allocate_s']:.3f} s, "
              f"{r['placed']} pods placed, {r['outside_their_tier']} gangs outside their tier")


def _show_session(result: dict[str, Any], args: argparse.Namespace) -> None:
    scorer = f", scorer {args.scorer}" if args.scorer else ""
    print(f"preset {result['preset']}: {result['nodes']} nodes, {result['pods']} pods (seed {args.seed}{scorer})")
    print(f"  ingest   {result['ingest_s']:.3f} s")
    for action, seconds in result["actions"].items():
        print(f"  {action:<8} {seconds:.4f} s")
    print("  plugins  (seconds in their callbacks, calls; slowest first)")
    for plugin, hooks in sorted(result["plugins"].items(), key=lambda p: -sum(t["seconds"] for t in p[1].values())):
        total = sum(t["seconds"] for t in hooks.values())
        detail = ", ".join(f"{hook} {t['seconds']:.4f} s/{t['calls']}" for hook, t in
                           sorted(hooks.items(), key=lambda h: -h[1]["seconds"]))
        print(f"    {plugin:<12} {total:.4f} s: {detail}")
    print(f"  session  {result['session_s']:.3f} s")
    print(f"  placed   {result['placed']} pods, {result['pods_per_s']} pods/s in allocate")
    print(f"  peak RSS {result['peak_rss_mb']} MB")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="volcanic", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run YAML in the embedded cluster until every Job and JobFlow has finished "
                       "(with a CronJob not suspended: until --seconds)")
    r.add_argument("files", nargs="+", help="YAML files: nodes, queues, jobs, ...")
    r.add_argument("--conf", help="a volcano-scheduler.conf file (default: Volcano's default)")
    r.add_argument("--seconds", type=float, default=86400.0, help="simulated time limit (default: a day)")
    r.add_argument("--json", action="store_true", help="print the job report as JSON")
    r.set_defaults(func=_cmd_run)
    s = sub.add_parser("schedule", help="run one scheduling session over the objects in YAML files")
    s.add_argument("files", nargs="+", help="YAML files (multi-document, or kind: List)")
    s.add_argument("--conf", help="a volcano-scheduler.conf file (default: Volcano's default)")
    s.add_argument("--now", type=float, default=None, help="session time, seconds since the epoch")
    s.add_argument("--json", action="store_true", help="print the decisions as JSON")
    s.add_argument("--bare-pods-as-groups", action="store_true",
                   help="a volcano pod without a PodGroup is its own group of one (default: it waits for its "
                   "PodGroup, as in Volcano)")
    s.set_defaults(func=_cmd_schedule)
    b = sub.add_parser("bench", help="time one session on a synthetic cluster")
    b.add_argument("--preset", choices=["small", "medium", "large", "e2e-small", "e2e-medium", "admission",
                                        "real-gang", "real-gang-small", "replay-openb", "forecast-openb",
                                        "forecast-openb-loaded", "cold-start", "cold-start-small", "topology",
                                        "topology-small"],
                   default="medium", help="small/medium/large: one session; e2e-*: a whole workload in the "
                   "embedded cluster; admission: the HTTPS admission webhook; real-gang*: Volcano's gang "
                   "benchmark on a dev cluster; replay-openb: the openb GPU trace replayed; forecast-openb*: one "
                   "forecast of an openb-sized state; cold-start: start to "
                   "first bind at 5,000 nodes and 140,000 pods; topology*: network-topology gangs on 1,000 and "
                   "10,000 nodes (docs/benchmark.md)")
    b.add_argument("--floor", metavar="DIR", help="real-gang*: apiserver-floor's directory; measure the API "
                   "server's floor beside each run and report the ratio to it")
    b.add_argument("--rounds", type=positive_int, metavar="N", help="real-gang*: runs per size, each beside a repeat "
                   "of the floor, medians reported (default: 3 for 1,000 pods, 1 for 10,000)")
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--plugin", action="append", metavar="FILE",
                   help="a Python file that registers scheduler plugins (e.g. examples/binpack_plugin.py); "
                   "repeatable")
    b.add_argument("--scorer", metavar="PLUGIN",
                   help="small/medium/large: run Volcano's default configuration with this plugin in place of "
                   "nodeorder (binpack, or py-binpack from examples/binpack_plugin.py)")
    b.add_argument("--json", action="store_true", help="print one JSON line")
    b.set_defaults(func=_cmd_bench)
    w = sub.add_parser("webhook", parents=[kubeconfig_flag()], allow_abbrev=False,
                       help="serve Volcano's admission webhook over HTTPS: reading a cluster (--register, "
                       "--kubeconfig, or Volcano's vc-webhook-manager flags) or YAML files (--state); see "
                       "docs/admission.md")
    w.add_argument("--listen", metavar="HOST:PORT", help="address to listen on (default: --listen-address and "
                   "--port, 0.0.0.0:8443; port 0: any free port)")
    w.add_argument("--tls-cert", "--tls-cert-file", dest="tls_cert", help="PEM certificate (chain) file (default "
                   "on a cluster: a self-signed one)")
    w.add_argument("--tls-key", "--tls-private-key-file", dest="tls_key", help="PEM private key file")
    w.add_argument("--register", action=GoBool, default=False, help="create or update the Mutating/Validating "
                   "webhook configurations Volcano installs, pointing at --url or the volcano-admission-service "
                   "Service (without it and with --ca-cert-file, as Volcano's chart runs it: fill in the caBundle "
                   "of the configurations the chart made)")
    w.add_argument("--url", "--webhook-url", dest="url", help="the webhook's URL for the API server (e.g. "
                   "https://127.0.0.1:8443)")
    w.add_argument("--enabled-admission", metavar="PATHS", help="comma-separated paths to register (default "
                   "/jobs/mutate,/jobs/validate,/podgroups/validate,/queues/mutate,/queues/validate,"
                   "/hypernodes/validate, as Volcano's chart)")
    w.add_argument("--metrics-address", metavar="HOST:PORT", help="serve /healthz (and /metrics) here")
    w.add_argument("--scheduler-name", action=StringArray, default=["volcano"],
                   help="a scheduler name whose pods volcanic admits; repeatable (default: volcano)")
    w.add_argument("--state", action="append", metavar="FILE",
                   help="YAML objects (queues, namespaces, podgroups, ...) the rules read; repeatable")
    w.add_argument("--max-queue-depth", type=int, default=5, help="deepest queue hierarchy (default 5)")
    w.add_argument("--enable-root-queue-protection", action=GoBool, default=True,
                   help="refuse changes to the root queue's resources (default true)")
    w.add_argument("--no-enable-root-queue-protection", dest="enable_root_queue_protection", action="store_false",
                   help=argparse.SUPPRESS)  # volcanic's older spelling
    w.add_argument("--enable-queue-allocated-pods-check", action=GoBool, default=False,
                   help="refuse to delete a queue with allocated pods")
    add_feature_gates_flag(w)
    add_limit_flags(w)
    add_kube_api_flags(w, "webhook")
    add_volcano_flags(w, "webhook")
    w.set_defaults(func=_cmd_webhook, build=build_webhook)
    add_simulate(sub)
    add_what_if(sub)
    add_commands(sub)
    return p


# Commands whose command lines are read as Volcano's Go binaries read theirs (kube/pflag.py).
GO_COMMANDS = ("scheduler", "controller-manager", "webhook", "up")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line as the command reads it, with `config`, what a daemon command builds
    from it (volcanic.cli.daemons), made without starting anything. A refused value ends the
    process as argparse does (usage and the flag's name on stderr, exit code 2)."""
    from volcanic.cli.volcano import FlagError

    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    given: list[str] = []
    positional: list[str] = []
    if argv and argv[0] in GO_COMMANDS:
        given, positional = go_argv(_subparser(parser, argv[0]), argv[1:])
        argv = [argv[0], *given]
    args = parser.parse_args(argv)
    args.given_flags = {arg[2:].partition("=")[0] for arg in given if arg.startswith("--")}
    args.ignored_arguments = positional
    if getattr(args, "version", False):
        from volcanic._version import version
        print(f"volcanic {version()}")
        sys.exit(0)
    if getattr(args, "build", None) is not None:
        try:
            args.config = args.build(args)
        except FlagError as e:
            _subparser(parser, args.command).error(str(e))
    return args


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
    return subparsers.choices[command]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        return args.func(args)
    except (InvalidObject, ConfigError, AdmissionError, PluginError, StoreError, OSError, yaml.YAMLError) as e:
        print(f"volcanic: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
