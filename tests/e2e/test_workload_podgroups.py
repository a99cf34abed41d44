"""PodGroups of Kubernetes workloads on a real API server, with kube-controller-manager's
Deployment and ReplicaSet controllers (issue 33 item 5; Volcano's PodGroup controller under
WorkLoadSupport, pkg/controllers/podgroup/pg_controller_handler.go; Volcano e2e
schedulingbase "PodGroup's Count change with Deployment's Request change"), and their
minResources as Volcano's quota usage (item 6)."""

from __future__ import annotations

from volcanic.real.devcluster.cluster import KWOK_TOLERATION


def deployment(name: str, replicas: int, cpu: str) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"schedulerName": "volcano", "tolerations": [KWOK_TOLERATION],
                                           "nodeSelector": {"type": "kwok"},
                                           "containers": [{"name": "c", "image": "nginx",
                                                           "resources": {"requests": {"cpu": cpu}}}]}}}}


def ready(env, name: str, namespace: str, replicas: int) -> bool:
    d = env.store.client.request("GET", f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}")
    status = d.get("status") or {}
    return (status.get("observedGeneration") == d["metadata"]["generation"]
            and status.get("updatedReplicas") == replicas and status.get("readyReplicas") == replicas
            and status.get("replicas") == replicas)


def test_deployment_rolling_update_leaves_one_podgroup(env, up, namespace):
    """schedulingbase "PodGroup's Count change with Deployment's Request change": a Deployment
    of volcano pods runs under one PodGroup (its ReplicaSet's); a changed request rolls it to
    a new ReplicaSet and scales the old one to 0, which keeps existing (revision history) but
    loses its PodGroup: one PodGroup again, the new ReplicaSet's."""
    env.apply(deployment("d-1", 3, "1"), namespace=namespace)
    assert env.wait(lambda: ready(env, "d-1", namespace, 3), timeout=60), env.store.list("PodGroup", namespace)
    [old] = env.store.list("PodGroup", namespace)
    assert old["spec"]["minResources"] == {"count/pods": "1", "pods": "1", "cpu": "1", "requests.cpu": "1"}

    env.apply(deployment("d-1", 3, "500m"), namespace=namespace)
    assert env.wait(lambda: ready(env, "d-1", namespace, 3), timeout=60)
    assert env.wait(lambda: env.store.get("PodGroup", old["metadata"]["name"], namespace) is None, timeout=60)
    [new] = env.store.list("PodGroup", namespace)
    owner = new["metadata"]["ownerReferences"][0]
    assert owner["kind"] == "ReplicaSet" and new["metadata"]["name"] == f"podgroup-{owner['uid']}"
    replicasets = env.store.client.request("GET", f"/apis/apps/v1/namespaces/{namespace}/replicasets")["items"]
    assert sorted(rs["spec"]["replicas"] for rs in replicasets) == [0, 3]  # the old one kept, at 0


def test_controller_manager_may_watch_workloads(env):
    """The controller-manager's ServiceAccount (volcanic install's RBAC) may list and watch the
    ReplicaSets and StatefulSets its PodGroup controller follows, and not change them."""
    who = "system:serviceaccount:volcano-system:volcanic-controller-manager"
    for resource in ("replicasets.apps", "statefulsets.apps"):
        for verb, allowed in (("list", "yes"), ("watch", "yes"), ("get", "yes"), ("update", "no")):
            r = env.kubectl("auth", "can-i", verb, resource, "--as", who, check=False)
            assert r.stdout.strip() == allowed, (verb, resource, r.stdout, r.stderr)
