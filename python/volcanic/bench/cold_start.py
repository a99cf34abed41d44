"""`volcanic bench --preset cold-start`: from process start to the first bind on a big cluster.

Volcano took 8 min 17 s from start to its first bind at 5,000 nodes and 140,000 pods
(volcano#5819). The setup, reported apart: a dev cluster with 5,000 kwok nodes and 87,000
PodGroups holding 140,000 pods (1 CPU / 1 Gi each, in 100 namespaces), every PodGroup Running
with its pods bound and Running (28 a node, as a busy cluster is) except the last PENDING ones,
whose two pods each wait for the scheduler. kwok keeps the nodes; the pods' Running status is
written by the setup itself (kwok moved them at 25 pods a second at this size), and kwok is
given a pod stage that matches nothing so that it leaves them alone.

Then the API server's own list time (each kind the scheduler reads, listed in pages of 1,000 in
parallel, as the scheduler lists them, decoded and dropped), and `volcanic scheduler` started
as a process: the time from its start to its caches synced (the last list in), to its first
session, and to the first pending pod bound (a poll of the pending namespace every 50 ms).
The goal (issue 35): the first session within 2 s of the lists arriving.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
import os
from pathlib import Path
import re
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Iterable, Iterator

import yaml

from volcanic.kube.keys import GROUP_NAME, SCHEDULING_API_VERSION
from volcanic.kube.kinds import kind_named
from volcanic.real.client import KubeClient
from volcanic.real.devcluster.cluster import KWOK_TOLERATION, STAGES, DevCluster, kwok_node
from volcanic.real.install import install
from volcanic.real.store import KubeStore
from volcanic.scheduler.engine import SCHEDULER_KINDS

# preset -> (nodes, pods, PodGroups)
COLD_START_PRESETS = {"cold-start": (5_000, 140_000, 87_000), "cold-start-small": (500, 14_000, 8_700)}
PENDING = 10  # PodGroups of two pods left for the scheduler, in PENDING_NAMESPACE
PENDING_NAMESPACE = "cold-start-pending"
NAMESPACES = 100
PODS_PER_NODE = 28
BATCH = 2_000  # creates in flight at once
# The kwok taint's, and for good those of a node whose lease lapsed: kwok renews 5,000 leases
# late on a loaded 2-core machine, and the taint manager would evict its pods (which no kubelet
# would then finish deleting).
TOLERATIONS = [KWOK_TOLERATION] + [{"key": f"node.kubernetes.io/{t}", "operator": "Exists", "effect": "NoExecute"}
                                   for t in ("not-ready", "unreachable")]
# A PodGroup as Volcano's gang plugin leaves a running one (pkg/scheduler/plugins/gang/gang.go
# OnSessionClose), so the scheduler has nothing to write for it.
RUNNING_STATUS = {"phase": "Running", "succeeded": 0, "failed": 0, "conditions": [
    {"type": "Scheduled", "status": "True", "reason": "tasks in gang are ready to be scheduled", "message": "",
     "transitionID": "session-1", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}


def run_cold_start(preset: str, log: Callable[[str], None] = print) -> dict[str, Any]:
    nodes, pods, groups = COLD_START_PRESETS[preset]
    with tempfile.TemporaryDirectory(prefix="volcanic-cold-start-") as directory:
        cluster = DevCluster(directory)
        cluster.up(0, log=log, stages=nodes_only_stages(Path(directory)))
        try:
            client = KubeClient(str(cluster.kubeconfig))
            install(client, log=lambda _: None)
            store = KubeStore(client)
            setup = _setup(cluster, store, nodes, pods, groups, log)
            floor = _list_floor(store)
            log(f"API server lists: {floor['lists_s']:.2f} s; starting volcanic scheduler ...")
            measured = _measure(cluster, client)
            store.close()
        finally:
            cluster.down()
    return {"preset": preset, "cores": os.cpu_count(), "nodes": nodes, "pods": pods, "podgroups": groups,
            "setup": setup, **floor, **measured,
            "first_session_after_lists_s": round(measured["first_session_s"] - measured["synced_s"], 3)}


# Setup.
def _setup(cluster: DevCluster, store: KubeStore, nodes: int, pods: int, groups: int,
           log: Callable[[str], None]) -> dict[str, float]:
    start = time.monotonic()
    names = [f"kwok-node-{i}" for i in range(nodes)]
    _create_all(store, (kwok_node(n) for n in names))
    namespaces = [f"cold-{i}" for i in range(NAMESPACES)] + [PENDING_NAMESPACE]
    _create_all(store, ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in namespaces))
    log(f"{nodes} nodes in {time.monotonic() - start:.1f} s; creating {groups} PodGroups ...")
    sizes = _group_sizes(pods, groups)
    first_pending = len(sizes) - PENDING
    _create_all(store, (_podgroup(i, size, i >= first_pending) for i, size in enumerate(sizes)))
    created_groups = time.monotonic()
    log(f"PodGroups in {created_groups - start:.1f} s; creating {pods} pods ...")
    _create_all(store, _pods(sizes, names))
    created_pods = time.monotonic()
    log(f"pods in {created_pods - created_groups:.1f} s; writing their Running status ...")
    run_pods(store.client, (p for p in _pods(sizes, names) if "nodeName" in p["spec"]))
    return {"create_s": round(created_pods - start, 1), "running_s": round(time.monotonic() - created_pods, 1)}


def nodes_only_stages(directory: Path) -> Path:
    """kwok's stages for the nodes alone: kwok adds its built-in pod stages when its
    configuration has none, so a pod stage that matches no pod keeps it off the pods."""
    stages = [d for d in yaml.safe_load_all(STAGES.read_text()) if d and d["spec"]["resourceRef"]["kind"] == "Node"]
    stages.append({"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Stage", "metadata": {"name": "pod-untouched"},
                   "spec": {"resourceRef": {"apiGroup": "v1", "kind": "Pod"},
                            "selector": {"matchExpressions": [{"jq": {"key": ".metadata.name",
                                                                      "operator": "DoesNotExist"}}]},
                            "next": {}}})
    path = directory / "kwok-nodes-only.yaml"
    path.write_text(yaml.safe_dump_all(stages))
    return path


def run_pods(client: KubeClient, pods: Iterable[dict[str, Any]]) -> None:
    """Writes each bound pod's status as a kubelet (or kwok) leaves a running one."""
    now = "2026-01-01T00:00:00Z"
    conditions = [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
                  for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]

    def patch(i: int, pod: dict[str, Any]):
        ip = f"10.{1 + i // 65536 % 200}.{i // 256 % 256}.{i % 256}"
        status = {"phase": "Running", "conditions": conditions, "hostIP": "196.168.0.1", "podIP": ip,
                  "podIPs": [{"ip": ip}], "startTime": now, "qosClass": "Burstable",
                  "containerStatuses": [{"name": "c", "image": "busybox", "imageID": "", "ready": True,
                                         "started": True, "restartCount": 0,
                                         "state": {"running": {"startedAt": now}}}]}
        meta = pod["metadata"]
        return client.request_async("PATCH", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status",
                                    {"status": status}, content_type="application/merge-patch+json")
    _in_batches(patch(i, pod) for i, pod in enumerate(pods))


