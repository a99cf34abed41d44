"""gangpreempt and gangreclaim end to end in the embedded cluster: Volcano Jobs through the job
controller, the scheduler's bundle choice, the evictions through the API and the gang placed
afterwards (docs/scheduler.md, Actions; Volcano v1.15.1 test/e2e/gangevict/gangevict.go GP-1,
GP-3 and GR-1, on four 1-CPU nodes as the placeholders there leave them). Session-level cases,
one per e2e spec, are the scenarios in tests/scenarios/gang-evict/."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import volcanic

# test/e2e/gangevict's gangEvictConfig, as the scenarios give it.
GP1 = Path(__file__).resolve().parents[1] / "scenarios" / "gang-evict" / "gp-1-safe-bundle-keeps-victim-gang.yaml"
GANG_EVICT_CONF = yaml.safe_load(GP1.read_text())["conf"]


def node(name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def queue(name, deserved_cpu):
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"weight": 1, "deserved": {"cpu": str(deserved_cpu), "memory": f"{deserved_cpu}Gi"}}}


def gang_job(name, queue_name, priority_class, replicas, min_available, preemptable=True):
    labels = {"volcano.sh/preemptable": "true"} if preemptable else {}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
            "spec": {"minAvailable": min_available, "queue": queue_name, "priorityClassName": priority_class,
                     "tasks": [{"name": "worker", "replicas": replicas, "template": {
                         "metadata": {"labels": labels},
                         "spec": {"restartPolicy": "Never", "priorityClassName": priority_class, "containers": [
                             {"name": "main", "image": "busybox",
                              "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}}]}}


def running(c, job_name):
    return sorted(p["metadata"]["name"] for p in c.list("Pod", "default")
                  if p["metadata"]["labels"].get("volcano.sh/job-name") == job_name
                  and p["status"].get("phase") == "Running")


@pytest.fixture
def cluster():
    c = volcanic.Cluster(conf=GANG_EVICT_CONF)
    c.apply([node(f"n{i}") for i in range(4)])
    c.apply([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
              "value": value} for name, value in (("gp-high", 100), ("gp-low", 10))])
    yield c
    assert c.errors == []


def victim_keeps_its_gang(c, victim, taker):
    """The victim's 4 pods run; then the taker's 2 pods run on the 2 the victim could spare,
    and the victim keeps its gang of 2."""
    c.apply(victim)
    c.run(5)
    assert len(running(c, victim["metadata"]["name"])) == 4
    c.apply(taker)
    c.run(15)
    assert len(running(c, taker["metadata"]["name"])) == 2
    assert len(running(c, victim["metadata"]["name"])) == 2


def test_a_preemptor_gang_takes_only_what_the_victim_gang_can_spare(cluster):
    """GP-1: a higher-priority gang of 2 in the same queue, against a victim of 4 pods with
    minAvailable 2."""
    cluster.apply(queue("gp-q", 4))
    cluster.run(1)  # the queue controller opens it
    victim_keeps_its_gang(cluster, gang_job("victim", "gp-q", "gp-low", 4, 2),
                          gang_job("preemptor", "gp-q", "gp-high", 2, 2, preemptable=False))


def test_without_surplus_exactly_one_gang_is_broken(cluster):
    """GP-3: two 2-pod gangs at their minimum; the preemptor breaks one of them whole."""
    cluster.apply(queue("gp-q", 4))
    cluster.run(1)
    cluster.apply([gang_job("va", "gp-q", "gp-low", 2, 2), gang_job("vb", "gp-q", "gp-low", 2, 2)])
    cluster.run(5)
    cluster.apply(gang_job("preemptor", "gp-q", "gp-high", 2, 2, preemptable=False))
    cluster.run(15)
    assert len(running(cluster, "preemptor")) == 2
    assert sorted([len(running(cluster, "va")), len(running(cluster, "vb"))]) == [0, 2]


def test_an_empty_queue_reclaims_the_surplus_of_a_queue_above_its_deserved(cluster):
    """GR-1: q2 holds 4 CPUs against a deserved 2; a gang of 2 in q1, of the same priority,
    reclaims the victim's two surplus pods."""
    cluster.apply([queue("q1", 2), queue("q2", 2)])
    cluster.run(1)
    victim_keeps_its_gang(cluster, gang_job("victim", "q2", "gp-low", 4, 2),
                          gang_job("reclaimer", "q1", "gp-low", 2, 2, preemptable=False))
