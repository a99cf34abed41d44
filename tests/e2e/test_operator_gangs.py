"""Gangs from the operators Volcano users run (issue 35): KubeRay's ray-operator and the Kubeflow
training operator as released, built from the Go module proxy and run against the dev cluster
set for Volcano gang scheduling; the Spark operator and LeaderWorkerSet, which the proxy does not
serve, replayed from their recorded objects (tests/e2e/recorded/, each citing the source it
comes from); and a Deployment and a StatefulSet with scheduling.volcano.sh/group-min-member.

Each gang is put in a queue whose capability is one CPU short of the gang's minResources: the
PodGroup stays Pending and not one of its pods is bound, though all but one would fit (Volcano's
enqueue admits a PodGroup only when its minResources fit the queue: reference §4 enqueue,
proportion's JobEnqueueable). Raising the capability to fit lets every pod run together, so the
queue named the way each operator names it is the one honoured."""

from __future__ import annotations

from pathlib import Path
import time

import pytest
import yaml

from volcanic.real.devcluster.cluster import KWOK_TOLERATION

RECORDED = Path(__file__).with_name("recorded")


@pytest.fixture(scope="module")
def operators(env, up):
    for name in ("kuberay", "training-operator"):
        env.cluster.start_operator(name, log=lambda s: None)


def pods(env, namespace: str) -> list[dict]:
    return env.store.list("Pod", namespace)


def bound(env, namespace: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in pods(env, namespace) if p["spec"].get("nodeName"))


def running(env, namespace: str, count: int) -> bool:
    ps = pods(env, namespace)
    return len(ps) == count and all((p.get("status") or {}).get("phase") == "Running" for p in ps)


def podgroup(env, name: str, namespace: str) -> dict:
    return env.store.get("PodGroup", name, namespace) or {}


def pg_phase(env, name: str, namespace: str) -> str | None:
    return (podgroup(env, name, namespace).get("status") or {}).get("phase")


def held_back(env, pg: str, namespace: str, seconds: float = 4.0) -> None:
    """Over several scheduling periods the PodGroup stays Pending and no pod of it is bound."""
    assert env.wait(lambda: pg_phase(env, pg, namespace) == "Pending", timeout=30), podgroup(env, pg, namespace)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert bound(env, namespace) == [], pods(env, namespace)
        assert pg_phase(env, pg, namespace) == "Pending", podgroup(env, pg, namespace)
        time.sleep(0.5)


def queue(env, name: str, cpu: int) -> None:
    env.apply_queue(name, reclaimable=True, capability={"cpu": str(cpu)})


def on_kwok(template_spec: dict, cpu: str = "1", container: str = "c") -> dict:
    return {"tolerations": [KWOK_TOLERATION], "nodeSelector": {"type": "kwok"},
            "containers": [{"name": container, "image": "busybox", "resources": {"requests": {"cpu": cpu}}}],
            **template_spec}


def ray_group(replicas: int) -> dict:
    return {"groupName": "workers", "replicas": replicas, "minReplicas": replicas, "maxReplicas": replicas,
            "rayStartParams": {}, "template": {"spec": on_kwok({})}}


def ray_cluster_spec(workers: int) -> dict:
    return {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": on_kwok({})}},
            "workerGroupSpecs": [ray_group(workers)]}


def test_raycluster_runs_as_one_gang_in_its_queue(env, operators, namespace):
    """ray-operator v1.5.0 (controllers/ray/batchscheduler/volcano): PodGroup ray-<name>-pg with
    minMember head + workers, queue from the volcano.sh/queue-name label."""
    queue(env, "q-raycluster", cpu=4)
    env.apply({"apiVersion": "ray.io/v1", "kind": "RayCluster",
               "metadata": {"name": "rc", "labels": {"volcano.sh/queue-name": "q-raycluster"}},
               "spec": ray_cluster_spec(workers=4)}, namespace=namespace)
    assert env.wait(lambda: len(pods(env, namespace)) == 5, timeout=60), pods(env, namespace)
    pg = podgroup(env, "ray-rc-pg", namespace)
    assert pg["spec"]["minMember"] == 5 and pg["spec"]["queue"] == "q-raycluster", pg
    held_back(env, "ray-rc-pg", namespace)

    queue(env, "q-raycluster", cpu=5)
    assert env.wait(lambda: running(env, namespace, 5), timeout=60), pods(env, namespace)
    assert env.wait(lambda: pg_phase(env, "ray-rc-pg", namespace) == "Running", timeout=30)


