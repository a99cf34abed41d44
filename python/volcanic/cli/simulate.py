"""`volcanic simulate`: replay a trace through one or more scheduler configurations."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from volcanic.errors import ConfigError

# As volcanic.sim.forecast_error's DURATION_SOURCES and DEFAULT_SAMPLE (not imported: that
# module loads the foresight and the metrics, which a command line that only parses needs not).
DURATION_SOURCES = ("trace", "none")
DEFAULT_SAMPLE = 100


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
                   help="a named configuration (volcano, binpack, random, fgd) to run; repeatable "
                   "(default: volcano)")
    s.add_argument("--mode", choices=["replay", "fill"], default="replay",
                   help="replay: arrivals at their times, each pod running its lifetime; fill: the FGD paper's "
                   "experiment, pods one at a time on the GPU nodes, never leaving")
    s.add_argument("--seed", type=int, default=None, help="fill: shuffle the pods with this seed; the random "
                   "policy's seed (default 0)")
    s.add_argument("--until", type=float, default=1.3, help="fill: stop when the pods asked for this many times "
                   "the GPU capacity (default 1.3)")
    s.add_argument("--load", metavar="X", help="replay: divide every arrival time by X (> 0): the same work "
                   "arriving X times as fast (default 1)")
    s.add_argument("--forecast", action="store_true", help="replay: forecast sampled jobs at their arrival and "
                   "report the forecasts' error against their actual start (docs/simulation.md)")
    s.add_argument("--forecast-durations", choices=DURATION_SOURCES, default="trace",
                   help="trace: the forecaster knows each pod's lifetime (volcanic.sh/expected-duration); none: "
                   "it has only the queue medians of finished pods (default trace)")
    s.add_argument("--forecast-sample", metavar="N", help="forecast every k-th arrival, so that about N jobs are "
                   f"(default {DEFAULT_SAMPLE})")
    s.add_argument("--forecast-plot", metavar="FILE.png", help="with --forecast: each configuration's forecast "
                   "against actual waits (needs matplotlib)")
    s.add_argument("--json", action="store_true", help="one JSON line per configuration")
    s.add_argument("--out", metavar="DIR", help="write DIR/<configuration>/: pods.csv (replay, a row per pod) or "
                   "curve.csv (fill, a row per pod), and summary.json")
    s.add_argument("--plot", metavar="FILE.png", help="fill: the GPU curves of every configuration; replay: "
                   "each configuration's utilization over time (needs matplotlib)")
    s.set_defaults(func=cmd_simulate)


def cmd_simulate(args: argparse.Namespace) -> int:
    from volcanic.sim.jobs import read_jobs
    from volcanic.sim.openb import read_openb
    from volcanic.sim.policies import policy_conf
    from volcanic.sim.trace import loaded

    problem = _check_forecast_flags(args)
    if problem:
        print(f"volcanic: error: {problem}", file=sys.stderr)
        return 1
    trace = (read_openb if args.format == "openb" else read_jobs)(args.nodes, args.pods)
    if args.load is not None:
        trace = loaded(trace, float(args.load))
    runs = [(name, policy_conf(name, trace, args.seed or 0)) for name in args.policy]
    for path in args.conf:
        with open(path, encoding="utf-8") as f:
            runs.append((os.path.basename(path), f.read()))
    if not runs:
        runs = [("volcano", policy_conf("volcano"))]
    results, failed = {}, False
    for name, conf in runs:
        try:
            run, result, errors = (_fill if args.mode == "fill" else _replay)(args, trace, name, conf)
        except ConfigError as e:
            raise ConfigError(f"{name}: {e}") from None
        results[name] = run
        for error in errors:
            print(f"{name}: controller error: {error}", file=sys.stderr)
        failed = failed or bool(errors)
        print(json.dumps(result) if args.json else _text(result), flush=True)
    if args.plot:
        _plot(args.mode, {name: run for name, (run, _) in results.items()}, args.plot)
    if args.forecast_plot:
        _plot_forecasts({name: forecasts for name, (_, forecasts) in results.items()}, args.forecast_plot)
    return 1 if failed else 0


def _check_forecast_flags(args: argparse.Namespace) -> str | None:
    """The one-line problem with --load or the --forecast flags, if any."""
    if args.load is not None and not _positive(args.load, float):
        return f"--load: must be a number > 0, got {args.load!r}"
    if args.forecast_sample is not None and not _positive(args.forecast_sample, int):
        return f"--forecast-sample: must be a whole number > 0, got {args.forecast_sample!r}"
    if args.mode == "fill" and (args.forecast or args.load is not None):
        return f"{'--forecast' if args.forecast else '--load'}: only in replay mode (fill mode has no arrival times)"
    if args.forecast_plot and not args.forecast:
        return "--forecast-plot: needs --forecast"
    return None


def _positive(text: str, kind: type) -> bool:
    try:
        value = kind(text)
    except ValueError:
        return False
    return 0 < value < float("inf")


def _replay(args: argparse.Namespace, trace: Any, name: str, conf: Any) -> tuple[Any, dict, list]:
    """(run, forecasts or None), the summary, the controllers' errors."""
    from volcanic.sim.forecast_error import forecast_summary, replay_with_forecasts, write_forecasts
    from volcanic.sim.frames import write_run
    from volcanic.sim.metrics import summary
    from volcanic.sim.replay import replay

    forecasts = None
    with _progress(name, len(trace.arrivals), quiet=args.json) as bar:
        if args.forecast:
            sample = int(args.forecast_sample) if args.forecast_sample else DEFAULT_SAMPLE
            run, forecasts = replay_with_forecasts(trace, conf, sample, args.forecast_durations, progress=bar.update)
        else:
            run = replay(trace, conf, progress=bar.update)
    result = summary(run, name)
    if args.load is not None:
        result["load"] = float(args.load)
    if forecasts is not None:
        result.update(forecast_summary(forecasts), forecast_durations=args.forecast_durations)
    if args.out:
        write_run(run, result, os.path.join(args.out, name))
        if forecasts is not None:
            write_forecasts(forecasts, result, os.path.join(args.out, name))
    return (run, forecasts), result, run.cluster.errors


