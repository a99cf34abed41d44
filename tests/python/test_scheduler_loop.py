"""The scheduler loop's timing: sessions every schedule period, and with `settle` one as soon
as the watch has been quiet that long, and one `settle` after new work comes (a new PodGroup,
a new pod that fills its gang), the rest of its burst included (volcanic.scheduler.cadence)."""

import pytest

from builders import node, pod, podgroup
import volcanic


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


def test_with_settle_a_new_pod_that_fills_its_gang_is_bound_a_settle_later():
    c = cluster_at(0.25, 0.25)
    c.apply(pod("p", None, ns="default"))  # a bare pod: its gang of one
    c.run(0)
    assert bound_at(c, "p") == 0.5


def test_gangs_created_in_one_burst_share_the_cluster():
    """Volcano's e2e schedulingbase "Schedule Multiple Jobs" (test/e2e/schedulingbase/
    job_scheduling.go): Jobs created back to back each get their gang, as in Volcano's
    period-long window; a session at the first gang alone gave it every CPU."""
    c = cluster_at(0.25, 0.25)
    c.apply([podgroup("g1", 2, ns="default")] + [pod(f"a{i}", "g1", ns="default") for i in range(8)])
    c.run(0.125)
    c.apply([podgroup("g2", 2, ns="default")] + [pod(f"b{i}", "g2", ns="default") for i in range(8)])
    c.run(1)
    bound = [p["metadata"]["name"][0] for p in c.list("Pod") if p["spec"].get("nodeName")]
    assert len(bound) == 8 and bound.count("a") >= 2 and bound.count("b") >= 2


def test_with_settle_a_pending_pod_is_bound_once_the_watch_is_quiet():
    c = cluster_at(0.25, 0.25)
    c.apply(pod("p", None, ns="default", cpu="16"))  # no room on n1 at its session (0.5 s)
    c.run(0.375)
    c.apply(node("n2", cpu="16"))  # no new work: the session waits for a quiet watch
    assert bound_at(c, "p") == 0.875


def bound_while_busy(c: volcanic.Cluster, name: str, cpu: str = "1") -> float:
    """bound_at() while a node is added every 0.125 s, so the watch is never quiet for 0.25 s."""
    for i in range(16):
        if (c.get("Pod", name) or {}).get("spec", {}).get("nodeName"):
            return c.now
        c.apply(node(f"m{i}", cpu=cpu))
        c.run(0.125)
    raise AssertionError(f"{name} not bound by {c.now} s")


def test_changes_that_keep_coming_keep_the_periods_cadence():
    c = cluster_at(0.25, 0.25)
    c.apply(pod("p", None, ns="default", cpu="16"))  # no room on n1 at its session (0.25 s)
    c.run(0.25)
    sessions = c.scheduler.sessions
    assert bound_while_busy(c, "p", cpu="16") == 1.0  # placed by the period's session
    assert c.scheduler.sessions - sessions == 1


def test_a_pod_filling_its_gang_starts_a_session_though_changes_keep_coming():
    c = cluster_at(0.25, 0.25)
    c.apply([podgroup("g", 2, ns="default"), pod("a", "g", ns="default")])  # a session for the new group
    c.run(0.375)
    c.apply(pod("b", "g", ns="default"))  # fills the gang at 0.625 s, 0.125 s after that session
    assert bound_while_busy(c, "b") == 0.875


def test_settle_must_be_positive():
    with pytest.raises(ValueError, match="settle"):
        volcanic.Cluster(settle=0)
