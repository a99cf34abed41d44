"""vcctl (volcanic.vcctl) on the embedded cluster, every command through Cluster.vcctl: what
it sends (Volcano's Job and Commands with their defaults), what it prints (tables, views,
-o json|yaml|wide), completion, and its errors. Flags, help and tables against Volcano's
texts on a fake API: test_vcctl.py."""

from __future__ import annotations

import json
import time

import pytest
import yaml

import volcanic
from volcanic.kube.clock import rfc3339
from volcanic.kube.kinds import KINDS
from volcanic.vcctl import VcctlError

JOB_API = KINDS["Job"].api_version
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                   "capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


@pytest.fixture
def cluster():
    c = volcanic.Cluster()
    c.apply(NODE)
    return c


def test_job_run_sends_volcanos_job_with_its_defaults(cluster):
    assert cluster.vcctl("job run -N demo") == "run job demo successfully\n"
    j = cluster.get("Job", "demo")
    task = j["spec"]["tasks"][0]
    container = task["template"]["spec"]["containers"][0]
    assert (j["spec"]["minAvailable"], j["spec"]["schedulerName"], task["replicas"]) == (1, "volcano", 1)
    assert task["template"]["metadata"]["labels"] == {"job.volcano.sh": "demo"}
    assert task["template"]["spec"]["restartPolicy"] == "Never"
    assert {k: container[k] for k in ("image", "name", "imagePullPolicy")} == {
        "image": "busybox", "name": "demo", "imagePullPolicy": "IfNotPresent"}
    assert container["resources"] == {"limits": {"cpu": "1", "memory": "100Mi"},
                                      "requests": {"cpu": "1", "memory": "100Mi"}}
    out = cluster.vcctl("job", "run", "--name", "big", "-i", "nginx", "-m", "2", "-r", "3", "-R", "cpu=500m",
                        "-L", "cpu=2,memory=1Gi", "-S", "other", "-n", "team")
    assert out == "run job big successfully\n"
    j = cluster.get("Job", "big", "team")
    container = j["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    assert (j["spec"]["minAvailable"], j["spec"]["tasks"][0]["replicas"], j["spec"]["schedulerName"]) == (2, 3, "other")
    assert container["image"] == "nginx"
    assert container["resources"] == {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "500m"}}


