"""`volcanic schedule` and `volcanic bench` end to end."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

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
    assert set(d) == {"binds", "evictions", "pipelined", "podgroups", "queues", "unschedulable"}
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
    assert set(out) == {"preset", "nodes", "pods", "ingest_s", "actions", "session_s", "placed", "pods_per_s",
                        "peak_rss_mb"}
    assert set(out["actions"]) == {"enqueue", "allocate", "backfill"}
    assert (out["preset"], out["nodes"], out["pods"]) == ("small", 100, 1000)
    assert 0 < out["placed"] <= 1000


def test_bench_is_deterministic():
    from volcanic.bench import synthetic_cluster
    assert synthetic_cluster(10, 100, seed=3) == synthetic_cluster(10, 100, seed=3)
    assert synthetic_cluster(10, 100, seed=3) != synthetic_cluster(10, 100, seed=4)
