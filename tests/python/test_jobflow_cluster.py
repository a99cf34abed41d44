"""JobFlows and JobTemplates in the embedded cluster (volcanic.Cluster, virtual time) with every
controller, the scheduler and the kubelets: Volcano v1.15.1's example/jobflow (JobTemplate.yaml,
then JobFlow.yaml: a -> b -> {c, d} -> e, jobRetainPolicy delete) runs to Succeed in that
order; `vcctl jobflow` and `vcctl jobtemplate` on the cluster; the kinds' CRDs, RBAC, webhook
registration and watches (volcanic.kube.kinds)."""

from __future__ import annotations

import json

import pytest
import yaml

import volcanic
from volcanic.cli.volcano import VOLCANIC_CONTROLLERS
from volcanic.controllers.jobflow import JobFlowController, JobTemplateController
from volcanic.kube.clock import seconds_of
from volcanic.kube.kinds import KINDS
from volcanic.real.manifests.accounts import RULES
from volcanic.real.manifests.definitions import crds
from volcanic.real.manifests.webhooks import DEFAULT_ADMISSIONS, WEBHOOKS
from volcanic.real.operator import FLOW_KINDS
from volcanic.real.webhook import UNRULED
from volcanic.webhook import PATHS

FLOW_API = KINDS["JobFlow"].api_version
# Volcano's example/jobflow/JobFlow.yaml: flow -> its targets.
EXAMPLE_FLOWS = {"a": [], "b": ["a"], "c": ["b"], "d": ["b"], "e": ["c", "d"]}


def example_templates(duration: str = "10s") -> str:
    """Volcano's example/jobflow/JobTemplate.yaml: five JobTemplates a..e, each one nginx task
    running `sleep 10s` on 1 CPU, restartPolicy OnFailure; with `volcanic/sim-duration`, which is
    how long the embedded cluster's simulated containers run (they run no command)."""
    docs = []
    for name in EXAMPLE_FLOWS:
        docs.append({"apiVersion": FLOW_API, "kind": "JobTemplate", "metadata": {"name": name}, "spec": {
            "minAvailable": 1, "schedulerName": "volcano", "queue": "default", "tasks": [{
                "replicas": 1, "name": "default-nginx", "template": {
                    "metadata": {"name": "web", "annotations": {"volcanic/sim-duration": duration}},
                    "spec": {"containers": [{"image": "nginx:1.14.2", "command": ["sh", "-c", "sleep 10s"],
                                             "imagePullPolicy": "IfNotPresent", "name": "nginx",
                                             "resources": {"requests": {"cpu": "1"}}}],
                             "restartPolicy": "OnFailure"}}}]}})
    return yaml.safe_dump_all(docs)


def example_jobflow(policy: str = "delete", name: str = "test") -> str:
    """Volcano's example/jobflow/JobFlow.yaml."""
    flows = [dict({"name": f}, **({"dependsOn": {"targets": t}} if t else {})) for f, t in EXAMPLE_FLOWS.items()]
    return yaml.safe_dump({"apiVersion": FLOW_API, "kind": "JobFlow", "metadata": {"name": name, "namespace": "default"},
                           "spec": {"jobRetainPolicy": policy, "flows": flows}})


