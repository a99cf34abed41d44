"""Plugin arguments Volcano accepts: its webhook checks only that a plugin exists
(pkg/webhooks/admission/jobs/validate/admit_job.go) and each plugin parses its flags with a
flag.FlagSet whose errors it only logs (pkg/controllers/job/plugins/ssh/ssh.go, svc/svc.go).
Volcano v1.15.1's e2e: jobseq "Test SSh Plugin with Pod Affinity" and "Check Functionality of
all plugins" (ssh --no-root, a flag Volcano removed), "Test SVC Plugin with
disableNetworkPolicy"; admission "Should not override existing plugins" (svc
--enable-networking, a flag Volcano's svc never had)."""

from __future__ import annotations

from job_helpers import node, phase, pods, wait
import volcanic

NS = "default"


def job(name: str, plugins: dict, replicas: int = 2, **template_spec) -> dict:
    spec = {"restartPolicy": "Never", "containers": [{"name": "nginx", "image": "nginx",
                                                      "resources": {"requests": {"cpu": "500m"}}}],
            **template_spec}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name, "namespace": NS},
            "spec": {"minAvailable": replicas, "plugins": plugins,
                     "tasks": [{"name": "task", "replicas": replicas,
                                "template": {"metadata": {"labels": {"foo": "bar"}}, "spec": spec}}]}}


def running(*objs: dict) -> volcanic.Cluster:
    c = volcanic.Cluster()
    c.apply([node("n1"), node("n2")])
    c.apply(list(objs))
    assert wait(c, lambda: all(phase(c, o["metadata"]["name"]) == "Running" for o in objs), 30)
    assert c.errors == []
    return c


def test_ssh_no_root_with_pod_affinity_runs():
    """jobseq "Test SSh Plugin with Pod Affinity": ssh --no-root is admitted and ignored; the
    job runs, the Secret exists and is mounted, and required pod affinity keeps the pods on
    one node."""
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"foo": "bar"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    c = running(job("job-with-ssh-plugin", {"ssh": ["--no-root"]}, affinity=affinity))
    assert c.get("Secret", "job-with-ssh-plugin-ssh", NS) is not None
    p = pods(c, "job-with-ssh-plugin")
    assert "job-with-ssh-plugin-ssh" in [v["name"] for v in p["job-with-ssh-plugin-task-0"]["spec"]["volumes"]]
    assert len({q["spec"]["nodeName"] for q in p.values()}) == 1
    # The key path stays /root/.ssh: --no-root is unknown to Volcano v1.15.1's ssh plugin.
    mount, = [m for m in p["job-with-ssh-plugin-task-0"]["spec"]["containers"][0]["volumeMounts"]
              if m["name"] == "job-with-ssh-plugin-ssh"]
    assert mount["mountPath"] == "/root/.ssh"


def test_all_plugins_with_odd_arguments_work():
    """jobseq "Check Functionality of all plugins": ssh --no-root, env and svc together: the
    Secret is mounted, every container has VK_TASK_INDEX, VC_TASK_INDEX, VC_TASK_HOSTS and
    VC_TASK_NUM, and the Service exists."""
    c = running(job("job-with-all-plugin", {"ssh": ["--no-root"], "env": [], "svc": []}))
    pod = pods(c, "job-with-all-plugin")["job-with-all-plugin-task-0"]
    assert "job-with-all-plugin-ssh" in [v["name"] for v in pod["spec"]["volumes"]]
    env = {e["name"] for e in pod["spec"]["containers"][0]["env"]}
    assert {"VK_TASK_INDEX", "VC_TASK_INDEX", "VC_TASK_HOSTS", "VC_TASK_NUM"} <= env
    assert c.get("Service", "job-with-all-plugin", NS) is not None


def test_svc_flags_volcano_has_take_effect():
    """jobseq "Test SVC Plugin with disableNetworkPolicy": no NetworkPolicy; an unknown flag
    after it (Go stops at the first error) does not undo it."""
    c = running(job("svc-nnp", {"svc": ["--disable-network-policy=true", "--enable-networking"]}))
    assert c.get("NetworkPolicy", "svc-nnp", NS) is None
    assert c.get("Service", "svc-nnp", NS) is not None


def test_existing_plugin_arguments_are_kept():
    """admission "Should not override existing plugins": tensorflow adds svc only when it is
    missing; svc's own arguments (--enable-networking) are kept and admitted."""
    c = volcanic.Cluster()
    stored = c.apply(job("existing-plugins-job", {"tensorflow": [], "svc": ["--enable-networking"]}, replicas=1))
    assert stored["spec"]["plugins"] == {"tensorflow": [], "svc": ["--enable-networking"]}
