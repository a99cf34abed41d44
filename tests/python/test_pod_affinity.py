"""InterPodAffinity in the predicates plugin (kube-scheduler's filter, wrapped by Volcano)."""

from __future__ import annotations

from builders import node, pod, podgroup
import volcanic

NOW = 1_700_000_000
CONF = "actions: allocate\ntiers:\n- plugins: [{name: gang}, {name: predicates}, {name: nodeorder}]\n"


def _zone_nodes():
    return [node(f"n{i}", labels={"zone": z, "kubernetes.io/hostname": f"n{i}"}) for i, z in enumerate("aabb")]


def _term(key, labels, topology):
    return {"labelSelector": {"matchLabels": {key: labels}}, "topologyKey": topology}


def _with(p, kind, *terms, labels=None):
    p["spec"]["affinity"] = {kind: {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}
    if labels:
        p["metadata"]["labels"] = labels
    return p


def test_affinity_follows_matching_pods_into_their_zone():
    cache = pod("cache", None, node_name="n3", phase="Running", labels={"app": "cache"})
    web = _with(pod("web", "pg"), "podAffinity", _term("app", "cache", "zone"))
    d = volcanic.schedule(_zone_nodes() + [cache, podgroup("pg"), web], CONF, now=NOW)
    assert d.binds["ns/web"] in {"n2", "n3"}


def test_affinity_with_no_match_anywhere_lets_the_first_self_matching_pod_in():
    first = _with(pod("w0", "pg"), "podAffinity", _term("app", "db", "zone"), labels={"app": "db"})
    d = volcanic.schedule(_zone_nodes() + [podgroup("pg"), first], CONF, now=NOW)
    assert "ns/w0" in d.binds
    loner = _with(pod("x", "pg"), "podAffinity", _term("app", "db", "zone"), labels={"app": "other"})
    d = volcanic.schedule(_zone_nodes() + [podgroup("pg"), loner], CONF, now=NOW)
    assert d.binds == {}
    assert d.unschedulable["ns/x"] == "0/4 nodes are unavailable: 4 node(s) didn't match pod affinity rules."


def test_anti_affinity_spreads_a_gang_one_per_host():
    objs = [node(f"n{i}", labels={"kubernetes.io/hostname": f"n{i}"}) for i in range(3)] + [podgroup("pg", 3)]
    for i in range(3):
        objs.append(_with(pod(f"w{i}", "pg"), "podAntiAffinity", _term("app", "w", "kubernetes.io/hostname"),
                          labels={"app": "w"}))
    d = volcanic.schedule(objs, CONF, now=NOW)
    assert sorted(d.binds.values()) == ["n0", "n1", "n2"]
    objs.append(_with(pod("w3", "pg"), "podAntiAffinity", _term("app", "w", "kubernetes.io/hostname"),
                      labels={"app": "w"}))
    objs[3]["spec"]["minMember"] = 4  # four pods, three hosts: the gang cannot run
    d = volcanic.schedule(objs, CONF, now=NOW)
    assert d.binds == {}


def test_existing_pods_anti_affinity_keeps_others_out():
    guard = _with(pod("guard", None, node_name="n0", phase="Running"), "podAntiAffinity",
                  _term("team", "noisy", "zone"))
    noisy = pod("noisy", "pg", labels={"team": "noisy"})
    d = volcanic.schedule(_zone_nodes() + [guard, podgroup("pg"), noisy], CONF, now=NOW)
    assert d.binds["ns/noisy"] in {"n2", "n3"}
    quiet = pod("quiet", "pg", cpu="4", labels={"team": "quiet"})
    full = [pod(f"f{i}", None, cpu="4", node_name=f"n{i}", phase="Running") for i in (1, 2, 3)]
    d = volcanic.schedule(_zone_nodes() + [guard, podgroup("pg")] + full + [quiet], CONF, now=NOW)
    assert d.unschedulable["ns/quiet"] == "0/4 nodes are unavailable: 4 Insufficient cpu."
    d = volcanic.schedule(_zone_nodes() + [guard, podgroup("pg")] + full + [noisy], CONF, now=NOW)
    assert d.unschedulable["ns/noisy"] == (
        "0/4 nodes are unavailable: 1 node(s) didn't satisfy existing pods anti-affinity rules, 3 Insufficient cpu.")


def test_namespaces_and_namespace_selectors():
    other_ns = pod("cache", None, ns="infra", node_name="n3", phase="Running", labels={"app": "cache"})
    same_ns_only = _with(pod("a", "pg"), "podAffinity", _term("app", "cache", "zone"))
    d = volcanic.schedule(_zone_nodes() + [other_ns, podgroup("pg"), same_ns_only], CONF, now=NOW)
    assert d.binds == {}  # the term looks in the pod's own namespace only
    by_selector = _with(pod("b", "pg"), "podAffinity",
                        {**_term("app", "cache", "zone"), "namespaceSelector": {"matchLabels": {"tier": "infra"}}})
    namespace = {"kind": "Namespace", "metadata": {"name": "infra", "labels": {"tier": "infra"}}}
    d = volcanic.schedule(_zone_nodes() + [namespace, other_ns, podgroup("pg"), by_selector], CONF, now=NOW)
    assert d.binds["ns/b"] in {"n2", "n3"}


def test_pod_affinity_can_be_switched_off():
    conf = CONF.replace("{name: predicates}", "{name: predicates, arguments: {predicate.PodAffinityEnable: false}}")
    loner = _with(pod("x", "pg"), "podAffinity", _term("app", "db", "zone"), labels={"app": "other"})
    assert volcanic.schedule(_zone_nodes() + [podgroup("pg"), loner], conf, now=NOW).binds != {}


def test_affinity_counts_only_pods_matching_every_term():
    # kube-scheduler: an existing pod counts only if it matches all the affinity terms.
    a = pod("a", None, node_name="n0", phase="Running", labels={"app": "a"})
    b = pod("b", None, node_name="n1", phase="Running", labels={"tier": "b"})
    new = _with(pod("new", "pg"), "podAffinity", _term("app", "a", "zone"), _term("tier", "b", "zone"))
    d = volcanic.schedule(_zone_nodes() + [a, b, podgroup("pg"), new], CONF, now=NOW)
    assert d.binds == {}
    both = pod("both", None, node_name="n2", phase="Running", labels={"app": "a", "tier": "b"})
    d = volcanic.schedule(_zone_nodes() + [a, b, both, podgroup("pg"), new], CONF, now=NOW)
    assert d.binds["ns/new"] in {"n2", "n3"}


def test_every_topology_key_must_be_on_the_node_even_for_the_first_pod():
    unlabelled = node("plain")
    first = _with(pod("w0", "pg"), "podAffinity", _term("app", "db", "zone"), labels={"app": "db"})
    d = volcanic.schedule([unlabelled, podgroup("pg"), first], CONF, now=NOW)
    assert d.binds == {}
    assert d.unschedulable["ns/w0"] == "0/1 nodes are unavailable: 1 node(s) didn't match pod affinity rules."
