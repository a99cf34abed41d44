"""`volcanic bench --preset real-gang`: Volcano's gang benchmark (benchmark/testcases/gang in
volcano-sh/volcano) on a real API server.

A dev cluster of kwok nodes (32 CPU / 256 Gi, label type=kwok, kwok's taint) on this machine;
`volcanic scheduler` and `volcanic controller-manager` as separate processes, as their
Deployments run them (the controller-manager at 2,000 QPS, as Volcano's benchmark runs its
own); Volcano Jobs of 100 replicas, minAvailable 100, 1 CPU / 1 Gi each, nodeSelector type:
kwok and the kwok toleration, all created at once. Sizes: 10 jobs on 100
nodes, then 100 jobs on 1,000 nodes. Reported per size, from the first Job create: the last
pod bound, the last pod Running (kwok), binds per second.

With `floor` (the path of ../shared/tools/apiserver-floor), each size runs in rounds, each a
repeat of the API server's own floor for the same pods (its t_bound) and a volcanic run on the
same cluster, in ABBA order (floor first in even rounds, volcanic first in odd ones), so the
slowing of a cluster as it ages falls on both alike; the size reports the medians and the
median of the rounds' ratios: the machines vary up to 3x between runs, a round's ratio much
less. The floor tool's protobuf `observe` then times the binds (FloorObserver); without it a
Python watch does (PodTimes), whose CPU is taken from the components it measures.
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable

from volcanic.kube.keys import JOB_API_VERSION
from volcanic.kube.objects import spec_of, status_of
from volcanic.kube.store import Watch
from volcanic.real.client import KubeClient
from volcanic.real.devcluster.cluster import KWOK_TOLERATION, DevCluster, kwok_node
from volcanic.real.install import install
from volcanic.real.store import KubeStore

# preset -> [(nodes, jobs, floor preset, rounds)]; every job has REPLICAS pods. The large size
# runs once: a round of it takes about ten minutes.
REAL_PRESETS = {"real-gang": [(100, 10, "small", 3), (1000, 100, "medium", 1)],
                "real-gang-small": [(100, 10, "small", 3)]}
REPLICAS = 100
NAMESPACE = "gang-bench"  # a run's namespace is NAMESPACE-<n>, new for each run (see run_real)


def gang_job(i: int, namespace: str) -> dict[str, Any]:
    return {"apiVersion": JOB_API_VERSION, "kind": "Job",
            "metadata": {"name": f"gang-{i:04d}", "namespace": namespace},
            "spec": {"schedulerName": "volcano", "queue": "default", "minAvailable": REPLICAS,
                     "tasks": [{"name": "task", "replicas": REPLICAS, "template": {"spec": {
                         "nodeSelector": {"type": "kwok"}, "tolerations": [KWOK_TOLERATION],
                         "containers": [{"name": "c", "image": "nginx",
                                         "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}}]}}


class PodTimes(Watch):
    """A watch of pods that stamps when each pod is first seen bound and first seen Running:
    the timer without the floor tool. Its JSON decoding costs about 2 s of CPU per 1,000
    pods, taken from the components it measures."""

    def __init__(self, store: KubeStore, pods: int, namespace: str) -> None:
        super().__init__(["Pod"])
        self.pods, self.namespace = pods, namespace
        self.bound: dict[str, float] = {}
        self.running: dict[str, float] = {}
        self._store = KubeStore(store.client)
        self._store.reflect(["Pod"], self, threading.Event())

    def offer(self, event: str, obj: dict) -> None:
        now = time.time()
        if obj["metadata"].get("namespace") != self.namespace:
            return
        name = obj["metadata"]["name"]
        if spec_of(obj).get("nodeName"):
            self.bound.setdefault(name, now)
        if status_of(obj).get("phase") == "Running":
            self.running.setdefault(name, now)

    def last_bound(self, alive: Callable[[], None]) -> float:
        _wait(lambda: len(self.bound) >= self.pods, alive, lambda: f"{len(self.bound)} of {self.pods} pods bound")
        return max(self.bound.values())

    def last_running(self, alive: Callable[[], None]) -> float:
        _wait(lambda: len(self.running) >= self.pods, alive,
              lambda: f"{len(self.running)} of {self.pods} pods running")
        self._store.close()
        return max(self.running.values())


class FloorObserver:
    """apiserver-floor's `observe` (a protobuf watch in Go, as its README advises) stamps the
    last bind, so the measurement takes almost no CPU from the components it measures; last
    Running is then found by asking, every 0.1 s, for one pod of the namespace that is not
    Running."""

    def __init__(self, binary: str, cluster: DevCluster, store: KubeStore, pods: int, namespace: str) -> None:
        self._store, self.namespace = store, namespace
        self._proc = subprocess.Popen([binary, "observe", "--kubeconfig", str(cluster.kubeconfig),
                                       "--namespace", namespace, "--count", str(pods)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if self._proc.stderr.readline().strip() != "watching":
            raise RuntimeError(f"bench: apiserver-floor observe did not start: {self._proc.stderr.read()}")

    def last_bound(self, alive: Callable[[], None]) -> float:
        _wait(lambda: self._proc.poll() is not None, alive, lambda: "apiserver-floor observe did not finish")
        line = self._proc.stdout.read().strip()
        answer = json.loads(line) if line else {}
        if not answer.get("bound_unix"):
            raise RuntimeError(f"bench: apiserver-floor observe: {line or self._proc.stderr.read()}")
        return float(answer["bound_unix"])

    def last_running(self, alive: Callable[[], None]) -> float:
        query = {"fieldSelector": "status.phase!=Running", "limit": 1}
        path = f"/api/v1/namespaces/{self.namespace}/pods"
        _wait(lambda: not self._store.client.request("GET", path, query=query)["items"], alive,
              lambda: "pods not Running", period=0.1)
        return time.time()


def _wait(done: Callable[[], bool], alive: Callable[[], None], what: Callable[[], str],
          period: float = 0.05) -> None:
    deadline = time.monotonic() + 600
    while not done():
        alive()
        if time.monotonic() > deadline:
            raise RuntimeError(f"bench: {what()} after 600 s")
        time.sleep(period)


def run_real(preset: str, floor: str | None = None, log: Callable[[str], None] = print,
             rounds: int | None = None) -> dict[str, Any]:
    """`rounds` overrides each size's number of rounds."""
    results = []
    with tempfile.TemporaryDirectory(prefix="volcanic-bench-") as directory:
        floor_binary = _build_floor(floor, directory) if floor else None
        cluster = DevCluster(directory)
        cluster.up(0, log=log)
        try:
            client = KubeClient(str(cluster.kubeconfig))
            install(client, log=lambda _: None)
            store = KubeStore(client)
            namespaces = (f"{NAMESPACE}-{n}" for n in itertools.count())
            for nodes, jobs, floor_preset, size_rounds in REAL_PRESETS[preset]:
                _ensure_nodes(store, nodes)
                runs = []
                for i in range(rounds or size_rounds):
                    runs.append(_round(cluster, store, nodes, jobs, floor_binary, floor_preset, next(namespaces),
                                       floor_first=i % 2 == 0, log=log))
                results.append(_summary(nodes, jobs, runs))
            store.close()
        finally:
            cluster.down()
    return {"preset": preset, "cores": os.cpu_count(), "sizes": results}


