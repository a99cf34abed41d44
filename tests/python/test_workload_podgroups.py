"""PodGroups of Kubernetes workloads and Volcano's quota-style minResources (issue 33 items 5
and 6).

Item 5, Volcano's PodGroup controller under WorkLoadSupport (pkg/controllers/podgroup/
pg_controller_handler.go addReplicaSet/addStatefulSet; Volcano e2e schedulingbase "PodGroup's
Count change with Deployment's Request change"): a ReplicaSet or StatefulSet scaled to 0
loses its PodGroup `podgroup-<uid>`; above 0, its first selected pod without a group gets
its PodGroup created or rebuilt (createOrUpdateNormalPodPG).

Item 6, minResources as Volcano writes it (util.CalTaskRequests over util.GetPodQuotaUsage,
used by pkg/controllers/job/job_controller_actions.go calcPGMinResources and by the PodGroup
controller; Volcano e2e jobp "Generate PodGroup and valid minResource when creating job"),
and the scheduler reading only what it schedules on (pkg/scheduler/api/resource_info.go
NewResource drops count/* and the requests.*/limits.* names).
"""

from __future__ import annotations

from typing import Any

from controller_helpers import Harness
from job_helpers import NS, job, node, task
from job_helpers import podgroup as job_podgroup
import volcanic
from volcanic.controllers.podgroup import PodGroupController

GROUP = "scheduling.k8s.io/group-name"
MIN_MEMBER = "scheduling.volcano.sh/group-min-member"


def replicaset(name: str, replicas: int | Any, app: str, ns: str = NS, annotations: dict | None = None,
               kind: str = "ReplicaSet") -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app}},
                     "template": {"metadata": {"labels": {"app": app}}, "spec": {"containers": []}}}}


def owned_pod(name: str, owner: dict, labels: dict, ns: str = NS, cpu: str = "1") -> dict:
    ref = {"apiVersion": "apps/v1", "kind": owner["kind"], "name": owner["metadata"]["name"],
           "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels, "ownerReferences": [ref]},
            "spec": {"schedulerName": "volcano", "restartPolicy": "Always",
                     "containers": [{"name": "c", "image": "nginx",
                                     "resources": {"requests": {"cpu": cpu, "memory": "100Mi"}}}]}}


def podgroup_of(c, owner: dict, ns: str = NS) -> dict | None:
    return c.get("PodGroup", f"podgroup-{owner['metadata']['uid']}", ns)


# --- Item 5: workloads --------------------------------------------------------------------

def test_rolling_update_deletes_the_old_replicasets_podgroup() -> None:
    """schedulingbase "PodGroup's Count change with Deployment's Request change": a Deployment's
    rolling update scales its old ReplicaSet to 0 (the ReplicaSet stays, as revision
    history); its PodGroup goes, the new ReplicaSet's stays: one PodGroup left."""
    c = volcanic.Cluster()
    c.apply(node("n1", cpu="8"))
    old = c.apply(replicaset("d-1-old", 2, "d-1-old"))
    c.apply([owned_pod(f"d-1-old-{i}", old, {"app": "d-1-old"}) for i in range(2)])
    c.run(2)
    assert podgroup_of(c, old)["status"]["phase"] == "Running"
    assert all(c.get("Pod", f"d-1-old-{i}")["status"]["phase"] == "Running" for i in range(2))

    new = c.apply(replicaset("d-1-new", 2, "d-1-new"))
    c.apply([owned_pod(f"d-1-new-{i}", new, {"app": "d-1-new"}, cpu="500m") for i in range(2)])
    c.run(2)
    c.apply(dict(old, spec=dict(old["spec"], replicas=0)))
    for i in range(2):
        c.delete("Pod", f"d-1-old-{i}")
    c.run(1)
    assert podgroup_of(c, old) is None
    assert [pg["metadata"]["name"] for pg in c.list("PodGroup", NS)] == [f"podgroup-{new['metadata']['uid']}"]
    assert c.get("ReplicaSet", "d-1-old") is not None  # kept as history: only its PodGroup went
    assert c.errors == []


