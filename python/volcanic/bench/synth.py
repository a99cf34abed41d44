"""Deterministic synthetic clusters: nodes of a few shapes, gang jobs over weighted queues."""

from __future__ import annotations

import random
from typing import Any

from volcanic.kube.clock import EPOCH, rfc3339
from volcanic.kube.keys import SCHEDULING_API_VERSION

# (cpu, memory, gpus) of the node shapes, drawn with equal probability.
NODE_SHAPES = [("16", "64Gi", 0), ("32", "128Gi", 0), ("64", "256Gi", 0), ("32", "256Gi", 8)]
# (cpu, memory, gpus) per task of the job shapes.
TASK_SHAPES = [("500m", "1Gi", 0), ("1", "2Gi", 0), ("2", "4Gi", 0), ("4", "16Gi", 0), ("4", "32Gi", 1)]
PRIORITY_CLASSES = [("low", 10), ("normal", 100), ("high", 1000)]


def _node(i: int, rng: random.Random) -> dict[str, Any]:
    cpu, mem, gpus = rng.choice(NODE_SHAPES)
    alloc = {"cpu": cpu, "memory": mem, "pods": "110"}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": f"node-{i:05d}", "labels": {"zone": f"zone-{i % 4}"}},
            "status": {"allocatable": alloc, "capacity": alloc,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def _job(j: int, tasks: int, queues: int, rng: random.Random) -> list[dict[str, Any]]:
    cpu, mem, gpus = rng.choice(TASK_SHAPES)
    ns = f"ns-{j % 20}"
    name = f"job-{j:06d}"
    created = rfc3339(EPOCH + j % 60)
    min_member = tasks if rng.random() < 0.7 else tasks // 2
    pg = {"apiVersion": SCHEDULING_API_VERSION, "kind": "PodGroup",
          "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}", "creationTimestamp": created},
          "spec": {"minMember": min_member, "queue": f"queue-{j % queues}",
                   "priorityClassName": rng.choice(PRIORITY_CLASSES)[0]},
          "status": {"phase": "Pending"}}
    requests = {"cpu": cpu, "memory": mem}
    if gpus:
        requests["nvidia.com/gpu"] = str(gpus)
    pods = []
    for t in range(tasks):
        pods.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"{name}-worker-{t}", "namespace": ns, "uid": f"uid-{name}-{t}",
                                  "creationTimestamp": created,
                                  "annotations": {"scheduling.k8s.io/group-name": name,
                                                  "volcano.sh/task-spec": "worker"}},
                     "spec": {"schedulerName": "volcano",
                              "containers": [{"name": "main", "image": "busybox",
                                              "resources": {"requests": requests}}]},
                     "status": {"phase": "Pending"}})
    return [pg, *pods]


def synthetic_cluster(nodes: int, pods: int, *, seed: int = 1, tasks_per_job: int = 10,
                      queues: int = 10) -> list[dict[str, Any]]:
    """Builds the objects of a synthetic cluster; the same arguments give the same objects."""
    rng = random.Random(seed)
    objs: list[dict[str, Any]] = []
    for name, value in PRIORITY_CLASSES:
        objs.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                     "metadata": {"name": name}, "value": value})
    for q in range(queues):
        objs.append({"apiVersion": SCHEDULING_API_VERSION, "kind": "Queue",
                     "metadata": {"name": f"queue-{q}"}, "spec": {"weight": q + 1, "reclaimable": True},
                     "status": {"state": "Open"}})
    objs.extend(_node(i, rng) for i in range(nodes))
    for j in range(pods // tasks_per_job):
        objs.extend(_job(j, tasks_per_job, queues, rng))
    return objs
