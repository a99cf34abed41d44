"""One ServiceAccount and least-privilege ClusterRole (and its binding) per component: what
each of Volcano's three components reads and writes, and no more."""

from __future__ import annotations

from volcanic.kube.kinds import BATCH, BUS, FLOW, NODEINFO, SCHEDULING, TOPOLOGY, VOLCANIC
from volcanic.kube.objects import Obj
from volcanic.real.manifests.names import NAMESPACE, account


def _rule(groups: list[str], resources: list[str], verbs: list[str]) -> Obj:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


READ = ["get", "list", "watch"]
WRITE = ["get", "list", "watch", "create", "update", "patch", "delete"]
LEASES = _rule(["coordination.k8s.io"], ["leases"], ["get", "create", "update"])
EVENTS = _rule(["", "events.k8s.io"], ["events"], ["create", "patch", "update"])

RULES: dict[str, list[Obj]] = {
    # vc-scheduler: reads the cluster (HyperNodes included, for network-topology-aware scheduling;
    # PodDisruptionBudgets, ResourceQuotas and Numatopologies, for the pdb, resourcequota and
    # numa-aware plugins),
    # binds, evicts, writes PodGroup/Queue status and pod conditions, updates pods to remove the
    # queue-allocation gate (Volcano's role allows patch for it), and binds volumes (a PV's
    # claimRef, a claim's selected-node annotation).
    "scheduler": [
        _rule([""], ["pods"], READ + ["update", "delete"]), _rule([""], ["pods/binding"], ["create"]),
        _rule([""], ["persistentvolumes", "persistentvolumeclaims"], READ + ["update", "patch"]),
        _rule(["storage.k8s.io"], ["storageclasses"], READ),
        _rule([""], ["pods/status"], ["update", "patch"]), _rule([""], ["nodes", "namespaces", "resourcequotas"], READ),
        _rule(["policy"], ["poddisruptionbudgets"], READ),
        _rule(["scheduling.k8s.io"], ["priorityclasses"], READ), _rule([SCHEDULING], ["podgroups", "queues"], READ),
        _rule([TOPOLOGY], ["hypernodes"], READ), _rule([NODEINFO], ["numatopologies"], READ),
        _rule([VOLCANIC], ["queuebindings"], READ),  # their limits are enforced at enqueue
        _rule([SCHEDULING], ["podgroups"], ["update", "patch"]),
        _rule([SCHEDULING], ["queues/status"], ["update", "patch"]), LEASES, EVENTS],
    # job, PodGroup, queue, GC and hyperNode controllers, job plugins (svc, ssh, PVCs), Commands;
    # the hyperNode-controller reads nodes and its ConfigMap and writes HyperNodes and their status;
    # the jobflow, jobtemplate and cronjob controllers write their kinds' status (and Jobs).
    "controller-manager": [
        _rule([BATCH], ["jobs", "cronjobs"], WRITE),
        _rule([BATCH], ["jobs/status", "jobs/finalizers", "cronjobs/status"], ["update", "patch"]),
        _rule([BUS], ["commands"], READ + ["delete"]), _rule([SCHEDULING], ["podgroups", "queues"], WRITE),
        _rule([SCHEDULING], ["queues/status"], ["update", "patch"]), _rule([TOPOLOGY], ["hypernodes"], WRITE),
        _rule([TOPOLOGY], ["hypernodes/status"], ["update", "patch"]),
        _rule([FLOW], ["jobflows", "jobtemplates"], WRITE),
        _rule([FLOW], ["jobflows/status", "jobtemplates/status"], ["update", "patch"]),
        # the queuebinding controller (volcanic's own) reads bindings and writes their usage.
        _rule([VOLCANIC], ["queuebindings"], READ), _rule([VOLCANIC], ["queuebindings/status"], ["update", "patch"]),
        _rule([""], ["pods", "services", "configmaps", "secrets", "persistentvolumeclaims"], WRITE),
        _rule(["networking.k8s.io"], ["networkpolicies"], WRITE), _rule([""], ["namespaces", "nodes"], READ),
        _rule(["scheduling.k8s.io"], ["priorityclasses"], READ), _rule(["apps"], ["replicasets", "statefulsets"], READ),
        _rule(["apiextensions.k8s.io"], ["customresourcedefinitions"], READ), LEASES, EVENTS],
    # Admission reads what Volcano's rules read, and registers its webhook configurations.
    "webhook": [
        _rule([SCHEDULING], ["queues", "podgroups"], READ), _rule([BATCH], ["jobs"], READ),
        _rule([VOLCANIC], ["queuebindings"], READ),
        _rule([""], ["namespaces", "pods"], READ), _rule(["scheduling.k8s.io"], ["priorityclasses"], READ),
        _rule(["admissionregistration.k8s.io"], ["mutatingwebhookconfigurations",
                                                 "validatingwebhookconfigurations"], WRITE), EVENTS],
}


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
