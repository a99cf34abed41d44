"""A simulation's results are snapshots (volcanic/sim/records.py; issue 34, "Packages that
cannot knot"): replay() hands out the pods' records and a ClusterState, a fixed copy of the
cluster that reads like a Cluster, never the live Cluster. A caller's cluster that runs on
after the replay changes neither."""

from __future__ import annotations

import pytest

from builders import pod
import volcanic
from volcanic.errors import InvalidObject
from volcanic.sim.jobs import read_jobs
from volcanic.sim.metrics import summary
from volcanic.sim.records import ClusterState
from volcanic.sim.replay import replay

NODES = "name,cpu,memory\nn0,8,16Gi\n"
JOBS = "name,arrival,duration,replicas,cpu\nj0,0,30,1,2\nj1,5,60,2,1\n"


@pytest.fixture
def trace(tmp_path):
    (tmp_path / "nodes.csv").write_text(NODES)
    (tmp_path / "jobs.csv").write_text(JOBS)
    return read_jobs(str(tmp_path / "nodes.csv"), str(tmp_path / "jobs.csv"))


def test_a_replay_hands_out_a_snapshot_that_reads_like_the_cluster(trace):
    cluster = volcanic.Cluster()
    run = replay(trace, cluster=cluster)
    state = run.cluster
    assert isinstance(state, ClusterState) and not isinstance(state, volcanic.Cluster)
    assert (state.now, state.started, state.sessions) == (cluster.now, cluster.started, cluster.scheduler.sessions)
    assert state.errors == cluster.errors == []
    for kind in ("Node", "Queue", "Namespace", "Event"):
        assert state.list(kind) == cluster.list(kind), kind
    assert state.list("Event", "default") == cluster.list("Event", "default") != []
    assert state.get("Queue", "default") == cluster.get("Queue", "default")
    assert state.get("Node", "n0", namespace="elsewhere")["metadata"]["name"] == "n0"  # cluster-scoped
    assert state.get("Pod", "j0-task-0") is None  # ended and deleted
    # Copies: changing what list() gave changes nothing in the snapshot.
    state.list("Node")[0]["metadata"]["name"] = "changed"
    assert state.get("Node", "n0") is not None
    with pytest.raises(InvalidObject):
        state.list("NoSuchKind")


def test_the_records_stay_as_the_replay_left_them_when_the_cluster_runs_on(trace):
    cluster = volcanic.Cluster()
    run = replay(trace, cluster=cluster)
    ended_at = run.cluster.now
    records = {key: (r.arrival, r.start, r.end, r.node, r.phase) for key, r in run.pods.items()}
    measured = summary(run, "volcano")
    assert sorted(records) == ["default/j0-task-0", "default/j1-task-0", "default/j1-task-1"]

    cluster.apply(pod("late", None, ns="default"))
    cluster.run(100)
    assert cluster.get("Pod", "late")["status"]["phase"] == "Running"

    assert run.cluster.now == ended_at < cluster.now
    assert run.cluster.get("Pod", "late") is None and "default/late" not in run.pods
    assert {key: (r.arrival, r.start, r.end, r.node, r.phase) for key, r in run.pods.items()} == records
    assert summary(run, "volcano") == measured
