"""The kinds volcanic reads and writes, and how each behaves on an API server: the one table
from which the CRDs `volcanic install` applies, the webhook registrations and the admission
routing are made (volcanic.real.manifests, volcanic.real.registrations, volcanic.admission).
Adding a kind is one entry here, plus its schema (kube/crds.py) and its rules."""

from __future__ import annotations

from dataclasses import dataclass

from volcanic.kube.errors import InvalidObject

# Volcano's API groups: the kinds in them are Volcano's CRDs.
BATCH, SCHEDULING, BUS = "batch.volcano.sh", "scheduling.volcano.sh", "bus.volcano.sh"
TOPOLOGY, NODEINFO = "topology.volcano.sh", "nodeinfo.volcano.sh"
FLOW = "flow.volcano.sh"
VOLCANO_GROUPS = (BATCH, SCHEDULING, BUS, TOPOLOGY, NODEINFO, FLOW)
# volcanic's own API group (QueueBinding): not Volcano's, but installed as a CRD beside them.
VOLCANIC = "scheduling.volcanic.dev"


@dataclass(frozen=True)
class Column:
    """A CRD printer column (what `kubectl get` shows)."""

    name: str
    path: str
    type: str = "string"
    priority: int = 0


AGE = Column("AGE", ".metadata.creationTimestamp", "date")


@dataclass(frozen=True)
class Admission:
    """The operations Volcano's webhooks are registered for, per phase (its chart's
    installer/helm/chart/volcano/templates/webhooks.yaml): the API server calls a rule only for
    those, and so does the embedded cluster. `webhook`: whether Volcano registers a webhook
    (volcanic also checks Commands, which have none, in the embedded cluster). `decoded`: the
    versions Volcano's webhook decoders accept (pkg/webhooks/schema), in the order its message
    for another resource lists them."""

    mutate: tuple[str, ...]
    validate: tuple[str, ...]
    webhook: bool = True
    decoded: tuple[str, ...] = ()


@dataclass(frozen=True)
class Kind:
    name: str
    api_version: str        # "v1" or "group/version"
    plural: str             # the resource in REST paths
    namespaced: bool = True
    # Status is written only through update_status, and create ignores the status sent.
    # Nodes and Namespaces are written whole in the embedded cluster: no kubelet reports them.
    # PodGroups are written whole too: Volcano's CRD has no status subresource, and its
    # scheduler and controllers write a PodGroup's status with a plain update.
    status_subresource: bool = False
    # What the API server puts in status on create.
    initial_status: tuple[tuple[str, str], ...] = ()
    short_names: tuple[str, ...] = ()  # of a CRD
    columns: tuple[Column, ...] = ()   # of a CRD
    admission: Admission | None = None  # Volcano's admission rules for the kind, if any

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    @property
    def crd(self) -> bool:
        """One of Volcano's custom resources, or volcanic's own (volcanic install creates its CRD)."""
        return self.group in VOLCANO_GROUPS or self.group == VOLCANIC

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """The REST path of the collection (or of one object when `name` is given)."""
        prefix = f"/apis/{self.api_version}" if self.group else f"/api/{self.api_version}"
        where = f"/namespaces/{namespace}" if self.namespaced and namespace else ""
        return f"{prefix}{where}/{self.plural}" + (f"/{name}" if name else "")

    def not_found(self, name: str, plural: bool = True) -> str:
        """The API server's NotFound message ('queues.scheduling.volcano.sh "q" not found';
        Volcano's listers name the resource in the singular)."""
        resource = self.plural if plural else self.name.lower()
        return f'{resource}.{self.group} "{name}" not found' if self.group else f'{resource} "{name}" not found'


