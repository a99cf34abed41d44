"""Decisions that change with time alone run on a quiet cluster (issue: what Volcano's e2e
suites found, item 1). The loop skips periods in which nothing changed since a session that
decided nothing (test_scheduler_cycles.py); a deadline passing is no change, so the engine
reports the earliest instant a decision could change (Decisions.wake_at) and the loop arms a
timer for it.

Volcano spec: test/e2e/schedulingbase/sla.go "sla adjusts job order" (a job larger than the
cluster with sla-waiting-time 3s is enqueued, its pods created Pending, once it has waited);
rule: pkg/scheduler/plugins/sla/sla.go (JobEnqueueable permits once creation + waiting time
has passed), reference §4.6.
"""

from __future__ import annotations

from job_helpers import job, node, task
import volcanic
from volcanic.scheduler.plugins import unregister_plugin

SLA_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: sla{arguments}
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


def _cluster(arguments: str = "") -> volcanic.Cluster:
    c = volcanic.Cluster(conf=SLA_CONF.format(arguments=arguments))
    c.apply([node(f"n{i}", cpu="4") for i in range(4)])  # 16 CPUs, as Volcano's CI cluster
    c.run(1)
    return c


def _overlarge(waiting: str | None = None) -> dict:
    """17 pods of 1 CPU, all needed at once: more than the cluster, so proportion refuses to
    enqueue it until sla permits."""
    j = job("j1-overlarge", task(replicas=17, min_available=17))
    if waiting is not None:
        j["metadata"]["annotations"] = {"sla-waiting-time": waiting}
    return j


def _phase(c: volcanic.Cluster) -> str:
    (pg,) = c.list("PodGroup")
    return pg["status"]["phase"]


def test_a_job_is_enqueued_once_its_annotated_waiting_time_has_passed():
    c = _cluster()
    c.apply(_overlarge("3s"))
    c.run(2.5)
    assert _phase(c) == "Pending" and c.list("Pod") == []
    c.run(2)  # created at 1 s: the deadline at 4 s wakes the loop, nothing else does
    assert _phase(c) == "Inqueue"
    assert len(c.list("Pod")) == 17
    assert all(p["status"]["phase"] == "Pending" for p in c.list("Pod"))


def test_the_plugin_argument_is_a_deadline_too():
    c = _cluster(arguments="\n    arguments:\n      sla-waiting-time: 10s")
    c.apply(_overlarge())
    c.run(9)
    assert _phase(c) == "Pending"
    c.run(2)
    assert _phase(c) == "Inqueue"


def test_a_deadline_costs_one_wake_up_not_a_session_every_period():
    c = _cluster()
    c.apply(_overlarge("1h"))
    c.run(60)
    sessions = c.scheduler.sessions
    c.run(3600 - 60 - 2)  # an hour of nothing: no session until the deadline
    assert c.scheduler.sessions == sessions and _phase(c) == "Pending"
    c.run(10)
    assert _phase(c) == "Inqueue"
    assert c.scheduler.sessions - sessions <= 4  # the wake-up, then the pods' arrival


def test_a_job_enqueued_before_its_deadline_arms_nothing():
    """A deadline that can no longer help (the job is placed) costs no wake-up."""
    c = _cluster()
    c.apply(job("small", task(replicas=2, min_available=2)))
    c.apply(dict(job("small-sla", task(replicas=1)), metadata={"name": "small-sla", "namespace": "default",
                                                                  "annotations": {"sla-waiting-time": "1h"}}))
    c.run(30)
    assert c.scheduler.last is not None and c.scheduler.last.wake_at is None
    sessions = c.scheduler.sessions
    c.run(7200)
    assert c.scheduler.sessions == sessions


def test_a_python_plugin_asks_for_a_session_at_its_own_deadline():
    class Gate(volcanic.Plugin):
        name = "gate-30s"

        def on_session_open(self, session):
            self.now = session.now
            for j in session.jobs:
                session.wake_at(j.creation_timestamp + 30)

        def job_enqueueable(self, job):
            return None if self.now >= job.creation_timestamp + 30 else False

    volcanic.register_plugin(Gate)
    try:
        _run_gated()
    finally:
        unregister_plugin("gate-30s")


def _run_gated() -> None:
    conf = {"actions": "enqueue, allocate, backfill",
            "tiers": [{"plugins": [{"name": "gang"}, {"name": "gate-30s"}]},
                      {"plugins": [{"name": "predicates"}, {"name": "proportion"}]}]}
    c = volcanic.Cluster(conf=conf)
    c.apply(node("n1"))
    c.run(1)
    c.apply(job("j", task(replicas=1)))
    c.run(29)
    assert _phase(c) == "Pending"
    sessions = c.scheduler.sessions
    c.run(3)
    assert _phase(c) in ("Inqueue", "Running")
    assert c.scheduler.sessions - sessions <= 3
