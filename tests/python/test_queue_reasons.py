"""A PodGroup held back by its queue says which queue and why (issue "What Volcano's own e2e
suites and a fault probe found", faults item 5). Volcano's scheduler skips a job whose queue
does not exist (pkg/scheduler/cache/cache.go Snapshot) and, when capacity's queue hierarchy
is broken (pkg/scheduler/plugins/capacity/capacity.go buildHierarchicalQueueAttrs), only logs
it and rejects every job; either way the user saw just "pod group is not ready". volcanic
gives the reason as the fit error's origin, in Volcano's JobFitErrors wording (". Origin
reason is: ..."), on the Unschedulable condition and Event.
"""

from __future__ import annotations

from job_helpers import node
import volcanic

NOW = 1.7e9


def _objects(queue: str) -> list[dict]:
    return [
        node("n1"),
        {"kind": "PodGroup", "metadata": {"name": "pg", "namespace": "ns", "uid": "pg-uid"},
         "spec": {"minMember": 1, "queue": queue}, "status": {"phase": "Pending"}},
        {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "annotations": {
            "scheduling.k8s.io/group-name": "pg"}},
         "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
         "status": {"phase": "Pending"}},
    ]


def _unschedulable(d: volcanic.Decisions) -> str:
    (cond,) = [c for c in d.podgroups["ns/pg"]["conditions"] if c["type"] == "Unschedulable"]
    return cond["message"]


def test_a_missing_queue_is_named():
    d = volcanic.schedule(_objects("nope"), now=NOW)
    assert d.binds == {}
    assert _unschedulable(d).endswith(". Origin reason is: queue nope does not exist")
    assert d.podgroup_events["ns/pg"][2].endswith(". Origin reason is: queue nope does not exist")


HIERARCHY = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: capacity
    enableHierarchy: true
"""


def _queue(name: str, parent: str) -> dict:
    return {"kind": "Queue", "metadata": {"name": name}, "spec": {"weight": 1, "parent": parent},
            "status": {"state": "Open"}}


def test_a_cycle_in_capacitys_queue_hierarchy_is_named():
    objects = _objects("a") + [_queue("a", "b"), _queue("b", "a")]
    d = volcanic.schedule(objects, HIERARCHY, now=NOW)
    assert d.binds == {}
    assert _unschedulable(d).endswith(". Origin reason is: capacity: cycle detected in queue hierarchy for queue a")


def test_a_sound_hierarchy_schedules():
    objects = _objects("a") + [_queue("a", "root")]
    assert volcanic.schedule(objects, HIERARCHY, now=NOW).binds == {"ns/p": "n1"}
