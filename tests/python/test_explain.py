"""Cluster.explain and Cluster.forecast: why a job waits, its place in line, when it starts, and
the single changes that would start it now, each verified by applying it (docs/foresight.md,
"Explain a job")."""

from __future__ import annotations

import pytest

from test_forecast import job, node, starts
import volcanic

TIERS = """
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""
ALLOCATE = 'actions: "enqueue, allocate, backfill"' + TIERS
PREEMPT = 'actions: "enqueue, allocate, preempt, backfill"' + TIERS
PRIORITIES = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": 10},
              {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
               "value": 100}]


def queue(name, cpu=None):
    spec = {"weight": 1, **({"capability": {"cpu": cpu}} if cpu else {})}
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name}, "spec": spec}


def in_queue(j, name=None, priority=None):
    if name:
        j["spec"]["queue"] = name
    if priority:
        j["spec"]["priorityClassName"] = priority
    return j


@pytest.fixture
def capped():
    """Queue q1 (capability cpu 4) full with job a (2 x 2 cpu, 30 min); b (2 x 1 cpu) waits."""
    c = volcanic.Cluster(ALLOCATE)
    c.apply([node("n1"), node("n2"), queue("q1", "4")])
    c.run(1)
    c.apply(in_queue(job("a", 2, "2", "30m", expected="30m"), "q1"))
    c.run(10)
    c.apply(in_queue(job("b", 2, "1", "10m", expected="10m"), "q1"))
    c.run(3)
    return c


def test_a_job_over_its_queues_capability_is_told_so_and_what_would_start_it(capped):
    e = capped.explain("b")
    assert (e.job, e.queue, e.position, e.queue_position) == ("default/b", "q1", 1, 1)
    assert e.reasons == ["proportion: queue q1 capability: cpu 2 asked, 4 of 4 taken"]
    assert e.remedies == ["raise queue q1's capability to cpu 6 (now cpu 4)", "submit it to queue default, which has room"]
    assert e.basis == "every pod had an estimate (2 running)"
    capped.run(3 * 3600)
    assert e.estimated_start == starts(capped)["b"]  # exact estimates: the forecast is what happens


@pytest.mark.parametrize("remedy", ["capability", "queue"])
def test_each_remedy_applied_starts_the_job_at_once(capped, remedy):
    if remedy == "capability":
        capped.apply(queue("q1", "6"))
    else:
        capped.apply(in_queue(job("b2", 2, "1", "10m"), "default"))  # b, submitted to default instead
    capped.run(5)
    started = starts(capped)
    assert ("b" if remedy == "capability" else "b2") in started


@pytest.fixture
def gang():
    """a (low priority) fills n1; b (high priority, 2 x 3 cpu, minAvailable 2) fits only one
    pod, on n2."""
    def make(conf):
        c = volcanic.Cluster(conf)
        c.apply([node("n1"), node("n2"), *PRIORITIES])
        c.apply(in_queue(job("a", 1, "4", "30m", expected="30m"), priority="low"))
        c.run(10)
        c.apply(in_queue(job("b", 2, "3", "10m", expected="10m"), priority="high"))
        c.run(3)
        return c
    return make


def test_a_gang_that_does_not_fit_is_offered_a_smaller_gang_smaller_pods_and_preemption(gang):
    e = gang(PREEMPT).explain("b")
    assert e.reasons[0] == "proportion: queue default capability: cpu 6 asked, 4 of 8 taken"
    assert e.remedies == [
        "lower minAvailable from 2 to 1",
        "request cpu 2 per pod at most (now 3)",
        "preempt 1 lower-priority job(s) (default/a; priority 100 above theirs): "
        "the configuration's preempt action would do it"]


def test_preemption_the_policy_lacks_is_said_so(gang):
    e = gang(ALLOCATE).explain("b")
    assert e.remedies[-1] == ("preempt 1 lower-priority job(s) (default/a; priority 100 above theirs): "
                              "the configuration does not (preempt is not among its actions)")


@pytest.mark.parametrize("change", ["min", "request"])
def test_the_smaller_gang_and_the_smaller_request_each_start_the_job(gang, change):
    c = gang(ALLOCATE)
    c.delete("Job", "b")
    smaller = job("b", 2, "2" if change == "request" else "3", "10m")
    if change == "min":
        smaller["spec"]["minAvailable"] = 1
    c.apply(in_queue(smaller, priority="high"))
    c.run(5)
    assert "b" in starts(c)


def test_one_cpu_more_than_the_remedy_does_not_start_it(gang):
    """The remedy is the largest request that starts the gang: 2001m does not."""
    c = gang(ALLOCATE)
    c.delete("Job", "b")
    c.apply(in_queue(job("b", 2, "2001m", "10m"), priority="high"))
    c.run(5)
    assert "b" not in starts(c)


def test_a_running_job_has_no_reasons_and_an_unknown_one_is_a_key_error(capped):
    e = capped.explain("a")
    assert (e.reasons, e.remedies, e.estimated_start, e.basis) == ([], [], None, "its gang is running")
    with pytest.raises(KeyError, match="job default/nope not found"):
        capped.explain("nope")


def test_forecast_gives_every_pending_job_in_queue_order_and_a_frame(capped):
    capped.apply(PRIORITIES)
    capped.apply(in_queue(job("c", 1, "1", "10m", expected="10m"), "q1", "high"))
    capped.run(3)
    rows = capped.forecast()
    # The priority plugin's job order puts c first in q1's line.
    assert [(r.job, r.queue, r.position) for r in rows] == [("default/c", "q1", 1), ("default/b", "q1", 2)]
    assert capped.forecast(queue="default") == [] and capped.forecast(namespace="other") == []
    frame = capped.forecast(frame=True)
    assert list(frame["job"]) == ["default/c", "default/b"]
    assert list(frame.columns) == ["job", "queue", "position", "queue_position", "reasons", "estimated_start", "basis"]


def test_what_if_on_the_cluster_uses_its_configuration_as_the_current_one(capped):
    w = capped.what_if(ALLOCATE.replace("  - name: proportion\n", ""))  # no capability check
    [b] = w.jobs  # keyed by PodGroup: its Job's name and uid
    assert b.job.startswith("default/b-") and b.change == "earlier"
    assert b.proposed - w.now <= 2 and b.current - w.now > 1700  # at once, not when a ends
