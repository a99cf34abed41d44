"""HyperNodes on a real API server (docs/network-topology.md): the CRD `volcanic install`
applies (Volcano's config/crd/volcano/bases/topology.volcano.sh_hypernodes.yaml, its CEL
selector rules included) and its printer columns; the /hypernodes/validate webhook
(pkg/webhooks/admission/hypernodes/validate/admit_hypernode.go and the chart's
policy/hypernodes-validating.yaml); the hyperNode-controller's label discovery and
status.nodeCount (pkg/controllers/hypernode/) in `volcanic up`."""

from __future__ import annotations

import yaml

from volcanic.kube.kinds import KINDS
from volcanic.real.devcluster.cluster import KubectlError, kwok_node

API_VERSION = KINDS["HyperNode"].api_version
SOURCE = "volcano.sh/network-topology-source"


def hypernode(name: str, *selectors: dict, tier: int = 1) -> dict:
    return {"apiVersion": API_VERSION, "kind": "HyperNode", "metadata": {"name": name},
            "spec": {"tier": tier, "members": [{"type": "Node", "selector": s} for s in selectors]}}


def refusal(env, obj: dict) -> str:
    try:
        env.apply(obj)
    except KubectlError as e:
        return str(e)
    raise AssertionError(f"{obj['metadata']['name']} was admitted")


def test_the_crd_its_columns_and_its_admission(env, up):
    """The CRD's schema and CEL rules, then the webhook, refuse; kubectl shows Volcano's
    columns with the count the controller wrote."""
    env.apply(kwok_node("hn-node-0"))
    hn = hypernode("hn-e2e", {"exactMatch": {"name": "hn-node-0"}}, {"regexMatch": {"pattern": "^hn-node-"}})
    hn["spec"]["tierName"] = "leaf"
    env.apply(hn)
    assert env.wait(lambda: ((env.store.get("HyperNode", "hn-e2e") or {}).get("status") or {}).get("nodeCount") == 1)
    table = env.kubectl("get", "hn", "hn-e2e").stdout.split()
    assert table[:5] == ["NAME", "TIER", "TIERNAME", "NODECOUNT", "AGE"] and table[5:9] == ["hn-e2e", "1", "leaf", "1"]
    both = {"exactMatch": {"name": "a"}, "regexMatch": {"pattern": "a"}}
    assert "Only one of ExactMatch, RegexMatch, or LabelMatch can be specified" in refusal(env, hypernode("bad", both))
    assert "member regexMatch pattern is invalid: unmatched parentheses" in \
        refusal(env, hypernode("bad", {"regexMatch": {"pattern": "a(b"}}))
    assert "invalid or unsupported Perl syntax" in refusal(env, hypernode("bad", {"regexMatch": {"pattern": "(?=a)"}}))
    env.kubectl("delete", "hn", "hn-e2e")
    env.kubectl("delete", "node", "hn-node-0")  # the other tests count the session's nodes


def test_label_discovery_follows_the_configmap_and_the_nodes(env, up):
    """The ConfigMap in volcano-system turns label discovery on; nodes labelled by leaf get
    tier-1 HyperNodes; a relabel moves a node; a hand-made HyperNode is left alone."""
    for i in range(4):
        node = kwok_node(f"leaf-node-{i}")
        node["metadata"]["labels"]["e2e-leaf"] = f"leaf{i // 2}"
        env.apply(node)
    env.apply(hypernode("hand-made", {"exactMatch": {"name": "leaf-node-0"}}))
    conf = {"networkTopologyDiscovery": [{"source": "label", "enabled": True, "config": {
        "networkTopologyTypes": {"e2e": [{"nodeLabel": "e2e-leaf"}, {"nodeLabel": "kubernetes.io/hostname"}]}}}]}
    configmap = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "volcano-controller-configmap", "namespace": "volcano-system"},
                 "data": {"volcano-controller.conf": yaml.safe_dump(conf)}}
    env.apply(configmap, namespace="volcano-system")

    def leaves():
        return {h["metadata"]["labels"]["e2e-leaf"]: sorted(m["selector"]["exactMatch"]["name"]
                                                           for m in h["spec"]["members"])
                for h in env.store.list("HyperNode") if (h["metadata"].get("labels") or {}).get(SOURCE) == "label"}
    want = {"leaf0": ["leaf-node-0", "leaf-node-1"], "leaf1": ["leaf-node-2", "leaf-node-3"]}
    assert env.wait(lambda: leaves() == want), leaves()
    env.kubectl("label", "node", "leaf-node-1", "e2e-leaf=leaf1", "--overwrite")
    want = {"leaf0": ["leaf-node-0"], "leaf1": ["leaf-node-1", "leaf-node-2", "leaf-node-3"]}
    assert env.wait(lambda: leaves() == want), leaves()
    assert "labels" not in env.store.get("HyperNode", "hand-made")["metadata"]
    env.apply({**configmap, "data": {"volcano-controller.conf": yaml.safe_dump({"networkTopologyDiscovery": [
        {"source": "label", "enabled": True, "config": {"networkTopologyTypes": {}}}]})}}, namespace="volcano-system")
    assert env.wait(lambda: leaves() == {}), leaves()
    assert env.store.get("HyperNode", "hand-made") is not None
    env.kubectl("delete", "configmap", "-n", "volcano-system", "volcano-controller-configmap")
    env.kubectl("delete", "hn", "hand-made")
    env.kubectl("delete", "node", *[f"leaf-node-{i}" for i in range(4)])
