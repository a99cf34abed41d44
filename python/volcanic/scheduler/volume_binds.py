"""Binding a pod's volumes before the pod, as kube-scheduler's VolumeBinding PreBind does (which
Volcano's predicates run: pkg/scheduler/capabilities/volumebinding/binder.go, BindPodVolumes).

For each claim the session chose something for (Decisions.volume_binds), the loop writes the
choice: a PersistentVolume's spec.claimRef pointing at the claim (annotated
pv.kubernetes.io/bound-by-controller, as kube's GetBindVolumeToClaim does), or the claim's
volume.kubernetes.io/selected-node annotation for a provisioner. The PV controller (the embedded
cluster's, or kube-controller-manager's and the provisioner on an API server) then binds the
claims; the pod is bound only once each of them is fully bound (spec.volumeName and the
pv.kubernetes.io/bind-completed annotation). Kube polls every second; the loop re-checks as the
watch brings claims and volumes, so the pod is bound as soon as its last claim is.

The bind fails, and the engine forgets the placement (the pod is decided again), when a write
is refused, when a provisioner gives up (it removes the selected-node annotation), when a PV's
claimRef is reset, when a claim or volume vanishes, or after the timeout (volumebinding's
bindTimeoutSeconds, 600 s by default). As in kube, what was written is not rolled back.
"""

from __future__ import annotations

from dataclasses import dataclass
import logging
from typing import Callable

from volcanic.kube.clock import Clock, Timer
from volcanic.kube.errors import StoreError
from volcanic.kube.informers import Informers
from volcanic.kube.objects import annotation, annotations_of, as_map, dig, resource_version, spec_of
from volcanic.kube.store import Store

log = logging.getLogger(__name__)

SELECTED_NODE = "volume.kubernetes.io/selected-node"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"


class VolumeBindError(Exception):
    """Why a pod's volumes could not be bound, in kube's words."""


@dataclass
class _Held:
    node: str
    claims: dict[str, str | None]  # "ns/claim" -> PV, or None to provision
    annotations: dict[str, str] | None  # what the pod's binding carries
    timer: Timer
    written: dict[str, int]  # "Kind/name" -> resourceVersion of the loop's write


def _version(obj: dict) -> int:
    """kube's CompareResourceVersion reads resourceVersions as integers."""
    return resource_version(obj) or 0


def _split(key: str) -> tuple[str, str]:
    namespace, name = key.split("/", 1)
    return namespace, name


class VolumeBinds:
    """The pods whose binding waits for their volumes. `bind(key, node, annotations)` sends a
    pod's binding; `failed(key, node, message)` handles one that cannot be made."""

    def __init__(self, store: Store, informers: Informers, clock: Clock,
                 bind: Callable[[str, str, dict[str, str] | None], None],
                 failed: Callable[[str, str, str], None]) -> None:
        self.store, self.informers, self.clock = store, informers, clock
        self._bind, self._failed = bind, failed
        self._held: dict[str, _Held] = {}

    def __contains__(self, key: str) -> bool:
        return key in self._held

    def start(self, key: str, node: str, claims: dict[str, str | None], timeout: float,
              annotations: dict[str, str] | None) -> None:
        """Writes the session's choices for the pod's claims, then binds the pod once they are bound."""
        written: dict[str, int] = {}
        try:
            for claim, volume in claims.items():
                obj = self._select_node(claim, node) if volume is None else self._claim_volume(claim, volume)
                if obj is not None:
                    written[f"{obj['kind']}/{obj['metadata']['name']}"] = _version(obj)
        except (StoreError, VolumeBindError) as e:
            self._failed(key, node, f"binding volumes: {e}")
            return
        timer = self.clock.after(timeout, lambda: self._expire(key))
        self._held[key] = _Held(node, claims, annotations, timer, written)
        self._check(key)

    def check_all(self) -> None:
        """Binds the held pods whose claims are now bound (after the watch brought claims or PVs)."""
        for key in list(self._held):
            self._check(key)

    def drop(self, key: str) -> None:
        """The pod is gone: nothing to bind."""
        held = self._held.pop(key, None)
        if held is not None:
            held.timer.cancel()

    def _claim_volume(self, claim_key: str, volume: str) -> dict | None:
        """kube's GetBindVolumeToClaim: the PV's claimRef names the claim (nothing to write when
        it does already)."""
        namespace, name = _split(claim_key)
        claim = self._get("PersistentVolumeClaim", name, namespace)
        pv = self._get("PersistentVolume", volume)
        ref = as_map(spec_of(pv).get("claimRef"))
        if ref.get("namespace") == namespace and ref.get("name") == name and ref.get("uid") in (None, "",
                                                                                                 claim["metadata"]["uid"]):
            return None
        meta = dict(pv["metadata"], annotations=dict(annotations_of(pv), **{BOUND_BY_CONTROLLER: "yes"}))
        spec = dict(pv.get("spec") or {}, claimRef={
            "kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": namespace, "name": name,
            "uid": claim["metadata"]["uid"], "resourceVersion": claim["metadata"].get("resourceVersion", "")})
        return self.store.update(dict(pv, metadata=meta, spec=spec))

    def _select_node(self, claim_key: str, node: str) -> dict | None:
        """The claim is to be provisioned where the pod goes."""
        namespace, name = _split(claim_key)
        claim = self._get("PersistentVolumeClaim", name, namespace)
        annotations = annotations_of(claim)
        if annotations.get(SELECTED_NODE) == node:
            return None
        meta = dict(claim["metadata"], annotations=dict(annotations, **{SELECTED_NODE: node}))
        return self.store.update(dict(claim, metadata=meta))

    def _get(self, kind: str, name: str, namespace: str | None = None) -> dict:
        obj = self.informers.get(kind, name, namespace)
        if obj is None:
            what = "persistentvolumeclaim" if kind == "PersistentVolumeClaim" else "persistentvolume"
            raise VolumeBindError(f'{what} "{name}" not found')
        return obj

    def _check(self, key: str) -> None:
        """kube's checkBindings: binds the pod once every claim is fully bound; fails it when a
        choice was undone."""
        held = self._held[key]
        try:
            if not all(self._bound(claim, volume, held) for claim, volume in held.claims.items()):
                return
        except VolumeBindError as e:
            self.drop(key)
            self._failed(key, held.node, f"binding volumes: {e}")
            return
        self.drop(key)
        self._bind(key, held.node, held.annotations)

    def _bound(self, claim_key: str, volume: str | None, held: _Held) -> bool:
        """Whether the claim is fully bound; False while the watch has not brought the loop's
        own write back yet (its copy is older)."""
        namespace, name = _split(claim_key)
        claim = self._get("PersistentVolumeClaim", name, namespace)
        if _version(claim) < held.written.get(f"PersistentVolumeClaim/{name}", 0):
            return False
        if volume is None and annotation(claim, SELECTED_NODE) != held.node:
            raise VolumeBindError(f'provisioning failed for PVC "{name}"')
        if volume is not None:
            pv = self._get("PersistentVolume", volume)
            if _version(pv) < held.written.get(f"PersistentVolume/{volume}", 0):
                return False
            if not dig(pv, "spec", "claimRef", "uid"):
                raise VolumeBindError(f'ClaimRef got reset for pv "{volume}"')
        return bool(spec_of(claim).get("volumeName")) and BIND_COMPLETED in annotations_of(claim)

    def _expire(self, key: str) -> None:
        held = self._held.get(key)
        if held is not None:
            self.drop(key)
            self._failed(key, held.node, "binding volumes: context deadline exceeded")
