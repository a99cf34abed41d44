"""Ties between jobs: equal priority and equal creationTimestamp (whole seconds) go first come,
first served, in the order the scheduler's cache first saw each job, then by name
(docs/scheduler.md "Determinism"). Volcano falls back to the UID here; kube-scheduler's queue
breaks such ties by arrival time, as volcanic does."""

from __future__ import annotations

import copy

from builders import node, pod, podgroup
import volcanic

NOW = 1_700_000_000
SAME_SECOND = "2023-11-14T22:00:00Z"


def _job(name: str, cpu: str) -> list[dict]:
    """A Pending PodGroup of one pod whose minResources is its request, created at SAME_SECOND."""
    g = podgroup(name, 1, phase="Pending", minResources={"cpu": cpu, "memory": "1Gi"})
    p = pod(f"{name}-0", name, cpu=cpu)
    for o in (g, p):
        o["metadata"]["creationTimestamp"] = SAME_SECOND
    return [g, p]


# One 4-cpu node: overcommit lets 4.8 cpu of minResources in, so the big job (4 cpu) and the
# small one (1 cpu) cannot both be enqueued; whichever goes first is admitted.
SMALL, BIG = _job("zz-small", "1"), _job("aa-big", "4")


def _phases(d) -> dict[str, str]:
    return {k: v["phase"] for k, v in d.podgroups.items()}


def test_a_job_seen_first_enqueues_first_within_the_same_second():
    d = volcanic.schedule([node("n1")] + SMALL + BIG, now=NOW)
    assert _phases(d) == {"ns/zz-small": "Inqueue", "ns/aa-big": "Pending"}
    assert d.binds == {"ns/zz-small-0": "n1"}
    d = volcanic.schedule([node("n1")] + BIG + SMALL, now=NOW)
    assert _phases(d) == {"ns/zz-small": "Pending", "ns/aa-big": "Inqueue"}


def test_arrival_is_kept_across_updates():
    s = volcanic.Scheduler()
    for o in [node("n1")] + SMALL + BIG:
        s.upsert(o)
    updated = copy.deepcopy(SMALL[0])
    updated["metadata"]["labels"] = {"touched": "yes"}
    s.upsert(updated)  # an update is not a new arrival
    assert _phases(s.run_once(NOW)) == {"ns/zz-small": "Inqueue", "ns/aa-big": "Pending"}


def test_earlier_creation_time_still_wins_over_arrival():
    late_small = copy.deepcopy(SMALL)
    for o in late_small:
        o["metadata"]["creationTimestamp"] = "2023-11-14T22:00:01Z"
    d = volcanic.schedule([node("n1")] + late_small + BIG, now=NOW)
    assert _phases(d) == {"ns/zz-small": "Pending", "ns/aa-big": "Inqueue"}


def test_embedded_cluster_serves_jobs_in_creation_order():
    c = volcanic.Cluster()
    c.apply(node("n1"))
    for o in SMALL + BIG:  # created in this order, in the same virtual second
        o = copy.deepcopy(o)
        del o["metadata"]["creationTimestamp"]
        o.pop("status", None)
        c.apply(o)
    c.run(1)
    assert c.get("PodGroup", "zz-small", "ns")["status"]["phase"] in ("Inqueue", "Running")
    assert c.get("PodGroup", "aa-big", "ns")["status"]["phase"] == "Pending"
