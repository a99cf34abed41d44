"""The PodGroup controller and the garbage collector on a MemoryStore with a virtual clock
(reference §2.5, §2.7); the queue controller (§2.6) is tested in test_controllers_queue.py."""

from __future__ import annotations

import pytest

from controller_helpers import Harness
from volcanic.cluster.store import MemoryStore
from volcanic.controllers.gc import GarbageCollector
from volcanic.controllers.podgroup import PodGroupController, min_resources, pod_quota_usage
from volcanic.controllers.queue import QueueController
from volcanic.errors import AdmissionError
from volcanic.kube.clock import rfc3339
from volcanic.kube.quantity import format_nanos, format_quantity, parse_quantity

# ---------------------------------------------------------------------------------------------
# PodGroup controller (§2.5)

def make_pod(name, ns="ns", scheduler="volcano", annotations=None, labels=None, owners=None, containers=None,
             **spec):
    meta = {"name": name, "namespace": ns}
    if annotations:
        meta["annotations"] = annotations
    if labels:
        meta["labels"] = labels
    if owners:
        meta["ownerReferences"] = owners
    return {"kind": "Pod", "metadata": meta,
            "spec": {"schedulerName": scheduler,
                     "containers": containers or [{"name": "c", "resources": {"requests": {"cpu": "500m",
                                                                                        "memory": "1Gi"}}}],
                     **spec}}


def test_bare_pod_gets_its_own_podgroup():
    """§2.5: podgroup-<pod uid>, minMember 1, minResources = requests, queue default, status
    Pending, a controller ownerReference to the pod; the pod is annotated with its name."""
    h = Harness(PodGroupController)
    pod = h.store.create(make_pod("p1"))
    h.settle()
    uid = pod["metadata"]["uid"]
    pg = h.store.get("PodGroup", f"podgroup-{uid}", "ns")
    assert pg["spec"] == {"minMember": 1, "queue": "default", "minResources": {
        "count/pods": "1", "pods": "1", "cpu": "500m", "requests.cpu": "500m", "memory": "1Gi", "requests.memory": "1Gi"}}
    assert pg["status"] == {"phase": "Pending"}
    assert pg["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "p1", "uid": uid,
                                                  "controller": True, "blockOwnerDeletion": True}]
    assert "annotations" not in pg["metadata"] and "labels" not in pg["metadata"]
    assert h.store.get("Pod", "p1", "ns")["metadata"]["annotations"] == {
        "scheduling.k8s.io/group-name": f"podgroup-{uid}"}
    # The PodGroup goes with its pod.
    h.store.delete("Pod", "p1", "ns")
    assert h.store.list("PodGroup") == []
    assert h.runner.errors == []


def test_owned_pods_share_the_owner_podgroup():
    """§2.5: podgroup-<controller owner uid> with the pod's ownerReferences; a second pod of
    the same owner joins it."""
    h = Harness(PodGroupController)
    owners = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid", "controller": True}]
    h.store.create(make_pod("a", owners=owners))
    h.store.create(make_pod("b", owners=owners))
    h.settle()
    [pg] = h.store.list("PodGroup")
    assert pg["metadata"]["name"] == "podgroup-rs-uid"
    assert pg["metadata"]["ownerReferences"] == owners
    for name in ("a", "b"):
        assert h.store.get("Pod", name, "ns")["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == \
            "podgroup-rs-uid"
    assert h.runner.errors == []


def test_pod_with_only_non_controller_owners_gets_its_own_podgroup():
    """§2.5 (GeneratePodgroupName, newPGOwnerReferences): only a controller owner counts."""
    h = Harness(PodGroupController)
    owners = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "cm-uid"}]
    pod = h.store.create(make_pod("a", owners=owners))
    h.settle()
    pg = h.store.get("PodGroup", f"podgroup-{pod['metadata']['uid']}", "ns")
    assert pg["metadata"]["ownerReferences"][0]["kind"] == "Pod"
    assert h.runner.errors == []


