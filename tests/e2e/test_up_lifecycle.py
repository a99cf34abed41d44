"""`volcanic up` on a real API server: its webhook listens only where its URL says, a clean
stop removes the webhook configurations it registered so the cluster is not locked (issue 33
item 11), and `--feature-gates SchedulingGatesQueueAdmission=true` makes the API server's pod
mutation add Volcano's queue-allocation gate (item 12; Volcano's schedulinggates e2e suite
runs its webhook with that gate, pkg/webhooks/admission/pods/mutate/mutate_pod.go)."""

from __future__ import annotations

import json
import signal
import socket

import pytest
import yaml

from conftest import Up
from volcanic.real.devcluster.cluster import KWOK_TOLERATION
from volcanic.real.manifests.webhooks import DEFAULT_ADMISSIONS

MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
GATE = "scheduling.volcano.sh/queue-allocation-gate"


def registered(env) -> set[str]:
    names = set()
    for path in (MUTATING, VALIDATING):
        names |= {c["metadata"]["name"] for c in env.store.client.request("GET", path)["items"]
                  if c["metadata"]["name"].startswith("volcano-admission-service-")}
    return names


def accepts(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=2).close()
        return True
    except OSError:
        return False


def queue(name: str) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"weight": 1}}


def test_up_listens_on_its_urls_address_only(env, up):
    """--webhook-url https://127.0.0.1:PORT: reachable on 127.0.0.1, not on another address of
    this machine (127.0.0.2 is loopback too; a socket on 0.0.0.0 would accept it)."""
    assert accepts("127.0.0.1", up.webhook_port)
    assert not accepts("127.0.0.2", up.webhook_port)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_stopped_up_leaves_the_cluster_writable(env, up, sig):
    """Stopped with Ctrl-C or SIGTERM, `up` exits 0 and deletes its webhook configurations:
    Queues can be written and `volcanic install` (which applies Queues) succeeds without any
    webhook; a new `up` registers them again."""
    assert len(registered(env)) == len(DEFAULT_ADMISSIONS)
    try:
        up.proc.send_signal(sig)
        assert up.proc.wait(30) == 0, up.proc.log_path.read_text()
        assert "webhook: removed volcano-admission-service-" in up.proc.log_path.read_text()
        assert registered(env) == set()
        r = env.run("install")
        assert r.returncode == 0, r.stderr
        env.apply(queue("after-up-stopped"))
        assert env.store.get("Queue", "after-up-stopped") is not None
        env.kubectl("delete", "queue", "after-up-stopped")
    finally:
        up.start()
    assert len(registered(env)) == len(DEFAULT_ADMISSIONS)


def test_killed_up_leaves_its_registrations_for_the_next_one(env, up):
    """SIGKILL runs no clean-up: the configurations stay (a Job write is refused while nothing
    answers), and the next `up` takes them over."""
    up.kill()
    try:
        assert len(registered(env)) == len(DEFAULT_ADMISSIONS)
        r = env.kubectl("apply", "-f", "-", input=yaml.safe_dump(queue("while-down")), check=False)
        assert r.returncode != 0 and "failed calling webhook" in r.stderr
    finally:
        up.start()
    assert len(registered(env)) == len(DEFAULT_ADMISSIONS)


def test_feature_gate_adds_the_queue_allocation_gate(env, up, namespace):
    """`up --feature-gates SchedulingGatesQueueAdmission=true` registers /pods/mutate too, and
    a pod of the volcano scheduler annotated scheduling.volcano.sh/queue-allocation-gate:
    "true" is stored with that scheduling gate, which up's scheduler then lifts (its queue has
    room: tests/e2e/test_queue_allocation_gate.py); a pod without the annotation gets no gate.
    Stopped, it removes the six configurations it registered."""
    up.stop()
    gated = Up(env)
    gated.proc = env.volcanic("up", "--scheduler-conf", str(gated.conf), "--webhook-url",
                              f"https://127.0.0.1:{gated.webhook_port}", "--feature-gates",
                              "SchedulingGatesQueueAdmission=true")
    try:
        env.wait_logged(gated.proc, "controllers started", "webhook: registered")
        assert "volcano-admission-service-pods-mutate" in registered(env)

        def pod(name, annotations):
            return {"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
                    "spec": {"schedulerName": "volcano", "tolerations": [KWOK_TOLERATION],
                             "nodeSelector": {"type": "kwok"},
                             "containers": [{"name": "c", "image": "busybox",
                                             "resources": {"requests": {"cpu": "100m"}}}]}}
        created = env.kubectl("create", "-f", "-", "-o", "json",
                              input=yaml.safe_dump(pod("opted-in", {GATE: "true"}))).stdout
        assert json.loads(created)["spec"]["schedulingGates"] == [{"name": GATE}]
        env.apply(pod("plain", {}), namespace=namespace)
        assert not env.store.get("Pod", "plain", namespace)["spec"].get("schedulingGates")
        assert env.wait(lambda: env.store.get("Pod", "plain", namespace)["spec"].get("nodeName"))
        assert env.wait(lambda: env.store.get("Pod", "opted-in", namespace)["spec"].get("nodeName"))
        assert not env.store.get("Pod", "opted-in", namespace)["spec"].get("schedulingGates")
        gated.stop()
        assert gated.proc.returncode == 0
        assert registered(env) == set()
    finally:
        if gated.proc.poll() is None:
            gated.stop()
        up.start()
