"""Forecast error of a replay (volcanic/sim/forecast_error.py, `volcanic simulate --forecast`
and `--load`; docs/simulation.md, "Forecast error")."""

from __future__ import annotations

import csv
import json
import os
import pathlib

import pytest

from volcanic.cli import simulate as simulate_cli
from volcanic.cli.main import main
from volcanic.foresight.forecast import HORIZON
from volcanic.sim import forecast_error
from volcanic.sim.forecast_error import (
    ForecastRun,
    JobForecastRecord,
    forecast_summary,
    replay_with_forecasts,
    sample_stride,
)
from volcanic.sim.jobs import read_jobs
from volcanic.sim.metrics import summary
from volcanic.sim.openb import DEFAULT_PODS_CSV, NODES_CSV, find_openb
from volcanic.sim.replay import replay

NODE = "name,cpu,memory\nn0,4,16Gi\n"
# a holds the node's 4 CPUs 600 s; b, c and d queue behind it in arrival order (c and d
# arrive together), so a forecast made at each arrival knows everything ahead of the job.
FIFO = ('{"name": "a", "arrival": 0, "duration": 600, "tasks": [{"replicas": 2, "requests": {"cpu": "2"}}]}\n'
        '{"name": "b", "arrival": 10, "duration": 300, "tasks": [{"replicas": 1, "requests": {"cpu": "3"}}]}\n'
        '{"name": "c", "arrival": 20, "duration": 120, "tasks": [{"replicas": 2, "requests": {"cpu": "2"}}]}\n'
        '{"name": "d", "arrival": 20, "duration": 60, "tasks": [{"replicas": 1, "requests": {"cpu": "4"}}]}\n')
PRIORITY_SETUP = """apiVersion: v1
kind: Node
metadata: {name: n0}
status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
"""


def _trace(tmp_path, jobs: str, nodes: str = NODE, nodes_file: str = "nodes.csv"):
    (tmp_path / nodes_file).write_text(nodes)
    (tmp_path / "jobs.jsonl").write_text(jobs)
    return read_jobs(str(tmp_path / nodes_file), str(tmp_path / "jobs.jsonl"))


def _outcomes(forecasts: ForecastRun) -> list[tuple]:
    return [(r.job, r.arrival, r.forecast, r.start) for r in forecasts.records]


def test_with_exact_durations_and_nothing_arriving_ahead_the_forecast_is_exact(tmp_path):
    run, forecasts = replay_with_forecasts(_trace(tmp_path, FIFO), sample=10, durations="trace")
    # a's gang: its PodGroup enqueued at the session of 1 s, its pods bound at 2 s; the fork's
    # first session runs at once, a period earlier (a did not wait: it is not counted).
    assert _outcomes(forecasts) == [("default/a", 0.0, 1.0, 2.0), ("default/b", 10.0, 603.0, 603.0),
                                    ("default/c", 20.0, 904.0, 904.0), ("default/d", 20.0, 1025.0, 1025.0)]
    assert forecasts.forecasts == 3  # c and d arrived at one instant: one forecast serves both
    assert all(r.basis == "every pod had an estimate (2 running)" for r in forecasts.records[1:])
    m = forecast_summary(forecasts)
    assert (m["forecast_error_p50"], m["forecast_error_p90"], m["forecast_jobs"]) == (0.0, 0.0, 3)
    assert (m["forecast_beyond_horizon"], m["forecast_sampled"]) == (0, 4)


def test_a_later_higher_priority_arrival_that_jumps_ahead_is_the_error(tmp_path):
    """b is forecast at 10 s to start when a ends (603 s); c, of a higher priority, arrives at
    100 s and starts there instead, so b starts at 804 s: |603 - 804| / (804 - 10) = 0.2531.
    c's own forecast, made with b already waiting, is exact."""
    jobs = ('{"name": "a", "arrival": 0, "duration": 600, "tasks": [{"requests": {"cpu": "4"}}]}\n'
            '{"name": "b", "arrival": 10, "duration": 300, "tasks": [{"requests": {"cpu": "4"}}]}\n'
            '{"name": "c", "arrival": 100, "duration": 200, "priority": "high", "tasks": [{"requests": {"cpu": "4"}}]}\n')
    _, forecasts = replay_with_forecasts(_trace(tmp_path, jobs, PRIORITY_SETUP, "setup.yaml"), sample=3)
    assert _outcomes(forecasts)[1:] == [("default/b", 10.0, 603.0, 804.0), ("default/c", 100.0, 603.0, 603.0)]
    b = forecasts.records[1]
    assert b.error == pytest.approx((804 - 603) / (804 - 10))
    m = forecast_summary(forecasts)
    # Nearest rank over [0.0, 0.2531]: p50 is the first, p90 the second.
    assert (m["forecast_error_p50"], m["forecast_error_p90"], m["forecast_jobs"]) == (0.0, 0.2531, 2)


