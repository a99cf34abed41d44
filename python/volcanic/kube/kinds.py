"""The kinds volcanic reads and writes, and how each behaves on an API server."""

from __future__ import annotations

from dataclasses import dataclass

from volcanic.kube.errors import InvalidObject


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

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        """The REST path of the collection (or of one object when `name` is given)."""
        prefix = f"/apis/{self.api_version}" if self.group else f"/api/{self.api_version}"
        where = f"/namespaces/{namespace}" if self.namespaced and namespace else ""
        return f"{prefix}{where}/{self.plural}" + (f"/{name}" if name else "")


KINDS = {k.name: k for k in [
    Kind("Namespace", "v1", "namespaces", namespaced=False),
    Kind("Node", "v1", "nodes", namespaced=False),
    Kind("Pod", "v1", "pods", status_subresource=True, initial_status=(("phase", "Pending"),)),
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
    # Read by the PodGroup controller (WorkLoadSupport); their controllers are Kubernetes'.
    Kind("ReplicaSet", "apps/v1", "replicasets", status_subresource=True),
    Kind("StatefulSet", "apps/v1", "statefulsets", status_subresource=True),
    Kind("Job", "batch.volcano.sh/v1alpha1", "jobs", status_subresource=True),
    Kind("PodGroup", "scheduling.volcano.sh/v1beta1", "podgroups"),
    Kind("Queue", "scheduling.volcano.sh/v1beta1", "queues", namespaced=False, status_subresource=True),
    Kind("Command", "bus.volcano.sh/v1alpha1", "commands"),
]}


def kind_named(name: str) -> Kind:
    """The Kind called `name`; an unknown name is an InvalidObject listing the known ones."""
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise InvalidObject(f"object: unknown kind {name!r}; known kinds: {', '.join(sorted(KINDS))}")
    return kind
