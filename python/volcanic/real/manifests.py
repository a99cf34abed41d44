"""What `volcanic install` applies: Volcano's CRDs (our own schemas), the volcano-system
namespace, one ServiceAccount and least-privilege ClusterRole per component, and the root and
default queues; with `all_components`, the three Deployments, the webhook's Service and the
scheduler configuration as a ConfigMap.

The CRDs have Volcano's group, version, kind, plural, short names, scope, status subresource
(none for PodGroups, as in Volcano's CRD) and printer columns. Their schemas are
volcanic.kube.crds.SCHEMAS: Volcano's types, minimums, maximums, patterns, enums, required
fields and defaults at the spec level, so the API server refuses what Volcano's CRDs refuse
with the same messages and fills in the same defaults; objects stay open
(x-kubernetes-preserve-unknown-fields), so every valid Volcano object is stored as sent. The
admission webhook holds Volcano's other rules.
"""

from __future__ import annotations

import copy

from volcanic.kube.crds import SCHEMAS
from volcanic.kube.kinds import BATCH, BUS, KINDS, SCHEDULING, Column, Kind
from volcanic.kube.objects import Obj
from volcanic.kube.queues import default_queues

NAMESPACE = "volcano-system"
COMPONENTS = ("scheduler", "controller-manager", "webhook")


def _crd(kind: Kind) -> Obj:
    """A CRD whose schema is the kind's in volcanic.kube.crds, the table the embedded cluster
    validates with too."""
    names = {"kind": kind.name, "listKind": f"{kind.name}List", "plural": kind.plural, "singular": kind.name.lower()}
    if kind.short_names:
        names["shortNames"] = list(kind.short_names)
    served: Obj = {"name": kind.version, "served": True, "storage": True,
                   "schema": {"openAPIV3Schema": copy.deepcopy(SCHEMAS[kind.name])}}
    if kind.status_subresource:
        served["subresources"] = {"status": {}}
    if kind.columns:
        served["additionalPrinterColumns"] = [_column(c) for c in kind.columns]
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{kind.plural}.{kind.group}"},
            "spec": {"group": kind.group, "names": names, "scope": "Namespaced" if kind.namespaced else "Cluster",
                     "versions": [served]}}


def _column(c: Column) -> Obj:
    col = {"name": c.name, "jsonPath": c.path, "type": c.type}
    return dict(col, priority=c.priority) if c.priority else col


def crds() -> list[Obj]:
    return [_crd(k) for k in KINDS.values() if k.crd]


def _rule(groups: list[str], resources: list[str], verbs: list[str]) -> Obj:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


READ = ["get", "list", "watch"]
WRITE = ["get", "list", "watch", "create", "update", "patch", "delete"]
LEASES = _rule(["coordination.k8s.io"], ["leases"], ["get", "create", "update"])
EVENTS = _rule(["", "events.k8s.io"], ["events"], ["create", "patch", "update"])

RULES: dict[str, list[Obj]] = {
    # vc-scheduler: reads the cluster, binds, evicts, writes PodGroup/Queue status and pod conditions,
    # updates pods to remove the queue-allocation gate (Volcano's role allows patch for it), and
    # binds volumes (a PV's claimRef, a claim's selected-node annotation).
    "scheduler": [
        _rule([""], ["pods"], READ + ["update", "delete"]), _rule([""], ["pods/binding"], ["create"]),
        _rule([""], ["persistentvolumes", "persistentvolumeclaims"], READ + ["update", "patch"]),
        _rule(["storage.k8s.io"], ["storageclasses"], READ),
        _rule([""], ["pods/status"], ["update", "patch"]), _rule([""], ["nodes", "namespaces"], READ),
        _rule(["scheduling.k8s.io"], ["priorityclasses"], READ), _rule([SCHEDULING], ["podgroups", "queues"], READ),
        _rule([SCHEDULING], ["podgroups"], ["update", "patch"]), _rule([SCHEDULING], ["queues/status"], ["update", "patch"]),
        LEASES, EVENTS],
    # job, PodGroup, queue and GC controllers, job plugins (svc, ssh, PVCs), Commands.
    "controller-manager": [
        _rule([BATCH], ["jobs"], WRITE), _rule([BATCH], ["jobs/status", "jobs/finalizers"], ["update", "patch"]),
        _rule([BUS], ["commands"], READ + ["delete"]), _rule([SCHEDULING], ["podgroups", "queues"], WRITE),
        _rule([SCHEDULING], ["queues/status"], ["update", "patch"]),
        _rule([""], ["pods", "services", "configmaps", "secrets", "persistentvolumeclaims"], WRITE),
        _rule(["networking.k8s.io"], ["networkpolicies"], WRITE), _rule([""], ["namespaces", "nodes"], READ),
        _rule(["scheduling.k8s.io"], ["priorityclasses"], READ), _rule(["apps"], ["replicasets", "statefulsets"], READ),
        _rule(["apiextensions.k8s.io"], ["customresourcedefinitions"], READ), LEASES, EVENTS],
    # Admission reads what Volcano's rules read, and registers its webhook configurations.
    "webhook": [
        _rule([SCHEDULING], ["queues", "podgroups"], READ), _rule([BATCH], ["jobs"], READ),
        _rule([""], ["namespaces", "pods"], READ), _rule(["scheduling.k8s.io"], ["priorityclasses"], READ),
        _rule(["admissionregistration.k8s.io"], ["mutatingwebhookconfigurations",
                                                 "validatingwebhookconfigurations"], WRITE), EVENTS],
}


def account(component: str) -> str:
    return f"volcanic-{component}"


def rbac() -> list[Obj]:
    out: list[Obj] = []
    for component, rules in RULES.items():
        name = account(component)
        out += [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": NAMESPACE}},
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name},
                 "rules": rules},
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                 "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": NAMESPACE}]}]
    return out


def namespace() -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}


def manifests(all_components: bool = False, image: str = "volcanic:latest", scheduler_conf: str | None = None) -> list[Obj]:
    """Everything install applies, in the order it must be applied."""
    out = [namespace(), *crds(), *rbac(), *default_queues()]
    if all_components:
        from volcanic.real.deployments import deployments
        out += deployments(image, scheduler_conf)
    return out
