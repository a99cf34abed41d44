"""Kubernetes' PersistentVolume controller for the embedded cluster, with an external
provisioner played in place (kube-controller-manager's
`pkg/controller/volume/persistentvolume/pv_controller.go`, kube v1.31; the provisioner as
sig-storage-lib-external-provisioner and csi-provisioner behave). A real cluster has its own;
this one runs only in volcanic.Cluster.

It binds the two pointers of a binding: a PV's `spec.claimRef` and a claim's
`spec.volumeName`, the PV first, so a watcher never sees a claim bound to a PV that does not
point back. What it does (each rule names kube's function):
- syncVolume: a PV without claimRef, or reserved for a claim by name only (claimRef without
  uid), is Available; one whose claim is gone (or is another claim of that name) is Released
  and reclaimed by its persistentVolumeReclaimPolicy (absent: Retain, the API's default):
  Retain keeps it Released, Delete deletes it (the embedded cluster plays every deleter),
  Recycle makes it Available again, anything else is Failed; a PV bound to a claim bound
  elsewhere is deleted when it was provisioned with policy Delete, else unbound.
- syncUnboundClaim: a claim without a volume binds the smallest Available PV that matches it
  (findBestMatchForClaim: storage class, capacity >= the request, access modes, selector,
  volumeMode, not being deleted), or a PV pre-bound to it (claimRef naming it: what the
  scheduler's VolumeBinding writes for a WaitForFirstConsumer claim). With none it
  provisions, once the claim may be: at once for an Immediate class, after the scheduler
  annotated `volume.kubernetes.io/selected-node` for WaitForFirstConsumer.
- syncBoundClaim: a bound claim whose PV is gone, or bound to another claim, is Lost.
- A claim without a storage class gets the default class (the newest StorageClass annotated
  `storageclass.kubernetes.io/is-default-class: "true"`): kube's API server does it on create
  (DefaultStorageClass admission) and the controller for older claims
  (RetroactiveDefaultStorageClass); the embedded API has no such admission, so this
  controller does it first, which gives what a real cluster shows.
- Provisioning (provisionClaimOperationExternal, then the external provisioner): the claim is
  annotated `volume.kubernetes.io/storage-provisioner`, PV `pvc-<claim uid>` is created with
  the claim's request, access modes and volume mode, the class's reclaim policy (default
  Delete) and mount options, a claimRef to the claim, `pv.kubernetes.io/provisioned-by`, and,
  when the class has allowedTopologies, node affinity to the selected node's topology; then
  it is bound. A selected node that is gone is removed from the claim (the provisioner's
  rescheduleProvisioning), for the scheduler to choose again. Provisioner
  `kubernetes.io/no-provisioner` provisions nothing.

Requests are ("volume", name) and ("claim", namespace, name). kube's controller also resyncs
every object every 15 s; here the handlers enqueue what a change can unblock instead (a PV's
claim, the claims an Available PV or a new class may serve). A malformed object is skipped
with an InvalidObject naming it and the field (in Cluster.errors); a conflict is retried.
Not simulated: attach/detach, CSIStorageCapacity, volume expansion, the pv/pvc-protection
finalizers, dataSource.
"""

from __future__ import annotations

from typing import Callable, Hashable

from volcanic.controllers.runtime import Context, Controller
from volcanic.controllers.volume_rules import (
    BETA_STORAGE_PROVISIONER,
    BIND_COMPLETED,
    BOUND_BY_CONTROLLER,
    COMPONENT,
    DEFAULT_CLASS,
    DELETE,
    EMBEDDED_PROVISIONER,
    NO_PROVISIONER,
    PROVISIONED_BY,
    PV,
    PVC,
    RECYCLE,
    RETAIN,
    SC,
    SELECTED_NODE,
    STORAGE_API_VERSION,
    STORAGE_PROVISIONER,
    WAIT_FOR_FIRST_CONSUMER,
    ProvisioningFailed,
    check_claim,
    check_volume,
    claim_class,
    claim_has_class,
    claim_ref,
    default_class,
    find_best_match,
    is_bound_to,
    mismatch,
    provisioned_volume,
    reference_to,
    strings_at,
    typed_field,
    volume_class,
    volume_mode,
    volume_name,
    with_annotations,
)
from volcanic.kube.clock import rfc3339
from volcanic.kube.errors import AlreadyExists, InvalidObject, NotFound
from volcanic.kube.events import Recorder
from volcanic.kube.informers import Handler
from volcanic.kube.objects import Obj, annotation, annotations_of, clone, describe, spec_of, status_of
from volcanic.kube.store import Store


