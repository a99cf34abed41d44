"""The ray and hcclrank job plugins (Volcano v1.15.1's pkg/controllers/job/plugins/
distributed-framework/ray/ray.go and hcclrank/hcclrank.go). Volcano's e2e: jobseq "Ray
Plugin E2E Test" (a head and a worker task, plugins ray and svc: the Service exists and the
job goes Pending, then Running)."""

from __future__ import annotations

import pytest

from job_helpers import node, phase, pods, wait
import volcanic
from volcanic.controllers.job.plugins import PluginError, plugins_of

NS = "default"
RAY_ARGS = ["--head=head", "--worker=worker", "--port=2345", "--headContainer=ray", "--workerContainer=ray"]


def task(name: str, replicas: int = 1, container: str = "ray") -> dict:
    return {"name": name, "replicas": replicas, "minAvailable": replicas,
            "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": container, "image": "rayproject/ray", "resources": {"requests": {"cpu": "1"}}}]}}}


def ray_job(name: str = "ray-cluster-job", args: list | None = None, *tasks: dict) -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name, "namespace": NS},
            "spec": {"minAvailable": 1, "plugins": {"ray": RAY_ARGS if args is None else args, "svc": []},
                     "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
                     "tasks": list(tasks) or [task("head"), task("worker")]}}


def test_ray_job_gets_its_head_service_and_runs():
    """jobseq "Ray Plugin E2E Test": the job's Service (svc) and the head Service
    "<job>-head-svc" with the GCS, dashboard and client ports; the head container runs
    `ray start --head`, the worker joins it at "<job>-head-0.<job>:<port>"; the job goes
    Pending, then Running."""
    c = volcanic.Cluster()
    c.apply([node("n1"), node("n2")])
    c.apply(ray_job())
    c.run(0)
    assert phase(c, "ray-cluster-job") in ("Pending", "Running")
    assert c.get("Service", "ray-cluster-job", NS) is not None
    head_svc = c.get("Service", "ray-cluster-job-head-svc", NS)
    assert head_svc["spec"]["selector"] == {"volcano.sh/job-name": "ray-cluster-job",
                                            "volcano.sh/job-namespace": NS, "volcano.sh/task-spec": "head"}
    assert [(p["name"], p["port"], p["targetPort"]) for p in head_svc["spec"]["ports"]] == [
        ("gcs", 2345, "gcs"), ("dashboard", 8265, "dashboard"), ("client-server", 10001, "client-server")]
    assert wait(c, lambda: phase(c, "ray-cluster-job") == "Running", 30)
    p = pods(c, "ray-cluster-job")
    head = p["ray-cluster-job-head-0"]["spec"]["containers"][0]
    assert head["command"] == ["sh", "-c", "ray start --head --block --dashboard-host=0.0.0.0 --port=2345 "
                                           "--dashboard-port=8265 --ray-client-server-port=10001"]
    assert [(q["name"], q["containerPort"]) for q in head["ports"]] == [
        ("gcs", 2345), ("dashboard", 8265), ("client-server", 10001)]
    worker = p["ray-cluster-job-worker-0"]["spec"]["containers"][0]
    assert worker["command"] == ["sh", "-c", "ray start --block --address=ray-cluster-job-head-0.ray-cluster-job:2345"]
    assert "ports" not in worker
    assert c.get("Job", "ray-cluster-job", NS)["status"]["controlledResources"]["plugin-ray"] == "ray"
    assert c.errors == []


def test_ray_defaults_and_other_containers():
    """Defaults: tasks head/worker, containers head/worker, ports 6379/8265/10001; a
    container of another name is left alone, and a port the head already exposes is kept."""
    job = ray_job("r", [], task("head", container="head"), task("worker", container="sidecar"))
    job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["ports"] = [{"name": "mine", "containerPort": 6379}]
    ray = next(p for p in plugins_of(job) if p.name == "ray")
    head = {"metadata": {"name": "r-head-0", "annotations": {"volcano.sh/task-spec": "head"}},
            "spec": {"containers": [dict(job["spec"]["tasks"][0]["template"]["spec"]["containers"][0])]}}
    ray.on_pod_create(head, job)
    assert [q["containerPort"] for q in head["spec"]["containers"][0]["ports"]] == [6379, 8265, 10001]
    worker = {"metadata": {"name": "r-worker-0", "annotations": {"volcano.sh/task-spec": "worker"}},
              "spec": {"containers": [{"name": "sidecar"}]}}
    ray.on_pod_create(worker, job)
    assert "command" not in worker["spec"]["containers"][0]


def test_ray_without_head_task_fails_the_pod():
    """ray.go OnPodCreate: a job without the head task fails the pod's creation."""
    job = ray_job("r", RAY_ARGS, task("worker"))
    ray = next(p for p in plugins_of(job) if p.name == "ray")
    with pytest.raises(PluginError, match="job r doesn't have head task head"):
        ray.on_pod_create({"metadata": {"name": "r-worker-0"}, "spec": {"containers": []}}, job)


def test_hcclrank_annotates_ranks_after_the_other_plugins():
    """hcclrank.go: master pod i has rank i, worker pod i masterReplicas + i, from the
    volcano.sh/task-index label; a RANK env (pytorch's) wins; it runs after the others."""
    job = {"metadata": {"name": "h", "namespace": NS}, "spec": {
        "plugins": {"hcclrank": [], "pytorch": []}, "tasks": [task("master", 2), task("worker", 3)]}}
    plugins = plugins_of(job)
    assert [p.name for p in plugins] == ["pytorch", "hcclrank"]

    def pod(task_name: str, index: int) -> dict:
        return {"metadata": {"name": f"h-{task_name}-{index}", "labels": {"volcano.sh/task-index": str(index)},
                             "annotations": {"volcano.sh/task-spec": task_name}},
                "spec": {"containers": [{"name": "c"}]}}

    hccl = plugins[1]
    for name, index, rank in (("master", 1, "1"), ("worker", 2, "4")):
        p = pod(name, index)
        hccl.on_pod_create(p, job)
        assert p["metadata"]["annotations"]["hccl/rankIndex"] == rank
    p = pod("worker", 0)
    p["spec"]["containers"][0]["env"] = [{"name": "RANK", "value": "7"}]
    hccl.on_pod_create(p, job)
    assert p["metadata"]["annotations"]["hccl/rankIndex"] == "7"
    other = pod("ps", 0)
    hccl.on_pod_create(other, job)
    assert "hccl/rankIndex" not in other["metadata"]["annotations"]