def cluster(metrics: bool = False) -> volcanic.Cluster:
    c = volcanic.Cluster(metrics=metrics)
    c.apply({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
             "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    return c


def run_until(c, done, limit=300):
    while not done() and c.now < limit:
        c.run(1)
    assert done(), f"not done after {c.now} s"


def phase(c, name="test"):
    return ((c.get("JobFlow", name) or {}).get("status") or {}).get("state", {}).get("phase")


def since_start(c, timestamp):
    return seconds_of(timestamp) - c.started


def test_volcanos_example_runs_to_succeed_in_dependency_order():
    """Each Job is created when the Jobs it depends on completed: a at 0 s, b when a completed,
    c and d together when b did, e when both did; then Succeed, and jobRetainPolicy delete deletes
    the Jobs (and their pods); the status keeps the record."""
    c = cluster()
    c.apply(example_templates())
    c.apply(example_jobflow())
    run_until(c, lambda: phase(c) == "Succeed")
    status = c.get("JobFlow", "test")["status"]
    started = {s["name"].removeprefix("test-"): since_start(c, s["startTimestamp"]) for s in status["jobStatusList"]}
    completed = {s["name"].removeprefix("test-"): since_start(c, s["runningHistories"][-1]["startTimestamp"])
                 for s in status["jobStatusList"]}
    assert list(started) == ["a", "b", "c", "d", "e"]  # in the order they were created
    assert all(s["state"] == "Completed" and s["runningHistories"][-1]["state"] == "Completed"
               for s in status["jobStatusList"])
    for flow, targets in EXAMPLE_FLOWS.items():
        assert started[flow] == max((completed[t] for t in targets), default=0.0), flow
    assert started["a"] < started["b"] < started["c"] == started["d"] < started["e"]
    assert started == {"a": 0.0, "b": 11.0, "c": 22.0, "d": 22.0, "e": 33.0}  # 10 s runs, 1 s scheduling
    assert status["completedJobs"] == [f"test-{f}" for f in EXAMPLE_FLOWS]
    c.run(1)
    assert c.list("Job") == [] and c.list("Pod") == [] and c.list("PodGroup") == []
    created = [e["message"] for e in c.list("Event") if e["reason"] == "Created" and
               e["involvedObject"]["kind"] == "JobFlow"]
    assert created == [f"create a job named test-{f}!" for f in EXAMPLE_FLOWS]
    assert [t["status"]["jobDependsOnList"] for t in c.list("JobTemplate")] == [[f"test-{f}"] for f in EXAMPLE_FLOWS]
    assert c.errors == []


def test_retained_jobs_stay_completed_and_are_the_flows():
    """jobRetainPolicy retain: the Jobs stay, Completed, labelled and owned as Volcano makes them;
    deleting the JobFlow deletes them."""
    c = cluster()
    c.apply(example_templates("2s"))
    c.apply(example_jobflow("retain"))
    run_until(c, lambda: phase(c) == "Succeed")
    jobs = c.list("Job")
    assert [j["metadata"]["name"] for j in jobs] == [f"test-{f}" for f in EXAMPLE_FLOWS]
    assert {j["status"]["state"]["phase"] for j in jobs} == {"Completed"}
    a = jobs[0]["metadata"]
    assert a["labels"] == a["annotations"] == {"volcano.sh/createdByJobTemplate": "default.a",
                                               "volcano.sh/createdByJobFlow": "default.test"}
    owner, = a["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["controller"], owner["uid"]) == \
        ("JobFlow", "test", True, c.get("JobFlow", "test")["metadata"]["uid"])
    c.delete("JobFlow", "test")
    assert c.list("Job") == [] and c.list("Pod") == []


def test_two_jobflows_share_the_templates():
    """Each JobFlow makes its own Jobs from the same JobTemplates, and each template lists them."""
    c = cluster()
    c.apply(example_templates("2s"))
    c.apply(example_jobflow("retain", "one"))
    c.apply(example_jobflow("retain", "two"))
    run_until(c, lambda: phase(c, "one") == phase(c, "two") == "Succeed")
    assert c.get("JobTemplate", "a")["status"]["jobDependsOnList"] == ["one-a", "two-a"]


def test_a_jobflow_applied_before_its_templates_starts_when_they_come():
    """`kubectl apply -f example/jobflow/` applies JobFlow.yaml first. Admission does not refuse
    it (Volcano's does not); its syncs fail on the missing JobTemplate and are retried, and one
    after the templates are there starts the flow."""
    c = cluster()
    c.apply(example_jobflow())
    c.run(20)
    assert c.list("Job") == [] and phase(c) is None
    c.apply(example_templates("2s"))
    run_until(c, lambda: phase(c) == "Succeed")
    assert c.errors == []


def run_with_b_failing(c: volcanic.Cluster, max_retry: int) -> None:
    """Volcano's example (retain) with b's pod exiting 1 (restartPolicy Never, each failure
    restarting the Job until maxRetry is used up), run until the flow is Failed."""
    templates = list(yaml.safe_load_all(example_templates("2s")))
    b = templates[1]["spec"]
    b["tasks"][0]["template"]["metadata"]["annotations"]["volcanic/sim-exit-code"] = "1"
    b["tasks"][0]["template"]["spec"]["restartPolicy"] = "Never"
    b["policies"], b["maxRetry"] = [{"event": "PodFailed", "action": "RestartJob"}], max_retry
    c.apply(templates)
    c.apply(example_jobflow("retain"))
    run_until(c, lambda: phase(c) == "Failed")


def test_a_failing_job_fails_the_flow():
    """A Job that fails fails the Running flow; the flows after it never start."""
    c = cluster()
    run_with_b_failing(c, max_retry=2)
    status = c.get("JobFlow", "test")["status"]
    assert status["completedJobs"] == ["test-a"] and status["failedJobs"] == ["test-b"]
    assert status["jobStatusList"][1]["restartCount"] == 2
    c.run(30)
    assert [j["metadata"]["name"] for j in c.list("Job")] == ["test-a", "test-b"]


def test_vcctl_jobflow_and_jobtemplate_on_the_cluster(tmp_path):
    """pkg/cli/jobflow and pkg/cli/jobtemplate: create from a file, list, get, describe, delete."""
    c = cluster()
    templates, flow = tmp_path / "JobTemplate.yaml", tmp_path / "JobFlow.yaml"
    templates.write_text(example_templates("2s"))
    flow.write_text(example_jobflow())
    assert c.vcctl(f"jobtemplate create -f {templates}") == "".join(
        f"Created JobTemplate: default/{f}\n" for f in EXAMPLE_FLOWS)
    assert c.vcctl(f"jobflow create -f {flow}") == "Created JobFlow: default/test\n"
    assert c.vcctl("jobtemplate list").split() == ["Name", "Namespace", *[w for f in EXAMPLE_FLOWS
                                                                          for w in (f, "default")]]
    run_until(c, lambda: phase(c) == "Succeed")
    assert c.vcctl("jobflow get -N test").split() == ["Name", "Namespace", "Phase", "Age", "test", "default",
                                                      "Succeed", f"{int(c.now)}s"]
    wide = c.vcctl("jobflow list -o wide").split()
    assert wide[wide.index("test"):] == ["test", "default", "Succeed", f"{int(c.now)}s", "5", "delete", "5", "0", "0"]
    described = json.loads(c.vcctl("jobflow describe -N test -o json"))
    assert described["status"]["state"] == {"phase": "Succeed"} and list(described)[:2] == ["kind", "apiVersion"]
    assert yaml.safe_load(c.vcctl("jobtemplate describe -N a"))["status"] == {"jobDependsOnList": ["test-a"]}
    assert c.vcctl("jobflow delete -N test") == "Deleted JobFlow: default/test\n"
    assert c.vcctl(f"jobtemplate delete -f {templates}").count("Deleted JobTemplate") == 5
    assert c.vcctl("jobflow list") == c.vcctl("jobtemplate list") == "No resources found\n"


def test_the_kinds_crds_and_columns():
    """config/crd/jobflow/bases: flow.volcano.sh/v1alpha1, namespaced, status subresources, short
    names jf and jt, JobFlow's columns Status and Age."""
    by_kind = {c["spec"]["names"]["kind"]: c for c in crds()}
    for kind, short in (("JobFlow", "jf"), ("JobTemplate", "jt")):
        crd = by_kind[kind]
        assert crd["metadata"]["name"] == f"{kind.lower()}s.flow.volcano.sh"
        assert crd["spec"]["scope"] == "Namespaced" and crd["spec"]["names"]["shortNames"] == [short]
        version, = crd["spec"]["versions"]
        assert version["name"] == "v1alpha1" and version["subresources"] == {"status": {}}
    columns = by_kind["JobFlow"]["spec"]["versions"][0]["additionalPrinterColumns"]
    assert [(col["name"], col["jsonPath"]) for col in columns] == [("Status", ".status.state.phase"),
                                                                  ("Age", ".metadata.creationTimestamp")]
    assert "additionalPrinterColumns" not in by_kind["JobTemplate"]["spec"]["versions"][0]
    spec = by_kind["JobFlow"]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["properties"]["jobRetainPolicy"]["enum"] == ["retain", "delete"]
    template = by_kind["JobTemplate"]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert template["properties"]["tasks"]["minItems"] == 1 and template["properties"]["queue"]["default"] == "default"


def test_install_registers_and_grants_what_the_flow_controllers_need():
    """The controller-manager writes JobFlows, JobTemplates and their status (and Jobs); the
    webhook registers /jobflows/validate for CREATE and UPDATE by default; the controller-manager
    watches the kinds when either controller runs."""
    def verbs(resource):
        return {v for r in RULES["controller-manager"] if resource in r["resources"] for v in r["verbs"]}
    assert {"get", "list", "watch", "create", "update", "delete"} <= verbs("jobflows") & verbs("jobtemplates")
    assert "update" in verbs("jobflows/status") & verbs("jobtemplates/status")
    assert WEBHOOKS["/jobflows/validate"] == ("validatejobflow.volcano.sh", "flow.volcano.sh", "v1alpha1", "jobflows",
                                              ("CREATE", "UPDATE"))
    assert "/jobflows/validate" in DEFAULT_ADMISSIONS and "/jobflows/validate" not in UNRULED
    assert "/jobflows/mutate" not in WEBHOOKS and PATHS["/jobflows/validate"] == ("JobFlow", False)
    assert FLOW_KINDS == ("JobFlow", "JobTemplate")
    assert {JobFlowController.name, JobTemplateController.name} <= set(VOLCANIC_CONTROLLERS)


@pytest.mark.parametrize("kind", ["JobFlow", "JobTemplate"])
def test_status_sent_on_create_is_ignored(kind):
    """A status subresource: the API server keeps a create's status out, and so does the store."""
    c = volcanic.Cluster()
    obj = {"apiVersion": FLOW_API, "kind": kind, "metadata": {"name": "x"},
           "spec": {"flows": []} if kind == "JobFlow" else {"tasks": [{"name": "t", "replicas": 1, "template": {}}]},
           "status": {"state": {"phase": "Succeed"}} if kind == "JobFlow" else {"jobDependsOnList": ["j"]}}
    assert "status" not in c.apply(obj)