def _fill(args: argparse.Namespace, trace: Any, name: str, conf: Any) -> tuple[Any, dict, list]:
    from volcanic.sim.fill import fill, fill_summary, write_fill

    with _progress(name, None, quiet=args.json, unit=" pods") as bar:
        run = fill(trace, conf, seed=args.seed, until=args.until, progress=bar.update)
    result = fill_summary(run, name)
    if args.out:
        write_fill(run, result, os.path.join(args.out, name))
    return (run, None), result, []


def _plot(mode: str, runs: dict, path: str) -> None:
    from volcanic.sim import plots

    plt = plots.require_matplotlib().pyplot
    if mode == "fill":
        fig, ax = plt.subplots(figsize=(7, 4.5))
        plots.fill_curves(runs, ax=ax)
    else:
        fig, axes = plt.subplots(len(runs), 2, figsize=(14, 3 * len(runs)), squeeze=False)
        for (name, run), (left, right) in zip(runs.items(), axes):
            plots.utilization(run, ax=left)
            plots.gpu(run, ax=right)
            left.set_title(f"{name}: utilization")
            right.set_title(f"{name}: GPU")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _plot_forecasts(runs: dict, path: str) -> None:
    from volcanic.sim import plots

    plt = plots.require_matplotlib().pyplot
    fig, axes = plt.subplots(1, len(runs), figsize=(6.5 * len(runs), 5.5), squeeze=False)
    for (name, forecasts), ax in zip(runs.items(), axes[0]):
        plots.forecast_vs_actual(forecasts, ax=ax, title=f"{name}: forecast vs actual wait")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _progress(name: str, total: int | None, quiet: bool, unit: str = " arrivals") -> Any:
    """A tqdm bar on stderr, off with --json or when stderr is no terminal."""
    from tqdm import tqdm

    return tqdm(total=total, desc=name, unit=unit, disable=quiet or not sys.stderr.isatty(), leave=False)


def _text(r: dict) -> str:
    if r.get("mode") == "fill":
        return (f"{r['policy']} on {r['trace']} (fill): {r['pods_total']} pods, {r['pods_scheduled']} placed, "
                f"{r['wall_s']:.2f} wall s\n  at 100% of the GPU capacity asked: {r['gpu_unallocated_at_full']:.2%} "
                f"of the GPUs unallocated, {r['gpu_fragmentation_at_full']:.2%} fragmented")
    text = _replay_text(r)
    if "forecast_jobs" in r:
        text += "\n  " + _forecast_text(r)
    return text


def _forecast_text(r: dict) -> str:
    error = ("-" if r["forecast_error_p50"] is None
             else f"p50 {r['forecast_error_p50']:.1%}, p90 {r['forecast_error_p90']:.1%}")
    return (f"forecast error {error} over {r['forecast_jobs']} jobs that waited >= 60 s "
            f"({r['forecast_beyond_horizon']} forecast beyond the horizon; {r['forecasts']} forecasts of "
            f"{r['forecast_sampled']} sampled jobs, durations {r['forecast_durations']}, "
            f"{r['forecast_wall_s']:.1f} wall s)")


def _replay_text(r: dict) -> str:
    wait = "-" if r["wait_p50_s"] is None else f"p50 {r['wait_p50_s']:g} s, p99 {r['wait_p99_s']:g} s"
    use = ", ".join(f"{name} {share:.1%}" for name, share in r["utilization"].items())
    return (f"{r['policy']} on {r['trace']}: {r['pods_total']} pods, {r['pods_scheduled']} scheduled, "
            f"{r['pods_succeeded']} succeeded, {r['pods_failed']} failed, {r['pods_unschedulable']} never placed\n"
            f"  {r['simulated_s']:g} simulated s in {r['wall_s']:.2f} wall s ({r['sessions']} sessions)\n"
            f"  wait {wait}\n  utilization {use}; GPU fragmented {r['gpu_fragmentation']:.1%}")