def test_the_error_metric_by_hand():
    def record(arrival, forecast, start):
        return JobForecastRecord("default/j", "default/pg", 1, arrival, forecast, HORIZON, start=start)

    records = [record(0, 100, 100),      # exact: 0
               record(0, 150, 100),      # 50 s off a 100 s wait: 0.5
               record(10, 400, 310),     # 90 s off 300 s: 0.3
               record(0, 0, 30),         # waited 30 s < 60 s: not counted
               record(0, 500, None),     # never started: not counted
               record(20, 20, 80),       # waited exactly 60 s, forecast 60 s early: 1.0
               record(0, None, 7200)]    # "beyond the horizon" but started: as if forecast at 30 days
    errors = [r.error for r in records]
    assert errors[:4] == [0.0, 0.5, 0.3, 30 / 60] and errors[4] is None and errors[5] == 1.0
    assert errors[6] == pytest.approx((HORIZON - 7200) / 7200)  # 359
    m = forecast_summary(ForecastRun(records))
    # Counted, sorted: 0, 0.3, 0.5, 1.0, 359. Nearest rank: p50 the 3rd, p90 the 5th.
    assert (m["forecast_error_p50"], m["forecast_error_p90"]) == (0.5, round((HORIZON - 7200) / 7200, 4))
    assert (m["forecast_jobs"], m["forecast_beyond_horizon"], m["forecast_sampled"]) == (5, 1, 7)
    assert forecast_summary(ForecastRun())["forecast_error_p50"] is None


def test_without_durations_the_forecaster_takes_the_median_of_the_finished_pods(tmp_path):
    """The replay deletes a finished Job with its pods; the forecast state keeps the last
    ones that ended, so a's 100 s run is queue default's median when c arrives: b (started
    at 202 s) is expected to end at 302 s and c to start at 303 s; b runs 300 s, so c starts
    at 503 s: |303 - 503| / (503 - 210)."""
    jobs = ('{"name": "a", "arrival": 0, "duration": 100, "tasks": [{"requests": {"cpu": "4"}}]}\n'
            '{"name": "b", "arrival": 200, "duration": 300, "tasks": [{"requests": {"cpu": "4"}}]}\n'
            '{"name": "c", "arrival": 210, "duration": 50, "tasks": [{"requests": {"cpu": "4"}}]}\n')
    _, forecasts = replay_with_forecasts(_trace(tmp_path, jobs), sample=3, durations="none")
    c = forecasts.records[2]
    assert (c.forecast, c.start) == (303.0, 503.0)
    assert c.basis == "2 pod(s) without an estimate took the median of queue default, 1m40s"
    assert c.error == pytest.approx(200 / 293)


def test_forecasting_leaves_the_replay_as_it_was(tmp_path):
    trace = _trace(tmp_path, FIFO)
    plain = summary(replay(trace), "volcano")
    run, _ = replay_with_forecasts(trace, sample=10)
    forecast = summary(run, "volcano")
    assert {k: v for k, v in forecast.items() if k != "wall_s"} == {k: v for k, v in plain.items() if k != "wall_s"}


def test_sampling_forecasts_every_kth_arrival(tmp_path):
    assert [sample_stride(8152, n) for n in (100, 8152, 10_000, 1)] == [82, 1, 1, 8152]
    _, forecasts = replay_with_forecasts(_trace(tmp_path, FIFO), sample=2)  # every 2nd: a and c
    assert [r.job for r in forecasts.records] == ["default/a", "default/c"] and forecasts.forecasts == 2
    with pytest.raises(ValueError, match="sample: must be a whole number > 0"):
        sample_stride(4, 0)


