"""The embedded API server: admission in front of the MemoryStore, for every writer.

Like the Kubernetes API server, it admits every create, update and delete, whoever sends
it (users through Cluster.apply, controllers, the scheduler), and writes status and
bindings without admission. Jobs, PodGroups, Queues and Commands are defaulted and checked
against their CRD schemas (volcanic.kube.crds) between mutating and validating admission,
as the API server does: an InvalidObject with the API server's message. Built in, before
the configurable chain:
- Priority admission: a new Pod gets spec.priority from its priorityClassName, else from
  the global-default PriorityClass, else 0; an unknown class is a denial.
- Pod updates may change only what Kubernetes lets them change (images, tolerations,
  activeDeadlineSeconds, terminationGracePeriodSeconds, removing scheduling gates; nodeName
  only through bind).
- Namespaces are created on first use (a convenience of the embedded cluster; a real API
  server refuses objects in a missing namespace).
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Iterable

from volcanic.admission.chain import AdmissionChain
from volcanic.cluster.store import MemoryStore
from volcanic.kube import crds
from volcanic.kube.errors import AdmissionError, InvalidObject
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj, meta_of
from volcanic.kube.store import Watch, done

_POD_MUTABLE = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds")


def _gate_names(spec: Any) -> list:
    gates = spec.get("schedulingGates") if isinstance(spec, dict) else None
    return [g.get("name") if isinstance(g, dict) else g for g in gates] if isinstance(gates, list) else []


def _check_pod_update(new: Obj, old: Obj) -> None:
    """The API server's pod update validation, without the fine print on tolerations.
    Scheduling gates may only be removed (Kubernetes' validateOnlyDeletedSchedulingGates)."""
    meta = old["metadata"]
    old_gates = _gate_names(old.get("spec"))
    for i, name in enumerate(_gate_names(new.get("spec"))):
        if name not in old_gates:
            raise InvalidObject(f'Pod {meta["namespace"]}/{meta["name"]}: spec.schedulingGates[{i}].name: Forbidden: '
                                f"only deletion is allowed, but found new scheduling gate '{name}'")

    def fixed(spec: Any) -> Any:
        if not isinstance(spec, dict):
            return spec
        out = {k: v for k, v in spec.items() if k not in _POD_MUTABLE and k != "schedulingGates"}
        for field in ("containers", "initContainers"):
            if isinstance(out.get(field), list):
                out[field] = [{k: v for k, v in c.items() if k != "image"} if isinstance(c, dict) else c
                              for c in out[field]]
        return out
    if new.get("spec") != old.get("spec") and fixed(new.get("spec")) != fixed(old.get("spec")):
        raise InvalidObject(
            f'Pod {meta["namespace"]}/{meta["name"]}: spec: Forbidden: pod updates may not change fields other '
            "than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, "
            "`spec.tolerations` (only additions to existing tolerations), `spec.terminationGracePeriodSeconds`")


class EmbeddedApi:
    """A Store that admits writes; reads go straight to the MemoryStore."""

    def __init__(self, store: MemoryStore, admission: AdmissionChain | None = None) -> None:
        self.store = store
        self.admission = admission or AdmissionChain()
        # False writes past the CRD schemas, as an object stored before a CRD changed (tests
        # of how controllers cope with what the API server would refuse today).
        self.check_schemas = True

    # Reads.
    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        return self.store.get(kind, name, namespace)

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        return self.store.list(kind, namespace)

    def watch(self, kinds: Iterable[str] | None = None) -> Watch:
        return self.store.watch(kinds)

    # Writes.
    def create(self, obj: Obj) -> Obj:
        if obj.get("kind") == "Pod":
            obj = self._with_priority(obj)
        if self.check_schemas:
            obj = crds.defaulted(obj)  # the API server defaults what it decodes, before admission
        obj = self.admission.mutate("CREATE", obj, None, self.store.shared)
        if self.check_schemas:
            obj = crds.validated(obj)
        self.admission.validate("CREATE", obj, None, self.store.shared)
        self._ensure_namespace(obj)
        return self.store.create(obj)

    def update(self, obj: Obj) -> Obj:
        kind = obj.get("kind")
        schema = self.check_schemas and kind in crds.SCHEMAS
        if kind == "Pod" or schema or self.admission.has_rules(kind, "UPDATE"):
            meta = meta_of(obj)
            old = self.store.shared.get(kind, meta.get("name", ""), meta.get("namespace"))
            if old is not None:
                if kind == "Pod":
                    _check_pod_update(obj, old)
                obj = self.admission.mutate("UPDATE", obj, old, self.store.shared)
                if schema:
                    obj = crds.validated(obj, old)
                self.admission.validate("UPDATE", obj, old, self.store.shared)
        return self.store.update(obj)

    def update_status(self, obj: Obj) -> Obj:
        kind = KINDS.get(obj.get("kind"))
        if kind is not None and not kind.status_subresource:
            return self.update(obj)  # a PUT of the object: admitted as an update
        return self.store.update_status(obj)

    def create_async(self, obj: Obj) -> Future[Obj]:
        return done(self.create, obj)

    def bind_async(self, namespace: str, name: str, node: str,
                   annotations: dict[str, str] | None = None) -> Future[Obj]:
        return done(self.bind, (namespace, name, node, annotations))

    def update_status_async(self, obj: Obj) -> Future[Obj]:
        return done(self.update_status, obj)

    def bind(self, namespace: str, name: str, node: str, annotations: dict[str, str] | None = None) -> Obj:
        return self.store.bind(namespace, name, node, annotations)

    def delete(self, kind: str, name: str, namespace: str | None = None, uid: str | None = None) -> None:
        old = self.store.shared.get(kind, name, namespace) if self.admission.has_rules(kind, "DELETE") else None
        if old is not None:
            self.admission.admit("DELETE", None, old, self.store.shared)
        self.store.delete(kind, name, namespace, uid=uid)

    # Built-in admission.
    def _with_priority(self, pod: Obj) -> Obj:
        spec = pod.get("spec")
        if not isinstance(spec, dict):
            return pod
        class_name = spec.get("priorityClassName")
        if class_name:
            pc = self.store.shared.get("PriorityClass", class_name)
            if pc is None:
                meta = meta_of(pod)
                raise AdmissionError(f'no PriorityClass with name {class_name} was found', kind="Pod",
                                     namespace=meta.get("namespace"), name=meta.get("name"))
            value = pc.get("value", 0)
        else:
            default = next((pc for pc in self.store.shared.list("PriorityClass") if pc.get("globalDefault")), None)
            value = default.get("value", 0) if default else 0
            if default:
                spec = dict(spec, priorityClassName=default["metadata"]["name"])
        return dict(pod, spec=dict(spec, priority=value))

    def _ensure_namespace(self, obj: Obj) -> None:
        kind = KINDS.get(obj.get("kind"))
        if kind is None or not kind.namespaced:
            return
        namespace = meta_of(obj).get("namespace") or "default"
        if self.store.shared.get("Namespace", namespace) is None:
            self.store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace},
                               "status": {"phase": "Active"}})
