"""The kinds the embedded cluster stores, and how each behaves."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    name: str
    api_version: str
    namespaced: bool = True
    # Status is written only through update_status, and create ignores the status sent.
    # Nodes and Namespaces are written whole here: there is no kubelet to report them.
    status_subresource: bool = False
    # What the API server puts in status on create.
    initial_status: tuple[tuple[str, str], ...] = ()


KINDS = {k.name: k for k in [
    Kind("Namespace", "v1", namespaced=False),
    Kind("Node", "v1", namespaced=False),
    Kind("Pod", "v1", status_subresource=True, initial_status=(("phase", "Pending"),)),
    Kind("Service", "v1"),
    Kind("ConfigMap", "v1"),
    Kind("Secret", "v1"),
    Kind("PersistentVolumeClaim", "v1"),
    Kind("Event", "v1"),
    Kind("NetworkPolicy", "networking.k8s.io/v1"),
    Kind("PriorityClass", "scheduling.k8s.io/v1", namespaced=False),
    Kind("Job", "batch.volcano.sh/v1alpha1", status_subresource=True),
    Kind("PodGroup", "scheduling.volcano.sh/v1beta1", status_subresource=True),
    Kind("Queue", "scheduling.volcano.sh/v1beta1", namespaced=False, status_subresource=True),
    Kind("Command", "bus.volcano.sh/v1alpha1"),
]}


def kind_named(name: str) -> Kind:
    """The Kind called `name`; an unknown name is an InvalidObject listing the known ones."""
    from volcanic.errors import InvalidObject
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise InvalidObject(f"object: unknown kind {name!r}; known kinds: {', '.join(sorted(KINDS))}")
    return kind
