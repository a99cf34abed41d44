"""Forecasts of when pending jobs start (docs/foresight.md): a fork of the embedded cluster's
state run forward with the same engine, checked against what the cluster then does."""

from __future__ import annotations

import pytest

import volcanic
from volcanic.foresight import forecast
from volcanic.foresight.forecast import FORKED_KINDS


def node(name, cpu="4"):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def job(name, replicas, cpu, runs, expected=None, deadline=None):
    """A gang of `replicas` pods of `cpu` each running `runs` in the embedded cluster, its
    expected duration (if any) on its pod template."""
    annotations = {"volcanic/sim-duration": runs}
    if expected:
        annotations["volcanic.sh/expected-duration"] = expected
    spec = {"restartPolicy": "Never",
            "containers": [{"name": "main", "image": "busybox",
                            "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}
    if deadline:
        spec["activeDeadlineSeconds"] = deadline
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
            "spec": {"minAvailable": replicas, "schedulerName": "volcano", "tasks": [
                {"name": "w", "replicas": replicas,
                 "template": {"metadata": {"annotations": annotations}, "spec": spec}}]}}


def state(c):
    return [o for kind in FORKED_KINDS for o in c.list(kind)]


def now_of(c):
    return c.started + c.now


def starts(c):
    """Each job's start in the cluster: when its last pod (its gang) started."""
    from volcanic.kube.clock import seconds_of
    out = {}
    for p in c.list("Pod"):
        job = p["metadata"]["labels"]["volcano.sh/job-name"]
        t = seconds_of(p["status"].get("startTime"))
        if t is not None:
            out[job] = max(out.get(job, t), t)
    return out


def forecast_by_job(f):
    return {key.split("/")[1].rsplit("-", 5)[0]: j for key, j in f.jobs.items()}


@pytest.fixture
def busy():
    """Two 4-CPU nodes full of job a (30 min, 10 min in), then b (two whole nodes, 1 h) and c
    (half a node, 1 h) waiting."""
    c = volcanic.Cluster()
    c.apply([node("n1"), node("n2")])
    c.apply(job("a", 4, "2", "30m", expected="30m"))
    c.run(600)
    c.apply(job("b", 2, "4", "1h", expected="1h"))
    c.apply(job("c", 1, "2", "1h", expected="1h"))
    c.run(5)
    return c


def test_with_exact_estimates_the_forecast_is_what_then_happens(busy):
    f = forecast(state(busy), None, now=now_of(busy))
    got = {name: j.estimated_start for name, j in forecast_by_job(f).items()}
    assert set(got) == {"b", "c"} and all(t is not None for t in got.values())
    busy.run(3 * 3600)
    actual = starts(busy)
    assert got == {"b": actual["b"], "c": actual["c"]}
    assert got["b"] < got["c"]  # c, behind b's gang in the queue's order, waits for b to end
    assert forecast_by_job(f)["b"].basis == "every pod had an estimate (4 running)"


def test_a_forecast_is_deterministic_and_leaves_the_cluster_alone(busy):
    before = state(busy)
    first = forecast(before, None, now=now_of(busy))
    assert forecast(state(busy), None, now=now_of(busy)) == first
    assert state(busy) == before


def test_without_an_estimate_the_queue_median_of_finished_pods_is_used_and_said():
    c = volcanic.Cluster()
    c.apply([node("n1")])
    c.apply(job("done", 1, "4", "20m"))  # finishes: the queue's median run is 20 min
    c.run(1300)
    c.apply(job("a", 1, "4", "2h"))  # no estimate: taken as 20 min
    c.run(5)
    c.apply(job("b", 1, "4", "1h"))
    c.run(5)
    f = forecast(state(c), None, now=now_of(c))
    b = forecast_by_job(f)["b"]
    a_started = starts(c)["a"]
    assert b.estimated_start == pytest.approx(a_started + 1200, abs=2)  # a ends at its median, b starts
    assert b.basis == "2 pod(s) without an estimate took the median of queue default, 20m0s"


def test_active_deadline_is_an_upper_bound_and_no_estimate_at_all_waits_past_the_horizon():
    c = volcanic.Cluster()
    c.apply([node("n1"), node("n2")])
    c.apply(job("bounded", 1, "4", "3h", deadline=3600))
    c.apply(job("endless", 1, "4", "3h"))
    c.run(5)
    c.apply(job("next", 2, "4", "1h", expected="1h"))
    c.run(5)
    f = forecast(state(c), None, now=now_of(c), horizon=86400)
    assert forecast_by_job(f)["next"].estimated_start is None  # endless never frees its node
    assert "1 pod(s) had no estimate and no queue median" in f.basis


def test_a_restored_cluster_carries_on_from_the_state():
    """Cluster(start=...) and restore() (docs/cluster.md, Forks of a state)."""
    from volcanic.kube.clock import rfc3339
    t0 = 1732780800.0
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "namespace": "default", "uid": "uid-from-elsewhere",
                        "creationTimestamp": rfc3339(t0 - 900), "annotations": {"volcanic/sim-duration": "20m"}},
           "spec": {"nodeName": "n1", "restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]},
           "status": {"phase": "Running", "startTime": rfc3339(t0 - 600)}}
    c = volcanic.Cluster(start=t0)
    c.restore([node("n1"), pod])
    kept = c.get("Pod", "p")
    assert (kept["metadata"]["uid"], kept["metadata"]["creationTimestamp"], kept["status"]["phase"]) == \
        ("uid-from-elsewhere", rfc3339(t0 - 900), "Running")
    c.run(599)
    assert c.get("Pod", "p")["status"]["phase"] == "Running"
    c.run(1)  # 20 minutes after its start
    assert c.get("Pod", "p")["status"]["phase"] == "Succeeded"


BINPACK = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: binpack
    arguments: {binpack.weight: 10}
"""


def test_what_if_compares_two_configurations_job_by_job_and_their_waits():
    from volcanic.foresight import what_if
    c = volcanic.Cluster()
    c.apply([node("n1"), node("n2")])
    c.apply(job("x", 1, "2", "1h", expected="1h"))
    c.run(4.5)  # x runs on n1
    c.apply(job("p", 1, "2", "10m", expected="10m"))
    c.apply(job("q", 1, "4", "10m", expected="10m"))
    c.run(0.1)  # their PodGroups are made; the next session is at 5 s
    w = what_if(state(c), None, BINPACK, now=now_of(c))
    by_job = {j.job.split("/")[1].rsplit("-", 5)[0]: j for j in w.jobs}
    # Volcano's default spreads p onto the empty n2, so q waits for p's 10 minutes; binpack
    # puts p beside x on n1 and q takes n2 at once.
    assert by_job["q"].change == "earlier"
    assert by_job["q"].current - by_job["q"].proposed == pytest.approx(600, abs=2)
    assert by_job["p"].change == "same"
    assert (w.count("earlier"), w.count("later"), w.count("same")) == (1, 0, 1)
    assert w.current_waits[99] > w.proposed_waits[99]
