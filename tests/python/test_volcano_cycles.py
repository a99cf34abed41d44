"""Volcano's scheduler cases that span more than one session, on volcanic.Scheduler (its cache
keeps what a session decided, as Volcano's does, until the API confirms it)."""

from __future__ import annotations

from builders import node, pod, podgroup, queue
import volcanic

NOW = 1_700_000_000


def test_proportion_counts_an_inqueue_job_with_binding_tasks_once():
    """volcano pkg/scheduler/plugins/proportion/proportion_test.go
    TestNoDoubleCountingForInqueueJobWithBindingTasks: after cycle 1 jobA's three tasks are
    Binding while its PodGroup stays Inqueue; cycle 2 must not count jobA's 3 cpu both as
    allocated and as inqueue, so jobB (1 cpu) still fits queue q1's capability of 4 cpu."""
    conf = {"actions": "enqueue, allocate",
            "tiers": [{"plugins": [{"name": "proportion", "enabledAllocatable": True,
                                    "enabledOverused": True, "enableJobEnqueued": True}]}]}
    s = volcanic.Scheduler(conf)
    s.upsert(node("n1", cpu="4", memory="8Gi", pods="10"))
    s.upsert(queue("q1", capability={"cpu": "4", "memory": "8Gi"}))
    s.upsert(podgroup("pgA", 3, queue="q1", ns="ns1", minResources={"cpu": "3", "memory": "3Gi"}))
    for name in ("pA1", "pA2", "pA3"):
        s.upsert(pod(name, "pgA", cpu="1", memory="1Gi", ns="ns1"))
    first = s.run_once(NOW)
    assert first.binds == {"ns1/pA1": "n1", "ns1/pA2": "n1", "ns1/pA3": "n1"}
    assert first.podgroups["ns1/pgA"]["phase"] == "Inqueue"  # Binding is not yet scheduled

    s.upsert(podgroup("pgB", 1, queue="q1", ns="ns1", phase="Pending", minResources={"cpu": "1", "memory": "1Gi"}))
    s.upsert(pod("pB1", "pgB", cpu="1", memory="1Gi", ns="ns1"))
    second = s.run_once(NOW)
    assert second.binds == {"ns1/pB1": "n1"}
    assert second.podgroups["ns1/pgB"]["phase"] == "Inqueue"
