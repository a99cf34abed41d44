"""The embedded cluster's PersistentVolume controller (python/volcanic/controllers/volumes.py):
Kubernetes' pv_controller.go (pkg/controller/volume/persistentvolume/, kube v1.31) with an
external provisioner played in place. It completes what Volcano's scheduler starts through
kube-scheduler's VolumeBinding (volcano v1.15.1
pkg/scheduler/capabilities/volumebinding/binder.go: a claimRef on a PV, or the selected-node
annotation on a claim to provision), as Volcano's e2e "Volume Binding Test"
(test/e2e/schedulingbase/volume_binding.go) relies on: "One pod requesting one prebound PVC"
(no-provisioner class, WaitForFirstConsumer claims stay Pending until then) and "Dynamic
Provisioning: should provision storage using kind cluster's standard storage class".
Everything goes through volcanic.Cluster; the scheduler's part is written by hand here."""

from __future__ import annotations

import pytest

import volcanic

UID_PREFIX = "6f1c2a52-8d0e-8c5b-9a55-"
T0 = "2024-01-01T00:00:00Z"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def pv(name, size="5Gi", modes=("ReadWriteOnce",), cls="manual", policy="Retain", labels=None, **spec):
    meta = {"name": name}
    if labels:
        meta["labels"] = labels
    s = {"capacity": {"storage": size}, "accessModes": list(modes), "storageClassName": cls,
         "persistentVolumeReclaimPolicy": policy, "local": {"path": "/mnt/disk"}, **spec}
    if cls is None:
        del s["storageClassName"]
    if policy is None:
        del s["persistentVolumeReclaimPolicy"]
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": s}


def pvc(name, size="1Gi", modes=("ReadWriteOnce",), cls="manual", annotations=None, **spec):
    meta = {"name": name, "namespace": "ns"}
    if annotations:
        meta["annotations"] = annotations
    s = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}, **spec}
    if cls is not None:
        s["storageClassName"] = cls
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": s}


def storage_class(name, provisioner="kubernetes.io/no-provisioner", mode=None, default=False, **fields):
    meta = {"name": name}
    if default:
        meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    obj = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta,
           "provisioner": provisioner, **fields}
    if mode:
        obj["volumeBindingMode"] = mode
    return obj


def node(name, **labels):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def annotations(obj):
    """The annotations but kubectl's last-applied-configuration."""
    return {k: v for k, v in (obj["metadata"].get("annotations") or {}).items() if k != LAST_APPLIED}


def events(c, name, kind="PersistentVolumeClaim", ns="ns"):
    return [(e["type"], e["reason"], e["message"], e["source"]["component"]) for e in c.list("Event", ns)
            if e["involvedObject"]["name"] == name and e["involvedObject"]["kind"] == kind]


def ref_to(claim):
    meta = claim["metadata"]
    return {"kind": "PersistentVolumeClaim", "namespace": meta["namespace"], "name": meta["name"],
            "uid": meta["uid"], "apiVersion": "v1"}


def without_version(ref):
    return {k: v for k, v in ref.items() if k != "resourceVersion"}


@pytest.fixture
def c():
    cluster = volcanic.Cluster()
    cluster.apply(storage_class("manual"))  # Immediate (the API's default mode), no provisioner
    yield cluster
    assert cluster.errors == []


def assert_bound(c, claim_name, pv_name, by_controller_pv, by_controller_claim=True):
    """pv_controller.go bind(): the PV points at the claim and is Bound, the claim names the PV,
    carries bind-completed (what the scheduler's VolumeBinding waits for), and is Bound with the
    PV's capacity and access modes."""
    claim, volume = c.get("PersistentVolumeClaim", claim_name, "ns"), c.get("PersistentVolume", pv_name)
    assert without_version(volume["spec"]["claimRef"]) == ref_to(claim)
    assert volume["status"]["phase"] == "Bound"
    assert annotations(volume).get("pv.kubernetes.io/bound-by-controller") == ("yes" if by_controller_pv else None)
    assert claim["spec"]["volumeName"] == pv_name
    expected = {"pv.kubernetes.io/bind-completed": "yes"}
    if by_controller_claim:
        expected["pv.kubernetes.io/bound-by-controller"] = "yes"
    assert {k: v for k, v in annotations(claim).items() if k.startswith("pv.kubernetes.io/")} == expected
    assert claim["status"] == {"phase": "Bound", "accessModes": volume["spec"]["accessModes"],
                               "capacity": volume["spec"]["capacity"]}


