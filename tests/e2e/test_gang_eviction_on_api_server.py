"""gangpreempt on a real API server (docs/scheduler.md, Actions): Volcano Jobs through the job
controller and the scheduler of `volcanic up` with test/e2e/gangevict's configuration (Volcano
v1.15.1), on four 1-CPU kwok nodes of the test's own. GP-1: a higher-priority gang takes the
two pods a lower-priority gang can spare, and the victim keeps running as a gang."""

from __future__ import annotations

from pathlib import Path

import yaml

from test_volcano_jobs import _stuck, pods_of, vcjob
from volcanic.real.devcluster.cluster import kwok_node

GP1 = Path(__file__).resolve().parents[1] / "scenarios" / "gang-evict" / "gp-1-safe-bundle-keeps-victim-gang.yaml"
GANG_EVICT_CONF = yaml.safe_load(GP1.read_text())["conf"]

NODES = [f"ge-node-{i}" for i in range(4)]


def gang_job(name: str, replicas: int, min_available: int, priority_class: str, preemptable: bool) -> dict:
    job = vcjob(name, replicas, cpu="1", min_available=min_available, duration=None,
                priorityClassName=priority_class)
    template = job["spec"]["tasks"][0]["template"]
    template["spec"]["priorityClassName"] = priority_class
    template["spec"]["nodeSelector"] = {"gang-evict": "yes"}
    if preemptable:
        template["metadata"].setdefault("labels", {})["volcano.sh/preemptable"] = "true"
    return job


def test_a_gang_preempts_only_the_surplus_of_a_lower_priority_gang(env, up, namespace):
    conf = up.conf.read_text()
    running = lambda job: [p for p in pods_of(env, job, namespace)
                           if (p.get("status") or {}).get("phase") == "Running"]
    try:
        for name in NODES:
            n = kwok_node(name, cpu="1", memory="1Gi")
            n["metadata"]["labels"]["gang-evict"] = "yes"
            env.apply(n)
        for name, value in (("ge-high", 100), ("ge-low", 10)):
            env.apply({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                       "value": value})
        reloads = up.proc.log_path.read_text(errors="replace").count("reloaded")
        up.conf.write_text(GANG_EVICT_CONF)
        assert env.wait(lambda: up.proc.log_path.read_text(errors="replace").count("reloaded") > reloads)

        env.apply(gang_job("victim", 4, 2, "ge-low", preemptable=True), namespace=namespace)
        assert env.wait(lambda: len(running("victim")) == 4, timeout=60), _stuck(env, up, ["victim"], namespace)
        env.apply(gang_job("preemptor", 2, 2, "ge-high", preemptable=False), namespace=namespace)
        assert env.wait(lambda: len(running("preemptor")) == 2, timeout=90), \
            _stuck(env, up, ["victim", "preemptor"], namespace)
        assert len(running("victim")) == 2, _stuck(env, up, ["victim", "preemptor"], namespace)
    finally:
        up.conf.write_text(conf)
        env.kubectl("delete", "jobs.batch.volcano.sh", "--all", "-n", namespace, "--wait=false", check=False)
        env.kubectl("delete", "priorityclass", "ge-high", "ge-low", check=False)
        env.kubectl("delete", "node", *NODES, check=False)
