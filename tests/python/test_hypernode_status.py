"""HyperNode status.nodeCount, kept by the hyperNode-controller as Volcano v1.15.1's
pkg/controllers/hypernode/hypernode_handler.go syncHyperNodeStatus/actualNodeCnt does: the
number of distinct names the direct members stand for, by
pkg/scheduler/api/hyper_node_info.go GetMembers (exactMatch: the name, node or not; regexMatch:
the node names it matches anywhere; labelMatch: the nodes selected, none for an empty
selector). Volcano counts again when the HyperNode changes; volcanic also when nodes come, go
or are relabelled, for HyperNodes that select nodes by pattern or labels."""

from __future__ import annotations

from hypernode_helpers import exact, hypernode, labels, node, regex
import volcanic
from volcanic.controllers.hypernode.members import members_of, node_count


def _count(c: volcanic.Cluster, name: str):
    return (c.get("HyperNode", name).get("status") or {}).get("nodeCount")


def test_exact_members_count_their_names_whether_or_not_such_nodes_exist():
    """GetMembers inserts an exactMatch name verbatim; a HyperNode of HyperNodes counts its
    children, not their nodes."""
    c = volcanic.Cluster()
    c.apply(node("n1"))
    c.apply(hypernode("s0", 1, exact("n1"), exact("ghost")))
    c.apply(hypernode("s1", 2, exact("s0", "HyperNode"), exact("s9", "HyperNode")))
    c.run(0)
    assert (_count(c, "s0"), _count(c, "s1")) == (2, 2)


def test_regex_and_label_members_count_matching_nodes_and_follow_node_changes():
    """A pattern matches anywhere in the name (Go's MatchString); matchLabels and
    matchExpressions select by labels. Adding, deleting and relabelling nodes counts again
    (volcanic's addition: Volcano's count changes only with the HyperNode)."""
    c = volcanic.Cluster()
    for i in range(3):
        c.apply(node(f"n{i}", rack="r1" if i else "r0"))
    c.apply(hypernode("by-name", 1, regex("n[01]")))
    c.apply(hypernode("by-rack", 1, labels(rack="r1")))
    rack_in = {"type": "Node", "selector": {"labelMatch": {"matchExpressions": [
        {"key": "rack", "operator": "In", "values": ["r0", "r9"]}]}}}
    c.apply(hypernode("by-expression", 1, rack_in))
    c.run(0)
    assert [_count(c, n) for n in ("by-name", "by-rack", "by-expression")] == [2, 2, 1]
    c.apply(node("xn0", rack="r9"))
    c.delete("Node", "n1")
    c.run(0)
    assert [_count(c, n) for n in ("by-name", "by-rack", "by-expression")] == [2, 1, 2]
    c.apply(node("n2", rack="r0"))  # relabelled
    c.run(0)
    assert [_count(c, n) for n in ("by-name", "by-rack", "by-expression")] == [2, 0, 3]


def test_a_spec_change_counts_again_and_an_unchanged_count_is_not_written():
    """syncHyperNodeStatus writes only a different count (absent counts as 0)."""
    c = volcanic.Cluster()
    c.apply(node("n1"))
    c.apply(hypernode("s0", 1, exact("n1")))
    c.run(0)
    version = c.get("HyperNode", "s0")["metadata"]["resourceVersion"]
    c.run(5)
    assert c.get("HyperNode", "s0")["metadata"]["resourceVersion"] == version
    c.apply(hypernode("s0", 1, exact("n1"), exact("n2"), regex("^n")))
    c.run(0)
    assert _count(c, "s0") == 2
    c.apply(hypernode("s0", 1, labels()))  # an empty labelMatch selects nothing
    c.run(0)
    assert _count(c, "s0") == 0


def test_members_of_follows_get_members():
    """GetMembers corner cases: an empty exactMatch name stands for nothing (and ends the
    selector), a pattern that does not compile or an invalid label selector for nothing, the
    kinds of one selector are united, and the count is of distinct names."""
    nodes = [node("n1", rack="r1"), node("n2", rack="r2")]
    assert members_of({"exactMatch": {"name": ""}, "regexMatch": {"pattern": "n"}}, nodes) == set()
    assert members_of({"regexMatch": {"pattern": "(?=n)"}}, nodes) == set()
    bad = {"labelMatch": {"matchExpressions": [{"key": "rack", "operator": "Near", "values": ["r1"]}]}}
    assert members_of(bad, nodes) == set()
    assert members_of({"exactMatch": {"name": "x"}, "labelMatch": {"matchLabels": {"rack": "r2"}}}, nodes) == \
        {"x", "n2"}
    assert node_count(hypernode("s", 1, exact("n1"), regex("1$"), labels(rack="r1")), nodes) == 1