def _summary(nodes: int, jobs: int, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """A size's medians over its rounds, and the rounds themselves."""
    def median(key: str) -> float:
        return round(statistics.median(r[key] for r in runs), 3)
    result = {"nodes": nodes, "jobs": jobs, "pods": jobs * REPLICAS, "jobs_created_s": median("jobs_created_s"),
              "last_bound_s": median("last_bound_s"), "last_running_s": median("last_running_s")}
    result["binds_per_s"] = round(result["pods"] / result["last_bound_s"], 1)
    if "floor_bound_s" in runs[0]:
        result.update(floor_bound_s=median("floor_bound_s"), ratio_to_floor=round(median("ratio_to_floor"), 2))
    return {**result, "rounds": runs}


def _ensure_nodes(store: KubeStore, count: int) -> None:
    have = {n["metadata"]["name"] for n in store.list("Node")}
    missing = [kwok_node(f"kwok-node-{i}") for i in range(count) if f"kwok-node-{i}" not in have]
    for created in [store.create_async(node) for node in missing]:
        created.result()
    deadline = time.monotonic() + 120
    while sum(_ready(n) for n in store.list("Node")) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"bench: {count} kwok nodes not Ready after 120 s")
        time.sleep(0.5)


def _ready(node: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in status_of(node).get("conditions") or [])