def test_statefulset_scaled_to_zero_loses_its_podgroup() -> None:
    """addStatefulSet: spec.replicas 0 deletes podgroup-<StatefulSet uid>; scaled up again, its
    new pod gets a new one."""
    c = volcanic.Cluster()
    c.apply(node("n1"))
    sts = c.apply(replicaset("web", 1, "web", kind="StatefulSet"))
    c.apply(owned_pod("web-0", sts, {"app": "web"}))
    c.run(1)
    assert podgroup_of(c, sts) is not None
    c.apply(dict(sts, spec=dict(sts["spec"], replicas=0)))
    c.delete("Pod", "web-0")
    c.run(0)
    assert podgroup_of(c, sts) is None
    c.apply(dict(sts, spec=dict(sts["spec"], replicas=1)))
    c.apply(owned_pod("web-0", sts, {"app": "web"}))
    c.run(1)
    assert podgroup_of(c, sts) is not None
    assert c.get("Pod", "web-0")["status"]["phase"] == "Running"
    assert c.errors == []


def test_podgroup_arriving_after_its_replicaset_went_to_zero_is_deleted() -> None:
    """A PodGroup created while its ReplicaSet was being scaled to 0 (the create still on its
    way when the ReplicaSet's update was handled) is deleted once it is seen, not left to
    reserve its queue's resources."""
    h = Harness(PodGroupController)
    rs = h.store.create(replicaset("rs", 0, "a", ns="ns"))
    h.settle()
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": rs["metadata"]["uid"],
           "controller": True}
    h.store.create({"kind": "PodGroup", "metadata": {"name": f"podgroup-{rs['metadata']['uid']}", "namespace": "ns",
                                                    "ownerReferences": [ref]}, "spec": {"minMember": 1}})
    other = dict(ref, name="other", uid="other-uid")  # another owner's PodGroup stays
    h.store.create({"kind": "PodGroup", "metadata": {"name": "podgroup-other-uid", "namespace": "ns",
                                                    "ownerReferences": [other]}, "spec": {"minMember": 1}})
    h.settle()
    assert [pg["metadata"]["name"] for pg in h.store.list("PodGroup", "ns")] == ["podgroup-other-uid"]
    assert h.runner.errors == []


class _WithoutReplicaSets:
    """The informers, before the ReplicaSets' watch has brought anything."""

    def __init__(self, informers: Any) -> None:
        self.informers = informers

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        return None if kind == "ReplicaSet" else self.informers.get(kind, name, namespace)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.informers, name)


def test_a_pod_ahead_of_its_replicaset_in_the_cache_reads_its_min_member_from_the_api_server() -> None:
    """getAnnotationsFromUpperRes GETs the owner: a Deployment's pod whose ReplicaSet has not
    reached the cache yet (another watch) still gets the ReplicaSet's group-min-member (the
    dev cluster's e2e once made minMember 1 here)."""
    h = Harness(PodGroupController)
    h.ctx.lister = _WithoutReplicaSets(h.informers)
    rs = h.store.create(replicaset("rs", 3, "a", ns="ns", annotations={MIN_MEMBER: "3"}))
    h.store.create(owned_pod("rs-0", rs, {"app": "a"}, ns="ns"))
    h.settle()
    [pg] = h.store.list("PodGroup", "ns")
    assert pg["spec"]["minMember"] == 3
    assert h.runner.errors == []