# --------------------------------------------------------------------------------------------
# Kinds, and the default class

def test_default_storage_class_at_start():
    """The embedded cluster's default class: kind's `standard` (WaitForFirstConsumer, Delete),
    provisioned by the embedded cluster, without allowedTopologies (network-attached)."""
    c = volcanic.Cluster()
    sc = c.get("StorageClass", "standard")
    assert sc["apiVersion"] == "storage.k8s.io/v1"
    assert sc["metadata"]["annotations"] == {"storageclass.kubernetes.io/is-default-class": "true"}
    assert {k: v for k, v in sc.items() if k not in ("apiVersion", "kind", "metadata")} == {
        "provisioner": "volcanic.sh/embedded", "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer"}
    assert [s["metadata"]["name"] for s in c.list("StorageClass")] == ["standard"]
    assert c.list("PersistentVolume") == [] and c.list("PersistentVolumeClaim") == []


def test_claim_and_volume_status_is_a_subresource(c):
    """Kubernetes' PV and PVC have a status subresource: a status sent on create is dropped,
    and both start Pending (the API server's defaulting)."""
    volume = dict(pv("pv1", cls="other"), status={"phase": "Bound"})
    claim = dict(pvc("c1", cls="nothing-here"), status={"phase": "Bound", "capacity": {"storage": "1Ti"}})
    assert c.apply(volume)["status"] == {"phase": "Pending"}
    assert c.apply(claim)["status"] == {"phase": "Pending"}


# --------------------------------------------------------------------------------------------
# syncVolume

def test_unused_volume_becomes_available(c):
    """syncVolume: a PV without claimRef is Available (lastPhaseTransitionTime stamped, as the
    API server does on a phase change)."""
    c.apply(pv("pv1"))
    c.run(0)
    assert c.get("PersistentVolume", "pv1")["status"] == {"phase": "Available", "lastPhaseTransitionTime": T0}


def test_released_volume_whose_claim_ref_is_removed_is_available_again(c):
    """syncVolume: an admin re-offers a Released (Retain) PV by removing its claimRef."""
    c.apply([pv("pv1"), pvc("c1")])
    c.run(0)
    c.delete("PersistentVolumeClaim", "c1", "ns")
    c.run(10)
    volume = c.get("PersistentVolume", "pv1")
    assert volume["status"]["phase"] == "Released"
    del volume["spec"]["claimRef"]
    c.api.update(volume)  # kubectl edit (apply would keep a field it never set)
    c.run(0)
    assert c.get("PersistentVolume", "pv1")["status"] == {"phase": "Available",
                                                          "lastPhaseTransitionTime": "2024-01-01T00:00:10Z"}


# --------------------------------------------------------------------------------------------
# syncUnboundClaim: Immediate binding

