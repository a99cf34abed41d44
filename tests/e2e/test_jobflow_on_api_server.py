"""JobFlows and JobTemplates on a real API server with `volcanic up` (docs/workflows.md): the CRDs
`volcanic install` applies (Volcano's config/crd/jobflow/bases/), Volcano's example/jobflow
(JobTemplate.yaml, then JobFlow.yaml: a -> b -> {c, d} -> e) run to Succeed by the
jobflow-controller in dependency order and counted in /metrics, the /jobflows/validate webhook
refusing a cycle and an undefined target, and vcctl and kubectl showing them."""

from __future__ import annotations

from datetime import datetime

import yaml

from test_vcctl_on_api_server import ok
from test_volcano_jobs import on_kwok
from volcanic.kube.kinds import KINDS
from volcanic.real.devcluster.cluster import KubectlError

FLOW_API = KINDS["JobFlow"].api_version
FLOWS = {"a": [], "b": ["a"], "c": ["b"], "d": ["b"], "e": ["c", "d"]}  # example/jobflow/JobFlow.yaml


def templates(duration: str = "3s") -> list[dict]:
    """Volcano's example/jobflow/JobTemplate.yaml (one nginx pod sleeping 10 s, 1 CPU, OnFailure),
    made to run `duration` on kwok nodes (on_kwok: kwok's simulated containers run no command)."""
    out = []
    for name in FLOWS:
        template = {"apiVersion": FLOW_API, "kind": "JobTemplate", "metadata": {"name": name}, "spec": {
            "minAvailable": 1, "schedulerName": "volcano", "queue": "default", "tasks": [{
                "replicas": 1, "name": "default-nginx", "template": {"metadata": {"name": "web"}, "spec": {
                    "containers": [{"image": "nginx:1.14.2", "command": ["sh", "-c", "sleep 10s"],
                                    "imagePullPolicy": "IfNotPresent", "name": "nginx",
                                    "resources": {"requests": {"cpu": "1"}}}],
                    "restartPolicy": "OnFailure"}}}]}}
        out.append(on_kwok(template, duration))
    return out


def jobflow(name: str = "test", policy: str = "delete", flows: dict | None = None) -> dict:
    spec_flows = [dict({"name": f}, **({"dependsOn": {"targets": t}} if t else {}))
                  for f, t in (flows or FLOWS).items()]
    return {"apiVersion": FLOW_API, "kind": "JobFlow", "metadata": {"name": name},
            "spec": {"jobRetainPolicy": policy, "flows": spec_flows}}


def seconds(timestamp: str) -> float:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def status(env, name: str, namespace: str) -> dict:
    return (env.store.get("JobFlow", name, namespace) or {}).get("status") or {}


def test_volcanos_example_runs_to_succeed_in_dependency_order(env, up, namespace):
    """Each Job is created once the Jobs it depends on completed (their last history entry,
    Completed, starts no later than its creation); a, b, {c, d}, e start in that order; the flow
    Succeeds, and jobRetainPolicy delete deletes its Jobs."""
    env.apply(*templates(), namespace=namespace)
    env.apply(jobflow(), namespace=namespace)
    done = env.wait(lambda: status(env, "test", namespace).get("state", {}).get("phase") == "Succeed", timeout=180)
    assert done, (status(env, "test", namespace), up.proc.log_path.read_text(errors="replace")[-4000:])
    entries = {s["name"].removeprefix("test-"): s for s in status(env, "test", namespace)["jobStatusList"]}
    assert list(entries) == list(FLOWS)
    started = {f: seconds(s["startTimestamp"]) for f, s in entries.items()}
    completed = {f: seconds(s["runningHistories"][-1]["startTimestamp"]) for f, s in entries.items()}
    assert all(s["runningHistories"][-1]["state"] == "Completed" for s in entries.values())
    for flow, targets in FLOWS.items():
        assert all(started[flow] >= completed[t] > started[t] for t in targets), (flow, started, completed)
    assert started["a"] < started["b"] < min(started["c"], started["d"])
    assert max(started["c"], started["d"]) < started["e"] and abs(started["c"] - started["d"]) <= 1
    assert status(env, "test", namespace)["completedJobs"] == [f"test-{f}" for f in FLOWS]
    # state/running.go counts the success in Volcano's counter, per namespace, once (docs/metrics.md).
    assert up.metric("volcano_jobflow_succeed_phase_count", f'jobflow_namespace="{namespace}"') == 1
    assert env.wait(lambda: env.store.list("Job", namespace) == [], timeout=30), env.store.list("Job", namespace)
    table = env.kubectl("get", "jf", "test", "-n", namespace).stdout.split()
    assert table[:3] == ["NAME", "STATUS", "AGE"] and table[3:5] == ["test", "Succeed"]
    listed = env.wait(lambda: [(t.get("status") or {}).get("jobDependsOnList")
                               for t in env.store.list("JobTemplate", namespace)] == [[f"test-{f}"] for f in FLOWS])
    assert listed, env.store.list("JobTemplate", namespace)


