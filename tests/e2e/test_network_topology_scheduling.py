"""Network-topology-aware scheduling on a real API server (docs/network-topology.md,
"Scheduling"): Volcano Jobs with `networkTopology` through the job controller, the
PodGroup, the HyperNodes and the scheduler of `volcanic up`, with Volcano's
network-topology-aware plugin in the configuration (Volcano v1.15.1
pkg/scheduler/actions/allocate/allocate.go, plugins/network-topology-aware)."""

from __future__ import annotations

from test_volcano_jobs import _stuck, pods_of, vcjob
from volcanic.kube.kinds import KINDS
from volcanic.real.devcluster.cluster import kwok_node

LEAVES = {"leaf-a": ["nt-node-0", "nt-node-1"], "leaf-b": ["nt-node-2", "nt-node-3"]}


def hypernode(name: str, tier: int, member_type: str, members: list[str]) -> dict:
    return {"apiVersion": KINDS["HyperNode"].api_version, "kind": "HyperNode", "metadata": {"name": name},
            "spec": {"tier": tier, "tierName": f"tier-{tier}", "members": [
                {"type": member_type, "selector": {"exactMatch": {"name": m}}} for m in members]}}


def topology_job(name: str, replicas: int, tier: int) -> dict:
    """Pods of 16 CPUs: two fill a 32-CPU kwok node, four a leaf."""
    job = vcjob(name, replicas, cpu="16", duration=None)
    job["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": tier}
    return job


def test_gangs_stay_within_the_tier_they_allow(env, up, namespace):
    def podgroup_conditions(job: str) -> list[dict]:
        pg = next((g for g in env.store.list("PodGroup", namespace)
                   if any(o.get("name") == job for o in g["metadata"].get("ownerReferences") or [])), {})
        return (pg.get("status") or {}).get("conditions") or []

    conf = up.conf.read_text()
    nodes = [n for members in LEAVES.values() for n in members]
    try:
        for name in nodes:
            env.apply(kwok_node(name))
        for leaf, members in LEAVES.items():
            env.apply(hypernode(leaf, 1, "Node", members))
        env.apply(hypernode("spine", 2, "HyperNode", list(LEAVES)))
        reloads = up.proc.log_path.read_text(errors="replace").count("reloaded")
        up.conf.write_text(conf.replace("  - name: binpack\n", "  - name: binpack\n  - name: network-topology-aware\n"))
        assert "network-topology-aware" in up.conf.read_text()
        assert env.wait(lambda: up.proc.log_path.read_text(errors="replace").count("reloaded") > reloads)

        bound = lambda job: [p["spec"]["nodeName"] for p in pods_of(env, job, namespace) if p["spec"].get("nodeName")]
        env.apply(topology_job("leaf-gang", 4, tier=1), namespace=namespace)
        assert env.wait(lambda: len(bound("leaf-gang")) == 4, timeout=60), _stuck(env, up, ["leaf-gang"], namespace)
        assert any(set(bound("leaf-gang")) == set(members) for members in LEAVES.values()), bound("leaf-gang")
        env.kubectl("delete", "jobs.batch.volcano.sh", "leaf-gang", "-n", namespace)
        assert env.wait(lambda: not pods_of(env, "leaf-gang", namespace), timeout=60)

        # Six pods fit no leaf (four slots each): at tier 1 they stay Pending, at tier 2 they
        # take the spine's two leaves, and nothing outside it.
        env.apply(topology_job("six-in-a-leaf", 6, tier=1), namespace=namespace)
        assert env.wait(lambda: any(c.get("type") == "Unschedulable" for c in podgroup_conditions("six-in-a-leaf")),
                        timeout=60), _stuck(env, up, ["six-in-a-leaf"], namespace)
        assert not bound("six-in-a-leaf")
        env.kubectl("delete", "jobs.batch.volcano.sh", "six-in-a-leaf", "-n", namespace)
        assert env.wait(lambda: not pods_of(env, "six-in-a-leaf", namespace), timeout=60)
        env.apply(topology_job("six-in-the-spine", 6, tier=2), namespace=namespace)
        assert env.wait(lambda: len(bound("six-in-the-spine")) == 6, timeout=60), \
            _stuck(env, up, ["six-in-the-spine"], namespace)
        on = set(bound("six-in-the-spine"))
        assert on <= set(nodes) and all(on & set(members) for members in LEAVES.values()), on
    finally:
        up.conf.write_text(conf)
        env.kubectl("delete", "jobs.batch.volcano.sh", "--all", "-n", namespace, "--wait=false", check=False)
        env.kubectl("delete", "hn", "spine", *LEAVES, check=False)
        env.kubectl("delete", "node", *nodes, check=False)