def test_immediate_claim_binds_the_smallest_matching_volume(c):
    """findBestMatchForClaim: same class, capacity >= request, every requested access mode,
    the claim's volumeMode, not being deleted, Available; of those, the ones with the fewest
    access modes (kube's index.go searches its access-mode index from the smallest set), and
    of those the smallest."""
    c.apply([
        pv("other-class", "2Gi", cls="fast"),
        pv("too-small", "512Mi"),
        pv("read-only", "2Gi", modes=("ReadOnlyMany",)),
        pv("block", "2Gi", volumeMode="Block"),
        dict(pv("deleting", "2Gi"), metadata={"name": "deleting", "finalizers": ["kubernetes.io/pv-protection"]}),
        pv("big", "10Gi"),
        pv("right", "3Gi", modes=("ReadWriteOnce", "ReadOnlyMany")),
        pv("right-too", "4Gi"),
    ])
    c.delete("PersistentVolume", "deleting")  # held by its finalizer, with a deletionTimestamp
    c.run(0)
    c.apply(pvc("c1", "1500Mi"))
    c.run(0)
    assert_bound(c, "c1", "right-too", by_controller_pv=True)
    claim = c.get("PersistentVolumeClaim", "c1", "ns")
    assert claim["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "4Gi"}}
    assert c.get("PersistentVolume", "right-too")["spec"]["claimRef"]["resourceVersion"]  # reference.GetReference
    # Then the bigger volume with exactly the modes asked for, before the smaller one with more.
    c.apply([pvc("c2", "1500Mi"), pvc("c3", "1500Mi")])
    c.run(0)
    assert_bound(c, "c2", "big", by_controller_pv=True)
    assert_bound(c, "c3", "right", by_controller_pv=True)
    for other in ("other-class", "too-small", "read-only", "block"):
        assert "claimRef" not in c.get("PersistentVolume", other)["spec"]
        assert c.get("PersistentVolume", other)["status"]["phase"] == "Available"


def test_binding_writes_the_volume_before_the_claim(c):
    """bind(): PV spec, PV status, claim spec, claim status, in that order, so a watcher
    never sees a claim bound to a PV that does not point back."""
    c.apply(pv("pv1"))
    c.run(0)
    watch = c.api.watch(["PersistentVolume", "PersistentVolumeClaim"])
    watch.drain()
    c.apply(pvc("c1"))
    c.run(0)
    writes = [(o["kind"], "volumeName" in o["spec"] if o["kind"] == "PersistentVolumeClaim" else "claimRef" in o["spec"],
               o["status"]["phase"]) for event, o in watch.drain()]
    assert writes == [("PersistentVolumeClaim", False, "Pending"),    # the claim as applied
                      ("PersistentVolume", True, "Available"),         # claimRef
                      ("PersistentVolume", True, "Bound"),
                      ("PersistentVolumeClaim", True, "Pending"),      # volumeName, annotations
                      ("PersistentVolumeClaim", True, "Bound")]


def test_claim_selector_picks_volumes_by_label(c):
    """FindMatchingVolume: a claim's spec.selector (matchLabels and matchExpressions) must
    match the PV's labels."""
    c.apply([pv("small-ssd", "2Gi", labels={"disk": "ssd", "zone": "b"}),
             pv("hdd", "1Gi", labels={"disk": "hdd"}),
             pv("ssd", "3Gi", labels={"disk": "ssd", "zone": "a"})])
    c.run(0)
    c.apply(pvc("c1", selector={"matchLabels": {"disk": "ssd"},
                                "matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["b"]}]}))
    c.run(0)
    assert_bound(c, "c1", "ssd", by_controller_pv=True)


def test_claim_waits_for_a_volume_then_binds_the_one_created(c):
    """An Immediate claim with no volume and a no-provisioner class stays Pending
    (ProvisioningFailed: findProvisionablePlugin finds no kubernetes.io plugin of that name);
    a matching PV created later is bound (kube's periodic resync; here the PV's event)."""
    c.apply(pvc("c1"))
    c.run(0)
    assert c.get("PersistentVolumeClaim", "c1", "ns")["status"] == {"phase": "Pending"}
    assert events(c, "c1") == [("Warning", "ProvisioningFailed",
                                "no volume plugin matched name: kubernetes.io/no-provisioner",
                                "persistentvolume-controller")]
    c.apply(pv("pv1"))
    c.run(0)
    assert_bound(c, "c1", "pv1", by_controller_pv=True)


def test_claim_without_class_and_no_default_class(c):
    """No default class: a claim without class matches PVs without class; with none, a
    FailedBinding Event and Pending."""
    c.delete("StorageClass", "standard")
    c.apply(pvc("c1", cls=None))
    c.run(0)
    assert "storageClassName" not in c.get("PersistentVolumeClaim", "c1", "ns")["spec"]
    assert events(c, "c1") == [("Normal", "FailedBinding",
                                "no persistent volumes available for this claim and no storage class is set",
                                "persistentvolume-controller")]
    c.apply([pv("classed", "1Gi"), pv("classless", "2Gi", cls=None)])
    c.run(0)
    assert_bound(c, "c1", "classless", by_controller_pv=True)


def test_claim_naming_a_volume(c):
    """syncUnboundClaim with spec.volumeName: the named PV is bound when it satisfies the claim
    (bound-by-controller on the PV only: the user chose the volume), else VolumeMismatch."""
    c.apply([pv("small", "512Mi"), pv("named", "1Gi")])
    c.run(0)
    c.apply([pvc("c1", volumeName="named"), pvc("c2", volumeName="small"), pvc("c3", volumeName="missing")])
    c.run(0)
    assert_bound(c, "c1", "named", by_controller_pv=True, by_controller_claim=False)
    assert c.get("PersistentVolumeClaim", "c2", "ns")["status"] == {"phase": "Pending"}
    assert events(c, "c2") == [("Warning", "VolumeMismatch",
                                'Cannot bind to requested volume "small": requested PV is too small',
                                "persistentvolume-controller")]
    assert c.get("PersistentVolumeClaim", "c3", "ns")["status"] == {"phase": "Pending"}
    assert "claimRef" not in c.get("PersistentVolume", "small")["spec"]


# --------------------------------------------------------------------------------------------
# Pre-bound volumes: a user's claimRef, or the scheduler's for WaitForFirstConsumer

def test_wait_for_first_consumer_claim_stays_pending_with_a_matching_volume(c):
    """Volcano e2e "Volume Binding Test" (volume_binding.go createLocalPVCsPVs): with a
    WaitForFirstConsumer no-provisioner class, the claim is not bound by the controller."""
    c.apply([storage_class("local", mode="WaitForFirstConsumer"), pv("pv1", cls="local"), pvc("c1", cls="local")])
    c.run(30)
    assert c.get("PersistentVolumeClaim", "c1", "ns")["status"] == {"phase": "Pending"}
    assert "claimRef" not in c.get("PersistentVolume", "pv1")["spec"]
    assert events(c, "c1")[0] == ("Normal", "WaitForFirstConsumer",
                                  "waiting for first consumer to be created before binding",
                                  "persistentvolume-controller")


def test_scheduler_claim_ref_completes_the_binding(c):
    """binder.go (Volcano's VolumeBinding) writes the PV's claimRef with the claim's uid (and
    bound-by-controller, GetBindVolumeToClaim); syncVolume enqueues the claim and syncClaim
    finishes the binding: the claim is then fully bound (volumeName and bind-completed)."""
    c.apply([storage_class("local", mode="WaitForFirstConsumer"), pv("pv1", cls="local"), pvc("c1", cls="local")])
    c.run(0)
    claim = c.get("PersistentVolumeClaim", "c1", "ns")
    volume = c.get("PersistentVolume", "pv1")
    volume["spec"]["claimRef"] = ref_to(claim)
    volume["metadata"].setdefault("annotations", {})["pv.kubernetes.io/bound-by-controller"] = "yes"
    c.api.update(volume)
    c.run(0)
    assert_bound(c, "c1", "pv1", by_controller_pv=True)
    assert c.get("PersistentVolume", "pv1")["spec"]["claimRef"] == ref_to(claim)  # kept as written


def test_user_pre_bound_volume_without_uid(c):
    """A PV created with a claimRef by name only is Available, reserved for that claim; the
    claim's sync fills the uid; the PV is not marked bound-by-controller (the user bound it)."""
    c.apply(pv("reserved", "2Gi", claimRef={"namespace": "ns", "name": "c1"}))
    c.apply(pv("cheaper", "1Gi"))
    c.run(0)
    assert c.get("PersistentVolume", "reserved")["status"]["phase"] == "Available"
    c.apply(pvc("c1"))
    c.run(0)
    assert_bound(c, "c1", "reserved", by_controller_pv=False)
    assert c.get("PersistentVolume", "reserved")["spec"]["claimRef"]["uid"] == \
        c.get("PersistentVolumeClaim", "c1", "ns")["metadata"]["uid"]


# --------------------------------------------------------------------------------------------
# Provisioning

def test_dynamic_provisioning_with_the_default_class():
    """Volcano e2e "Dynamic Provisioning: should provision storage using kind cluster's
    standard storage class": a claim without class gets `standard` (the default class), waits
    for its first consumer, and once the scheduler annotates the selected node, the
    provisioner makes pvc-<uid> (provisionClaimOperationExternal, then the external
    provisioner) and the controller binds it."""
    c = volcanic.Cluster()
    c.apply([node("n1"), pvc("data", "1Gi", cls=None)])
    c.run(0)
    claim = c.get("PersistentVolumeClaim", "data", "ns")
    assert claim["spec"]["storageClassName"] == "standard"
    assert claim["status"] == {"phase": "Pending"} and c.list("PersistentVolume") == []
    claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] = "n1"
    c.api.update(claim)
    c.run(0)
    uid = claim["metadata"]["uid"]
    volume = c.get("PersistentVolume", f"pvc-{uid}")
    claim = c.get("PersistentVolumeClaim", "data", "ns")
    assert volume["metadata"]["annotations"] == {"pv.kubernetes.io/provisioned-by": "volcanic.sh/embedded"}
    assert volume["spec"] == {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                              "volumeMode": "Filesystem", "storageClassName": "standard",
                              "persistentVolumeReclaimPolicy": "Delete",
                              "claimRef": dict(ref_to(claim), resourceVersion=volume["spec"]["claimRef"]["resourceVersion"])}
    assert annotations(claim) == {"volume.kubernetes.io/selected-node": "n1",
                                  "volume.kubernetes.io/storage-provisioner": "volcanic.sh/embedded",
                                  "volume.beta.kubernetes.io/storage-provisioner": "volcanic.sh/embedded",
                                  "pv.kubernetes.io/bind-completed": "yes",
                                  "pv.kubernetes.io/bound-by-controller": "yes"}
    assert_bound(c, "data", f"pvc-{uid}", by_controller_pv=False)
    assert [e[1] for e in events(c, "data")] == ["WaitForFirstConsumer", "ExternalProvisioning",
                                                 "ProvisioningSucceeded"]
    assert events(c, "data")[-1] == ("Normal", "ProvisioningSucceeded",
                                     f"Successfully provisioned volume pvc-{uid}", "volcanic.sh/embedded")
    assert c.errors == []


def test_immediate_class_provisions_at_once(c):
    """An Immediate class with a provisioner provisions without a selected node, with the
    class's reclaim policy and mount options and the claim's access and volume modes; the
    request is written in the API server's canonical form."""
    c.apply(storage_class("fast", provisioner="example.com/fast", reclaimPolicy="Retain", mountOptions=["noatime"]))
    c.apply(pvc("c1", "1536Mi", modes=("ReadWriteMany",), cls="fast", volumeMode="Block"))
    c.run(0)
    uid = c.get("PersistentVolumeClaim", "c1", "ns")["metadata"]["uid"]
    spec = c.get("PersistentVolume", f"pvc-{uid}")["spec"]
    assert {k: v for k, v in spec.items() if k != "claimRef"} == {
        "capacity": {"storage": "1536Mi"}, "accessModes": ["ReadWriteMany"], "volumeMode": "Block",
        "storageClassName": "fast", "persistentVolumeReclaimPolicy": "Retain", "mountOptions": ["noatime"]}
    assert_bound(c, "c1", f"pvc-{uid}", by_controller_pv=False)


ZONES = [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["a", "b"]}]}]


