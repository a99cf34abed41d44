"""Kubernetes objects for tests, shaped like Volcano's test builders."""

from __future__ import annotations

import copy
from typing import Any, Iterator


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", labels: dict | None = None,
         **extra: str) -> dict[str, Any]:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods, **extra}
    return {"kind": "Node", "metadata": {"name": name, "labels": labels or {}}, "status": {"allocatable": alloc}}


def pod(name: str, group: str | None, cpu: str = "1", memory: str = "1Gi", ns: str = "ns", node_name: str = "",
        phase: str = "Pending", **meta: Any) -> dict[str, Any]:
    annotations = dict(meta.pop("annotations", {}))
    if group:
        annotations["scheduling.k8s.io/group-name"] = group
    p = {"kind": "Pod",
         "metadata": {"name": name, "namespace": ns, "annotations": annotations, **meta},
         "spec": {"schedulerName": "volcano",
                  "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]},
         "status": {"phase": phase}}
    if node_name:
        p["spec"]["nodeName"] = node_name
    return p


def podgroup(name: str, min_member: int = 1, queue: str = "default", ns: str = "ns", phase: str = "Inqueue",
             **spec: Any) -> dict[str, Any]:
    return {"kind": "PodGroup", "metadata": {"name": name, "namespace": ns},
            "spec": {"minMember": min_member, "queue": queue, **spec}, "status": {"phase": phase}}


def queue(name: str, weight: int = 1, **spec: Any) -> dict[str, Any]:
    return {"kind": "Queue", "metadata": {"name": name}, "spec": {"weight": weight, **spec}}


class StaticLister:
    """Stored objects as an admission request's lister serves them (get/list of copies)."""

    def __init__(self, *objs: dict) -> None:
        self.objs = [copy.deepcopy(o) for o in objs]

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        for o in self.objs:
            meta = o["metadata"]
            if o["kind"] == kind and meta["name"] == name and (
                    namespace is None or meta.get("namespace", "default") == namespace):
                return copy.deepcopy(o)
        return None

    def list(self, kind: str, namespace: str | None = None) -> list[dict]:
        return [copy.deepcopy(o) for o in self.objs if o["kind"] == kind
                and (namespace is None or o["metadata"].get("namespace", "default") == namespace)]


def walk(doc: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """(path, value) for the document and every value inside it, depth first."""
    yield path, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from walk(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from walk(v, path + (i,))
