"""Plots of a replay for notebooks: jobs as a Gantt chart, the cluster's allocated share over
time, each queue's part of it, the GPU allocated and fragmented over time, fill mode's
curves, and forecast against actual waits (`simulate --forecast`). Each takes a Replay (or
the frame it would build from one, to plot a selection; fill_curves its runs,
forecast_vs_actual a ForecastRun) and an optional matplotlib Axes, draws on it, and returns
it. matplotlib is imported only here, when a plot is asked for (`pip install
'volcanic[notebook]'`)."""

from __future__ import annotations

from typing import Any, Callable

from volcanic.sim.frames import jobs_frame, timeline_frame
from volcanic.sim.metrics import VGPU_PREFIX, gpu_timeline
from volcanic.sim.records import Replay

WAIT_ALPHA = 0.3  # a job's wait is its bar's colour, lighter


def gantt(source: Any, ax: Any = None, limit: int | None = 50) -> Any:
    """A bar per job, the first `limit` by arrival (None: all), top down: lighter from its
    arrival to its start (waiting), solid from its start to its end, coloured by queue. A
    job still waiting or running at the end is drawn up to the run's end. From a Replay,
    its evictions (pods' runs cut short) are black crosses on its bar, at their times."""
    every = _frame(source, jobs_frame).sort_values(["arrival"], kind="stable")
    jobs = every if limit is None else every.head(limit)
    ax = _axes(ax)
    colours = queue_colours(every["queue"])  # every queue's, as queue_shares colours them
    until = _end_of(source, every)
    for y, (_, job) in enumerate(jobs.iterrows()):
        _job_bars(ax, y, job, colours[job["queue"]], until)
    if isinstance(source, Replay):
        _mark_evictions(ax, source, list(jobs.index))
    ax.set_yticks(range(len(jobs)), labels=list(jobs.index))
    ax.invert_yaxis()  # the first arrival on top, as a timeline reads
    ax.set_xlabel("simulated seconds")
    _queue_legend(ax, colours)
    return ax


def _job_bars(ax: Any, y: int, job: Any, colour: Any, until: float) -> None:
    """The job's wait (none when it started on arrival) and its run, either to `until`."""
    started = _known(job["start"])
    waited_until = job["start"] if started else until
    if waited_until > job["arrival"]:
        ax.barh(y, waited_until - job["arrival"], left=job["arrival"], color=colour, alpha=WAIT_ALPHA)
    if started:
        ended = job["end"] if _known(job["end"]) else until
        ax.barh(y, ended - job["start"], left=job["start"], color=colour)


def _mark_evictions(ax: Any, run: Replay, jobs: list[str]) -> None:
    """One cross per evicted run, on its job's row (a job's bar alone hides that its pods
    ran twice). Nothing is drawn when no shown job lost a run."""
    row = {job: y for y, job in enumerate(jobs)}
    cut = [(end, row[r.job]) for r in run.pods.values() if r.job in row for _, end, _ in r.interrupted]
    if cut:
        ax.plot([t for t, _ in cut], [y for _, y in cut], "x", color="black", label="eviction")


def utilization(source: Any, ax: Any = None) -> Any:
    """A line per resource the nodes have: the share of the cluster's allocatable held by
    Running pods' requests, all queues together, as steps over time. vGPU sums are left to
    gpu(): a pod's cores count once however many cards it holds."""
    timeline = _frame(source, timeline_frame)
    timeline = timeline[timeline["share"].notna() & ~timeline["resource"].str.startswith(VGPU_PREFIX)]
    ax = _axes(ax)
    totals = timeline.groupby(["resource", "time"])["share"].sum()
    for resource in sorted(set(timeline["resource"])):
        shares = totals.loc[resource]
        ax.step(shares.index, shares.values, where="post", label=resource)
    _share_axis(ax)
    if len(timeline):
        ax.legend(title="resource")
    return ax


def gpu(run: Replay, ax: Any = None) -> Any:
    """The allocated and the fragmented share of the GPU capacity over time, as steps
    (volcanic.sim.metrics.gpu_timeline; nothing for a cluster without vGPU cards)."""
    ax = _axes(ax)
    rows = gpu_timeline(run)
    times = [r["time"] for r in rows] + ([run.cluster.now] if rows else [])
    for column in ("allocated", "fragmented"):
        values = [r[column] for r in rows]
        ax.step(times, values + values[-1:], where="post", label=column)
    _share_axis(ax, "share of the GPU capacity")
    if rows:
        ax.legend()
    return ax


def queue_shares(source: Any, resource: str = "cpu", ax: Any = None) -> Any:
    """Each queue's share of the cluster's `resource`, stacked (one band per queue), as steps
    over time: the top is the cluster's utilization, the bands how the queues split it."""
    timeline = _frame(source, timeline_frame)
    rows = timeline[(timeline["resource"] == resource) & timeline["share"].notna()]
    if rows.empty and len(timeline):
        known = ", ".join(sorted(set(timeline.loc[timeline["share"].notna(), "resource"])))
        raise ValueError(f"no node has {resource!r}: the timeline has {known}")
    shares = rows.pivot(index="time", columns="queue", values="share")
    ax = _axes(ax)
    colours = queue_colours(shares.columns)
    if len(shares):
        ax.stackplot(shares.index, *(shares[q].values for q in shares.columns), labels=list(shares.columns),
                     colors=[colours[q] for q in shares.columns], step="post")
        ax.legend(title="queue", loc="upper right")
    _share_axis(ax, f"share of the cluster's {resource}")
    return ax


