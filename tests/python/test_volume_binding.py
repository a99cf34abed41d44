"""Volume binding: the predicates plugin runs kube-scheduler's VolumeBinding as Volcano's
predicates wrap it (pkg/scheduler/plugins/predicates/predicates.go,
pkg/scheduler/capabilities/volumebinding/binder.go and volume_binding.go in Volcano v1.15.1),
and the session binds the claims of the pods it places (Decisions.volume_binds). Issue "What
Volcano's own e2e suites and a fault probe found" item 13: with Kubernetes' sig-scheduling specs
on the dev cluster, a pod whose PV allowed only node-3 was put on node-2.

Tested here on the engine; test_volume_binding_cluster.py drives the embedded cluster and
tests/e2e the dev cluster.
"""

from __future__ import annotations

from typing import Any

import pytest

from job_helpers import node
from test_topology_spread_filter import PREEMPTING, group
import volcanic

NOW = 1.7e9
NODES = [node("node-1", labels={"zone": "a"}), node("node-2", labels={"zone": "b"}),
         node("node-3", labels={"zone": "b"})]


def pod(name: str, pg: str, claims: list[str] = (), cpu: str = "1", node_name: str | None = None,
        priority: int = 0, ephemeral: str | None = None) -> dict:
    volumes: list[dict] = [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]
    if ephemeral:
        volumes.append({"name": ephemeral, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}})
    spec: dict[str, Any] = {"schedulerName": "volcano", "priority": priority, "volumes": volumes,
                            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "ns", "uid": "uid-" + name,
                                        "annotations": {"scheduling.k8s.io/group-name": pg}},
            "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}


def storage_class(name: str, provisioner: str = "kubernetes.io/no-provisioner", wait: bool = True,
                  zones: list[str] | None = None) -> dict:
    sc: dict[str, Any] = {"kind": "StorageClass", "apiVersion": "storage.k8s.io/v1", "metadata": {"name": name},
                          "provisioner": provisioner,
                          "volumeBindingMode": "WaitForFirstConsumer" if wait else "Immediate"}
    if zones:
        sc["allowedTopologies"] = [{"matchLabelExpressions": [{"key": "zone", "values": zones}]}]
    return sc


def claim(name: str, size: str = "1Gi", sc: str = "local", volume: str | None = None,
          selected_node: str | None = None, **meta: Any) -> dict:
    annotations: dict[str, str] = {}
    if volume:
        annotations["pv.kubernetes.io/bind-completed"] = "yes"
    if selected_node:
        annotations["volume.kubernetes.io/selected-node"] = selected_node
    spec: dict[str, Any] = {"storageClassName": sc, "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": size}}}
    if volume:
        spec["volumeName"] = volume
    return {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
            "metadata": {"name": name, "namespace": "ns", "uid": "uid-" + name, "annotations": annotations, **meta},
            "spec": spec, "status": {"phase": "Bound" if volume else "Pending"}}


def volume(name: str, on: str | None, size: str = "10Gi", sc: str = "local", claim_ref: str | None = None) -> dict:
    spec: dict[str, Any] = {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                            "storageClassName": sc}
    if on:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [on]}]}]}}
    if claim_ref:
        spec["claimRef"] = {"namespace": "ns", "name": claim_ref, "uid": "uid-" + claim_ref}
    return {"kind": "PersistentVolume", "apiVersion": "v1", "metadata": {"name": name}, "spec": spec,
            "status": {"phase": "Bound" if claim_ref else "Available"}}


def schedule(*objects: dict, conf: str | None = None) -> volcanic.Decisions:
    return volcanic.schedule([*NODES, *objects], conf, now=NOW)


def test_a_bound_claim_keeps_its_pod_on_the_nodes_its_volume_allows():
    """sig-scheduling's local PV spec: without the filter the pod took the first node."""
    d = schedule(storage_class("local"), volume("pv-3", on="node-3", claim_ref="data"),
                 claim("data", volume="pv-3"), group("g"), pod("p", "g", ["data"]))
    assert d.binds == {"ns/p": "node-3"}
    assert d.volume_binds == {}  # bound already: nothing to bind


def test_a_volume_no_node_offers_is_unresolvable_with_kubes_reason():
    d = schedule(storage_class("local"), volume("pv-9", on="node-9", claim_ref="data"),
                 claim("data", volume="pv-9"), group("g"), pod("p", "g", ["data"]))
    assert d.binds == {}
    assert "3 node(s) didn't match PersistentVolume's node affinity" in d.unschedulable["ns/p"]


