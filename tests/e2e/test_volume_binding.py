"""Volume binding on a real API server (the rules and their Kubernetes and Volcano sources are in
tests/python/test_volume_binding.py): kube-controller-manager's PV controller completes what
the scheduler chose, and the pod is bound once its claim is. Kubernetes' sig-scheduling spec
behind issue "What Volcano's own e2e suites and a fault probe found" item 13: a pod whose local
PV allowed only node-3 was put on node-2.
"""

from __future__ import annotations

from test_volcano_jobs import vcjob

PREDICATES = "  - name: predicates\n"


def _storage(env, name: str, provisioner: str) -> None:
    env.apply({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
               "provisioner": provisioner, "volumeBindingMode": "WaitForFirstConsumer"})


def _claim(name: str, storage_class: str) -> dict:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"storageClassName": storage_class, "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}


def _job_with_claim(name: str, claim: str) -> dict:
    job = vcjob(name, 1, duration=None)
    job["spec"]["tasks"][0]["template"]["spec"]["volumes"] = [
        {"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    return job


def _pod(env, job: str, namespace: str) -> dict:
    return next((p for p in env.store.list("Pod", namespace)
                 if (p["metadata"].get("labels") or {}).get("volcano.sh/job-name") == job), {})


def test_a_pod_goes_where_its_local_volume_is(env, up, namespace):
    nodes = sorted(n["metadata"]["name"] for n in env.store.list("Node"))
    target = nodes[-1]  # without the filter the scheduler takes another node first
    _storage(env, "e2e-local", "kubernetes.io/no-provisioner")
    env.apply({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"e2e-local-{namespace}"},
               "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"],
                        "storageClassName": "e2e-local", "persistentVolumeReclaimPolicy": "Retain",
                        "local": {"path": "/mnt/disk"},
                        "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                            {"key": "kubernetes.io/hostname", "operator": "In", "values": [target]}]}]}}}})
    env.apply(_claim("data", "e2e-local"), namespace=namespace)
    env.apply(_job_with_claim("local", "data"), namespace=namespace)
    assert env.wait(lambda: (_pod(env, "local", namespace).get("status") or {}).get("phase") == "Running",
                    timeout=60), _pod(env, "local", namespace)
    assert _pod(env, "local", namespace)["spec"]["nodeName"] == target
    claim = env.store.get("PersistentVolumeClaim", "data", namespace)
    assert claim["spec"]["volumeName"] == f"e2e-local-{namespace}"
    assert claim["status"]["phase"] == "Bound"
    env.kubectl("delete", "jobs.batch.volcano.sh", "local", "-n", namespace, "--wait=false", check=False)


def test_a_claim_nobody_provisions_fails_the_bind_after_the_timeout(env, up, namespace):
    """The claim is annotated for the node the scheduler chose; no provisioner answers, so the
    bind fails after volumebinding.bindTimeoutSeconds and the pod says why."""
    conf = up.conf.read_text()
    reloads = lambda: up.proc.log_path.read_text(errors="replace").count("reloaded")
    before = reloads()
    up.conf.write_text(conf.replace(PREDICATES, PREDICATES + "    arguments: {volumebinding.bindTimeoutSeconds: 3}\n"))
    try:
        assert env.wait(lambda: reloads() > before), up.proc.log_path.read_text(errors="replace")
        _storage(env, "e2e-nobody", "example.com/nobody")
        env.apply(_claim("orphan", "e2e-nobody"), namespace=namespace)
        env.apply(_job_with_claim("orphan", "orphan"), namespace=namespace)

        def failed():
            conds = (_pod(env, "orphan", namespace).get("status") or {}).get("conditions") or []
            return any(c["type"] == "PodScheduled" and c.get("reason") == "SchedulerError"
                       and "binding volumes: context deadline exceeded" in c.get("message", "") for c in conds)
        assert env.wait(failed, timeout=30), _pod(env, "orphan", namespace)
        annotations = env.store.get("PersistentVolumeClaim", "orphan", namespace)["metadata"]["annotations"]
        assert annotations["volume.kubernetes.io/selected-node"]
        assert not _pod(env, "orphan", namespace)["spec"].get("nodeName")
    finally:
        up.conf.write_text(conf)
        env.kubectl("delete", "jobs.batch.volcano.sh", "orphan", "-n", namespace, "--wait=false", check=False)
