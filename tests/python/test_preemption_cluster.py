"""Preempt and reclaim end to end in the embedded cluster (issue 5): the scheduler's evictions
reach the pods through the API (DisruptionTarget, then delete), the job controller sees
PodEvicted and applies the job's policies (reference §2.1, §2.2, §4.3)."""

from __future__ import annotations

import pytest

import volcanic

# Volcano's CI configuration (reference §4.5), without the plugins volcanic does not have.
CI_CONF = """
actions: "enqueue, allocate, backfill, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""


def node(name, cpu):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def priority_class(name, value):
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value}


def queue(name, weight):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"weight": weight, "reclaimable": True}}


def job(name, replicas, min_available, queue="default", priority_class=None, policies=None, duration=None):
    template_meta = {"annotations": {"volcanic/sim-duration": duration}} if duration else {}
    spec = {"minAvailable": min_available, "queue": queue, "tasks": [{
        "name": "worker", "replicas": replicas, "template": {
            "metadata": template_meta,
            "spec": {"restartPolicy": "Never", "containers": [
                {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]}}}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    if policies:
        spec["policies"] = policies
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


def running_pods(c, job_name):
    return sorted(p["metadata"]["name"] for p in c.list("Pod", "default")
                  if p["metadata"]["labels"].get("volcano.sh/job-name") == job_name
                  and p["status"].get("phase") == "Running")


def events(c, reason):
    return [e for e in c.list("Event", "default") if e["reason"] == reason]


@pytest.fixture
def cluster():
    c = volcanic.Cluster(conf=CI_CONF)
    c.apply([node("n1", "10"), priority_class("low", 10), priority_class("high", 1000)])
    c.run(0)
    yield c
    assert c.errors == []


def test_high_priority_job_preempts_low_priority_one(cluster):
    """§4.3 preempt: a starving high-priority job evicts lower-priority pods of its queue, never
    taking the victim job below its minAvailable (gang), and runs; the victim job's evicted pods
    come back Pending (SyncJob, the default for PodEvicted)."""
    cluster.apply(job("low", replicas=10, min_available=1, priority_class="low"))
    cluster.run(5)
    assert len(running_pods(cluster, "low")) == 10
    cluster.apply(job("high", replicas=2, min_available=2, priority_class="high"))
    cluster.run(5)
    assert len(running_pods(cluster, "high")) == 2
    assert len(running_pods(cluster, "low")) == 8
    assert cluster.get("Job", "high")["status"]["state"]["phase"] == "Running"
    low = cluster.get("Job", "low")
    assert low["status"]["state"]["phase"] == "Running"
    assert low["status"]["pending"] == 2  # recreated, waiting for room
    assert not [p for p in cluster.list("Pod", "default")
                if p["metadata"]["labels"].get("volcano.sh/job-name") == "high"
                and p["status"].get("phase") != "Running"]


def test_preempted_job_with_restart_policy_restarts(cluster):
    """§2.2: PodEvicted -> RestartJob applies to the scheduler's evictions."""
    cluster.apply(job("low", replicas=10, min_available=1, priority_class="low",
                      policies=[{"event": "PodEvicted", "action": "RestartJob"}]))
    cluster.run(5)
    cluster.apply(job("high", replicas=2, min_available=2, priority_class="high"))
    cluster.run(10)
    assert len(running_pods(cluster, "high")) == 2
    low = cluster.get("Job", "low")
    assert low["status"]["retryCount"] >= 1
    assert low["status"]["version"] >= 1
    assert len(running_pods(cluster, "low")) == 8


def test_equal_priority_jobs_do_not_preempt(cluster):
    """priority's Preemptable: only a lower job priority is a victim between jobs. Its empty
    answer in tier 1 is final, so drf in tier 2 does not pick victims alone (a deliberate
    difference: Volcano would let drf preempt by share here, framework/tiers.h)."""
    cluster.apply(job("first", replicas=10, min_available=1, priority_class="high"))
    cluster.run(5)
    cluster.apply(job("second", replicas=2, min_available=2, priority_class="high"))
    cluster.run(5)
    assert len(running_pods(cluster, "first")) == 10
    assert running_pods(cluster, "second") == []


def test_queue_weights_one_to_three_converge_after_reclaim():
    """§4.3 reclaim with proportion: single-pod jobs of a queue of weight 3 arrive on a cluster
    filled by a queue of weight 1. overcommit admits a few at a time; each reclaims one pod of
    the light queue, until the split is 1:3 (deserved 4 and 12 of 16 cpu), and it stays there."""
    c = volcanic.Cluster(conf=CI_CONF)
    c.apply([node("n1", "8"), node("n2", "8"), queue("light", 1), queue("heavy", 3)])
    c.run(0)
    c.apply(job("a", replicas=16, min_available=1, queue="light"))
    c.run(5)
    assert len(running_pods(c, "a")) == 16
    c.apply([job(f"b{i:02}", replicas=1, min_available=1, queue="heavy") for i in range(16)])
    c.run(60)
    heavy = sum(len(running_pods(c, f"b{i:02}")) for i in range(16))
    assert (len(running_pods(c, "a")), heavy) == (4, 12)
    c.run(60)
    assert sum(len(running_pods(c, f"b{i:02}")) for i in range(16)) == 12
    assert c.get("Queue", "light")["status"]["allocated"]["cpu"] == "4"
    assert c.get("Queue", "heavy")["status"]["allocated"]["cpu"] == "12"
    assert c.errors == []
