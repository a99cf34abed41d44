"""Label-based HyperNode discovery in the embedded cluster, as Volcano v1.15.1's
hyperNode-controller does it: pkg/controllers/hypernode/discovery/label/label.go (tiers from
node labels, names, members), hypernode_controller.go reconcileTopology (create, update and
delete only what carries volcano.sh/network-topology-source), discovery/manager.go (a
ConfigMap change restarts the enabled sources and stops the others) and config/loader.go,
configmap_handler.go (where the ConfigMap is and what it holds)."""

from __future__ import annotations

import re

import pytest

from hypernode_helpers import CONFIGMAP, SOURCE, configmap, discovery_conf, exact, hypernode, node
import volcanic
from volcanic.controllers.hypernode.config import configmap_location, parse_config
from volcanic.controllers.hypernode.label import clean

FABRIC = {"fabric": ["spine", "leaf", "kubernetes.io/hostname"]}


def _fabric(c: volcanic.Cluster, count: int = 8) -> None:
    """`count` nodes, two to a leaf, four to a spine."""
    for i in range(count):
        c.apply(node(f"n{i}", spine=f"s{i // 4}", leaf=f"l{i // 2}", **{"kubernetes.io/hostname": f"n{i}"}))


def _by_pair(c: volcanic.Cluster) -> dict[str, dict]:
    """label "key=value" -> the discovered HyperNode carrying it."""
    out = {}
    for hn in c.list("HyperNode"):
        labels = dict(hn["metadata"].get("labels") or {})
        if labels.pop(SOURCE, None) == "label":
            (pair,) = labels.items()
            out["=".join(pair)] = hn
    return out


def _discovered(c: volcanic.Cluster) -> dict[str, tuple]:
    """label "key=value" -> (tier, tierName, member names, member types) of the discovered HyperNodes."""
    return {pair: (hn["spec"]["tier"], hn["spec"]["tierName"],
                   [m["selector"]["exactMatch"]["name"] for m in hn["spec"]["members"]],
                   {m["type"] for m in hn["spec"]["members"]}) for pair, hn in _by_pair(c).items()}


def _names(c: volcanic.Cluster) -> dict[str, str]:
    """label "key=value" -> name of the discovered HyperNodes."""
    return {pair: hn["metadata"]["name"] for pair, hn in _by_pair(c).items()}


def _cluster(types=FABRIC, count: int = 8) -> volcanic.Cluster:
    c = volcanic.Cluster()
    _fabric(c, count)
    c.apply(configmap(discovery_conf(types)))
    c.run(0)
    return c


def test_spine_and_leaf_labels_make_two_tiers():
    """label.go: the last label (hostname) dropped, the one above it tier 1 with the nodes as
    Node members, the spine tier 2 with the leaves as HyperNode members; tierName the label
    key; members exactMatch and sorted; names hypernode-<type>-tier<N>-<5 chars>, the same on
    every run (volcanic's deliberate difference: Volcano's five characters are random)."""
    c = _cluster()
    found = _discovered(c)
    names = _names(c)
    assert found == {
        **{f"leaf=l{i}": (1, "leaf", [f"n{2 * i}", f"n{2 * i + 1}"], {"Node"}) for i in range(4)},
        "spine=s0": (2, "spine", sorted([names["leaf=l0"], names["leaf=l1"]]), {"HyperNode"}),
        "spine=s1": (2, "spine", sorted([names["leaf=l2"], names["leaf=l3"]]), {"HyperNode"}),
    }
    for pair, name in names.items():
        tier = 1 if pair.startswith("leaf") else 2
        assert re.fullmatch(rf"hypernode-fabric-tier{tier}-[bcdfghjklmnpqrstvwxz2456789]{{5}}", name)
    assert _names(_cluster()) == names
    assert {h["metadata"]["name"]: h["status"]["nodeCount"] for h in c.list("HyperNode")} == \
        dict.fromkeys(names.values(), 2)
    assert c.errors == []


