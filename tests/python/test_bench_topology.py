"""The topology benchmark's cluster (volcanic.bench.topology): the shape
tools/volcano-topology-bench builds for Volcano, and one session of it placing every gang
inside its tier (docs/benchmark.md, "Network topology")."""

from __future__ import annotations

from collections import Counter

from volcanic.bench import topology as tb


def test_the_cluster_has_the_documented_shape():
    objs = tb.topology_cluster(1000)
    kinds = Counter(o["kind"] for o in objs)
    assert kinds == {"Queue": 1, "Node": 1000, "HyperNode": 55, "PodGroup": 36, "Pod": 3024}
    spine = next(o for o in objs if o["metadata"]["name"] == "spine-4")
    assert [m["selector"]["exactMatch"]["name"] for m in spine["spec"]["members"]] == [f"leaf-{j}" for j in range(40, 50)]
    pg = next(o for o in objs if o["metadata"]["name"] == "pg-4")  # 128 pods: tier 2
    assert pg["spec"]["minMember"] == 128 and pg["spec"]["networkTopology"]["highestTierAllowed"] == 2


def test_every_gang_is_placed_inside_its_tier():
    result = tb._size(1000)
    assert result["placed"] == result["pods"] == 3024
    assert result["outside_their_tier"] == 0


def test_a_gang_across_two_leaves_is_counted_outside():
    binds = {f"pg-0-p{t}": f"n-{t * 3}" for t in range(8)}  # nodes 0..21: leaves 0 and 1
    assert tb._outside(binds) == 1
    assert tb._outside({f"pg-0-p{t}": f"n-{t}" for t in range(8)}) == 0
