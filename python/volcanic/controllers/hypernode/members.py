"""A HyperNode's members as Volcano resolves them (pkg/scheduler/api/hyper_node_info.go
GetMembers), and the node count the hyperNode-controller keeps in its status
(pkg/controllers/hypernode/hypernode_handler.go actualNodeCnt).

    members_of(selector, nodes)   the names a member selector stands for
    node_count(hypernode, nodes)  |union of members_of over the direct members|

An exactMatch stands for its name whether or not such a node (or HyperNode) exists; a
regexMatch for the node names the pattern matches anywhere (Go's MatchString; a pattern that
does not compile matches nothing); a labelMatch for the nodes its LabelSelector selects, an
empty one (no matchLabels, no matchExpressions) for none, an invalid one for none. Every
member counts whatever its type: a HyperNode whose members are HyperNodes (exactMatch)
counts its children, not their nodes, as Volcano's does. Never raises on a malformed object.
"""

from __future__ import annotations

from typing import Any, Iterable

from volcanic.controllers.volume_rules import label_selector
from volcanic.kube.errors import InvalidObject
from volcanic.kube.goregexp import GoRegexpError, go_regexp
from volcanic.kube.objects import Obj, as_map, labels_of, spec_of


def members_of(selector: Any, nodes: Iterable[Obj]) -> set[str]:
    """GetMembers: the names `selector` (a member's selector) stands for among `nodes`."""
    selector = as_map(selector)
    names: set[str] = set()
    exact = as_map(selector.get("exactMatch")).get("name")
    if selector.get("exactMatch") is not None:
        if not exact or not isinstance(exact, str):
            return names
        names.add(exact)
    if selector.get("regexMatch") is not None:
        names |= _regex_members(as_map(selector["regexMatch"]).get("pattern"), nodes)
    if selector.get("labelMatch") is not None:
        names |= _label_members(selector, nodes)
    return names


def _regex_members(pattern: Any, nodes: Iterable[Obj]) -> set[str]:
    try:
        regex = go_regexp(pattern) if isinstance(pattern, str) else None
    except GoRegexpError:
        regex = None
    if regex is None:
        return set()
    return {n["metadata"]["name"] for n in nodes if regex.search(n["metadata"]["name"])}


def _label_members(selector: Obj, nodes: Iterable[Obj]) -> set[str]:
    match = as_map(selector["labelMatch"])
    if not match.get("matchLabels") and not match.get("matchExpressions"):
        return set()  # Volcano: an empty labelMatch selects nothing (not everything)
    try:
        test = label_selector(selector, "labelMatch")
    except InvalidObject:
        return set()
    return {n["metadata"]["name"] for n in nodes if test is not None and test(labels_of(n))}


def node_count(hypernode: Obj, nodes: list[Obj]) -> int:
    """actualNodeCnt: how many distinct names the direct members stand for."""
    members = spec_of(hypernode).get("members")
    names: set[str] = set()
    for member in members if isinstance(members, list) else ():
        names |= members_of(as_map(member).get("selector"), nodes)
    return len(names)


def selects_by_node(hypernode: Obj) -> bool:
    """Whether a member selects nodes by pattern or labels (its count follows node changes)."""
    members = spec_of(hypernode).get("members")
    return any(as_map(as_map(m).get("selector")).get(kind) is not None
               for m in (members if isinstance(members, list) else ()) for kind in ("regexMatch", "labelMatch"))