def test_a_relabelled_node_moves_and_names_are_kept():
    """Node label changes re-run discovery: n1 moves from leaf l0 to l1; n7 moves to a new leaf
    under spine s0. HyperNodes keep their names (an existing HyperNode labelled with the pair
    is reused)."""
    c = _cluster()
    names = _names(c)
    n1 = c.get("Node", "n1")
    n1["metadata"]["labels"]["leaf"] = "l1"
    c.apply(n1)
    n7 = c.get("Node", "n7")
    n7["metadata"]["labels"].update(spine="s0", leaf="l9")
    c.apply(n7)
    c.run(0)
    found = _discovered(c)
    assert found["leaf=l0"][2] == ["n0"] and found["leaf=l1"][2] == ["n1", "n2", "n3"]
    assert found["leaf=l3"][2] == ["n6"] and found["leaf=l9"] == (1, "leaf", ["n7"], {"Node"})
    new = _names(c)
    assert found["spine=s0"][2] == sorted([new["leaf=l0"], new["leaf=l1"], new["leaf=l9"]])
    assert {k: v for k, v in new.items() if k != "leaf=l9"} == names


def test_tiers_stop_at_the_first_missing_label_and_the_last_label_is_always_dropped():
    """label.go: a node without the spine label is still in its leaf (no tier 2 above it); a
    node without the leaf label is in nothing. The last configured label is dropped whatever
    it is: [spine, leaf] makes only spine HyperNodes, of nodes."""
    c = volcanic.Cluster()
    c.apply(node("a", leaf="l0"))
    c.apply(node("b", spine="s0"))
    c.apply(configmap(discovery_conf(FABRIC)))
    c.run(0)
    assert _discovered(c) == {"leaf=l0": (1, "leaf", ["a"], {"Node"})}
    c.apply(configmap(discovery_conf({"fabric": ["spine", "leaf"]})))
    c.run(0)
    assert _discovered(c) == {"spine=s0": (1, "spine", ["b"], {"Node"})}


def test_only_hypernodes_of_the_source_are_touched():
    """reconcileTopology lists by the source label: a hand-made HyperNode (even one named like
    discovery names them, or naming the same nodes) is never updated or deleted; discovered
    ones that are no longer discovered are deleted."""
    c = volcanic.Cluster()
    manual = c.apply(hypernode("hypernode-fabric-tier1-manual", 1, exact("n0"), tierName="leaf"))
    _fabric(c)
    c.apply(configmap(discovery_conf(FABRIC)))
    c.run(0)
    assert len(_discovered(c)) == 6
    c.apply(configmap(discovery_conf({})))  # the label source runs, with no types
    c.run(0)
    assert _discovered(c) == {}
    kept = c.get("HyperNode", "hypernode-fabric-tier1-manual")
    assert kept["spec"] == manual["spec"] and "labels" not in kept["metadata"]
    assert c.list("HyperNode") == [kept]
    c.delete("ConfigMap", CONFIGMAP[1], CONFIGMAP[0])
    c.run(0)
    assert c.list("HyperNode") == [kept]


def test_stopping_discovery_keeps_what_it_made():
    """manager.go: a ConfigMap that disables the label source, or is deleted (an empty
    configuration), stops the discoverer; its HyperNodes stay (reconcileTopology is not run
    for a stopped source), and node changes no longer change them."""
    for stop in ("disable", "delete"):
        c = _cluster()
        before = c.list("HyperNode")
        if stop == "disable":
            c.apply(configmap(discovery_conf(FABRIC, enabled=False)))
        else:
            c.delete("ConfigMap", CONFIGMAP[1], CONFIGMAP[0])
        c.run(0)
        n0 = c.get("Node", "n0")
        n0["metadata"]["labels"]["leaf"] = "l7"
        c.apply(n0)
        c.run(0)
        assert c.list("HyperNode") == before


def test_a_deleted_hypernode_is_discovered_again_under_its_name():
    """DeleteHyperNode re-runs discovery; the deterministic name comes back."""
    c = _cluster()
    names = _names(c)
    c.delete("HyperNode", names["leaf=l2"])
    c.run(0)
    assert _names(c) == names and _discovered(c)["leaf=l2"][2] == ["n4", "n5"]


def test_an_existing_labelled_hypernode_lends_its_name():
    """buildHyperNodeName: a HyperNode labelled with the source and the pair, whose name starts
    with hypernode-<type>-tier<N>, is the pair's (its spec replaced, its labels merged)."""
    c = volcanic.Cluster()
    old = hypernode("hypernode-fabric-tier1-old01", 1, exact("gone"))
    old["metadata"]["labels"] = {SOURCE: "label", "leaf": "l0", "team": "a"}
    c.apply(old)
    _fabric(c, 2)
    c.apply(configmap(discovery_conf(FABRIC)))
    c.run(0)
    hn = c.get("HyperNode", "hypernode-fabric-tier1-old01")
    assert [m["selector"]["exactMatch"]["name"] for m in hn["spec"]["members"]] == ["n0", "n1"]
    assert hn["spec"]["tierName"] == "leaf" and hn["metadata"]["labels"]["team"] == "a"
    assert len(c.list("HyperNode")) == 2  # and spine s0 above it