def test_queue_priority_class_annotations_labels_and_topology_are_copied():
    """§2.5: queue from the pod annotation, priorityClassName from the pod, preemptable,
    cooldown-time, revocable-zone and jdb-* annotations (jdb-min-available wins),
    preemptable/cooldown-time labels, network-topology annotations as spec.networkTopology."""
    h = Harness(PodGroupController)
    annotations = {"scheduling.volcano.sh/queue-name": "q1", "volcano.sh/preemptable": "false",
                   "volcano.sh/cooldown-time": "60s", "volcano.sh/revocable-zone": "*",
                   "volcano.sh/jdb-min-available": "1", "volcano.sh/jdb-max-unavailable": "2",
                   "volcano.sh/other": "not copied", "volcano.sh/network-topology-highest-tier": "2"}
    labels = {"volcano.sh/preemptable": "true", "app": "x"}
    pod = h.store.create(make_pod("p1", annotations=annotations, labels=labels, priorityClassName="high"))
    h.settle()
    pg = h.store.get("PodGroup", f"podgroup-{pod['metadata']['uid']}", "ns")
    assert pg["spec"]["queue"] == "q1"
    assert pg["spec"]["priorityClassName"] == "high"
    assert pg["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 2}
    assert pg["metadata"]["annotations"] == {
        "volcano.sh/preemptable": "false", "volcano.sh/cooldown-time": "60s", "volcano.sh/revocable-zone": "*",
        "volcano.sh/jdb-min-available": "1"}
    assert pg["metadata"]["labels"] == {"volcano.sh/preemptable": "true"}
    assert h.runner.errors == []


def test_pods_of_other_schedulers_or_with_a_group_are_ignored():
    """§2.5: only pods of the configured scheduler names without a group-name annotation."""
    h = Harness(PodGroupController, scheduler_names=("volcano", "other-volcano"))
    h.store.create(make_pod("default-sched", scheduler="default-scheduler"))
    h.store.create(make_pod("grouped", annotations={"scheduling.k8s.io/group-name": "pg1"}))
    h.store.create(make_pod("second", scheduler="other-volcano"))
    h.settle()
    pgs = h.store.list("PodGroup")
    assert len(pgs) == 1 and pgs[0]["metadata"]["ownerReferences"][0]["name"] == "second"
    assert "annotations" not in h.store.get("Pod", "default-sched", "ns")["metadata"]
    assert h.runner.errors == []


class DenyingStore(MemoryStore):
    """A store whose admission denies PodGroups in a queue that does not exist (§3.4)."""

    def create(self, obj):
        queue = (obj.get("spec") or {}).get("queue")
        if obj.get("kind") == "PodGroup" and self.get("Queue", queue) is None:
            raise AdmissionError(f"unable to find job queue: {queue}", kind="PodGroup")
        return super().create(obj)


def test_denied_podgroup_is_retried_with_back_off():
    """§2.5: a failed PodGroup create (here an admission denial) is requeued with the rate
    limiter's back-off until it succeeds; the pod is annotated only then."""
    h = Harness(PodGroupController, store_class=DenyingStore)
    pod = h.store.create(make_pod("p1", annotations={"scheduling.volcano.sh/queue-name": "later"}))
    h.run(5)
    assert h.store.list("PodGroup") == []
    assert "scheduling.k8s.io/group-name" not in h.store.get("Pod", "p1", "ns")["metadata"]["annotations"]
    h.queue("later")
    h.run(30)
    assert h.store.get("PodGroup", f"podgroup-{pod['metadata']['uid']}", "ns")["spec"]["queue"] == "later"
    assert h.runner.errors == []


def test_denied_podgroup_back_off_is_capped_and_never_overflows():
    """§2.5: the rate limiter's back-off (5 ms doubling, at most 1000 s) goes on for as long
    as the denial lasts; a thousand failures and more must neither overflow (2**n as a float)
    nor stop the retries."""
    h = Harness(PodGroupController, store_class=DenyingStore)
    pod = h.store.create(make_pod("p1", annotations={"scheduling.volcano.sh/queue-name": "later"}))
    h.run(1_100_000)  # > 1024 retries at the 1000 s cap
    assert h.store.list("PodGroup") == []
    assert h.runner.errors == []
    h.queue("later")
    h.run(1000)
    assert h.store.get("PodGroup", f"podgroup-{pod['metadata']['uid']}", "ns") is not None
    assert h.runner.errors == []


def test_controllers_have_no_unused_kinds_attribute():
    """The runtime's Controller has no `kinds` (the informers watch every kind): the
    controllers do not declare one nobody reads."""
    for controller in (QueueController, PodGroupController, GarbageCollector):
        assert not hasattr(controller, "kinds")

def test_min_resources_follow_kubernetes_pod_quota_usage():
    """§2.5 minResources = the pod's quota usage x minMember (util.CalTaskRequests over
    util.GetPodQuotaUsage, k8s quota/v1/evaluator/core/pods.go PodUsageFunc): requests by
    Kubernetes' rule (containers summed, a missing request defaulted from its limit, at least
    the largest init container, sidecars added, overhead added) under the plain and
    `requests.` names, limits likewise under `limits.` (overhead only where a limit is set),
    `pods` and `count/pods`, an extended resource under both names and no `limits.` one,
    untracked resources dropped; only `count/pods` for a terminal pod (Volcano spec jobp
    "Generate PodGroup and valid minResource when creating job")."""
    pod = make_pod("p", containers=[
        {"name": "a", "resources": {"requests": {"cpu": "250m", "memory": "512Mi"},
                                    "limits": {"nvidia.com/gpu": "1", "memory": "1Gi"}}},
        {"name": "b", "resources": {"limits": {"cpu": "1", "memory": "512Mi"}, "requests": {"pods": "1"}}},
    ], initContainers=[
        {"name": "init", "resources": {"requests": {"cpu": "2", "memory": "100Mi"}}},
        {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
    ], overhead={"memory": "1Mi"})
    # requests: cpu max(250m + 1 + 100m, 2) = 2; memory 512Mi + 512Mi + 1Mi (the init's 100Mi is less)
    # limits: cpu 1; memory 1Gi + 512Mi + 1Mi of overhead
    assert {k: format_nanos(milli * 1_000_000, fmt) for k, (milli, fmt) in pod_quota_usage(pod).items()} == {
        "count/pods": "1", "pods": "1", "cpu": "2", "requests.cpu": "2", "limits.cpu": "1",
        "memory": "1025Mi", "requests.memory": "1025Mi", "limits.memory": "1537Mi",
        "nvidia.com/gpu": "1", "requests.nvidia.com/gpu": "1"}
    assert min_resources(pod, 3) == {
        "count/pods": "3", "pods": "3", "cpu": "6", "requests.cpu": "6", "limits.cpu": "3",
        "memory": "3075Mi", "requests.memory": "3075Mi", "limits.memory": "4611Mi",
        "nvidia.com/gpu": "3", "requests.nvidia.com/gpu": "3"}
    assert min_resources(pod, 0) == {}
    assert pod_quota_usage(dict(pod, status={"phase": "Succeeded"})) == {"count/pods": (1000, "DecimalSI")}


def test_quota_usage_names_hugepages_and_ephemeral_storage():
    """podComputeUsageHelper: hugepages-* under its own and its `requests.` name (no limits
    name), ephemeral-storage as cpu and memory are; a kubernetes.io/ resource is not quota's."""
    pod = make_pod("p", containers=[{"name": "a", "resources": {
        "requests": {"hugepages-2Mi": "4Mi", "ephemeral-storage": "1Gi", "example.kubernetes.io/x": "1"},
        "limits": {"hugepages-2Mi": "4Mi", "ephemeral-storage": "2Gi"}}}])
    assert min_resources(pod, 1) == {
        "count/pods": "1", "pods": "1", "hugepages-2Mi": "4Mi", "requests.hugepages-2Mi": "4Mi",
        "ephemeral-storage": "1Gi", "requests.ephemeral-storage": "1Gi", "limits.ephemeral-storage": "2Gi"}


def test_quantity_canonical_form():
    """§2.5 minResources are Kubernetes quantities in their canonical form."""
    cases = {"0.5": "500m", "1500": "1500", "2000": "2k", "1.5Gi": "1536Mi", "1024Ki": "1Mi",
             "100Ki": "100Ki", "1e3": "1e3", "0": "0", "512": "512", "1Mi": "1Mi", "1000M": "1G"}
    for text, canonical in cases.items():
        assert format_quantity(parse_quantity(text)) == canonical, text
    value, fmt = parse_quantity("512Mi")
    assert format_quantity((value * 2, fmt)) == "1Gi"
    with pytest.raises(ValueError):
        parse_quantity("1.5.3")


# ---------------------------------------------------------------------------------------------
# Garbage collector (§2.7)

def make_job(h, name, ttl=None, phase="Running", finished_at=None):
    spec = {"minAvailable": 1, "tasks": []}
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    job = h.store.create({"kind": "Job", "metadata": {"name": name, "namespace": "ns"}, "spec": spec})
    state = {"phase": phase}
    if finished_at is not None:
        state["lastTransitionTime"] = rfc3339(h.clock.start + finished_at)
    return h.store.update_status(dict(job, status={"state": state}))


def job_pod(h, job, name):
    owner = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": job["metadata"]["name"],
             "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    return h.store.create(make_pod(name, owners=[owner], annotations={"scheduling.k8s.io/group-name": "x"}))


def test_gc_deletes_finished_job_after_ttl_with_its_pods():
    """§2.7: expireAt = lastTransitionTime + TTL; requeued until then, then deleted (with
    its pods, by ownerReference cascade)."""
    h = Harness(GarbageCollector)
    h.run(10)
    job = make_job(h, "j1", ttl=100, phase="Completed", finished_at=10)
    job_pod(h, job, "j1-task-0")
    h.run(99)  # t = 109
    assert h.store.get("Job", "j1", "ns") is not None
    h.run(1)  # t = 110
    assert h.store.get("Job", "j1", "ns") is None
    assert h.store.list("Pod") == []
    assert h.runner.errors == []


@pytest.mark.parametrize("phase", ["Failed", "Terminated"])
def test_gc_deletes_failed_and_terminated_jobs(phase):
    """§2.7: Failed and Terminated count as finished; an already expired job goes at once."""
    h = Harness(GarbageCollector)
    h.run(50)
    make_job(h, "j1", ttl=0, phase=phase, finished_at=50)
    make_job(h, "j2", ttl=10, phase=phase, finished_at=0)
    h.settle()
    assert h.store.list("Job") == []
    assert h.runner.errors == []


def test_gc_keeps_running_jobs_and_jobs_without_ttl():
    """§2.7: only jobs with ttlSecondsAfterFinished and a finished phase are collected."""
    h = Harness(GarbageCollector)
    make_job(h, "running", ttl=1, phase="Running", finished_at=0)
    make_job(h, "no-ttl", phase="Completed", finished_at=0)
    make_job(h, "aborted", ttl=1, phase="Aborted", finished_at=0)
    h.run(1000)
    assert sorted(j["metadata"]["name"] for j in h.store.list("Job")) == ["aborted", "no-ttl", "running"]
    assert h.runner.errors == []


def test_gc_rechecks_the_latest_job_before_deleting():
    """§2.7: the job is re-read and re-checked; a job that restarted before its TTL expired
    is not deleted, and a longer TTL postpones the deletion."""
    h = Harness(GarbageCollector)
    make_job(h, "restarted", ttl=100, phase="Completed", finished_at=0)
    make_job(h, "longer", ttl=100, phase="Completed", finished_at=0)
    h.run(50)
    j = h.store.get("Job", "restarted", "ns")
    h.store.update_status(dict(j, status={"state": {"phase": "Running", "lastTransitionTime": rfc3339(h.clock.start + 50)}}))
    j = h.store.get("Job", "longer", "ns")
    h.store.update(dict(j, spec=dict(j["spec"], ttlSecondsAfterFinished=200)))
    h.run(100)  # t = 150
    assert sorted(j["metadata"]["name"] for j in h.store.list("Job")) == ["longer", "restarted"]
    h.run(50)  # t = 200
    assert [j["metadata"]["name"] for j in h.store.list("Job")] == ["restarted"]
    assert h.runner.errors == []


def test_settle_delivers_what_handlers_write():
    """Runner.settle runs until nothing is pending, the events of writes made by handlers
    themselves included: a handler that deletes a finished pod (as the trace replay's does)
    has its DELETED event delivered by the same settle, not by the next timer's."""
    from volcanic.kube.informers import Handler
    h = Harness()
    h.store.create(make_pod("p1"))
    h.settle()
    deleted = []
    h.informers.add_handler("Pod", Handler(
        on_update=lambda old, new: h.store.delete("Pod", "p1", "ns") if new["status"].get("phase") == "Succeeded"
        else None, on_delete=lambda pod: deleted.append(pod["metadata"]["name"])))
    pod = h.store.get("Pod", "p1", "ns")
    h.store.update_status(dict(pod, status={"phase": "Succeeded"}))
    h.settle()
    assert deleted == ["p1"] and h.informers.get("Pod", "p1", "ns") is None