def test_rayjob_cluster_and_submitter_run_as_one_gang(env, operators, namespace):
    """A RayJob's PodGroup is the RayJob's (ray-<rayjob>-pg): its RayCluster's head and workers
    form the gang (minMember 3) and the submitter Job's pod joins it once the cluster is up."""
    queue(env, "q-rayjob", cpu=2)
    env.apply({"apiVersion": "ray.io/v1", "kind": "RayJob",
               "metadata": {"name": "rj", "labels": {"volcano.sh/queue-name": "q-rayjob"}},
               "spec": {"entrypoint": "python -c 'print(1)'",
                        "submitterPodTemplate": {"spec": on_kwok({"restartPolicy": "Never"}, cpu="500m")},
                        "rayClusterSpec": ray_cluster_spec(workers=2)}}, namespace=namespace)
    assert env.wait(lambda: len(pods(env, namespace)) == 3, timeout=60), pods(env, namespace)
    pg = podgroup(env, "ray-rj-pg", namespace)
    assert pg["spec"]["minMember"] == 3 and pg["spec"]["queue"] == "q-rayjob", pg
    assert pg["spec"]["minResources"]["cpu"] == "3500m", pg  # the submitter's 500m included
    held_back(env, "ray-rj-pg", namespace)

    queue(env, "q-rayjob", cpu=4)
    assert env.wait(lambda: running(env, namespace, 4), timeout=90), pods(env, namespace)
    groups = {p["metadata"]["annotations"]["scheduling.k8s.io/group-name"] for p in pods(env, namespace)}
    assert groups == {"ray-rj-pg"}


def test_pytorchjob_pods_are_created_only_once_its_gang_is_enqueued(env, operators, namespace):
    """training-operator v1.8.1 (pkg/controller.v1/common/job.go, control/podgroup_control.go):
    PodGroup <job> with minMember = all replicas and queue from runPolicy.schedulingPolicy; it
    creates no pod while the PodGroup is Pending, so enqueue alone holds the gang back."""
    queue(env, "q-pytorch", cpu=4)
    replica = {"template": {"spec": on_kwok({}, container="pytorch")}}  # the operator's port goes to "pytorch"
    env.apply({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "pt"},
               "spec": {"runPolicy": {"schedulingPolicy": {"queue": "q-pytorch"}},
                        "pytorchReplicaSpecs": {"Master": {"replicas": 1, **replica},
                                                "Worker": {"replicas": 4, **replica}}}}, namespace=namespace)
    assert env.wait(lambda: podgroup(env, "pt", namespace), timeout=60)
    pg = podgroup(env, "pt", namespace)
    assert pg["spec"]["minMember"] == 5 and pg["spec"]["queue"] == "q-pytorch", pg
    held_back(env, "pt", namespace)
    assert pods(env, namespace) == []

    queue(env, "q-pytorch", cpu=5)
    assert env.wait(lambda: running(env, namespace, 5), timeout=90), pods(env, namespace)


def recorded(name: str) -> list[dict]:
    """A recorded operator's objects, given the toleration and selector of the dev cluster's
    kwok nodes (the only change made to them)."""
    docs = [d for d in yaml.safe_load_all((RECORDED / name).read_text()) if d]
    for d in docs:
        if d["kind"] == "Pod":
            d["spec"].update(tolerations=[KWOK_TOLERATION], nodeSelector={"type": "kwok"})
    return docs