def test_provisioned_volume_follows_the_selected_node_topology(c):
    """A class with allowedTopologies: the PV's node affinity pins each key to the selected
    node's value (csi-provisioner's accessible topology)."""
    c.apply([storage_class("zonal", provisioner="example.com/zonal", mode="WaitForFirstConsumer",
                           allowedTopologies=ZONES),
             node("n1", **{"topology.kubernetes.io/zone": "b", "kubernetes.io/hostname": "n1"}),
             pvc("c1", cls="zonal", annotations={"volume.kubernetes.io/selected-node": "n1"})])
    c.run(0)
    uid = c.get("PersistentVolumeClaim", "c1", "ns")["metadata"]["uid"]
    assert c.get("PersistentVolume", f"pvc-{uid}")["spec"]["nodeAffinity"] == {"required": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b"]}]}]}}
    assert_bound(c, "c1", f"pvc-{uid}", by_controller_pv=False)


def test_immediate_zonal_provisioning_takes_the_first_allowed_topology(c):
    c.apply([storage_class("zonal", provisioner="example.com/zonal", allowedTopologies=ZONES), pvc("c1", cls="zonal")])
    c.run(0)
    uid = c.get("PersistentVolumeClaim", "c1", "ns")["metadata"]["uid"]
    assert c.get("PersistentVolume", f"pvc-{uid}")["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}]


def test_provisioning_fails_for_a_node_outside_the_allowed_topologies(c):
    c.apply([storage_class("zonal", provisioner="example.com/zonal", mode="WaitForFirstConsumer",
                           allowedTopologies=ZONES),
             node("n1", **{"topology.kubernetes.io/zone": "c"}),
             pvc("c1", cls="zonal", annotations={"volume.kubernetes.io/selected-node": "n1"}),
             pvc("c2", cls="zonal", annotations={"volume.kubernetes.io/selected-node": "gone"})])
    c.run(0)
    assert c.list("PersistentVolume") == []
    assert events(c, "c1")[-1] == ("Warning", "ProvisioningFailed",
                                   'failed to provision volume with StorageClass "zonal": selected node "n1" is not '
                                   'in the allowedTopologies of StorageClass "zonal"', "example.com/zonal")
    # A selected node that is gone: the provisioner hands the claim back to the scheduler
    # (sig-storage-lib-external-provisioner's ProvisioningReschedule removes the annotation).
    assert [e[1:3] for e in events(c, "c2")][-2:] == [
        ("ProvisioningFailed", 'failed to provision volume with StorageClass "zonal": failed to get target node: '
                               'node "gone" not found'),
        ("WaitForFirstConsumer", "waiting for first consumer to be created before binding")]
    assert "volume.kubernetes.io/selected-node" not in annotations(c.get("PersistentVolumeClaim", "c2", "ns"))
    assert annotations(c.get("PersistentVolumeClaim", "c1", "ns"))["volume.kubernetes.io/selected-node"] == "n1"
    assert c.get("PersistentVolumeClaim", "c1", "ns")["status"] == {"phase": "Pending"}


def test_provisioning_refuses_a_claim_with_a_selector_or_a_missing_class(c):
    """The external provisioner does not provision claims with a selector; a class that does
    not exist is a ProvisioningFailed Event (findProvisionablePlugin)."""
    c.apply([storage_class("fast", provisioner="example.com/fast"),
             pvc("c1", cls="fast", selector={"matchLabels": {"disk": "ssd"}}), pvc("c2", cls="nope")])
    c.run(0)
    assert c.list("PersistentVolume") == []
    assert events(c, "c1")[-1] == ("Warning", "ProvisioningFailed", 'failed to provision volume with StorageClass '
                                   '"fast": claim Selector is not supported', "example.com/fast")
    assert events(c, "c2") == [("Warning", "ProvisioningFailed", 'storageclass.storage.k8s.io "nope" not found',
                                "persistentvolume-controller")]
    c.apply(storage_class("nope", provisioner="example.com/late"))  # the class arriving later
    c.run(0)
    assert c.get("PersistentVolumeClaim", "c2", "ns")["status"]["phase"] == "Bound"


# --------------------------------------------------------------------------------------------
# Retroactive default class (RetroactiveDefaultStorageClass, GA in kube 1.28)

def test_default_class_is_assigned_to_claims_without_one(c):
    """assignDefaultStorageClass / GetDefaultClass: a claim with no storageClassName gets the
    newest default class (ties: the first name); "" is a choice (no class) and is kept."""
    c.delete("StorageClass", "standard")
    c.apply([pvc("before-any-default", cls=None), pvc("empty", cls="")])
    c.run(5)
    assert "storageClassName" not in c.get("PersistentVolumeClaim", "before-any-default", "ns")["spec"]
    c.apply(storage_class("old-default", default=True))
    c.run(5)
    assert c.get("PersistentVolumeClaim", "before-any-default", "ns")["spec"]["storageClassName"] == "old-default"
    c.apply([storage_class("new-b", default=True), storage_class("new-a", default=True),
             storage_class("newest-not-default")])
    c.apply(pvc("no-class", cls=None))
    c.run(0)
    assert c.get("PersistentVolumeClaim", "no-class", "ns")["spec"]["storageClassName"] == "new-a"
    assert c.get("PersistentVolumeClaim", "empty", "ns")["spec"]["storageClassName"] == ""


# --------------------------------------------------------------------------------------------
# Reclaiming, and lost claims

@pytest.mark.parametrize("policy, phase", [("Retain", "Released"), (None, "Released")])
def test_retained_volume_is_released_with_its_claim_ref(c, policy, phase):
    """syncVolume: the claim is gone; Retain (also the API's default) keeps the PV, Released,
    still pointing at the old claim, so it is not bound again."""
    c.apply([pv("pv1", policy=policy), pvc("c1")])
    c.run(0)
    uid = c.get("PersistentVolumeClaim", "c1", "ns")["metadata"]["uid"]
    c.delete("PersistentVolumeClaim", "c1", "ns")
    c.run(0)
    volume = c.get("PersistentVolume", "pv1")
    assert volume["status"]["phase"] == phase and volume["spec"]["claimRef"]["uid"] == uid
    c.apply(pvc("c1"))  # a new claim of the same name
    c.run(0)
    assert c.get("PersistentVolumeClaim", "c1", "ns")["status"] == {"phase": "Pending"}
    assert c.get("PersistentVolume", "pv1")["spec"]["claimRef"]["uid"] == uid


def test_deleted_claim_deletes_a_delete_volume():
    """reclaimVolume with Delete: the provisioned PV goes with its claim (Released first)."""
    c = volcanic.Cluster()
    c.apply([node("n1"), pvc("c1", cls="standard", annotations={"volume.kubernetes.io/selected-node": "n1"})])
    c.run(0)
    name = c.get("PersistentVolumeClaim", "c1", "ns")["spec"]["volumeName"]
    watch = c.api.watch(["PersistentVolume"])
    watch.drain()
    c.delete("PersistentVolumeClaim", "c1", "ns")
    c.run(0)
    assert [(e, o["status"]["phase"]) for e, o in watch.drain()] == [("MODIFIED", "Released"), ("DELETED", "Released")]
    assert c.get("PersistentVolume", name) is None and c.errors == []


def test_claim_replaced_before_the_controller_saw_it_releases_the_volume(c):
    """syncVolume: a claim of the same name with another uid is not the PV's claim."""
    c.apply([pv("pv1"), pvc("c1")])
    c.run(0)
    c.delete("PersistentVolumeClaim", "c1", "ns")
    c.apply(pvc("c1", "2Gi"))
    c.run(0)
    assert c.get("PersistentVolume", "pv1")["status"]["phase"] == "Released"
    assert c.get("PersistentVolumeClaim", "c1", "ns")["status"] == {"phase": "Pending"}


def test_recycle_and_unknown_reclaim_policies(c):
    """reclaimVolume: Recycle scrubs the volume (VolumeRecycled) and makes it Available; an
    unknown policy makes it Failed with VolumeUnknownReclaimPolicy."""
    c.apply([pv("recycled", policy="Recycle"), pvc("c1", volumeName="recycled"),
             pv("odd", policy="Shred"), pvc("c2", volumeName="odd")])
    c.run(0)
    c.delete("PersistentVolumeClaim", "c1", "ns")
    c.delete("PersistentVolumeClaim", "c2", "ns")
    c.run(0)
    recycled = c.get("PersistentVolume", "recycled")
    assert recycled["status"]["phase"] == "Available" and "claimRef" not in recycled["spec"]
    assert "pv.kubernetes.io/bound-by-controller" not in annotations(recycled)
    assert events(c, "recycled", "PersistentVolume", "default") == [
        ("Normal", "VolumeRecycled", "Volume recycled", "persistentvolume-controller")]
    assert c.get("PersistentVolume", "odd")["status"]["phase"] == "Failed"
    assert events(c, "odd", "PersistentVolume", "default") == [
        ("Warning", "VolumeUnknownReclaimPolicy", "Volume has unrecognized PersistentVolumeReclaimPolicy",
         "persistentvolume-controller")]


def test_bound_claim_whose_volume_is_deleted_is_lost(c):
    """syncBoundClaim: the claim's PV is gone: Lost, without capacity and access modes, one
    ClaimLost Event."""
    c.apply([pv("pv1"), pvc("c1")])
    c.run(0)
    c.delete("PersistentVolume", "pv1")
    c.run(0)
    c.run(30)
    claim = c.get("PersistentVolumeClaim", "c1", "ns")
    assert claim["status"] == {"phase": "Lost"} and claim["spec"]["volumeName"] == "pv1"
    assert events(c, "c1") == [("Warning", "ClaimLost", "Bound claim has lost its PersistentVolume. "
                                "Data on the volume is lost!", "persistentvolume-controller")]


def test_bound_claim_of_a_volume_bound_elsewhere_is_misbound(c):
    c.apply([pv("pv1"), pvc("c1"), pvc("c2", "5Gi", cls="other")])
    c.run(0)
    c2 = c.get("PersistentVolumeClaim", "c2", "ns")
    volume = c.get("PersistentVolume", "pv1")
    volume["spec"]["claimRef"] = ref_to(c2)
    c.api.update(volume)
    c.run(0)
    assert c.get("PersistentVolumeClaim", "c1", "ns")["status"] == {"phase": "Lost"}
    assert events(c, "c1")[-1][1:3] == ("ClaimMisbound",
                                        "Two claims are bound to the same volume, this one is bound incorrectly")


def test_job_volume_claim_gets_the_default_class():
    """Volcano e2e "Job E2E Test: Test Job PVCs" (jobp/job_controlled_resource.go): the job
    controller's claim gets the default class and waits for the scheduler (WaitForFirstConsumer)."""
    c = volcanic.Cluster()
    c.apply({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "ns"},
             "spec": {"minAvailable": 1, "volumes": [{"mountPath": "/data", "volumeClaim": {
                 "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
                      "tasks": [{"name": "t", "replicas": 1, "template": {"spec": {
                          "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}]}})
    c.run(0)
    (claim,) = c.list("PersistentVolumeClaim", "ns")
    assert claim["spec"]["storageClassName"] == "standard" and claim["status"] == {"phase": "Pending"}
    assert c.errors == []


# --------------------------------------------------------------------------------------------
# Idempotence and malformed objects

def test_settled_bindings_write_nothing_more(c):
    """The controller is idempotent: once bound, re-syncing changes nothing."""
    c.apply([pv("pv1"), pvc("c1"), pv("spare")])
    c.run(0)
    assert_bound(c, "c1", "pv1", by_controller_pv=True)
    before = {(o["kind"], o["metadata"]["name"]): o["metadata"]["resourceVersion"]
              for kind in ("PersistentVolume", "PersistentVolumeClaim") for o in c.list(kind)}
    n_events = len(c.list("Event"))
    controller = c.controllers["persistentvolume-controller"]
    controller.queue.add(("volume", "pv1"))
    controller.queue.add(("volume", "spare"))
    controller.queue.add(("claim", "ns", "c1"))
    c.run(60)
    after = {(o["kind"], o["metadata"]["name"]): o["metadata"]["resourceVersion"]
             for kind in ("PersistentVolume", "PersistentVolumeClaim") for o in c.list(kind)}
    assert after == before and len(c.list("Event")) == n_events


def test_malformed_objects_are_reported_and_skipped():
    """A malformed PV or claim is reported in Cluster.errors, naming the object and the field;
    the others are still bound."""
    c = volcanic.Cluster()
    c.apply([storage_class("manual"), pv("bad-size", size="lots"),
             pv("bad-ref", claimRef="c1"), pv("good"),
             pvc("bad-modes", modes=()), pvc("c1")])
    bad = c.get("PersistentVolumeClaim", "bad-modes", "ns")
    bad["spec"]["accessModes"] = "ReadWriteOnce"
    c.api.update(bad)
    c.apply(pvc("bad-selector", selector={"matchExpressions": [{"key": "a", "operator": "Near"}]}))
    c.run(0)
    assert_bound(c, "c1", "good", by_controller_pv=True)
    errors = "\n".join(c.errors)
    assert "PersistentVolume bad-size: spec.capacity.storage: " in errors
    assert "PersistentVolume bad-ref: spec.claimRef: must be a map, got 'c1'" in errors
    assert "PersistentVolumeClaim ns/bad-modes: spec.accessModes: must be a list, got 'ReadWriteOnce'" in errors
    assert ("PersistentVolumeClaim ns/bad-selector: spec.selector.matchExpressions[0].operator: 'Near' is not a "
            "valid label selector operator") in errors
    # The scheduler reads PVs and claims too (volume binding) and refuses the same objects.
    assert all(e.startswith(("persistentvolume-controller: ", "scheduler: ")) for e in c.errors)
    assert "scheduler: PersistentVolume bad-size: spec.capacity.storage: " in errors