def test_load_divides_the_arrival_times(tmp_path, capsys):
    _trace(tmp_path, FIFO)
    out = tmp_path / "out"
    assert main(["simulate", "--format", "jobs", "--nodes", str(tmp_path / "nodes.csv"),
                 "--pods", str(tmp_path / "jobs.jsonl"), "--load", "2", "--json", "--out", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["load"] == 2.0
    with open(out / "volcano" / "pods.csv", newline="") as f:
        arrivals = {r["pod"]: float(r["arrival"]) for r in csv.DictReader(f)}
    assert arrivals == {"default/a-task-0": 0.0, "default/a-task-1": 0.0, "default/b-task-0": 5.0,
                        "default/c-task-0": 10.0, "default/c-task-1": 10.0, "default/d-task-0": 10.0}


@pytest.mark.parametrize("flags, message", [
    (["--load", "0"], "--load: must be a number > 0, got '0'"),
    (["--load", "-2"], "--load: must be a number > 0, got '-2'"),
    (["--load", "fast"], "--load: must be a number > 0, got 'fast'"),
    (["--load", "inf"], "--load: must be a number > 0, got 'inf'"),
    (["--forecast", "--forecast-sample", "0"], "--forecast-sample: must be a whole number > 0, got '0'"),
    (["--forecast-plot", "f.png"], "--forecast-plot: needs --forecast"),
    (["--mode", "fill", "--forecast"], "--forecast: only in replay mode"),
    (["--mode", "fill", "--load", "2"], "--load: only in replay mode"),
])
def test_bad_forecast_and_load_flags_are_one_line_errors(tmp_path, capsys, flags, message):
    _trace(tmp_path, FIFO)
    assert main(["simulate", "--format", "jobs", "--nodes", str(tmp_path / "nodes.csv"),
                 "--pods", str(tmp_path / "jobs.jsonl"), *flags]) == 1
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_simulate_forecast_prints_writes_and_plots(tmp_path, capsys):
    image = pytest.importorskip("matplotlib.image")
    _trace(tmp_path, FIFO)
    out, png = tmp_path / "out", tmp_path / "forecast.png"
    assert main(["simulate", "--format", "jobs", "--nodes", str(tmp_path / "nodes.csv"),
                 "--pods", str(tmp_path / "jobs.jsonl"), "--forecast", "--forecast-sample", "4",
                 "--out", str(out), "--forecast-plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert ("forecast error p50 0.0%, p90 0.0% over 3 jobs that waited >= 60 s (0 forecast beyond the horizon; "
            "3 forecasts of 4 sampled jobs, durations trace") in text
    written = json.loads((out / "volcano" / "summary.json").read_text())
    assert written["forecast_jobs"] == 3 and written["forecast_durations"] == "trace"
    with open(out / "volcano" / "forecasts.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == list(forecast_error.FORECAST_COLUMNS)
    assert [(r["job"], r["forecast_wait"], r["wait"], r["error"]) for r in rows[1:]] == [
        ("default/b", "593.0", "593.0", "0.0"), ("default/c", "884.0", "884.0", "0.0"),
        ("default/d", "1005.0", "1005.0", "0.0")]
    assert image.imread(str(png)).shape[:2] == (660, 780)  # one configuration, 6.5 x 5.5 in at 120 dpi


def test_the_command_line_defaults_are_the_modules():
    assert simulate_cli.DEFAULT_SAMPLE == forecast_error.DEFAULT_SAMPLE
    assert simulate_cli.DURATION_SOURCES == forecast_error.DURATION_SOURCES


OPENB = find_openb() or next((str(p) for p in [pathlib.Path(__file__).parents[3] / "shared" / "traces" /
                                                 "alibaba-gpu-v2023"] if p.is_dir()), None)


def test_the_forecast_error_run_on_a_sample_of_the_trace_in_the_suite(tmp_path, capsys):
    """The first 300 pods of the openb trace on every 64th of its nodes (24), arriving 3000
    times as fast, so that half of them wait a minute or more; 25 of them forecast with the
    trace's durations. Measured: p50 1.8%, p90 16.9% over 10 jobs, in about 8 s."""
    if OPENB is None:
        pytest.fail("the openb trace is not on this machine: this test needs alibaba-gpu-v2023 "
                    "(openb_node_list_all_node.csv, openb_pod_list_default.csv) in $VOLCANIC_TRACES or ../shared/traces")
    with open(os.path.join(OPENB, NODES_CSV), encoding="utf-8") as f:
        nodes = f.read().splitlines()
    with open(os.path.join(OPENB, DEFAULT_PODS_CSV), encoding="utf-8") as f:
        pods = f.read().splitlines()[:301]
    (tmp_path / "nodes.csv").write_text("\n".join([nodes[0], *nodes[1::64]]) + "\n")
    (tmp_path / "pods.csv").write_text("\n".join(pods) + "\n")
    assert main(["simulate", "--nodes", str(tmp_path / "nodes.csv"), "--pods", str(tmp_path / "pods.csv"),
                 "--load", "3000", "--forecast", "--forecast-sample", "25", "--json"]) == 0
    m = json.loads(capsys.readouterr().out)
    assert m["forecast_jobs"] > 0 and m["forecast_beyond_horizon"] == 0
    assert m["forecast_error_p50"] < 0.1


def test_the_forecast_bench_forecasts_every_waiting_job_of_half_the_trace(monkeypatch, capsys):
    """`volcanic bench --preset forecast-openb` (docs/benchmark.md, "Forecasts"): the openb
    trace at load 400 replayed to half its arrivals, then forecast: its waiting jobs all start
    in the forecast (the trace's pods each fit a node of their cluster)."""
    if OPENB is None:
        pytest.fail("the openb trace is not on this machine (see the test above)")
    monkeypatch.setenv("VOLCANIC_TRACES", str(pathlib.Path(OPENB).parent))
    assert main(["bench", "--preset", "forecast-openb", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert (r["nodes"], r["load"]) == (1523, 400.0) and r["pods"] > 1000 and r["running"] > 1000
    assert r["waiting_jobs"] > 0 and r["started_in_forecast"] == r["waiting_jobs"] and len(r["rounds"]) == 3
