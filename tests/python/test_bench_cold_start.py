"""The cold-start benchmark's cluster (volcanic.bench.cold_start): the shape volcano#5819
reports, built as a busy cluster is, with a few gangs left for the scheduler."""

from __future__ import annotations

from collections import Counter

import pytest
import yaml

from volcanic.bench import cold_start as cs


@pytest.mark.parametrize("preset", sorted(cs.COLD_START_PRESETS))
def test_the_cluster_has_the_presets_counts_and_leaves_only_the_last_gangs_pending(preset):
    nodes, pods, groups = cs.COLD_START_PRESETS[preset]
    sizes = cs._group_sizes(pods, groups)
    assert len(sizes) == groups and sum(sizes) == pods and sizes[-cs.PENDING:] == [2] * cs.PENDING
    names = [f"kwok-node-{i}" for i in range(nodes)]
    made = list(cs._pods(sizes, names))
    assert len(made) == pods and len({(p["metadata"]["namespace"], p["metadata"]["name"]) for p in made}) == pods
    pending = [p for p in made if "nodeName" not in p["spec"]]
    assert len(pending) == 2 * cs.PENDING
    assert {p["metadata"]["namespace"] for p in pending} == {cs.PENDING_NAMESPACE}
    per_node = Counter(p["spec"]["nodeName"] for p in made if "nodeName" in p["spec"])
    assert max(per_node.values()) <= cs.PODS_PER_NODE  # 28 CPU of 32 taken: room for the pending gangs
    first_pending = groups - cs.PENDING
    running = cs._podgroup(0, sizes[0], pending=False)
    waiting = cs._podgroup(first_pending, 2, pending=True)
    assert running["status"]["phase"] == "Running" and waiting["status"] == {"phase": "Pending"}
    assert waiting["metadata"]["namespace"] == cs.PENDING_NAMESPACE


def test_pods_that_do_not_fill_the_podgroups_are_refused():
    with pytest.raises(ValueError, match="do not fill"):
        cs._group_sizes(pods=100, groups=10)  # would need PodGroups of ten


def test_kwok_keeps_the_nodes_and_leaves_the_pods_alone(tmp_path):
    """kwok adds its built-in pod stages when its configuration has none (deploy/kwok/stages.yaml's
    header): the cold-start cluster's has our node stages and one pod stage matching no pod."""
    stages = [d for d in yaml.safe_load_all(cs.nodes_only_stages(tmp_path).read_text()) if d]
    kinds = Counter(s["spec"]["resourceRef"]["kind"] for s in stages)
    assert kinds == {"Node": 2, "Pod": 1}
    [pod_stage] = [s for s in stages if s["spec"]["resourceRef"]["kind"] == "Pod"]
    assert pod_stage["spec"]["selector"]["matchExpressions"] == [
        {"jq": {"key": ".metadata.name", "operator": "DoesNotExist"}}]  # every pod has a name
