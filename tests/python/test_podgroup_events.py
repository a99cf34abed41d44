"""The scheduler records Events on PodGroups as Volcano's does (SchedulerCache.
RecordJobStatusEvent, pkg/scheduler/cache/cache.go, called for every job at every session
close by pkg/scheduler/framework/job_updater.go): a Warning "Unschedulable" with
"<pending>/<tasks> tasks in gang unschedulable: <fit error>" while the PodGroup is Pending,
Inqueue or Unknown, and a Normal "Scheduled" "pod group is ready" when its status changes
otherwise. An unchanged Event is not sent again, so a waiting gang costs the API server
nothing per session.

Volcano specs: test/e2e/jobp/job_lifecycle.go "Checking Unschedulable Event Generation for
job", schedulingbase/job_scheduling.go "Statement" (both wait for an Unschedulable Event whose
involvedObject is the job's PodGroup).
"""

from __future__ import annotations

from job_helpers import job, node, task
import volcanic


def _events(c: volcanic.Cluster, pg_name: str) -> list[tuple[str, str, str]]:
    return [(e["type"], e["reason"], e["message"]) for e in c.list("Event")
            if e["involvedObject"]["kind"] == "PodGroup" and e["involvedObject"]["name"] == pg_name]


def _podgroup(c: volcanic.Cluster, job_name: str) -> dict:
    (pg,) = [pg for pg in c.list("PodGroup") if pg["metadata"]["name"].startswith(job_name + "-")]
    return pg


def test_a_waiting_gang_gets_one_unschedulable_event_then_one_scheduled():
    c = volcanic.Cluster()
    c.apply(node("n1", cpu="4"))
    c.apply(job("blocker", task(replicas=2, duration="30s")))
    c.run(2)
    c.apply(job("gang", task(replicas=3, min_available=3, duration="30s")))
    c.run(20)
    pg = _podgroup(c, "gang")
    assert pg["status"]["phase"] == "Pending"  # overcommit: 2 used + 3 > 1.2 x 4
    assert _events(c, pg["metadata"]["name"]) == [
        ("Warning", "Unschedulable", "0/0 tasks in gang unschedulable: pod group is not ready, 3 minAvailable")]
    event = next(e for e in c.list("Event") if e["involvedObject"]["name"] == pg["metadata"]["name"])
    assert event["involvedObject"]["apiVersion"] == "scheduling.volcano.sh/v1beta1"
    assert event["involvedObject"]["uid"] == pg["metadata"]["uid"]
    assert event["source"]["component"] == "volcano"
    c.run(20)  # the blocker ends at 32 s, the gang runs
    assert _podgroup(c, "gang")["status"]["phase"] == "Running"
    # The session that binds the gang closes with its pods Binding, the PodGroup still Inqueue
    # (Volcano's getPodGroupPhase counts only scheduled pods), so it says so once more.
    assert _events(c, pg["metadata"]["name"]) == [
        ("Warning", "Unschedulable", "0/0 tasks in gang unschedulable: pod group is not ready, 3 minAvailable"),
        ("Warning", "Unschedulable", "0/3 tasks in gang unschedulable: pod group is not ready, 3 Binding, "
                                     "3 minAvailable"),
        ("Normal", "Scheduled", "pod group is ready")]


def test_an_inqueue_gang_that_does_not_fit_names_its_pending_pods():
    """Enqueued (the cluster has room in all) but its pods fit no node it may use: the message
    counts its pending pods out of its pods, then Volcano's fit error."""
    c = volcanic.Cluster()
    c.apply([node("n1", cpu="4"), node("n2", cpu="4")])
    c.apply(job("unschedulable-job", task("complete", replicas=5, min_available=5,
                                          selector={"kubernetes.io/hostname": "n1"})))
    c.run(10)
    pg = _podgroup(c, "unschedulable-job")
    assert pg["status"]["phase"] == "Inqueue"
    events = _events(c, pg["metadata"]["name"])
    assert all(e[:2] == ("Warning", "Unschedulable") for e in events)
    # Four pods fit (allocated, then given back with the gang: Schedulable), the fifth not.
    assert events[-1][2] == (
        "5/5 tasks in gang unschedulable: pod group is not ready, 5 Pending, 5 minAvailable; Pending: "
        "1 Unschedulable, 4 Schedulable. Origin reason is unschedulable-job-complete-4: 0/2 nodes are "
        "unavailable: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector.")
    assert len(events) <= 2  # one before its pods came, one after: not one per session
