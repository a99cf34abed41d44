"""Plots of a replay (volcanic/sim/plots.py) on matplotlib's Agg backend: what each draws, on
the hand-made run of test_sim_frames."""

from __future__ import annotations

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")  # no display: draw into memory

from matplotlib import pyplot  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from test_sim_frames import hand_made_run  # noqa: E402
from volcanic.sim import plots  # noqa: E402
from volcanic.sim.frames import jobs_frame  # noqa: E402


@pytest.fixture
def ax():
    figure, axes = pyplot.subplots()
    yield axes
    pyplot.close(figure)


def bars(ax) -> list[tuple[float, float, float, tuple]]:
    """(y, left, width, colour) of each horizontal bar, in drawing order."""
    return [(round(p.get_y() + p.get_height() / 2), p.get_x(), p.get_width(), p.get_facecolor()) for p in ax.patches]


def test_gantt_draws_a_wait_and_a_run_per_job_coloured_by_queue(ax):
    assert plots.gantt(hand_made_run(), ax=ax) is ax
    colours = plots.queue_colours(["prod", "research"])
    research, prod = to_rgba(colours["research"]), to_rgba(colours["prod"])
    light = lambda c: to_rgba(c, plots.WAIT_ALPHA)  # noqa: E731
    # By arrival: gone (0, ran 2 until the run's end at 200: the evicted pod never ended),
    # train (0, waited 0-4, ran 4-110), solo (5, waited 5-9, runs on), late (50, waited 50-60,
    # one of its pods never ran so it has not ended).
    assert bars(ax) == [(0, 0, 2, light(research)), (0, 2, 198, research),
                        (1, 0, 4, light(research)), (1, 4, 106, research),
                        (2, 5, 4, light(prod)), (2, 9, 191, prod),
                        (3, 50, 10, light(prod)), (3, 60, 140, prod)]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["ns/gone", "ns/train", "ns/solo", "ns/late"]
    # Each evicted run, a cross where it was cut short: train's w1 and gone, both at 9.
    (crosses,) = ax.get_lines()
    assert sorted(zip(crosses.get_xdata(), crosses.get_ydata())) == [(9, 0), (9, 1)]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["prod", "research", "eviction"]


def test_gantt_limits_the_jobs_and_takes_a_frame(ax):
    plots.gantt(jobs_frame(hand_made_run()).query("queue == 'prod'"), ax=ax, limit=1)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["ns/solo"]
    assert len(ax.patches) == 2  # its wait and its run, to the frame's latest time (late's start)
    assert ax.patches[1].get_width() == 60 - 9
    assert ax.get_lines() == []  # a frame has no pods to show evictions of


def test_utilization_draws_a_step_line_per_resource_the_nodes_have(ax):
    assert plots.utilization(hand_made_run(), ax=ax) is ax
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert sorted(lines) == ["cpu", "memory", "nvidia.com/gpu"]  # example.com/foo: no node has it
    assert lines["cpu"].get_drawstyle() == "steps-post"
    cpu = dict(zip(lines["cpu"].get_xdata(), lines["cpu"].get_ydata()))
    assert cpu[4] == 3 / 8 and cpu[30] == 5 / 8 and cpu[60] == 4 / 8 and cpu[200] == 1 / 8  # all queues


def test_queue_shares_stacks_a_band_per_queue(ax):
    assert plots.queue_shares(hand_made_run(), "nvidia.com/gpu", ax=ax) is ax
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["prod", "research"]
    assert len(ax.collections) == 2
    research = ax.collections[1].get_paths()[0].vertices
    assert research[:, 1].max() == 1.0  # prod has no GPU: research's two GPUs reach the top


def test_queue_shares_names_the_resources_when_none_matches(ax):
    with pytest.raises(ValueError, match="no node has 'example.com/foo': the timeline has cpu, memory, nvidia.com/gpu"):
        plots.queue_shares(hand_made_run(), "example.com/foo", ax=ax)


def test_a_plot_without_axes_makes_a_figure():
    ax = plots.utilization(hand_made_run())
    assert ax.figure is not None and len(ax.get_lines()) == 3
    pyplot.close(ax.figure)


def test_gpu_draws_allocated_and_fragmented_steps_and_utilization_leaves_vgpu_sums_out(ax, tmp_path):
    from test_sim_replay import _write
    from volcanic.sim.openb import read_openb
    from volcanic.sim.policies import policy_conf
    from volcanic.sim.replay import replay

    run = replay(read_openb(*_write(tmp_path)), policy_conf("volcano"))
    allocated, fragmented = plots.gpu(run, ax=ax).get_lines()
    assert list(allocated.get_xdata()) == [0, 1, 11, 41, 71, 101, 131, 131]  # each change, then the end
    assert list(allocated.get_ydata()) == [0, 0.5, 0.75, 0.5, 0.5, 0.15, 0, 0]
    assert fragmented.get_label() == "fragmented" and fragmented.get_ydata()[0] == pytest.approx(0.25)
    figure, other = pyplot.subplots()
    assert sorted(line.get_label() for line in plots.utilization(run, ax=other).get_lines()) == ["cpu", "memory"]
    pyplot.close(figure)