def _group_sizes(pods: int, groups: int) -> list[int]:
    """One or two pods a PodGroup, `pods` in all; the last PENDING groups have two."""
    twos = pods - groups
    if not PENDING <= twos <= groups:
        raise ValueError(f"cold-start: {pods} pods do not fill {groups} PodGroups of one or two pods")
    return [1] * (groups - twos) + [2] * twos


def _podgroup(i: int, size: int, pending: bool) -> dict[str, Any]:
    meta = {"name": f"pg-{i}", "namespace": PENDING_NAMESPACE if pending else f"cold-{i % NAMESPACES}"}
    status = {"phase": "Pending"} if pending else RUNNING_STATUS | {"running": size}
    return {"apiVersion": SCHEDULING_API_VERSION, "kind": "PodGroup", "metadata": meta,
            "spec": {"minMember": size, "queue": "default"}, "status": status}


def _pods(sizes: list[int], nodes: list[str]) -> Iterator[dict[str, Any]]:
    slot, first_pending = 0, len(sizes) - PENDING
    for i, size in enumerate(sizes):
        pg = _podgroup(i, size, i >= first_pending)["metadata"]
        for j in range(size):
            node = None if i >= first_pending else nodes[(slot // PODS_PER_NODE) % len(nodes)]
            slot += node is not None
            spec: dict[str, Any] = {"schedulerName": "volcano", "tolerations": TOLERATIONS,
                                    "nodeSelector": {"type": "kwok"},
                                    "containers": [{"name": "c", "image": "busybox", "resources": {
                                        "requests": {"cpu": "1", "memory": "1Gi"}}}]}
            if node:
                spec["nodeName"] = node
            yield {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": f"{pg['name']}-{j}", "namespace": pg["namespace"],
                                "annotations": {GROUP_NAME: pg["name"]}},
                   "spec": spec}


def _create_all(store: KubeStore, objs: Iterable[dict[str, Any]]) -> None:
    _in_batches(store.create_async(obj) for obj in objs)


def _in_batches(requests: Iterable[Future]) -> None:
    """Sends the requests BATCH at a time (waiting for a batch's answers before the next)."""
    batch: list[Future] = []
    for request in requests:
        batch.append(request)
        if len(batch) >= BATCH:
            for f in batch:
                f.result()
            batch = []
    for f in batch:
        f.result()


# Measurement.
def _list_floor(store: KubeStore) -> dict[str, Any]:
    """Every kind the scheduler reads, listed in pages in parallel as its reflectors list them
    (KubeStore.pages), the objects counted and dropped."""
    def list_kind(kind: str) -> tuple[str, int]:
        return kind, sum(len(page) for page, _ in store.pages(kind_named(kind)))
    start = time.monotonic()
    with ThreadPoolExecutor(len(SCHEDULER_KINDS)) as pool:
        lists = list(pool.map(list_kind, sorted(SCHEDULER_KINDS)))
    return {"lists_s": round(time.monotonic() - start, 3), "listed": {kind: count for kind, count in lists if count}}


SYNCED = "caches synced"
FIRST_SESSION = "first session"


def _measure(cluster: DevCluster, client: KubeClient, timeout: float = 900.0) -> dict[str, float]:
    log_path = os.path.join(cluster.dir, "cold-start-scheduler.log")
    with open(log_path, "wb") as out:
        start = time.time()
        proc = subprocess.Popen([sys.executable, "-m", "volcanic.cli.main", "scheduler", "--leader-elect=false",
                                 "--kubeconfig", str(cluster.kubeconfig)], stdout=out, stderr=subprocess.STDOUT)
    try:
        bound = _first_bound(client, proc, start + timeout)
    finally:
        proc.terminate()
        proc.wait(30)
    text = open(log_path, encoding="utf-8", errors="replace").read()
    return {"synced_s": round(_logged_at(text, SYNCED) - start, 3),
            "first_session_s": round(_logged_at(text, FIRST_SESSION) - start, 3),
            "first_bind_s": round(bound - start, 3)}


def _first_bound(client: KubeClient, proc: subprocess.Popen, deadline: float) -> float:
    path = f"/api/v1/namespaces/{PENDING_NAMESPACE}/pods"
    while time.time() < deadline:
        if any(p["spec"].get("nodeName") for p in client.request("GET", path)["items"]):
            return time.time()
        if proc.poll() is not None:
            raise RuntimeError(f"cold-start: the scheduler exited with {proc.returncode}")
        time.sleep(0.05)
    raise RuntimeError("cold-start: no pending pod bound before the deadline")


def _logged_at(text: str, what: str) -> float:
    """The time of the first log line containing `what` (logging's local-time stamp)."""
    m = re.search(rf"^(\d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{{3}}) .*{re.escape(what)}", text, re.M)
    if m is None:
        raise RuntimeError(f"cold-start: the scheduler never logged {what!r}")
    return datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S").timestamp() + int(m.group(2)) / 1000
