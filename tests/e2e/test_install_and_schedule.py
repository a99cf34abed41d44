"""volcanic on a real API server: install, and the scheduler daemon binding gangs
(reference §4: gang scheduling, PodGroup status, the Unschedulable condition)."""

from __future__ import annotations

import yaml

from volcanic.real.devcluster.cluster import KWOK_TOLERATION, kwok_node

GROUP = "scheduling.k8s.io/group-name"


def podgroup(name, min_member, namespace):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"minMember": min_member, "queue": "default"}}


def pod(name, group, namespace, cpu="1"):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "annotations": {GROUP: group}},
            "spec": {"schedulerName": "volcano", "tolerations": [KWOK_TOLERATION], "nodeSelector": {"type": "kwok"},
                     "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}]}}


def test_install_is_idempotent_and_has_volcanos_names(env):
    assert env.run("install").returncode == 0  # a second time: nothing changes, nothing fails
    crds = {c["metadata"]["name"]: c for c in env.store.client.request(
        "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")["items"]}
    job = crds["jobs.batch.volcano.sh"]["spec"]
    assert job["names"]["shortNames"] == ["vcjob", "vj"] and job["scope"] == "Namespaced"
    assert crds["podgroups.scheduling.volcano.sh"]["spec"]["names"]["shortNames"] == ["pg", "podgroup-v1beta1"]
    queue = crds["queues.scheduling.volcano.sh"]["spec"]
    assert queue["names"]["shortNames"] == ["q", "queue-v1beta1"] and queue["scope"] == "Cluster"
    assert "commands.bus.volcano.sh" in crds
    assert {q["metadata"]["name"] for q in env.store.list("Queue")} >= {"root", "default"}
    assert env.kubectl("get", "vcjob,pg,q").returncode == 0


def test_install_print_touches_nothing_and_applies_with_kubectl(env):
    printed = env.run("install", "--print", "--all")
    assert printed.returncode == 0
    kinds = [d["kind"] for d in yaml.safe_load_all(printed.stdout)]
    # Job, Command, PodGroup, Queue, HyperNode, Numatopology, JobFlow, JobTemplate, CronJob,
    # QueueBinding (volcanic's own); scheduler, controllers, webhook.
    assert kinds.count("CustomResourceDefinition") == 10 and kinds.count("Deployment") == 3
    assert "ConfigMap" in kinds and "Service" in kinds
    assert env.kubectl("apply", "--dry-run=server", "-f", "-", input=printed.stdout).returncode == 0


def test_gang_binds_all_or_nothing_and_whole_once_a_node_is_added(env, up, namespace):
    """Three 20-cpu pods with minMember 3 on two 32-cpu nodes: nothing binds and the PodGroup
    says why; a third node makes room and the whole gang binds."""
    env.apply(podgroup("big", 3, namespace), *[pod(f"big-{i}", "big", namespace, cpu="20") for i in range(3)],
              namespace=namespace)

    def unschedulable():
        pg = env.store.get("PodGroup", "big", namespace) or {}
        return any(c.get("type") == "Unschedulable" for c in (pg.get("status") or {}).get("conditions") or [])
    assert env.wait(unschedulable), env.store.get("PodGroup", "big", namespace)
    assert all(not p["spec"].get("nodeName") for p in env.store.list("Pod", namespace))

    env.apply(kwok_node("kwok-node-extra"))
    assert env.wait(lambda: all(p["spec"].get("nodeName") for p in env.store.list("Pod", namespace)))
    nodes = {p["spec"]["nodeName"] for p in env.store.list("Pod", namespace)}
    assert len(nodes) == 3  # 20 cpu each: one per node
    assert env.wait(lambda: (env.store.get("PodGroup", "big", namespace)["status"] or {}).get("phase") == "Running",
                    timeout=30)


def test_kwok_pods_follow_the_sim_annotations(env, namespace):
    """deploy/kwok/stages.yaml gives kwok pods the embedded kubelets' meaning of
    volcanic/sim-duration and volcanic/sim-exit-code: Running at once, then Succeeded or
    Failed with that exit code; without a duration, Running until deleted."""
    def sim_pod(name, **annotations):
        p = pod(name, "none", namespace)
        p["metadata"]["annotations"] = annotations
        p["spec"].update(nodeName="kwok-node-0", restartPolicy="Never")
        return p
    env.apply(sim_pod("ok", **{"volcanic/sim-duration": "2s"}),
              sim_pod("bad", **{"volcanic/sim-duration": "2s", "volcanic/sim-exit-code": "3"}),
              sim_pod("forever"), namespace=namespace)
    phases = lambda: {p["metadata"]["name"]: p["status"].get("phase") for p in env.store.list("Pod", namespace)}
    assert env.wait(lambda: phases() == {"ok": "Succeeded", "bad": "Failed", "forever": "Running"}, timeout=30), phases()
    bad = env.store.get("Pod", "bad", namespace)
    assert bad["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 3
