"""Volcano's label-based HyperNode discovery (pkg/controllers/hypernode/discovery/label/label.go
generateHyperNodeInfo, buildHyperNodeName, buildHyperNodes), as a pure function:

    hypernodes = discover(types, nodes, existing)

`types`: topology type name -> node label keys, tier 1 first (config.parse_config). For every
node (by name) and type (in the configuration's order), the tiers are walked upwards until the
first label the node lacks: the tier-1 HyperNode of (key, value) gets the node as a member
(type Node), the tier-N one above it the tier-(N-1) HyperNode (type HyperNode); members are
exactMatch, sorted, without duplicates. A HyperNode is the (label key, value) pair, whatever
the type and whatever the parent: one value under two parents is one HyperNode with two
parents, as in Volcano (its scheduler then reports the HyperNodes not ready).

Each HyperNode: tier N, tierName the label key, labels volcano.sh/network-topology-source:
label and <key>: <value>. Its name is an existing one's, the first by name labelled with the
pair and the source whose name starts with hypernode-<type>-tier<N>; else
hypernode-<type>-tier<N>-<5 characters>, <type> lower-cased with characters other than
letters, digits, '.' and '-' made '-'. The one deliberate difference from Volcano: the five
characters are a hash of (type, key, value) in Kubernetes' random-string alphabet, not random,
so the same labels give the same names on every run (tried again with a counter, up to 20
times as Volcano tries, if the name is taken).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import hashlib
from typing import Iterable

from volcanic.kube.keys import NETWORK_TOPOLOGY_SOURCE
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj, labels_of

SOURCE = "label"
ATTEMPTS = 20  # label.go loopCount
ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand's alphanums


@dataclass
class _Info:
    tier: int
    tier_name: str
    labels: dict[str, str]
    members: set[str] = field(default_factory=set)


def discover(types: dict[str, tuple[str, ...]], nodes: Iterable[Obj], existing: list[Obj]) -> list[Obj]:
    """The HyperNodes the node labels describe, sorted by name (see the module docstring)."""
    infos: dict[str, _Info] = {}
    by_label: dict[tuple[str, str], str] = {}
    namer = _Namer(existing, infos)
    for node in sorted(nodes, key=lambda n: n["metadata"]["name"]):
        labels = labels_of(node)
        for type_name, keys in types.items():
            member = node["metadata"]["name"]
            for tier, key in enumerate(keys, 1):
                value = labels.get(key)
                if not isinstance(value, str):
                    break
                name = by_label.get((key, value)) or namer.name(type_name, key, value, tier)
                info = infos.setdefault(name, _Info(tier, key, {key: value}))
                info.members.add(member)
                by_label[(key, value)] = name
                member = name
    return [_hypernode(name, info) for name, info in sorted(infos.items())]


def clean(type_name: str) -> str:
    """cleanString: ASCII letters lower-cased, digits, '.' and '-' kept, anything else '-' (Go
    lower-cases any Unicode letter and then keeps one byte of it: not a name character)."""
    return "".join(c.lower() if (c.isascii() and c.isalnum()) or c in ".-" else "-" for c in type_name)


class _Namer:
    """buildHyperNodeName over the existing HyperNodes and the names given so far."""

    def __init__(self, existing: list[Obj], given: dict[str, _Info]) -> None:
        self.taken = {hn["metadata"]["name"] for hn in existing}
        self.given = given
        # (key, value) -> names, sorted, of the label source's HyperNodes carrying that label
        self.labelled: dict[tuple[str, str], list[str]] = {}
        for hn in sorted(existing, key=lambda h: h["metadata"]["name"]):
            labels = labels_of(hn)
            if labels.get(NETWORK_TOPOLOGY_SOURCE) == SOURCE:
                for pair in labels.items():
                    self.labelled.setdefault(pair, []).append(hn["metadata"]["name"])

    def name(self, type_name: str, key: str, value: str, tier: int) -> str:
        """An existing HyperNode's name for the pair, else a new free one."""
        prefix = f"hypernode-{clean(type_name)}-tier{tier}"
        for name in self.labelled.get((key, value), ()):
            if name.startswith(prefix):
                return name
        for attempt in range(ATTEMPTS):
            name = f"{prefix}-{suffix(type_name, key, value, attempt)}"
            if name not in self.taken and name not in self.given:
                return name
        raise RuntimeError(f"unable to get unique hyperNodeName after {ATTEMPTS} attempts ({prefix}, {key}={value})")


def suffix(type_name: str, key: str, value: str, attempt: int = 0) -> str:
    """Five characters of ALPHABET from a hash of the pair (Volcano: rand.String(5))."""
    digest = hashlib.sha256(f"{type_name}\0{key}\0{value}\0{attempt}".encode()).digest()
    return "".join(ALPHABET[b % len(ALPHABET)] for b in digest[:5])


def _hypernode(name: str, info: _Info) -> Obj:
    """buildHyperNodes / utils.BuildHyperNodeWithTierName."""
    member_type = "Node" if info.tier == 1 else "HyperNode"
    members = [{"type": member_type, "selector": {"exactMatch": {"name": m}}} for m in sorted(info.members)]
    kind = KINDS["HyperNode"]
    return {"apiVersion": kind.api_version, "kind": kind.name,
            "metadata": {"name": name, "labels": {NETWORK_TOPOLOGY_SOURCE: SOURCE, **info.labels}},
            "spec": {"tier": info.tier, "tierName": info.tier_name, "members": members}}