KINDS = {k.name: k for k in [
    Kind("Namespace", "v1", "namespaces", namespaced=False),
    Kind("Node", "v1", "nodes", namespaced=False),
    Kind("Pod", "v1", "pods", status_subresource=True, initial_status=(("phase", "Pending"),),
         admission=Admission(("CREATE",), ("CREATE",))),
    Kind("Service", "v1", "services"),
    Kind("ConfigMap", "v1", "configmaps"),
    Kind("Secret", "v1", "secrets"),
    # Claims and volumes are Pending until the PV controller says otherwise (the API server's
    # defaulting); their status is written through the status subresource, as in Kubernetes.
    Kind("PersistentVolumeClaim", "v1", "persistentvolumeclaims", status_subresource=True,
         initial_status=(("phase", "Pending"),)),
    Kind("PersistentVolume", "v1", "persistentvolumes", namespaced=False, status_subresource=True,
         initial_status=(("phase", "Pending"),)),
    Kind("StorageClass", "storage.k8s.io/v1", "storageclasses", namespaced=False),
    Kind("Event", "v1", "events"),
    Kind("NetworkPolicy", "networking.k8s.io/v1", "networkpolicies"),
    Kind("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", namespaced=False),
    # Read by the scheduler's pdb and resourcequota plugins; Kubernetes' controllers write their status.
    Kind("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets", status_subresource=True),
    Kind("ResourceQuota", "v1", "resourcequotas", status_subresource=True),
    # Read by the PodGroup controller (WorkLoadSupport); their controllers are Kubernetes'.
    Kind("ReplicaSet", "apps/v1", "replicasets", status_subresource=True),
    Kind("StatefulSet", "apps/v1", "statefulsets", status_subresource=True),
    Kind("Job", f"{BATCH}/v1alpha1", "jobs", status_subresource=True, short_names=("vcjob", "vj"),
         columns=(Column("STATUS", ".status.state.phase"), Column("minAvailable", ".status.minAvailable", "integer"),
                  Column("RUNNINGS", ".status.running", "integer"), AGE, Column("QUEUE", ".spec.queue", priority=1)),
         admission=Admission(("CREATE",), ("CREATE", "UPDATE"), decoded=("v1alpha1", "v1"))),
    Kind("Command", f"{BUS}/v1alpha1", "commands", admission=Admission(("CREATE",), ("CREATE",), webhook=False)),
    Kind("PodGroup", f"{SCHEDULING}/v1beta1", "podgroups", short_names=("pg", "podgroup-v1beta1"),
         columns=(Column("STATUS", ".status.phase"), Column("minMember", ".spec.minMember", "integer"),
                  Column("RUNNINGS", ".status.running", "integer"), AGE, Column("QUEUE", ".spec.queue", priority=1)),
         admission=Admission(("CREATE",), ("CREATE",), decoded=("v1", "v1beta1"))),
    Kind("Queue", f"{SCHEDULING}/v1beta1", "queues", namespaced=False, status_subresource=True,
         short_names=("q", "queue-v1beta1"), columns=(Column("PARENT", ".spec.parent"),),
         admission=Admission(("CREATE",), ("CREATE", "UPDATE", "DELETE"), decoded=("v1", "v1beta1"))),
    # Volcano's CRD names its columns in mixed case and declares Tier a string.
    Kind("HyperNode", f"{TOPOLOGY}/v1alpha1", "hypernodes", namespaced=False, status_subresource=True,
         short_names=("hn",), columns=(Column("Tier", ".spec.tier"), Column("TierName", ".spec.tierName"),
                                       Column("NodeCount", ".status.nodeCount", "integer"),
                                       Column("Age", ".metadata.creationTimestamp", "date")),
         admission=Admission((), ("CREATE", "UPDATE"))),
    # A node's NUMA layout, named after the node, written by Volcano's resource exporter and read by
    # the scheduler's numa-aware plugin; the CRD has no status.
    Kind("Numatopology", f"{NODEINFO}/v1alpha1", "numatopologies", namespaced=False, short_names=("numatopo",)),
    # Volcano's workflow kinds (volcanic.controllers.jobflow). Only JobFlows have a webhook
    # (/jobflows/validate, pkg/webhooks/admission/jobflows); Volcano's CRD names its columns in
    # mixed case.
    Kind("JobFlow", f"{FLOW}/v1alpha1", "jobflows", status_subresource=True, short_names=("jf",),
         columns=(Column("Status", ".status.state.phase"), Column("Age", ".metadata.creationTimestamp", "date")),
         admission=Admission((), ("CREATE", "UPDATE"))),
    Kind("JobTemplate", f"{FLOW}/v1alpha1", "jobtemplates", status_subresource=True, short_names=("jt",)),
    # Jobs on a schedule (volcanic.controllers.cronjob; /cronjobs/validate,
    # pkg/webhooks/admission/cronjobs). Volcano's CRD has no printer columns.
    Kind("CronJob", f"{BATCH}/v1alpha1", "cronjobs", status_subresource=True, short_names=("cronvcjob", "cronvj"),
         admission=Admission((), ("CREATE", "UPDATE"))),
    # volcanic's own: binds a queue to namespaces (volcanic.admission.queuebindings,
    # volcanic.controllers.queuebinding); validated by /queuebindings/validate.
    Kind("QueueBinding", f"{VOLCANIC}/v1alpha1", "queuebindings", namespaced=False, status_subresource=True,
         short_names=("qb",), columns=(Column("QUEUE", ".spec.queue"), AGE),
         admission=Admission((), ("CREATE", "UPDATE"))),
]}
# The kinds Volcano's admission has rules for, in the order the chain is built.
ADMITTED = tuple(k for k in KINDS.values() if k.admission is not None)


def kind_named(name: str) -> Kind:
    """The Kind called `name`; an unknown name is an InvalidObject listing the known ones."""
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise InvalidObject(f"object: unknown kind {name!r}; known kinds: {', '.join(sorted(KINDS))}")
    return kind
