"""The queue-allocation gate end to end on a real API server (issue 33 item 12): `volcanic up
--feature-gates SchedulingGatesQueueAdmission=true`, whose webhook gives opted-in pods the gate
and whose scheduler removes it once their queue has room, with Volcano's default configuration
where capacity replaces proportion, as Volcano's e2e specs switch it
(test/e2e/schedulinggates/scheduling_gates.go; Volcano v1.15.1's
pkg/scheduler/actions/allocate/allocate.go, pkg/scheduler/gate/schedulinggate.go and the
capacity plugin's reservations). The suite's `up` runs without the gate: it is stopped for
these tests and started again after them."""

from __future__ import annotations

import json

import pytest
import yaml

from conftest import Up
from volcanic.real.devcluster.cluster import KWOK_TOLERATION
from volcanic.real.manifests.deployments import DEFAULT_CONF

GATE = "scheduling.volcano.sh/queue-allocation-gate"
SLOT = {"cpu": "500m", "memory": "512Mi"}
# Volcano's default configuration with capacity for proportion, as the two specs switch it.
CAPACITY_CONF = DEFAULT_CONF.replace("- name: proportion", "- name: capacity")


@pytest.fixture(scope="module")
def gated(env, up):
    """`volcanic up` with the feature gate and capacity, in place of the suite's `up`."""
    up.stop()
    g = Up(env)
    g.conf.write_text(CAPACITY_CONF)
    g.proc = env.volcanic("up", "--scheduler-conf", str(g.conf), "--webhook-url", f"https://127.0.0.1:{g.webhook_port}",
                          "--feature-gates", "SchedulingGatesQueueAdmission=true")
    try:
        env.wait_logged(g.proc, "caches synced; scheduling", "controllers started", "webhook: registered")
        yield g
    finally:
        if g.proc.poll() is None:
            g.stop()
        g.conf.write_text(up.conf.read_text())
        up.start()


def _setup(env, namespace: str, queue: str, group: str) -> None:
    """Volcano's spec: a queue of one slot and a PodGroup of one pod in it."""
    env.apply_queue(queue, weight=1, capability=SLOT)
    env.apply({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
               "metadata": {"name": group, "namespace": namespace},
               "spec": {"minMember": 1, "queue": queue, "minResources": SLOT}}, namespace=namespace)


def _pod(namespace: str, name: str, queue: str, group: str, node_selector: dict | None = None,
         gates: list[str] | None = None) -> dict:
    spec = {"schedulerName": "volcano", "restartPolicy": "Never", "tolerations": [KWOK_TOLERATION],
            "nodeSelector": node_selector or {"type": "kwok"},
            "containers": [{"name": "c", "image": "busybox", "resources": {"requests": dict(SLOT)}}]}
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace,
                         "annotations": {"scheduling.k8s.io/group-name": group, GATE: "true",
                                         "scheduling.volcano.sh/queue-name": queue}},
            "spec": spec}


def _create(env, pod: dict) -> list[str]:
    """Creates the pod; returns the gates of the object the API server stored (the webhook's
    work: the scheduler may lift it a moment later)."""
    out = env.kubectl("create", "-f", "-", "-o", "json", input=yaml.safe_dump(pod)).stdout
    return [g["name"] for g in json.loads(out)["spec"].get("schedulingGates") or []]


def _gates(env, namespace: str, name: str) -> list[str] | None:
    pod = env.store.get("Pod", name, namespace)
    return None if pod is None else [g["name"] for g in pod["spec"].get("schedulingGates") or []]


def _phase(env, namespace: str, name: str) -> str | None:
    pod = env.store.get("Pod", name, namespace)
    return None if pod is None else (pod.get("status") or {}).get("phase")


def _cleanup(env, namespace: str, queue: str) -> None:
    env.kubectl("delete", "pods", "--all", "-n", namespace, "--wait=false", check=False)
    env.kubectl("delete", "podgroups.scheduling.volcano.sh", "--all", "-n", namespace, "--wait=false", check=False)
    env.kubectl("delete", "queue", queue, "--wait=false", check=False)  # refused while it has work: left then


def test_an_unschedulable_ungated_pod_holds_the_queue_and_blocks_others(env, gated, namespace):
    """Volcano e2e "Unschedulable pod with removed gate reserves queue capacity and blocks other
    pods": pod-1 gets the gate from the webhook, loses it and runs; pod-2 (no node fits it)
    loses it and stays Pending, holding the queue's only slot, so pod-3 keeps its gate; once
    pod-2 is deleted, pod-3 loses it and runs."""
    queue, group = "capacity-test-queue", "test-podgroup"
    _setup(env, namespace, queue, group)
    try:
        assert _create(env, _pod(namespace, "pod-1", queue, group)) == [GATE], "the webhook injects the gate"
        assert env.wait(lambda: _phase(env, namespace, "pod-1") == "Running", timeout=60)
        assert _gates(env, namespace, "pod-1") == []
        env.kubectl("delete", "pod", "pod-1", "-n", namespace)

        assert _create(env, _pod(namespace, "pod-2", queue, group,
                                 node_selector={"kubernetes.io/fake-node": "fake"})) == [GATE]
        assert env.wait(lambda: _gates(env, namespace, "pod-2") == [], timeout=60)
        assert _create(env, _pod(namespace, "pod-3", queue, group)) == [GATE]
        assert not env.wait(lambda: _gates(env, namespace, "pod-3") != [GATE], timeout=10), \
            "pod-2's reservation must keep pod-3 gated"
        assert _phase(env, namespace, "pod-2") == "Pending" and _phase(env, namespace, "pod-3") == "Pending"

        env.kubectl("delete", "pod", "pod-2", "-n", namespace)
        assert env.wait(lambda: _gates(env, namespace, "pod-3") == [], timeout=60)
        assert env.wait(lambda: _phase(env, namespace, "pod-3") == "Running", timeout=60)
    finally:
        _cleanup(env, namespace, queue)


def test_with_another_gate_the_pod_waits_until_only_volcanos_is_left(env, gated, namespace):
    """Volcano e2e "Multiple scheduling gates: scheduler skips until only Volcano gate remains,
    then removes it": both gates stay for 10 s; once the other one is removed (a JSON patch, as
    the spec sends), the scheduler removes Volcano's and the pod runs."""
    queue, group, name = "capacity-multigate-queue", "test-pg-multigate", "pod-multigate"
    _setup(env, namespace, queue, group)
    try:
        assert _create(env, _pod(namespace, name, queue, group, gates=["example.com/other-gate"])) == \
            ["example.com/other-gate", GATE]
        assert not env.wait(lambda: sorted(_gates(env, namespace, name)) != sorted(["example.com/other-gate", GATE])
                            or _phase(env, namespace, name) != "Pending", timeout=10)
        env.kubectl("patch", "pod", name, "-n", namespace, "--type=json", "-p",
                    json.dumps([{"op": "replace", "path": "/spec/schedulingGates", "value": [{"name": GATE}]}]))
        assert env.wait(lambda: _gates(env, namespace, name) == [], timeout=60)
        assert env.wait(lambda: _phase(env, namespace, name) == "Running", timeout=60)
    finally:
        _cleanup(env, namespace, queue)