def test_replicaset_update_rebuilds_its_podgroup_from_a_new_pod() -> None:
    """addReplicaSet with replicas > 0 (createOrUpdateNormalPodPG): the first pod its selector
    selects, when it has no group yet, rebuilds the existing PodGroup, so a changed
    group-min-member annotation gives minMember and minResources for that many pods."""
    h = Harness(PodGroupController)
    rs = h.store.create(replicaset("rs", 2, "a", ns="ns", annotations={MIN_MEMBER: "1"}))
    h.store.create(owned_pod("p-2", rs, {"app": "a"}, ns="ns"))
    h.settle()
    pg_name = f"podgroup-{rs['metadata']['uid']}"
    assert h.store.get("PodGroup", pg_name, "ns")["spec"]["minMember"] == 1
    rs = h.store.update(dict(h.store.get("ReplicaSet", "rs", "ns"),
                             metadata=dict(rs["metadata"], annotations={MIN_MEMBER: "2", "volcano.sh/x": "y"})))
    h.store.create(owned_pod("p-1", rs, {"app": "a"}, ns="ns"))  # sorts before p-2, which has its group
    h.store.create(owned_pod("q-0", rs, {"app": "other"}, ns="ns", cpu="3"))  # not selected
    h.settle()
    pg = h.store.get("PodGroup", pg_name, "ns")
    assert pg["spec"]["minMember"] == 2
    assert pg["spec"]["minResources"]["cpu"] == "2"
    assert pg["metadata"]["annotations"] == {"volcano.sh/x": "y"}
    assert h.store.get("Pod", "p-1", "ns")["metadata"]["annotations"][GROUP] == pg_name
    assert h.runner.errors == []


def test_statefulset_selects_pods_of_its_update_revision() -> None:
    """addStatefulSet: the pod looked at must also carry controller-revision-hash =
    status.updateRevision; a pod of an older revision is not the one the PodGroup is rebuilt from."""
    h = Harness(PodGroupController)
    sts = h.store.create(replicaset("web", 1, "web", ns="ns", kind="StatefulSet", annotations={MIN_MEMBER: "1"}))
    h.store.create(owned_pod("web-9", sts, {"app": "web", "controller-revision-hash": "r1"}, ns="ns"))
    h.settle()
    pg_name = f"podgroup-{sts['metadata']['uid']}"
    sts = h.store.update(dict(h.store.get("StatefulSet", "web", "ns"),
                              metadata=dict(sts["metadata"], annotations={MIN_MEMBER: "3"})))
    h.store.update_status(dict(sts, status={"updateRevision": "r2"}))
    h.store.create(owned_pod("web-0", sts, {"app": "web", "controller-revision-hash": "r1"}, ns="ns", cpu="2"))
    h.store.create(owned_pod("web-1", sts, {"app": "web", "controller-revision-hash": "r2"}, ns="ns"))
    h.settle()
    pg = h.store.get("PodGroup", pg_name, "ns")
    assert pg["spec"]["minMember"] == 3
    assert pg["spec"]["minResources"]["cpu"] == "3"  # web-1's 1 cpu x 3, not web-0's 2
    assert h.runner.errors == []


def test_malformed_replicas_is_an_error_naming_the_field() -> None:
    """A ReplicaSet whose spec.replicas is not an integer (the API server refuses it; the
    embedded store does not check apps objects) is reported naming the object and the field,
    and nothing is deleted."""
    h = Harness(PodGroupController)
    h.store.create(replicaset("rs", "two", "a", ns="ns"))
    h.settle()
    assert len(h.runner.errors) == 1
    assert "ReplicaSet ns/rs: spec.replicas: must be an integer, got 'two'" in h.runner.errors[0]


# --- Item 6: minResources -----------------------------------------------------------------

GPU_TASK = {"cpu": "1000m", "memory": "1000Mi", "nvidia.com/gpu": "1"}


def gpu_task(name: str, **extra: Any) -> dict:
    t = task(name, 1, min_available=1, **extra)
    t["template"]["spec"]["containers"][0]["resources"] = {"requests": dict(GPU_TASK), "limits": dict(GPU_TASK)}
    return t


