"""`volcanic schedule` and `volcanic bench` end to end."""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

from test_jobflow_cluster import example_jobflow, example_templates

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "volcanic.cli.main", *args], capture_output=True, text=True,
                          cwd=ROOT)


def test_schedule_examples_as_tables():
    r = _run("schedule", "examples/cluster.yaml", "examples/jobs.yaml", "--now", "0")
    assert r.returncode == 0, r.stderr
    assert "default/tf-training-worker-0  node-gpu" in r.stdout
    assert "default/mpi-sim-worker-2" in r.stdout and "Insufficient cpu" in r.stdout


def test_schedule_json_is_the_decisions():
    r = _run("schedule", "examples/cluster.yaml", "examples/jobs.yaml", "--json", "--now", "0")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert set(d) == {"binds", "bind_annotations", "volume_binds", "volume_bind_timeout", "evictions", "ungate",
                      "pipelined", "podgroups", "queues",
                      "unschedulable", "podgroup_events", "why", "deferred", "pending", "wake_at"}
    assert d["pending"] is True  # mpi-sim has a pod no node can hold
    assert any(key.startswith("default/mpi-sim") and w["reasons"] for key, w in d["why"].items()), d["why"]
    assert d["binds"]["default/tf-training-ps-0"] in {"node-a", "node-b"}
    assert d["queues"]["production"]["allocated"]["nvidia.com/gpu"] == "4"


def test_schedule_reports_bad_input_without_a_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: lots}}\n")
    r = _run("schedule", str(bad))
    assert r.returncode == 1
    assert r.stderr.startswith("volcanic: error: Node n1: status.allocatable.cpu: invalid quantity")
    conf = tmp_path / "conf.yaml"
    conf.write_text("actions: allocate, teleport\n")
    r = _run("schedule", "examples/cluster.yaml", "--conf", str(conf))
    assert r.returncode == 1 and 'unknown action "teleport"' in r.stderr


def test_bench_json_line():
    r = _run("bench", "--preset", "small", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) == {"preset", "nodes", "pods", "ingest_s", "actions", "plugins", "session_s", "placed",
                        "pods_per_s", "peak_rss_mb"}
    assert set(out["actions"]) == {"enqueue", "allocate", "backfill"}
    # Volcano's default configuration: every plugin's callbacks, timed per extension point.
    assert set(out["plugins"]) == {"priority", "gang", "conformance", "overcommit", "drf", "predicates",
                                   "proportion", "nodeorder"}
    assert out["plugins"]["predicates"]["predicate"]["calls"] > 0
    assert set(out["plugins"]["gang"]["job_ready"]) == {"seconds", "calls"}
    assert (out["preset"], out["nodes"], out["pods"]) == ("small", 100, 1000)
    assert 0 < out["placed"] <= 1000


def test_bench_prints_the_plugins_time():
    r = _run("bench", "--preset", "small")
    assert r.returncode == 0, r.stderr
    assert "  plugins  (seconds in their callbacks, calls; slowest first)\n" in r.stdout
    assert re.search(r"^    predicates +[0-9.]+ s: .*predicate [0-9.]+ s/[0-9]+", r.stdout, re.M)


def test_bench_is_deterministic():
    from volcanic.bench import synthetic_cluster
    assert synthetic_cluster(10, 100, seed=3) == synthetic_cluster(10, 100, seed=3)
    assert synthetic_cluster(10, 100, seed=3) != synthetic_cluster(10, 100, seed=4)


def test_run_examples_reports_each_job():
    """The main job (`make run`): the example jobs run to completion in the embedded cluster."""
    r = _run("run", "examples/cluster.yaml", "examples/tensorflow.yaml", "examples/mindspore.yaml",
             "examples/queues.yaml", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["errors"] == []
    jobs = {row["job"]: row for row in report["jobs"]}
    assert {row["phase"] for row in jobs.values()} == {"Completed"}
    tf = jobs["default/tensorflow-dist-mnist"]
    # Queues and nodes are applied and settled first (t=0, the first scheduling cycle); the
    # job's PodGroup is enqueued at the next cycle (t=1), its pods bound at t=2.
    # TaskCompleted -> CompleteJob: the job ends when the workers' 10 minutes are up,
    # although the parameter server would run forever.
    assert tf["start"] == 2 and tf["end"] == 602 and tf["restarts"] == 0
    # Production (weight 3) gets its jobs started first; research waits for room.
    assert jobs["default/production-train"]["start"] < jobs["default/research-sweep-2"]["start"]


def test_run_table_and_time_limit():
    r = _run("run", "examples/cluster.yaml", "examples/tensorflow.yaml", "--seconds", "30")
    assert r.returncode == 0, r.stderr
    assert "Jobs after 30 simulated seconds" in r.stdout
    assert "default/tensorflow-dist-mnist  default  Running  2s" in r.stdout


def test_run_lasts_while_a_cronjob_is_active():
    """docs/workflows.md: Volcano's CronJob example (examples/cronjob.yaml) makes its first Job at
    00:05 of the virtual clock; `run` goes on to --seconds, not stopping while no Job exists."""
    r = _run("run", "examples/cluster.yaml", "examples/cronjob.yaml", "--seconds", "1800", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["now"] == 1800 and report["errors"] == []
    [job] = report["jobs"]  # the example's container has no end, and Forbid skips the rest
    assert (job["job"], job["phase"], job["start"]) == ("default/volcano-cronjob-example-28401125", "Running", 302)


def test_run_waits_for_a_jobflow_to_finish(tmp_path):
    """A JobFlow makes each Job once its targets are Completed: `run` does not stop in between."""
    (tmp_path / "flow.yaml").write_text(example_templates("60s") + "---\n" + example_jobflow("retain"))
    r = _run("run", "examples/cluster.yaml", str(tmp_path / "flow.yaml"), "--json")
    assert r.returncode == 0, r.stderr
    jobs = {row["job"]: row for row in json.loads(r.stdout)["jobs"]}
    assert sorted(jobs) == [f"default/test-{flow}" for flow in "abcde"]
    assert {row["phase"] for row in jobs.values()} == {"Completed"}
    assert jobs["default/test-e"]["start"] > max(jobs["default/test-c"]["end"], jobs["default/test-d"]["end"])


def test_restart_on_eviction_example():
    r = subprocess.run([sys.executable, "examples/restart_on_eviction.py"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "Running, retryCount 1, version 1" in r.stdout and "Completed" in r.stdout
    assert "event ExecuteAction: Start to execute action RestartJob" in r.stdout


def test_bench_e2e_small_runs_every_job_to_completion():
    r = _run("bench", "--preset", "e2e-small", "--json")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["pods_completed"] == result["pods"] == 1000
    assert result["job_phases"] == {"Completed": 200} and result["controller_errors"] == 0
