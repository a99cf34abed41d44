"""Volume binding end to end on the embedded cluster: the scheduler chooses a pod's volumes
(kube's VolumeBinding, which Volcano's predicates wrap: Volcano v1.15.1
pkg/scheduler/capabilities/volumebinding/binder.go), writes the choice (a PV's claimRef, a
claim's selected-node annotation), and binds the pod only once the PV controller has bound its
claims (BindPodVolumes). Kubernetes' sig-scheduling spec this comes from (issue "What Volcano's
own e2e suites and a fault probe found", item 13): a pod whose local PV allows only node-3 was
put on node-2. Volcano's e2e "Dynamic Provisioning" (test/e2e/jobp/job_controlled_resource.go
creates a Job with a volumeClaim) on the cluster's default StorageClass.
"""

from __future__ import annotations

from job_helpers import NS, job, node, phase, pods, task
from test_volume_binding import claim, storage_class, volume
import volcanic


def cluster(*objects: dict) -> volcanic.Cluster:
    c = volcanic.Cluster()
    c.apply([node("node-1"), node("node-2"), node("node-3"), *objects])
    return c


def in_default(obj: dict) -> dict:
    """A test_volume_binding object, in the namespace of the Jobs here."""
    meta = dict(obj["metadata"], namespace=NS)
    meta.pop("uid", None)
    out = dict(obj, metadata=meta)
    if "claimRef" in obj.get("spec", {}):
        out["spec"] = dict(obj["spec"], claimRef=dict(obj["spec"]["claimRef"], namespace=NS))
    return out


def job_with_claim(name: str, claim_name: str, replicas: int = 1) -> dict:
    t = task("t", replicas)
    t["template"]["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}]
    return job(name, t)


def test_a_pod_goes_where_its_local_volume_is_and_binds_it():
    pv = volume("local-3", on="node-3")
    pv["status"] = {}
    c = cluster(storage_class("local"), pv, in_default(claim("data")))
    c.apply(job_with_claim("j", "data"))
    c.run(3)
    (p,) = pods(c).values()
    assert p["spec"]["nodeName"] == "node-3"
    assert p["status"]["phase"] == "Running"
    data = c.get("PersistentVolumeClaim", "data", NS)
    assert data["spec"]["volumeName"] == "local-3"
    assert data["status"]["phase"] == "Bound"
    ref = c.get("PersistentVolume", "local-3")["spec"]["claimRef"]
    assert (ref["namespace"], ref["name"], ref["uid"]) == (NS, "data", data["metadata"]["uid"])
    assert c.errors == []


def test_the_pod_is_bound_only_after_its_claim_is():
    """BindPodVolumes waits for the PV controller: the watch shows the claim Bound before the
    pod gets its node."""
    c = cluster(storage_class("local"), volume("local-2", on="node-2"), in_default(claim("data")))
    for o in c.list("PersistentVolume"):
        o.pop("status", None)
    watch = c.api.watch(("Pod", "PersistentVolumeClaim"))
    watch.drain()
    c.apply(job_with_claim("j", "data"))
    c.run(3)
    order = []
    for _, obj in watch.drain():
        if obj["kind"] == "PersistentVolumeClaim" and obj["spec"].get("volumeName") and "claim" not in order:
            order.append("claim")
        if obj["kind"] == "Pod" and obj["spec"].get("nodeName") and "pod" not in order:
            order.append("pod")
    assert order == ["claim", "pod"]


def test_a_job_volume_claim_is_provisioned_on_the_node_its_pod_goes_to():
    """Volcano's Job volumes (volumeClaim): the job controller makes the claim, the default
    StorageClass (WaitForFirstConsumer) provisions it for the node the scheduler chose."""
    t = task("t", 1)
    j = job("j", t)
    j["spec"]["volumes"] = [{"mountPath": "/data", "volumeClaim": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]
    c = cluster()
    c.apply(j)
    c.run(3)
    assert phase(c) == "Running"
    (p,) = pods(c).values()
    claims = c.list("PersistentVolumeClaim", NS)
    assert len(claims) == 1
    (data,) = claims
    assert data["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == p["spec"]["nodeName"]
    assert data["status"]["phase"] == "Bound"
    assert c.get("PersistentVolume", data["spec"]["volumeName"]) is not None
    assert c.errors == []


def test_a_gang_sharing_a_local_claim_lands_where_the_volume_is():
    c = cluster(storage_class("local"), volume("local-1", on="node-1"), in_default(claim("shared")))
    c.apply(job_with_claim("j", "shared", replicas=3))
    c.run(3)
    assert {p["spec"].get("nodeName") for p in pods(c).values()} == {"node-1"}
    assert phase(c) == "Running"


def test_a_pod_without_a_volume_it_can_use_stays_pending_and_says_why():
    c = cluster(storage_class("local"), volume("local-9", on="node-9"), in_default(claim("data")))
    c.apply(job_with_claim("j", "data"))
    c.run(3)
    (p,) = pods(c).values()
    assert not p["spec"].get("nodeName")
    (cond,) = [x for x in p["status"]["conditions"] if x["type"] == "PodScheduled"]
    assert "3 node(s) didn't find available persistent volumes to bind" in cond["message"]
