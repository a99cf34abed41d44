"""The rules of PersistentVolumes and their claims that kube's PersistentVolume controller
applies (k8s.io/component-helpers/storage/volume and kube-controller-manager's
pkg/controller/volume/persistentvolume, kube v1.31), as functions of the objects: their
annotations, fields read with the object and field named when malformed, matching a claim to
a volume, and the volume a provisioner makes for a claim. The controller that applies them
is volcanic.controllers.volumes."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Iterable

from volcanic.kube.clock import seconds_of
from volcanic.kube.errors import InvalidObject
from volcanic.kube.objects import Obj, annotation, annotations_of, clone, describe, labels_of, status_of
from volcanic.kube.quantity import format_quantity, parse_quantity

# Annotations (k8s.io/component-helpers/storage/volume/helpers.go).
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
BETA_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"

NO_PROVISIONER = "kubernetes.io/no-provisioner"
EMBEDDED_PROVISIONER = "volcanic.sh/embedded"
STORAGE_API_VERSION = "storage.k8s.io/v1"
COMPONENT = "persistentvolume-controller"
PV, PVC, SC = "PersistentVolume", "PersistentVolumeClaim", "StorageClass"
RETAIN, DELETE, RECYCLE = "Retain", "Delete", "Recycle"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"



# Reading fields: a wrong type is an InvalidObject naming the object and the field.
def typed_field(obj: Obj, path: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
    value: Any = obj
    walked = []
    for part in path.split("."):
        if not isinstance(value, dict):
            raise InvalidObject(f"{describe(obj)}: {'.'.join(walked)}: must be a map")
        walked.append(part)
        value = value.get(part)
        if value is None:
            return default
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise InvalidObject(f"{describe(obj)}: {path}: must be a {TYPE_NAMES.get(names, names)}, got {value!r}")
    return value


TYPE_NAMES = {"str": "string", "dict": "map", "list": "list", "str or int or float": "quantity"}


def strings_at(obj: Obj, path: str) -> list[str]:
    values = typed_field(obj, path, list, [])
    for i, v in enumerate(values):
        if not isinstance(v, str):
            raise InvalidObject(f"{describe(obj)}: {path}[{i}]: must be a string, got {v!r}")
    return values


def quantity_at(obj: Obj, path: str) -> Fraction | None:
    value = typed_field(obj, path, (str, int, float))
    if value is None:
        return None
    try:
        return parse_quantity(value, f"{describe(obj)}: {path}")[0]
    except ValueError as e:
        raise InvalidObject(str(e)) from None


def claim_class(claim: Obj) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation, else spec.storageClassName, else ""."""
    beta = annotation(claim, BETA_STORAGE_CLASS)
    return beta if beta is not None else typed_field(claim, "spec.storageClassName", str, "")


def claim_has_class(claim: Obj) -> bool:
    """PersistentVolumeClaimHasClass: a class was asked for, "" (no class) included."""
    return BETA_STORAGE_CLASS in annotations_of(claim) or typed_field(claim, "spec.storageClassName", str) is not None


def volume_class(pv: Obj) -> str:
    """GetPersistentVolumeClass: the beta annotation, else spec.storageClassName, else ""."""
    beta = annotation(pv, BETA_STORAGE_CLASS)
    return beta if beta is not None else typed_field(pv, "spec.storageClassName", str, "")


def volume_mode(obj: Obj) -> str:
    """spec.volumeMode, Filesystem when absent (the API's default for both PVs and claims)."""
    return typed_field(obj, "spec.volumeMode", str, "Filesystem")


def volume_name(claim: Obj) -> str:
    return typed_field(claim, "spec.volumeName", str, "")


def claim_ref(pv: Obj) -> dict | None:
    ref = typed_field(pv, "spec.claimRef", dict)
    if ref is not None:
        for key in ("name", "namespace", "uid"):
            typed_field(pv, f"spec.claimRef.{key}", str)
    return ref


def reference_to(claim: Obj) -> Obj:
    """reference.GetReference of a claim: what a PV's claimRef holds."""
    meta = claim["metadata"]
    return {"kind": PVC, "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"],
            "apiVersion": "v1", "resourceVersion": meta.get("resourceVersion", "")}


def is_bound_to(pv: Obj, claim: Obj) -> bool:
    """IsVolumeBoundToClaim: the PV's claimRef names the claim, with its uid or none."""
    ref = claim_ref(pv)
    meta = claim["metadata"]
    if ref is None or ref.get("name") != meta["name"] or (ref.get("namespace") or "default") != meta["namespace"]:
        return False
    return not ref.get("uid") or ref["uid"] == meta["uid"]


def default_class(classes: Iterable[Obj]) -> Obj | None:
    """GetDefaultClass: of the classes annotated default, the newest, then the first by name."""
    defaults = [c for c in classes if "true" in (annotation(c, DEFAULT_CLASS), annotation(c, BETA_DEFAULT_CLASS))]
    if not defaults:
        return None
    return min(defaults, key=lambda c: (-(seconds_of(c["metadata"].get("creationTimestamp")) or 0.0),
                                        c["metadata"]["name"]))