def test_job_podgroup_min_resources_are_volcanos_quota_usage() -> None:
    """jobp "Generate PodGroup and valid minResource when creating job": two tasks of one pod
    requesting and limited to 1 cpu, 1000Mi and 1 GPU give exactly Volcano's ten names."""
    c = volcanic.Cluster()
    c.apply(job("job-name-podgroup", gpu_task("task-1"), gpu_task("task-2")))
    c.run(0)
    assert job_podgroup(c, "job-name-podgroup")["spec"]["minResources"] == {
        "count/pods": "2", "pods": "2", "cpu": "2", "requests.cpu": "2", "limits.cpu": "2",
        "memory": "2000Mi", "requests.memory": "2000Mi", "limits.memory": "2000Mi",
        "nvidia.com/gpu": "2", "requests.nvidia.com/gpu": "2"}
    assert c.errors == []


def test_job_min_resources_name_only_the_pods_counted() -> None:
    """calcPGMinResources (CalcFirstCountResources): with minAvailable 1 only the first task's
    pod counts; the second task's GPU is not written at all (CalTaskRequests of no replica
    adds no name), not written as "0"."""
    c = volcanic.Cluster()
    c.apply(job("j", task("cpu-only", 1), gpu_task("gpu"), min_available=1))
    c.run(0)
    min_res = job_podgroup(c, "j")["spec"]["minResources"]
    assert min_res == {"count/pods": "1", "pods": "1", "cpu": "1", "requests.cpu": "1",
                       "memory": "128Mi", "requests.memory": "128Mi"}
    assert c.errors == []


def gpu_node(name: str) -> dict:
    n = node(name)
    for field in ("allocatable", "capacity"):
        n["status"][field]["nvidia.com/gpu"] = "2"
    return n


def test_jobs_with_quota_names_in_min_resources_still_run() -> None:
    """The scheduler reads minResources as Volcano's NewResource does: count/pods, requests.*
    and limits.* are not resources any node or queue has, and must not keep the job out of
    its queue (the engine drops them; without that every generated PodGroup stays Pending)."""
    c = volcanic.Cluster()
    c.apply(gpu_node("n1"))
    c.apply(job("j", gpu_task("task-1"), gpu_task("task-2")))
    c.run(2)
    assert job_podgroup(c, "j")["status"]["phase"] == "Running"
    assert {p["status"]["phase"] for p in c.list("Pod", NS)} == {"Running"}
    assert c.errors == []


def test_engine_ignores_quota_names_of_a_podgroup_written_by_volcano() -> None:
    """A PodGroup as Volcano's controllers write it (count/pods, requests.*, limits.*) is
    enqueued and bound by one session under the default configuration, and under capacity
    with a queue whose capability names only cpu and memory."""
    mr = {"count/pods": "2", "pods": "2", "cpu": "2", "requests.cpu": "2", "limits.cpu": "2", "memory": "2Gi",
          "requests.memory": "2Gi", "limits.memory": "2Gi", "nvidia.com/gpu": "2", "requests.nvidia.com/gpu": "2"}
    pg = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
          "metadata": {"name": "pg", "namespace": NS, "uid": "pg-uid", "creationTimestamp": "2024-01-01T00:00:00Z"},
          "spec": {"minMember": 2, "minResources": mr, "queue": "q1"}, "status": {"phase": "Pending"}}
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q1"},
             "spec": {"weight": 1, "capability": {"cpu": "3", "memory": "4Gi", "nvidia.com/gpu": "2"}},
             "status": {"state": "Open"}}
    pods = [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"p{i}", "namespace": NS, "uid": f"p{i}", "annotations": {GROUP: "pg"},
                          "creationTimestamp": "2024-01-01T00:00:00Z"},
             "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "resources": {
                 "requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}}}]},
             "status": {"phase": "Pending"}} for i in range(2)]
    capacity = "actions: enqueue, allocate\ntiers:\n- plugins:\n  - name: gang\n  - name: capacity\n"
    for conf in (None, capacity):
        d = volcanic.schedule([gpu_node("n1"), queue, pg, *pods], conf=conf)
        assert sorted(d.binds) == [f"{NS}/p0", f"{NS}/p1"], (conf, d.unschedulable)