@pytest.mark.parametrize("objects, reason", [
    ([], 'persistentvolumeclaim "data" not found'),
    ([claim("data", sc="fast")], 'storageclass.storage.k8s.io "fast" not found'),
    ([storage_class("fast", wait=False), claim("data", sc="fast")], "pod has unbound immediate PersistentVolumeClaims"),
    ([storage_class("local"), claim("data", deletionTimestamp="2023-11-14T00:00:00Z")],
     'persistentvolumeclaim "data" is being deleted'),
    ([storage_class("local"), volume("pv-1", on="node-1", claim_ref="data"),
      {**claim("data", volume="pv-1"), "status": {"phase": "Lost"}}],
     'persistentvolumeclaim "data" bound to non-existent persistentvolume "pv-1"'),
])
def test_a_claim_that_cannot_be_used_keeps_the_pod_off_every_node(objects, reason):
    """kube's PreFilter (volume_binding.go podHasPVCs, GetPodVolumeClaims): the same reason for all nodes."""
    d = schedule(*objects, group("g"), pod("p", "g", ["data"]))
    assert d.binds == {}
    assert f"3 {reason}" in d.unschedulable["ns/p"]


def test_an_ephemeral_volume_waits_for_its_claim_and_its_owner():
    d = schedule(storage_class("local"), group("g"), pod("p", "g", ephemeral="scratch"))
    assert 'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"' in \
        d.unschedulable["ns/p"]
    stranger = claim("p-scratch", ownerReferences=[{"apiVersion": "v1", "kind": "Pod", "name": "q",
                                                    "uid": "uid-q", "controller": True}])
    d = schedule(storage_class("local"), stranger, group("g"), pod("p", "g", ephemeral="scratch"))
    assert "PVC ns/p-scratch was not created for pod ns/p (pod is not owner)" in d.unschedulable["ns/p"]


def test_a_delayed_claim_takes_the_smallest_matching_volume_and_its_node():
    """findMatchingVolumes on a node: node-3's 10Gi and 5Gi both hold 4Gi and the smaller wins;
    node-1's 1Gi is too small."""
    d = schedule(storage_class("local"), volume("pv-3-big", on="node-3"), volume("pv-3", on="node-3", size="5Gi"),
                 volume("pv-small", on="node-1", size="1Gi"), claim("data", size="4Gi"),
                 group("g"), pod("p", "g", ["data"]))
    assert d.binds == {"ns/p": "node-3"}
    assert d.volume_binds == {"ns/p": {"ns/data": "pv-3"}}
    assert d.volume_bind_timeout == 600  # Volcano's default volumebinding.bindTimeoutSeconds


def test_a_volume_chosen_for_one_pod_is_not_offered_to_the_next():
    """One local PV, two pods with a claim each, no provisioner: the second finds none."""
    d = schedule(storage_class("local"), volume("pv-2", on="node-2"), claim("a"), claim("b"),
                 group("ga"), group("gb"), pod("pa", "ga", ["a"]), pod("pb", "gb", ["b"]))
    assert d.binds == {"ns/pa": "node-2"}
    assert d.volume_binds == {"ns/pa": {"ns/a": "pv-2"}}
    assert "3 node(s) didn't find available persistent volumes to bind" in d.unschedulable["ns/pb"]


def test_a_claim_is_provisioned_only_where_its_class_allows():
    d = schedule(storage_class("zonal", provisioner="example.com/disk", zones=["b"]),
                 claim("data", sc="zonal"), group("g"), pod("p", "g", ["data"]))
    assert d.binds["ns/p"] in ("node-2", "node-3")
    assert d.volume_binds == {"ns/p": {"ns/data": None}}


def test_a_claim_being_provisioned_pins_its_pod_to_the_selected_node():
    d = schedule(storage_class("zonal", provisioner="example.com/disk"), claim("data", sc="zonal",
                                                                              selected_node="node-2"),
                 group("g"), pod("p", "g", ["data"]))
    assert d.binds == {"ns/p": "node-2"}


def test_pods_sharing_a_claim_share_its_volume():
    """The gang's second pod finds the volume the first one took, bound to their claim."""
    d = schedule(storage_class("local"), volume("pv-3", on="node-3"), claim("shared"),
                 group("g", min_member=2), pod("p1", "g", ["shared"]), pod("p2", "g", ["shared"]))
    assert d.binds == {"ns/p1": "node-3", "ns/p2": "node-3"}
    assert d.volume_binds == {"ns/p1": {"ns/shared": "pv-3"}, "ns/p2": {"ns/shared": "pv-3"}}