def test_each_type_is_discovered_and_type_names_are_cleaned():
    """Several types at once; a type name becomes lower case, characters other than letters,
    digits, '.' and '-' become '-' (cleanString)."""
    c = volcanic.Cluster()
    c.apply(node("n0", leaf="l0", pdu="p0"))
    c.apply(configmap(discovery_conf({"fabric": ["leaf", "host"], "Power_Feed": ["pdu", "host"]})))
    c.run(0)
    assert set(_discovered(c)) == {"leaf=l0", "pdu=p0"}
    assert _names(c)["pdu=p0"].startswith("hypernode-power-feed-tier1-")
    assert clean("Rack.A_2/x") == "rack.a-2-x"


@pytest.mark.parametrize("text,field", [
    ("networkTopologyDiscovery: [", "volcano-controller.conf: not YAML"),
    ("networkTopologyDiscovery: {source: label}", "networkTopologyDiscovery: must be a list of sources"),
])
def test_a_configmap_that_cannot_be_read_keeps_the_running_configuration(text, field):
    """loader.go: an unreadable configuration is an error; the manager keeps its running
    discoverers. volcanic says so in a Warning Event on the ConfigMap, naming it and the
    field, and never fails."""
    c = _cluster()
    c.apply(configmap(text=text))
    n0 = c.get("Node", "n0")
    n0["metadata"]["labels"]["leaf"] = "l3"
    c.apply(n0)
    c.run(0)
    assert _discovered(c)["leaf=l3"][2] == ["n0", "n6", "n7"]  # discovery still runs
    events = [e for e in c.list("Event", CONFIGMAP[0]) if e["reason"] == "InvalidConfig"]
    assert len(events) == 1 and events[0]["type"] == "Warning"
    assert events[0]["involvedObject"]["name"] == CONFIGMAP[1]
    assert events[0]["message"].startswith(f"ConfigMap {CONFIGMAP[0]}/{CONFIGMAP[1]}: volcano-controller.conf: ")
    assert field in events[0]["message"] and c.errors == []


def test_parts_of_a_configuration_that_are_wrong_are_left_out_and_said():
    """parseCfg skips a type name over 20 characters and one listing a label twice; the ufm
    source (a UFM server's API) and unknown sources are not run by volcanic. Each is a Warning
    Event naming the field; the rest runs."""
    c = volcanic.Cluster()
    c.apply(node("n0", leaf="l0", rack="r0"))
    types = {"fabric": ["leaf", "host"], "a-very-long-type-name-x": ["rack", "host"], "twice": ["rack", "rack"]}
    c.apply(configmap(discovery_conf(types), {"source": "ufm", "enabled": True}, {"source": "roce", "enabled": True},
                      {"source": "label", "enabled": "yes"}))
    c.run(0)
    assert set(_discovered(c)) == {"leaf=l0"}
    messages = sorted(e["message"].split(": ", 2)[2] for e in c.list("Event", CONFIGMAP[0]))
    assert messages == [
        "networkTopologyDiscovery[0].config.networkTopologyTypes.a-very-long-type-name-x: the type name is longer "
        "than 20 characters; type skipped",
        "networkTopologyDiscovery[0].config.networkTopologyTypes.twice: a node label is listed twice; type skipped",
        "networkTopologyDiscovery[1].source: 'ufm' is not run: polls a UFM server, which volcanic does not implement",
        "networkTopologyDiscovery[2].source: 'roce' is not run: unknown source (Volcano knows label and ufm)",
        "networkTopologyDiscovery[3]: source must be a string and enabled a boolean, got 'label' and 'yes'"]


def test_the_configmap_is_found_as_volcano_finds_it():
    """configmap_handler.go: $KUBE_POD_NAMESPACE (volcano-system), $HELM_RELEASE_NAME
    ("volcano") + "-controller-configmap"; no ConfigMap is an empty configuration."""
    assert configmap_location({}) == CONFIGMAP
    assert configmap_location({"KUBE_POD_NAMESPACE": "ops", "HELM_RELEASE_NAME": "vc"}) == \
        ("ops", "vc-controller-configmap")
    assert parse_config(None).label_types is None
    assert parse_config(configmap(discovery_conf(FABRIC))).label_types == {"fabric": ("leaf", "spine")}
