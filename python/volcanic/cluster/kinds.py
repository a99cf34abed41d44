"""The kinds the embedded cluster stores, and how each behaves."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    name: str
    api_version: str
    namespaced: bool = True
    status_subresource: bool = False


KINDS = {k.name: k for k in [
    Kind("Namespace", "v1", namespaced=False, status_subresource=True),
    Kind("Node", "v1", namespaced=False, status_subresource=True),
    Kind("Pod", "v1", status_subresource=True),
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
