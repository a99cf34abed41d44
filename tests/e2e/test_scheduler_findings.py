"""What Volcano's e2e suites found in the scheduler, on a real API server (the rules and their
Volcano sources are in tests/python/test_time_driven.py, test_podgroup_events.py,
test_bare_pods.py and test_unknown_plugins.py):
- sla's waiting time runs out on a quiet cluster (schedulingbase "sla adjusts job order");
- PodGroups get Volcano's Unschedulable Event (jobp "Checking Unschedulable Event Generation");
- a pod of a ReplicationController is scheduled in the PodGroup the controller made for it
  (jobp "Create volcano rc, pg controller process");
- a configuration naming a plugin nobody provides runs without it, and says so;
- hard topology spread holds (Kubernetes' sig-scheduling spreading specs: 4 replicas, maxSkew
  1, two nodes).
"""

from __future__ import annotations

import json

from test_volcano_jobs import vcjob
from volcanic.kube.quantity import parse_quantity
from volcanic.real.devcluster.cluster import KWOK_TOLERATION

SLA = "  - name: conformance\n  - name: sla\n"


def _cluster_cpus(env) -> int:
    return int(sum(parse_quantity(n["status"]["allocatable"]["cpu"])[0] for n in env.store.list("Node")))


def _podgroup(env, job: str, namespace: str) -> dict:
    return next((g for g in env.store.list("PodGroup", namespace) if g["metadata"]["name"].startswith(job + "-")),
                {})


def test_sla_enqueues_an_overlarge_job_once_it_has_waited(env, up, namespace):
    conf = up.conf.read_text()
    up.conf.write_text(conf.replace("  - name: conformance\n", SLA))
    try:
        env.wait_logged(up.proc, "reloaded")
        replicas = _cluster_cpus(env) + 1  # more than the whole cluster: proportion refuses it
        job = vcjob("j1-overlarge", replicas, duration=None)
        job["metadata"]["annotations"] = {"sla-waiting-time": "5s"}
        env.apply(job, namespace=namespace)
        phase = lambda: (_podgroup(env, "j1-overlarge", namespace).get("status") or {}).get("phase")
        assert env.wait(lambda: phase() == "Pending", timeout=10)
        pg = _podgroup(env, "j1-overlarge", namespace)
        events = lambda: [e for e in env.store.list("Event", namespace)
                          if e["involvedObject"].get("kind") == "PodGroup"
                          and e["involvedObject"]["name"] == pg["metadata"]["name"]]
        assert env.wait(lambda: any(e["reason"] == "Unschedulable" and e["type"] == "Warning" for e in events()))
        assert events()[0]["message"].startswith("0/0 tasks in gang unschedulable: pod group is not ready")
        assert env.wait(lambda: phase() == "Inqueue", timeout=30)
        pods = lambda: [p for p in env.store.list("Pod", namespace)
                        if p["metadata"].get("labels", {}).get("volcano.sh/job-name") == "j1-overlarge"]
        assert env.wait(lambda: len(pods()) == replicas, timeout=30)
        assert not any(p["spec"].get("nodeName") for p in pods())  # the gang still does not fit
    finally:
        up.conf.write_text(conf)
        env.kubectl("delete", "jobs.batch.volcano.sh", "j1-overlarge", "-n", namespace, "--wait=false", check=False)


def test_a_replication_controllers_pod_runs_in_the_podgroup_made_for_it(env, up, namespace):
    rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc-volcano"},
          "spec": {"replicas": 1, "selector": {"schedulerName": "volcano"},
                   "template": {"metadata": {"labels": {"schedulerName": "volcano"}},
                                "spec": {"schedulerName": "volcano", "tolerations": [KWOK_TOLERATION],
                                         "nodeSelector": {"type": "kwok"},
                                         "containers": [{"name": "c", "image": "busybox"}]}}}}
    env.apply(rc, namespace=namespace)
    running = lambda: [p for p in env.store.list("Pod", namespace) if (p.get("status") or {}).get("phase") == "Running"]
    assert env.wait(lambda: len(running()) == 1, timeout=60)
    (pod,) = running()
    owner = json.loads(env.kubectl("get", "replicationcontroller", "rc-volcano", "-n", namespace, "-o", "json")
                       .stdout)["metadata"]["uid"]
    pg_name = "podgroup-" + owner
    assert pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == pg_name
    assert env.wait(lambda: ((env.store.get("PodGroup", pg_name, namespace) or {}).get("status") or {})
                    .get("phase") not in (None, "Pending"))
    env.kubectl("delete", "replicationcontroller", "rc-volcano", "-n", namespace, "--wait=false", check=False)


def test_an_unknown_plugin_is_skipped_and_reported(env, up, namespace):
    conf = up.conf.read_text()
    up.conf.write_text(conf + "  - name: not-a-volcano-plugin\n")
    try:
        env.wait_logged(up.proc, "Failed to get plugin not-a-volcano-plugin.")
        assert env.wait(lambda: up.metric("volcanic_scheduler_skipped_plugins",
                                          'plugin="not-a-volcano-plugin"') == 1)
        env.apply(vcjob("still-runs", 2), namespace=namespace)
        assert env.wait(lambda: (((env.store.get("Job", "still-runs", namespace) or {}).get("status") or {})
                                 .get("state") or {}).get("phase") in ("Running", "Completed"), timeout=60)
    finally:
        up.conf.write_text(conf)


def test_hard_topology_spread_puts_two_and_two(env, up, namespace):
    nodes = ["kwok-node-0", "kwok-node-1"]
    job = vcjob("spread", 4, duration=None)
    template = job["spec"]["tasks"][0]["template"]
    template.setdefault("metadata", {})["labels"] = {"app": "spread"}
    template["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": nodes}]}]}}}
    template["spec"]["topologySpreadConstraints"] = [
        {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"app": "spread"}}}]
    env.apply(job, namespace=namespace)
    placed = lambda: [p["spec"].get("nodeName") for p in env.store.list("Pod", namespace)
                      if p["metadata"].get("labels", {}).get("app") == "spread"]
    assert env.wait(lambda: len(placed()) == 4 and all(placed()), timeout=60), placed()
    assert sorted(placed()) == sorted(nodes * 2)
    env.kubectl("delete", "jobs.batch.volcano.sh", "spread", "-n", namespace, "--wait=false", check=False)