def ensure_default_storage_class(store: Store) -> None:
    """Creates StorageClass `standard`, the default class, unless it exists: kind's default
    class (WaitForFirstConsumer, Delete), provisioned by the embedded cluster, network-attached
    (no allowedTopologies: its volumes can be used from any node)."""
    if store.get(SC, "standard") is not None:
        return
    store.create({"apiVersion": STORAGE_API_VERSION, "kind": SC,
                  "metadata": {"name": "standard", "annotations": {DEFAULT_CLASS: "true"}},
                  "provisioner": EMBEDDED_PROVISIONER, "reclaimPolicy": DELETE,
                  "volumeBindingMode": WAIT_FOR_FIRST_CONSUMER})



class PersistentVolumeController(Controller):
    name = COMPONENT

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._recorder = Recorder(ctx.store, ctx.clock.now, COMPONENT)
        self._provisioners: dict[str, Recorder] = {}  # the external provisioners' own Events

    # Event handlers: they only enqueue.
    def handlers(self) -> dict[str, Handler]:
        return {
            PV: Handler(on_add=self._volume_changed, on_update=self._volume_updated, on_delete=self._volume_deleted),
            PVC: Handler(on_add=self._claim_changed, on_update=lambda old, new: self._claim_changed(new),
                         on_delete=self._claim_deleted),
            SC: Handler(on_add=self._class_changed, on_update=lambda old, new: self._class_changed(new)),
        }

    def _enqueue_claim_of(self, pv: Obj) -> None:
        ref = spec_of(pv).get("claimRef")
        if isinstance(ref, dict) and isinstance(ref.get("name"), str):
            self.queue.add(("claim", ref.get("namespace") or "default", ref["name"]))

    def _volume_changed(self, pv: Obj) -> None:
        self.queue.add(("volume", pv["metadata"]["name"]))
        self._enqueue_claim_of(pv)  # syncVolume does it for a claim not bound yet; a resync, for the rest
        if spec_of(pv).get("claimRef") is None and status_of(pv).get("phase") == "Available":
            # A claim that waits for its first consumer is the scheduler's to bind.
            self._enqueue_waiting_claims(lambda claim: claim_class(claim) == volume_class(pv)
                                         and not self._delay_binding(claim))

    def _volume_updated(self, old: Obj, new: Obj) -> None:
        self._volume_changed(new)
        self._enqueue_claim_of(old)  # a claim the PV no longer points at may be Lost now

    def _volume_deleted(self, pv: Obj) -> None:
        self._enqueue_claim_of(pv)  # deleteVolume: the claim is Lost at once

    def _claim_changed(self, claim: Obj) -> None:
        self.queue.add(("claim", claim["metadata"]["namespace"], claim["metadata"]["name"]))

    def _claim_deleted(self, claim: Obj) -> None:
        """deleteClaim syncs the claim's volume; the PVs reserved for it are released too."""
        name = spec_of(claim).get("volumeName")
        if isinstance(name, str) and name:
            self.queue.add(("volume", name))
        for pv in self.ctx.lister.list(PV):
            ref = spec_of(pv).get("claimRef")
            if isinstance(ref, dict) and ref.get("name") == claim["metadata"]["name"] \
                    and (ref.get("namespace") or "default") == claim["metadata"]["namespace"]:
                self.queue.add(("volume", pv["metadata"]["name"]))

    def _class_changed(self, cls: Obj) -> None:
        name = cls["metadata"]["name"]
        self._enqueue_waiting_claims(lambda claim: claim_class(claim) == name or not claim_has_class(claim))

    def _enqueue_waiting_claims(self, wanted: Callable[[Obj], bool]) -> None:
        """The claims waiting for a volume that `wanted` picks (kube's periodic resync)."""
        for claim in self.ctx.lister.list(PVC):
            try:
                if BIND_COMPLETED not in annotations_of(claim) and not volume_name(claim) and wanted(claim):
                    self._claim_changed(claim)
            except InvalidObject:
                continue  # its own sync reports it

    # Requests.
    def process(self, request: Hashable) -> None:
        if request[0] == "volume":
            pv = self.ctx.lister.get(PV, request[1])
            if pv is not None:
                self._sync_volume(pv)
        else:
            claim = self.ctx.lister.get(PVC, request[2], request[1])
            if claim is not None:
                self._sync_claim(claim)

    # Claims.
    def _sync_claim(self, claim: Obj) -> None:
        """syncClaim: a claim is bound once it has the bind-completed annotation."""
        check_claim(claim)
        if BIND_COMPLETED in annotations_of(claim):
            self._sync_bound_claim(claim)
        elif volume_name(claim):
            self._sync_claim_naming_volume(claim)
        else:
            self._sync_unbound_claim(claim)

    def _sync_unbound_claim(self, claim: Obj) -> None:
        """syncUnboundClaim for a claim that names no volume."""
        if self._assign_default_class(claim):
            return  # the update brings the claim back
        delay = self._delay_binding(claim)
        pv = find_best_match(claim, self.ctx.lister.list(PV), delay)
        if pv is not None:
            self._bind(pv, claim)
            return
        if delay and SELECTED_NODE not in annotations_of(claim):
            self._recorder.event(claim, "Normal", "WaitForFirstConsumer",
                                 "waiting for first consumer to be created before binding")
        elif claim_class(claim):
            self._provision(claim)
            return
        else:
            self._recorder.event(claim, "Normal", "FailedBinding",
                                 "no persistent volumes available for this claim and no storage class is set")
        self._claim_status(claim, "Pending", None)

    def _sync_claim_naming_volume(self, claim: Obj) -> None:
        """syncUnboundClaim for a claim that asks for a volume by spec.volumeName."""
        pv = self.ctx.lister.get(PV, volume_name(claim))
        if pv is None:
            self._claim_status(claim, "Pending", None)  # it may be created later
        elif claim_ref(pv) is None:
            problem = mismatch(pv, claim)
            if problem is None:
                self._bind(pv, claim)
                return
            self._recorder.event(claim, "Warning", "VolumeMismatch",
                                 f'Cannot bind to requested volume "{pv["metadata"]["name"]}": {problem}')
            self._claim_status(claim, "Pending", None)
        elif is_bound_to(pv, claim):
            self._bind(pv, claim)  # finishes the binding (the claimRef's uid)
        else:
            self._recorder.event(claim, "Warning", "FailedBinding",
                                 f'volume "{pv["metadata"]["name"]}" already bound to a different claim.')
            self._claim_status(claim, "Pending", None)

    def _sync_bound_claim(self, claim: Obj) -> None:
        """syncBoundClaim: re-asserts a binding, or marks the claim Lost."""
        name = volume_name(claim)
        pv = self.ctx.lister.get(PV, name) if name else None
        if not name:
            self._claim_lost(claim, "ClaimLost", "Bound claim has lost reference to PersistentVolume. "
                             "Data on the volume is lost!")
        elif pv is None:
            self._claim_lost(claim, "ClaimLost",
                             "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
        elif (ref := claim_ref(pv)) is None or ref.get("uid") == claim["metadata"]["uid"]:
            self._bind(pv, claim)
        else:
            self._claim_lost(claim, "ClaimMisbound", "Two claims are bound to the same volume, this one is bound "
                             "incorrectly")

    def _claim_lost(self, claim: Obj, reason: str, message: str) -> None:
        """updateClaimStatusWithEvent: the Event only when the phase changes."""
        if status_of(claim).get("phase") != "Lost":
            self._claim_status(claim, "Lost", None)
            self._recorder.event(claim, "Warning", reason, message)

    def _assign_default_class(self, claim: Obj) -> bool:
        """assignDefaultStorageClass: a claim that asks for no class gets the default one."""
        if claim_has_class(claim):
            return False
        cls = default_class(self.ctx.lister.list(SC))
        if cls is None:
            return False
        updated = clone(claim)
        updated["spec"]["storageClassName"] = cls["metadata"]["name"]
        self.ctx.store.update(updated)
        return True

    def _delay_binding(self, claim: Obj) -> bool:
        """IsDelayBindingMode: the claim's class binds WaitForFirstConsumer (no class, or one not
        found: Immediate; an absent mode is the API's default, Immediate)."""
        name = claim_class(claim)
        cls = self.ctx.lister.get(SC, name) if name else None
        return cls is not None and typed_field(cls, "volumeBindingMode", str) == WAIT_FOR_FIRST_CONSUMER

    # Binding (bind: the volume first, then the claim).
    def _bind(self, pv: Obj, claim: Obj) -> None:
        pv = self._bind_volume_to_claim(pv, claim)
        pv = self._volume_phase(pv, "Bound")
        claim = self._bind_claim_to_volume(claim, pv)
        self._claim_status(claim, "Bound", pv)

    def _bind_volume_to_claim(self, pv: Obj, claim: Obj) -> Obj:
        """GetBindVolumeToClaim: claimRef to the claim, and bound-by-controller when the
        controller chose this volume (not when it was reserved for the claim)."""
        ref, meta = claim_ref(pv), claim["metadata"]
        chosen_here = not is_bound_to(pv, claim)
        updated = clone(pv)
        dirty = False
        if ref is None or (ref.get("name"), ref.get("namespace") or "default", ref.get("uid")) != (
                meta["name"], meta["namespace"], meta["uid"]):
            updated["spec"]["claimRef"] = reference_to(claim)
            dirty = True
        if chosen_here and BOUND_BY_CONTROLLER not in annotations_of(updated):
            updated = with_annotations(updated, **{BOUND_BY_CONTROLLER: "yes"})
            dirty = True
        return self.ctx.store.update(updated) if dirty else pv

    def _bind_claim_to_volume(self, claim: Obj, pv: Obj) -> Obj:
        """bindClaimToVolume: spec.volumeName (and bound-by-controller when the controller set
        it), and bind-completed."""
        updated = clone(claim)
        dirty = False
        if volume_name(claim) != pv["metadata"]["name"]:
            updated["spec"]["volumeName"] = pv["metadata"]["name"]
            if BOUND_BY_CONTROLLER not in annotations_of(updated):
                updated = with_annotations(updated, **{BOUND_BY_CONTROLLER: "yes"})
            dirty = True
        if BIND_COMPLETED not in annotations_of(updated):
            updated = with_annotations(updated, **{BIND_COMPLETED: "yes"})
            dirty = True
        return self.ctx.store.update(updated) if dirty else claim

    def _claim_status(self, claim: Obj, phase: str, pv: Obj | None) -> Obj:
        """updateClaimStatus: the phase, with the PV's access modes, and its capacity when the
        claim becomes Bound (a later difference is left alone, as after an expansion); without
        a PV neither."""
        old = status_of(claim)
        status = dict(old, phase=phase)
        if pv is None:
            status.pop("accessModes", None)
            status.pop("capacity", None)
        else:
            modes = strings_at(pv, "spec.accessModes")
            if modes:
                status["accessModes"] = list(modes)
            else:
                status.pop("accessModes", None)
            if old.get("phase") != phase:
                capacity = typed_field(pv, "spec.capacity", dict)
                if not capacity or "storage" not in capacity:
                    raise InvalidObject(f"{describe(pv)}: spec.capacity.storage: Required value")
                status["capacity"] = clone(capacity)
        if status == old:
            return claim
        return self.ctx.store.update_status(dict(claim, status=status))

    # Provisioning.
    def _provision(self, claim: Obj) -> None:
        """provisionClaim, for an external provisioner, which the embedded cluster plays."""
        name = claim_class(claim)
        cls = self.ctx.lister.get(SC, name)
        if cls is None:
            self._recorder.event(claim, "Warning", "ProvisioningFailed",
                                 f'storageclass.storage.k8s.io "{name}" not found')
            return
        provisioner = typed_field(cls, "provisioner", str, "")
        if provisioner == NO_PROVISIONER or not provisioner:
            # findProvisionablePlugin: no in-tree plugin of that name, and it is kubernetes.io's
            self._recorder.event(claim, "Warning", "ProvisioningFailed",
                                 f"no volume plugin matched name: {provisioner}")
            return
        if typed_field(claim, "spec.resources.requests.storage", (str, int, float)) is None:
            raise InvalidObject(f"{describe(claim)}: spec.resources.requests.storage: Required value "
                                "(a claim to provision says how much storage it needs)")
        claim = self._set_provisioner(claim, provisioner)
        self._recorder.event(claim, "Normal", "ExternalProvisioning",
                             f"Waiting for a volume to be created either by the external provisioner '{provisioner}' "
                             "or manually by the system administrator. If volume creation is delayed, please verify "
                             "that the provisioner is running and correctly registered.")
        self._provision_externally(claim, cls, provisioner)

    def _set_provisioner(self, claim: Obj, provisioner: str) -> Obj:
        """setClaimProvisioner: tells external provisioners whose claim it is."""
        annotations = annotations_of(claim)
        if provisioner == annotations.get(STORAGE_PROVISIONER) == annotations.get(BETA_STORAGE_PROVISIONER):
            return claim
        return self.ctx.store.update(with_annotations(claim, **{STORAGE_PROVISIONER: provisioner,
                                                                 BETA_STORAGE_PROVISIONER: provisioner}))

    def _provision_externally(self, claim: Obj, cls: Obj, provisioner: str) -> None:
        """The external provisioner: makes the PV (for the selected node, when there is one) and
        binds it, or records why it could not."""
        recorder = self._provisioners.get(provisioner)
        if recorder is None:
            recorder = self._provisioners[provisioner] = Recorder(self.ctx.store, self.ctx.clock.now, provisioner)
        try:
            node = None
            node_name = annotation(claim, SELECTED_NODE)
            if node_name is not None:
                node = self.ctx.lister.get("Node", node_name)
                if node is None:
                    raise ProvisioningFailed(f'failed to get target node: node "{node_name}" not found',
                                             reschedule=True)
            pv = provisioned_volume(claim, cls, node)
        except ProvisioningFailed as e:
            recorder.event(claim, "Warning", "ProvisioningFailed", f"failed to provision volume with StorageClass "
                           f'"{cls["metadata"]["name"]}": {e}')
            if e.reschedule:  # rescheduleProvisioning: the scheduler picks a node again
                self.ctx.store.update(with_annotations(claim, **{SELECTED_NODE: None}))
            return
        try:
            pv = self.ctx.store.create(pv)
        except AlreadyExists:
            return  # made before: its own event brings it to the claim
        recorder.event(claim, "Normal", "ProvisioningSucceeded",
                       f"Successfully provisioned volume {pv['metadata']['name']}")
        self._bind(pv, claim)

    # Volumes.
    def _sync_volume(self, pv: Obj) -> None:
        """syncVolume."""
        check_volume(pv)
        ref = claim_ref(pv)
        if ref is None or not ref.get("uid"):
            self._volume_phase(pv, "Available")  # unused, or reserved for a claim not bound yet
            return
        claim = self._claim_of(pv, ref)
        if claim is None:
            self._release(pv)
        elif not volume_name(claim):
            if volume_mode(claim) != volume_mode(pv):
                self._recorder.event(pv, "Warning", "VolumeMismatch",
                                     "Cannot bind PersistentVolume to requested PersistentVolumeClaim "
                                     f'"{claim["metadata"]["name"]}" due to incompatible volumeMode.')
                self._recorder.event(claim, "Warning", "VolumeMismatch",
                                     f'Cannot bind PersistentVolume "{pv["metadata"]["name"]}" to requested '
                                     "PersistentVolumeClaim due to incompatible volumeMode.")
            # else the claim's sync binds it (the handler enqueued the claim)
        elif volume_name(claim) == pv["metadata"]["name"]:
            self._volume_phase(pv, "Bound")
        elif PROVISIONED_BY in annotations_of(pv) and self._policy(pv) == DELETE:
            self._release(pv)  # made for a claim that got bound elsewhere: not needed
        else:
            self._unbind_volume(pv)

    def _claim_of(self, pv: Obj, ref: dict) -> Obj | None:
        """The claim the PV is bound to, or None when it is gone (or is a new claim of that
        name); the API server is asked before a PV is released on the word of the cache."""
        namespace = ref.get("namespace") or "default"
        claim = self.ctx.lister.get(PVC, ref["name"], namespace)
        if claim is None or claim["metadata"]["uid"] != ref["uid"]:
            claim = self.ctx.store.get(PVC, ref["name"], namespace)
        return claim if claim is not None and claim["metadata"]["uid"] == ref["uid"] else None

    @staticmethod
    def _policy(pv: Obj) -> str:
        return typed_field(pv, "spec.persistentVolumeReclaimPolicy", str, RETAIN)

    def _release(self, pv: Obj) -> None:
        """Released (a Failed PV stays Failed), then reclaimVolume by the reclaim policy."""
        if status_of(pv).get("phase") not in ("Released", "Failed"):
            pv = self._volume_phase(pv, "Released")
        policy = self._policy(pv)
        if policy == RETAIN:
            return
        if policy == DELETE:
            try:
                self.ctx.store.delete(PV, pv["metadata"]["name"], uid=pv["metadata"]["uid"])
            except NotFound:
                pass
        elif policy == RECYCLE:
            self._recorder.event(pv, "Normal", "VolumeRecycled", "Volume recycled")
            self._unbind_volume(pv)
        elif status_of(pv).get("phase") != "Failed":
            pv = self._volume_phase(pv, "Failed")
            self._recorder.event(pv, "Warning", "VolumeUnknownReclaimPolicy",
                                 "Volume has unrecognized PersistentVolumeReclaimPolicy")

    def _unbind_volume(self, pv: Obj) -> None:
        """unbindVolume: a PV the controller bound loses its claimRef; one a user reserved keeps
        it, without the uid; both are Available again."""
        if BOUND_BY_CONTROLLER in annotations_of(pv):
            updated = with_annotations(pv, **{BOUND_BY_CONTROLLER: None})
            updated["spec"].pop("claimRef", None)
        else:
            updated = clone(pv)
            updated["spec"]["claimRef"].pop("uid", None)
        self._volume_phase(self.ctx.store.update(updated), "Available")

    def _volume_phase(self, pv: Obj, phase: str) -> Obj:
        """updateVolumePhase, with lastPhaseTransitionTime as the API server stamps it."""
        old = status_of(pv)
        if old.get("phase") == phase:
            return pv
        status = {k: v for k, v in old.items() if k != "message"}
        status.update(phase=phase, lastPhaseTransitionTime=rfc3339(self.ctx.clock.now()))
        return self.ctx.store.update_status(dict(pv, status=status))