def label_selector(obj: Obj, path: str) -> Callable[[dict], bool] | None:
    """metav1.LabelSelectorAsSelector: None for no selector, else a test of a label map; an
    operator Kubernetes does not know, or values where they do not belong, is an InvalidObject."""
    selector = typed_field(obj, path, dict)
    if selector is None:
        return None
    match_labels = typed_field(obj, f"{path}.matchLabels", dict, {})
    tests: list[Callable[[dict], bool]] = [lambda labels, k=k, v=v: labels.get(k) == v for k, v in match_labels.items()]
    for i, e in enumerate(typed_field(obj, f"{path}.matchExpressions", list, [])):
        where = f"{path}.matchExpressions[{i}]"
        if not isinstance(e, dict) or not isinstance(e.get("key"), str):
            raise InvalidObject(f"{describe(obj)}: {where}.key: must be a string")
        key, op, values = e["key"], e.get("operator"), e.get("values") or []
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise InvalidObject(f"{describe(obj)}: {where}.values: must be a list of strings")
        if op in ("In", "NotIn") and not values or op in ("Exists", "DoesNotExist") and values:
            raise InvalidObject(f"{describe(obj)}: {where}.values: must be {'non-' if op in ('In', 'NotIn') else ''}"
                                f"empty for operator {op}")
        if op == "In":
            tests.append(lambda labels, k=key, vs=values: labels.get(k) in vs)
        elif op == "NotIn":
            tests.append(lambda labels, k=key, vs=values: labels.get(k) not in vs)
        elif op == "Exists":
            tests.append(lambda labels, k=key: k in labels)
        elif op == "DoesNotExist":
            tests.append(lambda labels, k=key: k not in labels)
        else:
            raise InvalidObject(f"{describe(obj)}: {where}.operator: {op!r} is not a valid label selector "
                                "operator (In, NotIn, Exists, DoesNotExist)")
    return lambda labels: all(t(labels) for t in tests)


def check_claim(claim: Obj) -> None:
    """Reads every field of a claim the controller uses: a malformed claim is reported (an
    InvalidObject naming the field) before anything is written for it."""
    for read in (claim_class, volume_mode, volume_name):
        read(claim)
    strings_at(claim, "spec.accessModes")
    quantity_at(claim, "spec.resources.requests.storage")
    label_selector(claim, "spec.selector")


def check_volume(pv: Obj) -> None:
    """check_claim for a PV."""
    for read in (volume_class, volume_mode, claim_ref):
        read(pv)
    strings_at(pv, "spec.accessModes")
    quantity_at(pv, "spec.capacity.storage")
    typed_field(pv, "spec.persistentVolumeReclaimPolicy", str)


def mismatch(pv: Obj, claim: Obj) -> str | None:
    """checkVolumeSatisfyClaim: why a PV the claim names cannot be its volume, or None."""
    if pv["metadata"].get("deletionTimestamp"):
        return f'the volume is marked for deletion "{pv["metadata"]["name"]}"'
    if (quantity_at(pv, "spec.capacity.storage") or 0) < (quantity_at(claim, "spec.resources.requests.storage") or 0):
        return "requested PV is too small"
    if volume_class(pv) != claim_class(claim):
        return "storageClassName does not match"
    if volume_mode(pv) != volume_mode(claim):
        return "incompatible volumeMode"
    if not set(strings_at(claim, "spec.accessModes")) <= set(strings_at(pv, "spec.accessModes")):
        return "incompatible accessMode"
    return None


def find_best_match(claim: Obj, volumes: Iterable[Obj], delay_binding: bool) -> Obj | None:
    """findBestMatchForClaim (index.go findByClaim over FindMatchingVolume): a PV pre-bound to
    the claim, else, unless binding waits for the first consumer, the Available PV of the
    claim's class, selector and volume mode that holds the request with the fewest access
    modes (kube searches its access-mode index from the smallest set), then the smallest, then
    by name. Only PVs that offer every access mode the claim asks for count, pre-bound ones
    too; a pre-bound PV wins whatever its modes (kube would first take a free PV with fewer
    modes: an accident of its search order). A malformed PV is passed over (its own sync
    reports it)."""
    requested = quantity_at(claim, "spec.resources.requests.storage") or Fraction(0)
    modes, mode, wanted_class = set(strings_at(claim, "spec.accessModes")), volume_mode(claim), claim_class(claim)
    selector = label_selector(claim, "spec.selector")
    best, best_key = None, None
    for pv in volumes:
        try:
            pv_modes = set(strings_at(pv, "spec.accessModes"))
            capacity = quantity_at(pv, "spec.capacity.storage")
            ref = claim_ref(pv)
            if (not modes <= pv_modes or capacity is None or capacity < requested or volume_mode(pv) != mode
                    or pv["metadata"].get("deletionTimestamp") or ref is not None and not is_bound_to(pv, claim)):
                continue
            if ref is not None:
                return pv  # reserved for this claim (by a user, a provisioner or the scheduler)
            if (delay_binding or status_of(pv).get("phase") != "Available"
                    or selector is not None and not selector(labels_of(pv))
                    or volume_class(pv) != wanted_class):
                continue
        except InvalidObject:
            continue
        key = (len(pv_modes), capacity, pv["metadata"]["name"])
        if best_key is None or key < best_key:
            best, best_key = pv, key
    return best


