"""`volcanic bench --preset real-gang*` rounds (volcanic/bench/real.py): each volcanic run sits
beside a repeat of the API server's floor, in ABBA order, and a size reports medians. The dev
cluster and the runs themselves are exercised by the real-cluster suite; here the rounds'
bookkeeping is checked with the two measurements replaced."""

from __future__ import annotations

import pytest

from volcanic.bench import real


@pytest.fixture
def timeline(monkeypatch):
    """Replaces the floor and the volcanic run with ones that record their order and return
    the next of the given times."""
    calls: list[str] = []
    floors = iter([4.0, 5.0, 3.0])
    runs = iter([6.0, 9.0, 4.8])

    def floor(binary, cluster, preset, log):
        calls.append("floor")
        return next(floors)

    def measure(cluster, store, nodes, jobs, binary, namespace, log):
        calls.append("volcanic")
        bound = next(runs)
        return {"jobs_created_s": 0.1, "last_bound_s": bound, "last_running_s": bound + 10}
    monkeypatch.setattr(real, "_floor", floor)
    monkeypatch.setattr(real, "_measure", measure)
    return calls


def test_rounds_alternate_which_runs_first_so_cluster_ageing_falls_on_both(timeline):
    runs = [real._round(None, None, 100, 10, "floor-binary", "small", "ns", floor_first=i % 2 == 0, log=print)
            for i in range(3)]
    assert timeline == ["floor", "volcanic", "volcanic", "floor", "floor", "volcanic"]
    assert [r["ratio_to_floor"] for r in runs] == [1.5, 1.8, 1.6]  # each run over its own round's floor


def test_a_size_reports_the_medians_of_its_rounds_and_the_rounds(timeline):
    runs = [real._round(None, None, 100, 10, "floor-binary", "small", "ns", floor_first=i % 2 == 0, log=print)
            for i in range(3)]
    size = real._summary(100, 10, runs)
    assert size["last_bound_s"] == 6.0 and size["floor_bound_s"] == 4.0
    assert size["ratio_to_floor"] == 1.6  # the median of the rounds' ratios, not 6.0 / 4.0
    assert size["binds_per_s"] == round(1000 / 6.0, 1)
    assert size["rounds"] == runs


def test_without_the_floor_tool_a_round_is_the_run_alone(timeline):
    run = real._round(None, None, 100, 10, None, "small", "ns", floor_first=True, log=print)
    assert timeline == ["volcanic"] and "ratio_to_floor" not in run
    assert "floor_bound_s" not in real._summary(100, 10, [run])