def _build_floor(path: str, directory: str) -> str:
    binary = os.path.join(directory, "apiserver-floor")
    subprocess.run(["go", "build", "-o", binary, "."], cwd=path, check=True)
    return binary


def _round(cluster: DevCluster, store: KubeStore, nodes: int, jobs: int, floor_binary: str | None,
           floor_preset: str, namespace: str, floor_first: bool, log: Callable[[str], None]) -> dict[str, Any]:
    """One volcanic run and, with the floor tool, one repeat of the floor before or after it."""
    if floor_binary is None:
        return _measure(cluster, store, nodes, jobs, None, namespace, log)
    floor_s = _floor(floor_binary, cluster, floor_preset, log) if floor_first else None
    result = _measure(cluster, store, nodes, jobs, floor_binary, namespace, log)
    if floor_s is None:
        floor_s = _floor(floor_binary, cluster, floor_preset, log)
    return {**result, "floor_bound_s": round(floor_s, 3), "ratio_to_floor": round(result["last_bound_s"] / floor_s, 2)}


def _floor(binary: str, cluster: DevCluster, preset: str, log: Callable[[str], None]) -> float:
    """t_bound of one repeat of apiserver-floor on this cluster."""
    log(f"apiserver-floor --preset {preset} ...")
    out = subprocess.run([binary, "--kubeconfig", str(cluster.kubeconfig), "--preset", preset,
                          "--repeat", "1"], capture_output=True, text=True, check=True).stdout
    return next(json.loads(line)["t_bound"] for line in out.splitlines() if line.startswith("{"))


def _measure(cluster: DevCluster, store: KubeStore, nodes: int, jobs: int, floor_binary: str | None,
             namespace: str, log: Callable[[str], None]) -> dict[str, Any]:
    """One volcanic run in a new namespace, removed again at the end with all it holds. New,
    as the floor tool names each repeat's pods anew (docs/benchmark.md: back-to-back runs
    under the same names were slower)."""
    pods = jobs * REPLICAS
    log(f"{jobs} jobs x {REPLICAS} pods on {nodes} nodes ...")
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    # Volcano's benchmark runs its controllers at 2,000 QPS, not their default 50; one replica
    # each, without leader election, as the chart's values (leader_elect_enable: false).
    procs = [_volcanic(cluster, "scheduler", "--leader-elect=false"),
             _volcanic(cluster, "controller-manager", "--leader-elect=false", "--kube-api-qps", "2000",
                       "--kube-api-burst", "2000")]

    def alive() -> None:
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"bench: {p.args[3]} exited with {p.returncode}; see {cluster.dir}")

    try:
        timer = (FloorObserver(floor_binary, cluster, store, pods, namespace) if floor_binary
                 else PodTimes(store, pods, namespace))
        time.sleep(3.0)  # both components synced
        start = time.time()
        for created in [store.create_async(gang_job(i, namespace)) for i in range(jobs)]:
            created.result()
        created = time.time() - start
        bound_s = timer.last_bound(alive) - start
        running_s = timer.last_running(alive) - start
    finally:
        for p in procs:
            p.terminate()
            p.wait(15)
    store.delete("Namespace", namespace)
    _wait_gone(store, namespace)
    return {"jobs_created_s": round(created, 3), "last_bound_s": round(bound_s, 3),
            "last_running_s": round(running_s, 3)}


def _volcanic(cluster: DevCluster, command: str, *flags: str) -> subprocess.Popen:
    log = open(os.path.join(cluster.dir, f"bench-{command}.log"), "ab")
    return subprocess.Popen([sys.executable, "-m", "volcanic.cli.main", command, *flags, "--kubeconfig",
                             str(cluster.kubeconfig)], stdout=log, stderr=subprocess.STDOUT)


def _wait_gone(store: KubeStore, namespace: str) -> None:
    deadline = time.monotonic() + 600
    while store.get("Namespace", namespace) is not None:
        if time.monotonic() > deadline:
            raise RuntimeError(f"bench: namespace {namespace} not gone after 600 s")
        time.sleep(0.5)