class ProvisioningFailed(Exception):
    """Why a claim could not be provisioned: a Warning Event on the claim, then it waits; with
    `reschedule`, the provisioner hands the claim back to the scheduler (ProvisioningReschedule)."""

    def __init__(self, message: str, reschedule: bool = False) -> None:
        super().__init__(message)
        self.reschedule = reschedule


def topology_terms(cls: Obj) -> list[list[tuple[str, list[str]]]]:
    """The class's allowedTopologies as [[(key, values), ...], ...]; malformed: InvalidObject."""
    terms = []
    for i, term in enumerate(typed_field(cls, "allowedTopologies", list, [])):
        exprs = term.get("matchLabelExpressions") if isinstance(term, dict) else None
        where = f"allowedTopologies[{i}].matchLabelExpressions"
        if not isinstance(exprs, list) or not all(
                isinstance(e, dict) and isinstance(e.get("key"), str) and isinstance(e.get("values"), list)
                and e["values"] and all(isinstance(v, str) for v in e["values"]) for e in exprs):
            raise InvalidObject(f"{describe(cls)}: {where}: must be a list of {{key, values}} with values "
                                "a non-empty list of strings")
        terms.append([(e["key"], e["values"]) for e in exprs])
    return terms


def pinned_topology(cls: Obj, node: Obj | None) -> list[tuple[str, str]]:
    """The topology a provisioned volume gets, as (label, value) pairs: none when the class has
    no allowedTopologies; else the selected node's values for the keys of the first term it
    matches (MatchTopologySelectorTerms; an empty term matches nothing), as a CSI driver reports
    a volume reachable from where it was made; without a selected node (Immediate binding), the
    first allowed value of each key of the first term, the driver's choice made deterministic."""
    terms = [t for t in topology_terms(cls) if t]
    if not terms:
        return []
    if node is None:
        return [(key, values[0]) for key, values in terms[0]]
    labels = labels_of(node)
    for term in terms:
        if all(labels.get(key) in values for key, values in term):
            return [(key, labels[key]) for key, _ in term]
    raise ProvisioningFailed(f'selected node "{node["metadata"]["name"]}" is not in the allowedTopologies of '
                             f'StorageClass "{cls["metadata"]["name"]}"')


def provisioned_volume(claim: Obj, cls: Obj, node: Obj | None) -> Obj:
    """The PV an external provisioner creates for `claim` (sig-storage-lib-external-provisioner's
    provisionClaimOperation with csi-provisioner's Provision): the request as its capacity (in
    the API server's canonical form), the claim's access modes and volume mode, the class's
    name, reclaim policy (default Delete) and mount options, pre-bound to the claim."""
    if typed_field(claim, "spec.selector", dict) is not None:
        raise ProvisioningFailed("claim Selector is not supported")
    request = typed_field(claim, "spec.resources.requests.storage", (str, int, float))
    if request is None:
        raise InvalidObject(f"{describe(claim)}: spec.resources.requests.storage: Required value")
    capacity = format_quantity(parse_quantity(request, f"{describe(claim)}: spec.resources.requests.storage"))
    spec: Obj = {"capacity": {"storage": capacity}, "accessModes": list(strings_at(claim, "spec.accessModes")),
                 "volumeMode": volume_mode(claim), "storageClassName": cls["metadata"]["name"],
                 "persistentVolumeReclaimPolicy": typed_field(cls, "reclaimPolicy", str, DELETE),
                 "claimRef": reference_to(claim)}
    mount_options = strings_at(cls, "mountOptions")
    if mount_options:
        spec["mountOptions"] = list(mount_options)
    topology = pinned_topology(cls, node)
    if topology:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": key, "operator": "In", "values": [value]} for key, value in topology]}]}}
    return {"apiVersion": "v1", "kind": PV,
            "metadata": {"name": f"pvc-{claim['metadata']['uid']}",
                         "annotations": {PROVISIONED_BY: typed_field(cls, "provisioner", str, "")}},
            "spec": spec}


def with_annotations(obj: Obj, **changes: str | None) -> Obj:
    """A copy of obj with annotations set (None removes one; no annotations left: none at all)."""
    out = clone(obj)
    annotations = dict(annotations_of(out))
    for key, value in changes.items():
        if value is None:
            annotations.pop(key, None)
        else:
            annotations[key] = value
    if annotations:
        out["metadata"]["annotations"] = annotations
    else:
        out["metadata"].pop("annotations", None)
    return out
