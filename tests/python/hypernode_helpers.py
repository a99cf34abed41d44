"""Builders for the HyperNode tests (test_admission_hypernodes.py, test_hypernode_kind.py,
test_hypernode_discovery.py, test_hypernode_status.py): HyperNodes, their members, nodes and
the hyperNode-controller's ConfigMap."""

from __future__ import annotations

from typing import Any

import yaml

from volcanic.kube.kinds import KINDS

API_VERSION = KINDS["HyperNode"].api_version
CONFIGMAP = ("volcano-system", "volcano-controller-configmap")
SOURCE = "volcano.sh/network-topology-source"


def exact(name: str, type_: str = "Node") -> dict:
    return {"type": type_, "selector": {"exactMatch": {"name": name}}}


def regex(pattern: str, type_: str = "Node") -> dict:
    return {"type": type_, "selector": {"regexMatch": {"pattern": pattern}}}


def labels(type_: str = "Node", **match: str) -> dict:
    return {"type": type_, "selector": {"labelMatch": {"matchLabels": match}}}


def hypernode(name: str, tier: Any = 1, *members: dict, **spec: Any) -> dict:
    """A HyperNode; `members` default to one exactMatch of node n1."""
    body: dict[str, Any] = {"tier": tier, "members": list(members) or [exact("n1")], **spec}
    return {"apiVersion": API_VERSION, "kind": "HyperNode", "metadata": {"name": name}, "spec": body}


def node(name: str, **node_labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": node_labels}}


def discovery_conf(types: dict[str, list[str]], source: str = "label", enabled: bool = True) -> dict:
    """One networkTopologyDiscovery entry: type -> node label keys, top tier first."""
    config = {"networkTopologyTypes": {t: [{"nodeLabel": k} for k in keys] for t, keys in types.items()}}
    return {"source": source, "enabled": enabled, "config": config}


def configmap(*entries: dict, text: str | None = None) -> dict:
    """The controller-manager's ConfigMap with `entries` (or `text` as the key's value)."""
    conf = text if text is not None else yaml.safe_dump({"networkTopologyDiscovery": list(entries)})
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": CONFIGMAP[1], "namespace": CONFIGMAP[0]},
            "data": {"volcano-controller.conf": conf}}