def fill_curves(runs: dict[str, Any], ax: Any = None) -> Any:
    """The FGD paper's figure from fill runs (name -> volcanic.sim.fill.Fill): against the
    workload that arrived (a share of the GPU capacity), each configuration's unallocated GPU
    share (solid) and fragmented GPU share (dashed), in one colour per configuration."""
    ax = _axes(ax)
    colours = queue_colours(runs)
    for name, run in runs.items():
        colour = colours[name]
        arrived = [p["arrived"] for p in run.curve]
        ax.plot(arrived, [1 - p["allocated"] for p in run.curve], color=colour, label=f"{name} unallocated")
        ax.plot(arrived, [p["fragmented"] for p in run.curve], color=colour, linestyle="--",
                label=f"{name} fragmented")
    ax.set_xlabel("arrived workload (share of GPU capacity)")
    ax.set_ylabel("share of GPU capacity")
    ax.set_ylim(0, 1.05)
    ax.legend()
    return ax


def forecast_vs_actual(forecasts: Any, ax: Any = None, title: str = "") -> Any:
    """Each forecast job of a `simulate --forecast` run (a forecast_error.ForecastRun) as a
    point: its actual wait (x) against its forecast wait (y), in minutes, on axes linear up
    to a minute and logarithmic beyond. The jobs the error is over (waited a minute or more)
    are solid, the others grey; a forecast beyond the horizon is a red triangle at the
    horizon, where the error metric counts it. On the diagonal the forecast was exact; the
    dotted lines are 20% off."""
    from volcanic.sim.forecast_error import MIN_WAIT
    ax = _axes(ax)
    started = [r for r in forecasts.records if r.wait is not None]
    kinds = [("waited < 1 min", {"color": "0.7", "marker": "o"}, lambda r: r.wait < MIN_WAIT),
             ("waited >= 1 min", {"color": "C0", "marker": "o"},
              lambda r: r.wait >= MIN_WAIT and r.forecast is not None),
             ("forecast beyond the horizon (drawn at it)", {"color": "C3", "marker": "^"},
              lambda r: r.wait >= MIN_WAIT and r.forecast is None)]
    for label, style, belongs in kinds:
        rows = [r for r in started if belongs(r)]
        if rows:
            said = [(r.forecast_wait if r.forecast is not None else r.horizon) / 60 for r in rows]
            ax.scatter([r.wait / 60 for r in rows], said, s=12, alpha=0.7, label=f"{label} ({len(rows)})", **style)
    top = max([1.0] + [r.wait / 60 for r in started] + [(r.forecast_wait or 0) / 60 for r in started])
    ax.plot([0.0, top], [0.0, top], color="black", linewidth=0.8)
    # 20% off, where both axes are logarithmic (a line crossing into the linear part bends):
    # many points, as a straight segment bends on symlog axes too.
    start = 1.25
    line = [start * (top / start) ** (i / 300) for i in range(301)] if top > start else []
    for factor in (0.8, 1.2):
        ax.plot(line, [factor * v for v in line], color="black", linewidth=0.6, linestyle=":")
    for axis in (ax.set_xscale, ax.set_yscale):
        axis("symlog", linthresh=1.0)
    ax.set_xlabel("actual wait (minutes)")
    ax.set_ylabel("forecast wait (minutes)")
    if title:
        ax.set_title(title)
    if started:
        ax.legend(loc="upper left")
    return ax


def queue_colours(queues: Any) -> dict[str, Any]:
    """A colour per queue, by name in sorted order, so each plot colours a queue the same."""
    palette = require_matplotlib().colormaps["tab10"].colors
    return {q: palette[i % len(palette)] for i, q in enumerate(sorted(set(queues)))}


def require_matplotlib() -> Any:
    """matplotlib, or an ImportError saying how to get it (the core does not need it)."""
    try:
        import matplotlib
        import matplotlib.pyplot  # noqa: F401  (pyplot makes a figure when no Axes is given)
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'volcanic[notebook]'") from None
    return matplotlib


def _frame(source: Any, build: Callable[[Replay], Any]) -> Any:
    return build(source) if isinstance(source, Replay) else source


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    return require_matplotlib().pyplot.subplots(figsize=(10, 4))[1]


def _end_of(source: Any, jobs: Any) -> float:
    """The run's end: the cluster's clock, or, for a frame alone, its latest time."""
    if isinstance(source, Replay):
        return source.cluster.now
    times = [t for column in ("arrival", "start", "end") for t in jobs[column] if _known(t)]
    return max(times, default=0.0)


def _known(value: Any) -> bool:
    return value is not None and value == value  # NaN is a DataFrame's None


def _share_axis(ax: Any, label: str = "share of the cluster's allocatable") -> None:
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(label)
    ax.set_xlabel("simulated seconds")


def _queue_legend(ax: Any, colours: dict[str, Any]) -> None:
    """The queues' colours (a bar per job would list each job), and the eviction crosses."""
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color=c, label=q) for q, c in colours.items()] + ax.get_lines(), title="queue")
