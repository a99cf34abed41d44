"""Scheduling-gated pods reserve nothing in the queues' inqueue sums, in overcommit and
proportion as in capacity (Volcano v1.15 JobInfo.DeductSchGatedResources,
pkg/scheduler/api/job_info.go, used by pkg/scheduler/plugins/overcommit/overcommit.go and
proportion/proportion.go). Pods whose only gate is Volcano's queue-allocation gate are the
exception (GetSchGatedPodResources): the scheduler lifts that gate, so they still reserve.

Volcano spec: test/e2e/schedulingaction/enqueue.go "Scheduling gated task will not consume
inqueue resources": a job as large as the cluster whose pods are all gated is enqueued, and
two jobs of half the cluster each still run.
"""

from __future__ import annotations

from job_helpers import job, node, task
from test_preemption_cluster import CI_CONF  # Volcano's: enqueue with overcommit and proportion
import volcanic


def _gated(gates: list[str]) -> dict:
    t = task(replicas=4, min_available=4)
    t["template"]["spec"]["schedulingGates"] = [{"name": g} for g in gates]
    return job("j-gated", t)


def _run(gates: list[str]) -> volcanic.Cluster:
    c = volcanic.Cluster(conf=CI_CONF)
    c.apply(node("n1", cpu="4"))  # one node: j-gated asks for all of it
    c.run(1)
    c.apply(_gated(gates))
    c.run(1)  # j-gated is enqueued first, its pods created gated
    c.apply([job("job1", task(replicas=2, min_available=2)), job("job2", task(replicas=2, min_available=2))])
    c.run(10)
    return c


def _phase(c: volcanic.Cluster, name: str) -> str:
    return c.get("Job", name)["status"]["state"]["phase"]


def test_gated_pods_do_not_hold_room_other_jobs_could_run_in():
    c = _run(["g1"])
    assert _phase(c, "j-gated") == "Pending"
    pods = [p for p in c.list("Pod") if p["metadata"]["name"].startswith("j-gated")]
    assert len(pods) == 4 and all(not p["spec"].get("nodeName") for p in pods)
    assert _phase(c, "job1") == "Running" and _phase(c, "job2") == "Running"


def test_pods_gated_only_by_the_queue_allocation_gate_still_reserve():
    """Their gate is lifted by the scheduler once the queue has room: the job keeps its
    reservation, so neither later job fits beside it (overcommit: 4 + 2 CPUs > 1.2 x 4)."""
    c = _run(["scheduling.volcano.sh/queue-allocation-gate"])
    running = [n for n in ("job1", "job2") if _phase(c, n) == "Running"]
    assert running == []
