"""The scheduler loop's timing: sessions every schedule period, and with `settle` one as soon
as the watch has been quiet that long (volcanic.scheduler.loop)."""

import pytest

import volcanic
from builders import node, pod


def bound_at(c: volcanic.Cluster, name: str, step: float = 0.125, limit: float = 3.0) -> float:
    """Virtual seconds at which pod `name` is first seen bound, stepping `step` at a time
    (binary fractions, so the steps add up exactly)."""
    while c.now < limit:
        if (c.get("Pod", name) or {}).get("spec", {}).get("nodeName"):
            return c.now
        c.run(step)
    raise AssertionError(f"{name} not bound by {limit} s")


def cluster_at(settle, t: float) -> volcanic.Cluster:
    c = volcanic.Cluster(settle=settle)
    c.apply(node("n1", cpu="8"))
    c.run(t)
    return c


def test_without_settle_a_new_pod_waits_for_the_next_period():
    c = cluster_at(None, 0.25)
    c.apply(pod("p", None, ns="default"))
    assert bound_at(c, "p") == 1.0


def test_with_settle_a_new_pod_is_bound_once_the_watch_is_quiet():
    c = cluster_at(0.25, 0.25)
    c.apply(pod("p", None, ns="default"))
    assert bound_at(c, "p") == 0.5


def test_changes_that_keep_coming_keep_the_periods_cadence():
    c = cluster_at(0.25, 0.25)
    c.apply(pod("p", None, ns="default"))
    sessions = c.scheduler.sessions
    for i in range(6):  # a change every 0.125 s: never quiet for 0.25 s
        c.apply(node(f"m{i}", cpu="1"))
        c.run(0.125)
    assert (c.get("Pod", "p") or {})["spec"].get("nodeName")  # bound by the period's session at 1.0
    assert c.scheduler.sessions - sessions == 1


def test_settle_must_be_positive():
    with pytest.raises(ValueError, match="settle"):
        volcanic.Cluster(settle=0)