def test_spark_application_driver_then_executors(env, up, namespace):
    """Spark operator v2.5.2 (recorded): PodGroup spark-<app>-pg with minMember 1 and
    minResources for the driver and every executor (its memory is the operator's odd "1024m"),
    created before the driver; the driver creates the executors once it runs."""
    env.kubectl("create", "priorityclass", "high-priority", "--value=1000", check=False)
    pg, driver, *executors = recorded("spark-operator.yaml")
    queue(env, "spark-queue", cpu=2)
    env.apply(pg, driver, namespace=namespace)
    held_back(env, "spark-spark-pi-pg", namespace)

    queue(env, "spark-queue", cpu=3)
    assert env.wait(lambda: running(env, namespace, 1), timeout=60), pods(env, namespace)
    env.apply(*executors, namespace=namespace)
    assert env.wait(lambda: running(env, namespace, 3), timeout=60), pods(env, namespace)


def test_leaderworkerset_groups_each_run_whole(env, up, namespace):
    """LeaderWorkerSet v0.10.0 (recorded): one PodGroup per group (minMember = size 3), the
    leader created before its PodGroup and its workers. A queue with room for one group and a
    half runs one group whole and none of the other."""
    docs = recorded("lws.yaml")
    leaders = [d for d in docs if d["kind"] == "Pod" and d["metadata"]["labels"][
        "leaderworkerset.sigs.k8s.io/worker-index"] == "0"]
    rest = [d for d in docs if d not in leaders]
    queue(env, "lws-queue", cpu=2)
    env.apply(*leaders, namespace=namespace)
    env.apply(*rest, namespace=namespace)

    def groups_bound():
        by_group: dict[str, int] = {}
        for p in pods(env, namespace):
            if p["spec"].get("nodeName"):
                g = p["metadata"]["annotations"]["scheduling.k8s.io/group-name"]
                by_group[g] = by_group.get(g, 0) + 1
        return by_group
    assert env.wait(lambda: list(groups_bound().values()) == [3], timeout=60), groups_bound()
    time.sleep(3)
    assert list(groups_bound().values()) == [3], groups_bound()

    queue(env, "lws-queue", cpu=3)
    assert env.wait(lambda: running(env, namespace, 6), timeout=60), pods(env, namespace)


def workload(kind: str, name: str, replicas: int, queue_name: str, **spec) -> dict:
    """A Deployment or StatefulSet of volcano pods, its gang size on the workload (Volcano's
    PodGroup controller reads group-min-member from the pods' owner, pg_controller_handler.go)."""
    return {"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": name, "annotations": {"scheduling.volcano.sh/group-min-member": str(replicas)}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name},
                                               "annotations": {"scheduling.volcano.sh/queue-name": queue_name}},
                                  "spec": {"schedulerName": "volcano", **on_kwok({})}}, **spec}}


@pytest.mark.parametrize("kind,spec", [("Deployment", {}),
                                       ("StatefulSet", {"serviceName": "s", "podManagementPolicy": "Parallel"})])
def test_workload_with_group_min_member_runs_whole(env, up, namespace, kind, spec):
    """A ReplicaSet's (Deployment's) or StatefulSet's pods under one PodGroup of minMember 3 in
    the queue their annotation names. (A StatefulSet must create its pods in Parallel: in
    OrderedReady the second pod waits for the first to run, which the gang never lets happen.)"""
    q = f"q-{kind.lower()}"
    queue(env, q, cpu=2)
    env.apply(workload(kind, "w", 3, q, **spec), namespace=namespace)
    assert env.wait(lambda: len(pods(env, namespace)) == 3 and env.store.list("PodGroup", namespace), timeout=60)
    [pg] = env.store.list("PodGroup", namespace)
    assert pg["spec"]["minMember"] == 3 and pg["spec"]["queue"] == q, pg
    held_back(env, pg["metadata"]["name"], namespace)

    queue(env, q, cpu=3)
    assert env.wait(lambda: running(env, namespace, 3), timeout=60), pods(env, namespace)
