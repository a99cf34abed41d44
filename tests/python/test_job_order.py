"""A job order per queue (volcanic's own; docs/queues.md, "A job order per queue"), end to end
in the embedded cluster: the Queue annotation reaches the engine through the public API, the
webhook refuses a malformed one naming it, and the engine refuses one that got past admission.
The rules themselves are scenarios: tests/scenarios/job-order/."""

from __future__ import annotations

import pytest

import volcanic
from volcanic.kube.errors import AdmissionError
from volcanic.kube.kinds import KINDS

ORDER = "scheduling.volcanic.dev/job-order"


def queue(name: str, **annotations: str) -> dict:
    return {"apiVersion": KINDS["Queue"].api_version, "kind": "Queue",
            "metadata": {"name": name, "annotations": annotations}, "spec": {"weight": 1}}


def job(name: str, queue: str, priority_class: str) -> dict:
    return {"apiVersion": KINDS["Job"].api_version, "kind": "Job", "metadata": {"name": name, "namespace": "ns"},
            "spec": {"minAvailable": 1, "schedulerName": "volcano", "queue": queue,
                     "priorityClassName": priority_class, "tasks": [{
                         "name": "work", "replicas": 1, "template": {
                             "metadata": {"annotations": {"volcanic/sim-duration": "100s"}},
                             "spec": {"containers": [{"name": "c", "image": "busybox",
                                                      "resources": {"requests": {"cpu": "1"}}}],
                                      "restartPolicy": "Never"}}}]}}


def first_to_run(order: str | None, annotated_later: bool = False) -> str:
    """Two 1-CPU jobs on a 1-CPU node, the low-priority one submitted first: which runs? With
    `annotated_later`, the order is set on the open queue (a change the scheduler must see)."""
    c = volcanic.Cluster()
    c.apply({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
             "status": {"allocatable": {"cpu": "1", "memory": "8Gi", "pods": "110"}}})
    for name, value in (("low", 1), ("high", 100)):
        c.apply({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                 "value": value})
    c.apply(queue("q", **({ORDER: order} if order and not annotated_later else {})))
    c.run(1)
    if annotated_later:
        c.apply(queue("q", **{ORDER: order}))
    c.apply(job("early-low", "q", "low"))
    c.apply(job("late-high", "q", "high"))
    c.run(10)
    running = [p["metadata"]["name"] for p in c.list("Pod", "ns") if p["status"].get("phase") == "Running"]
    assert len(running) == 1 and c.errors == [], (running, c.errors)
    return running[0].rsplit("-work-", 1)[0]


def test_fifo_runs_the_earlier_job_where_the_tiers_run_the_higher_priority():
    assert first_to_run(None) == "late-high"  # Volcano's default tiers: the priority plugin first
    assert first_to_run("fifo") == "early-low"
    assert first_to_run("priority") == "late-high"
    assert first_to_run("fifo", annotated_later=True) == "early-low"


@pytest.mark.parametrize("annotations, message", [
    ({ORDER: "lifo"}, f'metadata.annotations[{ORDER}]: Invalid value: "lifo": must be one of fifo, priority, '
                      "fair, sjf, tiers"),
    ({"scheduling.volcanic.dev/sjf-max-wait": "soon"},
     'metadata.annotations[scheduling.volcanic.dev/sjf-max-wait]: Invalid value: "soon": must be a duration of a '
     "millisecond or more (e.g. 30m)"),
])
def test_the_webhook_refuses_a_malformed_order_naming_the_annotation(annotations, message):
    c = volcanic.Cluster()
    with pytest.raises(AdmissionError, match="Invalid value") as e:
        c.apply(queue("q", **annotations))
    assert message in str(e.value)
    assert c.get("Queue", "q") is None  # nothing half-applied


def test_the_engine_refuses_an_order_it_cannot_read_naming_queue_and_annotation():
    with pytest.raises(Exception) as e:
        volcanic.schedule([queue("q", **{ORDER: "lifo"})])
    assert f"Queue q: metadata.annotations[{ORDER}]: 'lifo' is not a job order" in str(e.value)