def test_job_run_from_a_file(cluster, tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": JOB_API, "kind": "Job", "metadata": {"name": "filed"},
                                    "spec": {"minAvailable": 1, "tasks": [{"replicas": 1, "name": "t", "template": {
                                        "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}]}}))
    assert cluster.vcctl("job", "run", "-f", str(path)) == "run job filed successfully\n"
    assert cluster.get("Job", "filed")["spec"]["tasks"][0]["name"] == "t"
    with pytest.raises(VcctlError, match="^Failed to run job: .*already exists") as e:
        cluster.vcctl("job", "run", "-f", str(path))
    assert e.value.code == 255
    path.write_text(yaml.safe_dump({"kind": "Job", "metadata": {"name": "o", "namespace": "a"}, "spec": {}}))
    with pytest.raises(VcctlError, match="^Failed to run job: the namespace of the provided object does not match "
                                         "the namespace sent on the request$"):
        cluster.vcctl("job", "run", "-f", str(path), "-n", "b")


def test_admission_denial_shows_the_webhooks_message(cluster):
    with pytest.raises(VcctlError) as e:
        cluster.vcctl("job run -N bad -m 3 -r 1")
    assert str(e.value) == ("Failed to run job: admission webhook denied the request: job 'minAvailable' should not be "
                            "greater than total replicas in tasks")
    with pytest.raises(VcctlError, match="^Failed to delete queue: admission webhook denied the request: `default` "
                                         "queue can not be deleted$"):
        cluster.vcctl("queue delete -n default")


def test_job_lifecycle_through_vcctl(cluster):
    cluster.vcctl("job run -N demo -r 2 -m 2 -R cpu=1,memory=1Gi -L cpu=1,memory=1Gi")
    cluster.run(5)
    table = cluster.vcctl("job list")
    today = time.strftime("%Y-%m-%d", time.localtime(cluster.started))  # local, as Go prints it
    assert table.splitlines()[1].split() == ["demo", today, "Running", "Batch", "2", "2", "0", "2", "0", "0", "0", "0"]
    assert cluster.vcctl("job suspend -N demo") == ""
    command = cluster.list("Command")[0]
    uid = cluster.get("Job", "demo")["metadata"]["uid"]
    ref = {"apiVersion": JOB_API, "kind": "Job", "name": "demo", "uid": uid, "controller": True,
           "blockOwnerDeletion": True}
    assert command["metadata"]["name"].startswith("demo-abortjob-") and len(command["metadata"]["name"]) == 19
    assert (command["metadata"]["generateName"], command["metadata"]["ownerReferences"], command["target"],
            command["action"]) == ("demo-abortjob-", [ref], ref, "AbortJob")
    cluster.run(5)
    assert cluster.get("Job", "demo")["status"]["state"]["phase"] == "Aborted"
    assert cluster.vcctl("job resume --name demo") == ""
    assert any(c["action"] == "ResumeJob" for c in cluster.list("Command"))
    cluster.run(5)
    assert cluster.get("Job", "demo")["status"]["state"]["phase"] == "Running"
    assert cluster.vcctl("job delete -N demo") == "delete job demo successfully\n"
    assert cluster.get("Job", "demo") is None
    with pytest.raises(VcctlError, match='^Failed to suspend job: jobs.batch.volcano.sh "demo" not found$'):
        cluster.vcctl("job suspend -N demo")


def test_job_view_prints_volcanos_details_and_events():
    cluster = volcanic.Cluster()
    cluster.apply(dict(NODE, spec={"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}))
    cluster.vcctl("job run -N demo -r 2 -m 2 -R cpu=100m,memory=10Mi")  # unschedulable: a PodGroupPending event
    cluster.run(3)
    out = cluster.vcctl("job view -N demo")
    lines = out.splitlines()
    assert lines[:6] == ["Name:       \tdemo", "Namespace:  \tdefault", "Labels:     \t<none>",
                         "Annotations:\t<none>", "API Version:\t", "Kind:       \t"]
    assert "          Image:\tbusybox" in lines and "              Cpu:   \t100m" in lines
    assert "        Restart Policy:   \tNever" in lines and "    Phase:\tPending" in lines
    events = lines[lines.index("Events:"):]
    assert events[1:3] == [f"{'Type':<15}\t{'Reason':<40}\t{'Age':<30}\t{'Form':<40}\tMessage",
                           f"{'-------':<15}\t{'-------':<40}\t{'-------':<30}\t{'-------':<40}\t-------"]
    assert events[3].startswith(f"{'Warning':<15}\t{'PodGroupPending':<40}\t{'2s':<30}\t{'vc-controller-manager':<40}"
                                "\tPodGroup default:demo unschedule,reason: 2/2 tasks in gang unschedulable")
    wide = cluster.vcctl("job view -N demo -o wide")
    assert wide.startswith(out) and "Pods:\nName" in wide and "demo-default0-1" in wide
    assert json.loads(cluster.vcctl("job view -N demo -o json")) == cluster.get("Job", "demo")
    assert yaml.safe_load(cluster.vcctl("job view -N demo -o yaml")) == cluster.get("Job", "demo")


def test_list_outputs_json_yaml_and_wide(cluster):
    cluster.vcctl("job run -N a -n team")
    cluster.vcctl("job run -N b")
    cluster.run(2)
    listed = json.loads(cluster.vcctl("job list -o json --all-namespaces"))
    assert (listed["kind"], listed["apiVersion"]) == ("List", "v1")
    assert listed["items"] == [cluster.get("Job", "b"), cluster.get("Job", "a", "team")]
    assert yaml.safe_load(cluster.vcctl("job list -o yaml -n team"))["items"] == [cluster.get("Job", "a", "team")]
    assert json.loads(cluster.vcctl("job list -o json -n empty"))["items"] == []
    wide = cluster.vcctl("job list -o wide").splitlines()
    assert wide[0].split()[-4:] == ["RetryCount", "Queue", "Scheduler", "Age"]
    assert wide[1].split()[-3:] == ["default", "volcano", "2s"]
    pods = cluster.vcctl("pod list -o wide --all-namespaces").splitlines()
    assert pods[0].split() == ["Name", "Ready", "Status", "Restart", "Age", "Namespace", "Node", "IP", "Job", "Queue"]
    assert [p.split()[5:] for p in pods[1:]] == [["default", "n1", "10.0.0.2", "b", "default"],
                                                 ["team", "n1", "10.0.0.1", "a", "default"]]
    assert [p["metadata"]["name"] for p in json.loads(cluster.vcctl("pod list -o json -j a -n team"))["items"]] == [
        "a-default0-0"]
    queues = cluster.vcctl("queue list -o wide").splitlines()
    assert queues[0].split() == ["Name", "Weight", "State", "Parent", "Inqueue", "Pending", "Running", "Unknown",
                                 "Completed", "Reclaimable", "Capability", "Allocated"]
    assert queues[1].split()[-3:] == ["true", "<none>", "cpu=2,memory=200Mi,pods=2"]
    assert json.loads(cluster.vcctl("queue get -n default -o json")) == cluster.get("Queue", "default")
    assert [q["metadata"]["name"] for q in yaml.safe_load(cluster.vcctl("queue list -o yaml"))["items"]] == [
        "default", "root"]


def test_queue_commands(cluster):
    assert cluster.vcctl("queue create -n research -w 3") == ""
    cluster.run(1)
    q = cluster.get("Queue", "research")
    assert (q["spec"]["weight"], q["status"]["state"]) == (3, "Open")
    assert cluster.vcctl("queue get -n research") == (
        "Name                     Weight  State   Parent  Inqueue Pending Running Unknown Completed\n"
        "research                 3       Open    root    0       0       0       0       0       \n")
    assert cluster.vcctl("queue operate -n research -a close") == ""
    command = cluster.list("Command", "default")[0]
    ref = {"apiVersion": KINDS["Queue"].api_version, "kind": "Queue", "name": "research", "uid": q["metadata"]["uid"],
           "controller": True, "blockOwnerDeletion": True}
    assert (command["metadata"]["generateName"], command["metadata"]["ownerReferences"], command["target"],
            command["action"]) == ("research-closequeue-", [ref], ref, "CloseQueue")
    cluster.run(1)
    assert cluster.get("Queue", "research")["status"]["state"] == "Closed"
    cluster.vcctl("queue operate -n research -a open")
    cluster.run(1)
    assert cluster.get("Queue", "research")["status"]["state"] == "Open"
    assert cluster.vcctl("queue operate -n research -a update -w 5") == ""
    assert cluster.get("Queue", "research")["spec"]["weight"] == 5
    listed = cluster.vcctl("queue list").splitlines()
    assert [line.split()[0] for line in listed] == ["Name", "default", "research", "root"]
    with pytest.raises(VcctlError, match="already exists"):
        cluster.vcctl("queue create -n research")
    cluster.vcctl("queue operate -n research -a close")
    cluster.run(1)
    assert cluster.vcctl("queue delete -n research") == ""
    assert cluster.get("Queue", "research") is None


def test_one_command_tools(cluster, monkeypatch):
    monkeypatch.setenv("VOLCANO_DEFAULT_IMAGE", "alpine")
    monkeypatch.setenv("VOLCANO_DEFAULT_JOB_NAMESPACE", "team")
    assert cluster.vcctl("vsub -n sub -c 'sleep 10' -r 2") == "run job sub successfully\n"
    j = cluster.get("Job", "sub", "team")
    container = j["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    assert (container["image"], container["command"], j["spec"]["schedulerName"]) == (
        "alpine", ["sleep", "10"], "volcano")
    cluster.run(2)
    listing = cluster.vcctl("vjobs -N team").splitlines()
    assert listing[0].split()[0] == "Name" and listing[1].split()[:3] == ["sub", listing[1].split()[1], "Running"]
    assert cluster.vcctl("vjobs -N team --selector nomatch").splitlines() == listing[:1]  # Volcano: the header stays
    detail = cluster.vcctl("vjobs -N team -n sub")
    assert detail.startswith("Name:       \tsub\nNamespace:  \tteam\n") and "Conditions:" not in detail
    assert cluster.vcctl("vqueues").splitlines()[0].split() == ["Name", "Weight", "State", "Inqueue", "Pending",
                                                                "Running", "Unknown"]
    assert cluster.vcctl("vqueues -n default").splitlines()[1].split() == ["default", "1", "Open", "0", "0", "0", "0"]
    assert cluster.vcctl("vsuspend -N team -n sub") == ""
    cluster.run(3)
    assert cluster.get("Job", "sub", "team")["status"]["state"]["phase"] == "Aborted"
    assert cluster.vcctl("vresume", "-N", "team", "-n", "sub") == ""
    assert cluster.vcctl("vcancel -N team -n sub") == "cancel job sub successfully\n"
    assert cluster.get("Job", "sub", "team") is None


def test_pod_list_on_the_cluster(cluster):
    cluster.vcctl("job run -N demo -r 2")
    cluster.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain"},
                   "spec": {"containers": [{"name": "c", "image": "x"}]}})
    cluster.run(2)
    rows = [line.split() for line in cluster.vcctl("pod list").splitlines()]
    assert rows == [["Name", "Ready", "Status", "Restart", "Age"], ["demo-default0-0", "1/1", "Running", "0", "2s"],
                    ["demo-default0-1", "1/1", "Running", "0", "2s"]]
    assert cluster.vcctl("pod list -j nope") == "No resources found\n"
    assert cluster.vcctl("pod list -q default").count("demo-default0") == 2


def test_version_flows_and_completion_on_the_cluster(cluster):
    lines = cluster.vcctl("version").splitlines()
    assert lines[0] == "API Version: v1alpha1" and lines[1] == f"Version: volcanic {volcanic.__version__} " \
                                                               "(Volcano v1.15.1's vcctl)"
    assert cluster.vcctl("jobflow list") == "No resources found\n"  # the embedded cluster serves them
    with pytest.raises(VcctlError) as e:
        cluster.vcctl("jobtemplate get -N x")
    assert str(e.value) == 'Failed to get jobtemplate: jobtemplates.flow.volcano.sh "x" not found'
    assert e.value.code == 255
    for shell, marker in (("bash", "complete -F _vcctl_complete vcctl"), ("zsh", "compdef _vcctl vcctl"),
                          ("fish", "complete -c vcctl -f -a '(__vcctl_complete)'")):
        script = cluster.vcctl(f"completion {shell}")
        assert marker in script and "__complete" in script
    assert "__complete --no-descriptions" in cluster.vcctl("completion bash --no-descriptions")
    assert "source <(vcctl completion bash)" in cluster.vcctl("completion bash --help")


def test_completion_offers_commands_flags_and_names(cluster):
    cluster.vcctl("job run -N demo")
    cluster.vcctl("queue create -n research")

    def complete(*words):
        return cluster.vcctl("__complete", *words).splitlines()
    # completion is hidden, as volcanic's addition (docs/vcctl.md): not offered either.
    assert complete("") == ["job\tvcctl command line operation job", "jobflow\tvcctl command line operation jobflow",
                            "jobtemplate\tvcctl command line operation jobtemplate",
                            "pod\tvcctl command line operation pod", "queue\tQueue Operations",
                            "version\tPrint the version information", "help\tHelp about any command"]
    assert complete("job", "s") == ["suspend\tabort a job"]
    assert "--all-namespaces\tlist jobs in all namespaces" in complete("job", "list", "--")
    assert complete("job", "view", "-N", "") == ["demo\tJob"]
    assert complete("job", "view", "--name=d") == ["--name=demo\tJob"]
    assert complete("queue", "get", "-n", "r") == ["research\tQueue", "root\tQueue"]
    assert complete("job", "list", "-o", "") == ["json", "yaml", "wide"]
    assert complete("job", "run", "-f", "") == ["__files__"]
    assert complete("job", "view", "-n", "nope", "-N", "") == []
    assert cluster.vcctl("__complete", "--no-descriptions", "job", "s") == "suspend\n"


def test_cluster_vcctl_errors_carry_the_line_and_the_code(cluster):
    with pytest.raises(VcctlError) as e:
        cluster.vcctl("job", "list", "--bogus")
    assert (str(e.value), e.value.code, e.value.stdout) == ("Error: unknown flag: --bogus", 1, "")
    with pytest.raises(VcctlError) as e:
        cluster.vcctl("job view -N nope")
    assert (str(e.value), e.value.code) == ('Failed to view job: jobs.batch.volcano.sh "nope" not found', 255)
    assert cluster.vcctl("vcctl job list") == "No resources found\n"  # the program's name may lead
    assert cluster.vcctl("job list --master http://nowhere --kubeconfig /none") == "No resources found\n"
