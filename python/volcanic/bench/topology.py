"""`volcanic bench --preset topology`: network-topology-aware gangs on spines and leaves,
one session, beside Volcano's own scheduler on the same objects
(tools/volcano-topology-bench).

The objects (the same in both): N nodes `n-<i>` of 32 CPU / 256 Gi / 110 pods; tier-1
HyperNodes `leaf-<j>` of 20 consecutive nodes; tier-2 HyperNodes `spine-<k>` of 10
consecutive leaves; queue q1; N x 36 / 1,000 Inqueue PodGroups `pg-<m>` of S = 8, 16, 32,
64, 128 or 256 pods in turn (minMember S), 8 CPU / 32 Gi a pod, `networkTopology` hard with
`highestTierAllowed` 1 up to 64 pods, else 2: three quarters of the cluster asked for.
Sizes: 1,000 and 10,000 nodes. Reported per size: the allocate action's seconds, pods
placed, and whether every gang stayed inside one leaf (up to 64 pods) or one spine.
"""

from __future__ import annotations

import time
from typing import Any

from volcanic.kube.kinds import KINDS
from volcanic.scheduler import Scheduler

TOPOLOGY_PRESETS = {"topology": (1_000, 10_000), "topology-small": (1_000,)}
LEAF_NODES, SPINE_LEAVES = 20, 10
GANG_SIZES = (8, 16, 32, 64, 128, 256)
CONF = {"actions": "allocate", "tiers": [{"plugins": [{"name": name} for name in (
    "gang", "priority", "drf", "predicates", "proportion", "nodeorder", "binpack", "network-topology-aware")]}]}


def hypernode(name: str, tier: int, member_type: str, members: list[str]) -> dict[str, Any]:
    return {"apiVersion": KINDS["HyperNode"].api_version, "kind": "HyperNode", "metadata": {"name": name},
            "spec": {"tier": tier, "members": [{"type": member_type, "selector": {"exactMatch": {"name": m}}}
                                               for m in members]}}


def topology_cluster(nodes: int) -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = [{"kind": "Queue", "metadata": {"name": "q1"}, "spec": {"weight": 1}}]
    for i in range(nodes):
        objs.append({"kind": "Node", "metadata": {"name": f"n-{i}"},
                     "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"}}})
    leaves = nodes // LEAF_NODES
    for j in range(leaves):
        objs.append(hypernode(f"leaf-{j}", 1, "Node", [f"n-{i}" for i in range(j * LEAF_NODES, (j + 1) * LEAF_NODES)]))
    for k in range(leaves // SPINE_LEAVES):
        objs.append(hypernode(f"spine-{k}", 2, "HyperNode",
                              [f"leaf-{j}" for j in range(k * SPINE_LEAVES, (k + 1) * SPINE_LEAVES)]))
    for m in range(nodes * 36 // 1000):
        size = GANG_SIZES[m % len(GANG_SIZES)]
        objs.append({"kind": "PodGroup", "metadata": {"name": f"pg-{m}", "namespace": "c1"},
                     "spec": {"minMember": size, "queue": "q1",
                              "networkTopology": {"mode": "hard", "highestTierAllowed": 1 if size <= 64 else 2}},
                     "status": {"phase": "Inqueue"}})
        for t in range(size):
            objs.append({"kind": "Pod", "metadata": {
                "name": f"pg-{m}-p{t}", "namespace": "c1", "labels": {"volcano.sh/task-spec": "worker"},
                "annotations": {"scheduling.k8s.io/group-name": f"pg-{m}"}},
                "spec": {"schedulerName": "volcano", "containers": [
                    {"name": "c", "resources": {"requests": {"cpu": "8", "memory": "32Gi"}}}]}})
    return objs


def run_topology(preset: str) -> dict[str, Any]:
    return {"preset": preset, "sizes": [_size(nodes) for nodes in TOPOLOGY_PRESETS[preset]]}


def _size(nodes: int) -> dict[str, Any]:
    objs = topology_cluster(nodes)
    s = Scheduler(CONF)
    for obj in objs:
        s.upsert(obj)
    start = time.perf_counter()
    d = s.run_once(now=1_700_000_000)
    session = time.perf_counter() - start
    jobs = nodes * 36 // 1000
    return {"nodes": nodes, "jobs": jobs, "pods": sum(GANG_SIZES[m % len(GANG_SIZES)] for m in range(jobs)),
            "allocate_s": round(d.action_seconds.get("allocate", 0.0), 4), "session_s": round(session, 4),
            "placed": len(d.binds), "jobs_placed": len({pod.rsplit("-p", 1)[0] for pod in d.binds}),
            "outside_their_tier": _outside(d.binds)}


def _outside(binds: dict[str, str]) -> int:
    """Gangs whose pods are not all in one leaf (up to 64 pods) or one spine."""
    by_job: dict[str, set[int]] = {}
    for pod, node in binds.items():
        by_job.setdefault(pod.rsplit("-p", 1)[0], set()).add(int(node.split("-")[1]))
    outside = 0
    for job, on in by_job.items():
        size = GANG_SIZES[int(job.split("-")[-1]) % len(GANG_SIZES)]
        width = LEAF_NODES if size <= 64 else LEAF_NODES * SPINE_LEAVES
        outside += len({i // width for i in on}) > 1
    return outside