def test_retained_jobs_stay_and_vcctl_shows_the_flow(env, up, namespace):
    """jobRetainPolicy retain keeps the Completed Jobs, owned by the JobFlow, each counted in
    Volcano's job metrics; vcctl jobflow and jobtemplate read them from the API server."""
    env.apply(*templates("1s")[:2], namespace=namespace)
    env.apply(jobflow("kept", "retain", {"a": [], "b": ["a"]}), namespace=namespace)
    assert env.wait(lambda: status(env, "kept", namespace).get("state", {}).get("phase") == "Succeed", timeout=90), \
        status(env, "kept", namespace)
    jobs = {j["metadata"]["name"]: j for j in env.store.list("Job", namespace)}
    assert sorted(jobs) == ["kept-a", "kept-b"]
    assert {j["status"]["state"]["phase"] for j in jobs.values()} == {"Completed"}
    # the job controller's counters (pkg/controllers/job/state/metrics.go; docs/metrics.md): once each
    assert [up.metric("volcano_job_completed_phase_count", f'job_name="{namespace}/{name}",queue_name="default"')
            for name in sorted(jobs)] == [1, 1]
    assert up.metric("volcano_controller_job_to_pod_creation_latency_milliseconds_count") >= 2
    owner, = jobs["kept-a"]["metadata"]["ownerReferences"]
    assert (owner["apiVersion"], owner["kind"], owner["name"]) == (FLOW_API, "JobFlow", "kept")
    flows = [line.split() for line in ok(env, "jobflow", "list", "-n", namespace).splitlines()]
    assert flows[0] == ["Name", "Namespace", "Phase", "Age"] and flows[1][:3] == ["kept", namespace, "Succeed"]
    templates_ = [line.split() for line in ok(env, "jobtemplate", "list", "-n", namespace).splitlines()]
    assert templates_ == [["Name", "Namespace"], ["a", namespace], ["b", namespace]]
    described = yaml.safe_load(ok(env, "jobtemplate", "describe", "-N", "a", "-n", namespace))
    assert described["status"] == {"jobDependsOnList": ["kept-a"]}


def refusal(env, obj: dict, namespace: str) -> str:
    try:
        env.apply(obj, namespace=namespace)
    except KubectlError as e:
        return str(e)
    raise AssertionError(f"{obj['metadata']['name']} was admitted")


def test_the_webhook_refuses_a_cycle_and_an_undefined_target(env, up, namespace):
    """/jobflows/validate (Volcano's pkg/webhooks/admission/jobflows): the messages reach kubectl."""
    cycle = refusal(env, jobflow("cycle", flows={"a": ["b"], "b": ["a"]}), namespace)
    assert "jobflow Flow is not DAG: a -> b -> a" in cycle
    undefined = refusal(env, jobflow("undefined", flows={"b": ["a"]}), namespace)
    assert "jobflow Flow is not DAG: vertex is not defined: a" in undefined
    assert env.store.list("JobFlow", namespace) == []
    assert "Unsupported value" in refusal(env, jobflow("policy", "keep"), namespace)  # the CRD's enum
    env.apply(jobflow("waits"), namespace=namespace)  # its JobTemplates do not exist: admitted
    assert yaml.safe_load(env.kubectl("get", "jf", "waits", "-n", namespace, "-o", "yaml").stdout)["spec"]["flows"]
