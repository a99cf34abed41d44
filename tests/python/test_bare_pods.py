"""A pod of the scheduler without a PodGroup waits for the one the PodGroup controller makes
(Volcano's scheduler cache keeps a pod whose job has no PodGroup out of every session:
pkg/scheduler/cache/cache.go Snapshot skips jobs whose PodGroup is nil; the controller,
pkg/controllers/podgroup, creates podgroup-<owner uid> and annotates the pod). So queues and
gang rules hold for it. volcanic.schedule and volcanic.Scheduler keep a one-shot convenience,
bare_pods_as_groups=True, that makes such a pod its own group of one at once.

Volcano spec: test/e2e/jobp/pg_controller.go "Create volcano rc, pg controller process" (the
pod runs and its PodGroup is not Pending).
"""

from __future__ import annotations

from job_helpers import node
import volcanic

GROUP = "scheduling.k8s.io/group-name"


def bare_pod(name: str = "p", uid: str = "u-1", annotations: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": uid, "annotations": annotations or {},
                         "creationTimestamp": "2024-01-01T00:00:00Z"},
            "spec": {"schedulerName": "volcano",
                     "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]},
            "status": {"phase": "Pending"}}


def podgroup(name: str, queue: str = "default") -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default", "uid": "pg-" + name,
                         "creationTimestamp": "2024-01-01T00:00:00Z"},
            "spec": {"minMember": 1, "queue": queue}, "status": {"phase": "Pending"}}


def test_a_bare_pod_is_not_scheduled_before_its_podgroup_exists():
    s = volcanic.Scheduler()
    s.upsert(node("n1"))
    s.upsert(bare_pod())
    d = s.run_once(now=1.7e9)
    assert d.binds == {} and d.podgroups == {}
    s.upsert(podgroup("podgroup-u-1"))
    s.upsert(bare_pod(annotations={GROUP: "podgroup-u-1"}))
    d = s.run_once(now=1.7e9)
    assert d.binds == {"default/p": "n1"}


def test_the_podgroup_decides_its_queue():
    """The group the controller makes names the pod's queue: a closed queue holds the pod."""
    s = volcanic.Scheduler()
    s.upsert(node("n1"))
    s.upsert({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "closed"},
              "spec": {"weight": 1}, "status": {"state": "Closed"}})
    s.upsert(podgroup("podgroup-u-1", queue="closed"))
    s.upsert(bare_pod(annotations={GROUP: "podgroup-u-1"}))
    assert s.run_once(now=1.7e9).binds == {}


def test_one_shot_sessions_may_make_bare_pods_groups_of_one():
    objects = [node("n1"), bare_pod()]
    assert volcanic.schedule(objects).binds == {}
    assert volcanic.schedule(objects, bare_pods_as_groups=True).binds == {"default/p": "n1"}
    s = volcanic.Scheduler(bare_pods_as_groups=True)
    s.upsert(node("n1"))
    s.upsert(bare_pod())
    assert s.run_once(now=1.7e9).binds == {"default/p": "n1"}


def test_in_the_cluster_a_bare_pod_runs_in_the_podgroup_the_controller_made():
    c = volcanic.Cluster()
    c.apply(node("n1"))
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod-volcano"},
             "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "x"}]}})
    c.run(5)
    pod = c.get("Pod", "pod-volcano")
    assert pod["status"]["phase"] == "Running"
    (pg,) = c.list("PodGroup")
    assert pod["metadata"]["annotations"][GROUP] == pg["metadata"]["name"] == "podgroup-" + pod["metadata"]["uid"]
    assert pg["status"]["phase"] == "Running"
