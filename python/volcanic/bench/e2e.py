"""`volcanic bench --preset e2e-medium`: a whole workload through the embedded cluster.

1,000 nodes; 2,000 Volcano Jobs of 5 pods over 3 queues (weights 1, 2, 3), arriving
evenly over the first 30 simulated minutes, each pod running 5 to 25 minutes. It runs
until every job has finished and reports wall seconds, simulated seconds, and pods
completed per wall second. The same seed gives the same workload and the same history.
"""

from __future__ import annotations

import random
import resource
import time
from typing import Any

from volcanic.bench.synth import NODE_SHAPES
from volcanic.kube.keys import JOB_API_VERSION, SCHEDULING_API_VERSION
from volcanic.kube.objects import dig, status_of

# preset -> (nodes, jobs, pods per job, queues, arrival window s, (min, max) duration s)
E2E_PRESETS = {
    "e2e-small": (100, 200, 5, 3, 1800, (300, 1500)),  # a tenth, for tests and quick looks
    "e2e-medium": (1_000, 2_000, 5, 3, 1800, (300, 1500)),
}
CPU_REQUESTS = ("1", "2", "4")


def _node(i: int, rng: random.Random) -> dict[str, Any]:
    cpu, mem, gpus = rng.choice(NODE_SHAPES[:3])
    alloc = {"cpu": cpu, "memory": mem, "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i:05d}"},
            "status": {"allocatable": alloc, "capacity": alloc,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def _job(j: int, pods: int, queues: int, durations: tuple[int, int], rng: random.Random) -> dict[str, Any]:
    cpu = rng.choice(CPU_REQUESTS)
    return {"apiVersion": JOB_API_VERSION, "kind": "Job",
            "metadata": {"name": f"job-{j:05d}", "namespace": f"team-{j % queues}"},
            "spec": {"minAvailable": pods, "queue": f"queue-{j % queues}",
                     "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
                     "tasks": [{"name": "worker", "replicas": pods, "template": {
                         "metadata": {"annotations": {"volcanic/sim-duration": f"{rng.randint(*durations)}s"}},
                         "spec": {"restartPolicy": "Never",
                                  "containers": [{"name": "main", "image": "busybox",
                                                  "resources": {"requests": {"cpu": cpu,
                                                                             "memory": f"{2 * int(cpu)}Gi"}}}]}}}]}}


def run_e2e(preset: str, seed: int = 1, conf: Any = None) -> dict[str, Any]:
    from volcanic.cluster import Cluster
    from volcanic.cluster.report import all_finished

    n_nodes, n_jobs, pods, queues, window, durations = E2E_PRESETS[preset]
    rng = random.Random(seed)
    start = time.perf_counter()
    c = Cluster(conf)
    c.apply([_node(i, rng) for i in range(n_nodes)])
    c.apply([{"apiVersion": SCHEDULING_API_VERSION, "kind": "Queue", "metadata": {"name": f"queue-{q}"},
              "spec": {"weight": q + 1, "reclaimable": True}} for q in range(queues)])
    for j in range(n_jobs):
        c.run(j * window / n_jobs - c.now)
        c.apply(_job(j, pods, queues, durations, rng))
    c.run_until(all_finished, limit=86400, step=60)
    wall = time.perf_counter() - start
    succeeded = sum(1 for p in c.list("Pod") if status_of(p).get("phase") == "Succeeded")
    phases: dict[str, int] = {}
    for job in c.list("Job"):
        phase = dig(job, "status", "state", "phase") or "Pending"
        phases[phase] = phases.get(phase, 0) + 1
    return {"preset": preset, "nodes": n_nodes, "jobs": n_jobs, "pods": n_jobs * pods,
            "wall_s": round(wall, 2), "simulated_s": c.now, "pods_completed": succeeded,
            "pods_per_wall_s": round(succeeded / wall, 1), "sessions": c.scheduler.sessions,
            "scheduler_s": {k: round(v, 2) for k, v in c.scheduler.seconds.items()},
            "job_phases": phases, "controller_errors": len(c.errors),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