def predicates_with(arguments: str) -> str:
    return f"""
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: gang
  - name: predicates
    arguments: {{{arguments}}}
"""


def test_volume_binding_can_be_switched_off():
    d = schedule(group("g"), pod("p", "g", ["missing"]), conf=predicates_with("predicate.VolumeBindingEnable: false"))
    assert d.binds == {"ns/p": "node-1"}
    assert d.volume_binds == {}


def test_the_timeout_is_volcanos_argument():
    conf = predicates_with("volumebinding.bindTimeoutSeconds: 30, volumebinding.weight: 2")
    d = schedule(storage_class("local"), volume("pv-1", on="node-1"), claim("data"), group("g"),
                 pod("p", "g", ["data"]), conf=conf)
    assert d.volume_binds == {"ns/p": {"ns/data": "pv-1"}}
    assert d.volume_bind_timeout == 30


def test_a_chosen_volume_stays_taken_until_the_api_says_or_the_bind_is_forgotten():
    """kube's assume cache: the next session does not offer the PV the last one chose, before
    its claimRef comes back; a failed bind (forget) gives it back."""
    s = volcanic.Scheduler()
    for o in [*NODES, storage_class("local"), volume("pv-2", on="node-2"), claim("a"), claim("b"),
              group("ga"), pod("pa", "ga", ["a"])]:
        s.upsert(o)
    assert s.run_once(NOW).volume_binds == {"ns/pa": {"ns/a": "pv-2"}}
    s.upsert(group("gb"))
    s.upsert(pod("pb", "gb", ["b"]))
    second = s.run_once(NOW + 1)
    assert second.binds == {}
    assert "didn't find available persistent volumes to bind" in second.unschedulable["ns/pb"]
    s.forget("ns/pa")
    s.delete("Pod", "pa", "ns")
    assert s.run_once(NOW + 2).volume_binds == {"ns/pb": {"ns/b": "pv-2"}}


def test_the_volumes_echo_replaces_what_was_assumed():
    s = volcanic.Scheduler()
    for o in [*NODES, storage_class("local"), volume("pv-2", on="node-2"), claim("a"), group("ga"),
              pod("pa", "ga", ["a"])]:
        s.upsert(o)
    s.run_once(NOW)
    assert s.upsert(volume("pv-2", on="node-2", claim_ref="a"))  # the claimRef written: a change
    s.forget("ns/pa")  # a later failure of the pod's bind does not free a written claimRef
    s.upsert(claim("b"))
    s.upsert(group("gb"))
    s.upsert(pod("pb", "gb", ["b"]))
    d = s.run_once(NOW + 1)
    assert "ns/pb" not in d.binds


def test_preemption_chooses_victims_only_where_the_volume_can_go():
    """Both nodes are full; only node-2 holds the preemptor's volume, so the victim is there."""
    priority = [{"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
                {"kind": "PriorityClass", "metadata": {"name": "low"}, "value": 1}]
    nodes = [node("node-1", cpu="2"), node("node-2", cpu="2")]
    objects = priority + nodes + [
        storage_class("local"), volume("pv-2", on="node-2", claim_ref="data"), claim("data", volume="pv-2"),
        group("low", phase="Running", priority_class="low"), group("high", priority_class="high"),
        pod("l1", "low", cpu="2", node_name="node-1", priority=1),
        pod("l2", "low", cpu="2", node_name="node-2", priority=1),
        pod("p", "high", ["data"], cpu="2", priority=1000)]
    d = volcanic.schedule(objects, PREEMPTING, now=NOW)
    assert d.evictions == ["ns/l2"]
    assert d.pipelined == {"ns/p": "node-2"}


def test_a_malformed_claim_is_refused_with_its_field():
    s = volcanic.Scheduler()
    bad = claim("data")
    bad["spec"]["resources"]["requests"]["storage"] = "lots"
    with pytest.raises(ValueError, match=r"PersistentVolumeClaim ns/data: spec\.resources\.requests\.storage"):
        s.upsert(bad)
    bad_pv = volume("pv", on=None)
    bad_pv["spec"]["accessModes"] = ["ReadWriteSometimes"]
    with pytest.raises(ValueError, match=r"PersistentVolume pv: spec\.accessModes\[0\]: unknown access mode"):
        s.upsert(bad_pv)
