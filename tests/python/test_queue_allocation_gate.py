"""The scheduler's side of Volcano's queue-allocation gate (issue 33 item 12), with the
SchedulingGatesQueueAdmission feature gate on, in the embedded cluster: Volcano v1.15.1's
pkg/scheduler/actions/allocate/allocate.go (a pod whose only gate is Volcano's and that opted
in is let through it once its queue passes Allocatable), pkg/scheduler/gate/schedulinggate.go
(the gate removed by an update of the pod) and pkg/scheduler/plugins/capacity/capacity.go
(the room it was let through on stays its own until it is placed).

Volcano's e2e specs, test/e2e/schedulinggates/scheduling_gates.go, with Volcano's CI
scheduler configuration where capacity replaces proportion, as the specs make it:
- "Unschedulable pod with removed gate reserves queue capacity and blocks other pods";
- "Multiple scheduling gates: scheduler skips until only Volcano gate remains, then removes it".
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from test_preemption_cluster import CI_CONF
import volcanic
from volcanic.cli.kube import _scheduler
from volcanic.cli.main import build_parser, parse_args
from volcanic.kube.errors import InvalidObject

GATE = "scheduling.volcano.sh/queue-allocation-gate"
FEATURE = "SchedulingGatesQueueAdmission"
NS = "default"
QUEUE = "capacity-test-queue"
PG = "test-podgroup"
SLOT = {"cpu": "500m", "memory": "512Mi"}

# Volcano's CI configuration with capacity for proportion, as the two specs switch it.
CAPACITY_CONF = CI_CONF.replace("- name: proportion", "- name: capacity")


def node(name: str) -> dict:
    alloc = {"cpu": "2", "memory": "2Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": alloc, "capacity": dict(alloc)}}


def pod(name: str, node_selector: dict | None = None, gates: list[str] | None = None, opt_in: bool = True) -> dict:
    """A pod of the spec's PodGroup asking for one slot, opted in to the queue-allocation gate."""
    annotations = {"scheduling.k8s.io/group-name": PG, "scheduling.volcano.sh/queue-name": QUEUE}
    if opt_in:
        annotations[GATE] = "true"
    spec: dict = {"schedulerName": "volcano", "restartPolicy": "Never",
                  "containers": [{"name": "c", "image": "busybox", "resources": {"requests": dict(SLOT)}}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS,
                                                           "annotations": annotations}, "spec": spec}


def cluster(feature_gates=frozenset({FEATURE})) -> volcanic.Cluster:
    """Two nodes of 2 CPUs and 2Gi, a queue of one slot and a PodGroup of one in it."""
    c = volcanic.Cluster(conf=CAPACITY_CONF, feature_gates=feature_gates)
    c.apply([node("n1"), node("n2"),
             {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": QUEUE},
              "spec": {"weight": 1, "capability": dict(SLOT)}}])
    c.run(1)
    assert c.get("Queue", QUEUE)["status"]["state"] == "Open"
    c.apply({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": PG, "namespace": NS},
             "spec": {"minMember": 1, "queue": QUEUE, "minResources": dict(SLOT)}})
    c.run(1)
    return c


def gates(c: volcanic.Cluster, name: str) -> list[str]:
    return [g["name"] for g in c.get("Pod", name, NS)["spec"].get("schedulingGates") or []]


def phase(c: volcanic.Cluster, name: str) -> str:
    return c.get("Pod", name, NS)["status"].get("phase", "Pending")


def run_until(c: volcanic.Cluster, condition, seconds: int = 10) -> bool:
    for _ in range(seconds):
        if condition():
            return True
        c.run(1)
    return condition()


def test_an_unschedulable_ungated_pod_holds_its_queue_room_and_blocks_others():
    """Volcano e2e "Unschedulable pod with removed gate reserves queue capacity and blocks other
    pods": pod-1 is gated by the webhook, let through and runs; pod-2, which fits no node, is
    let through too and then holds the queue's only slot while Pending, so pod-3 keeps its
    gate; once pod-2 is deleted, pod-3 is let through and runs."""
    c = cluster()
    c.apply(pod("pod-1"))
    assert gates(c, "pod-1") == [GATE]  # the webhook's, at create
    assert run_until(c, lambda: phase(c, "pod-1") == "Running")
    assert gates(c, "pod-1") == []
    c.delete("Pod", "pod-1", NS)

    c.apply(pod("pod-2", node_selector={"kubernetes.io/fake-node": "fake"}))
    assert run_until(c, lambda: gates(c, "pod-2") == [])
    c.run(5)
    assert phase(c, "pod-2") == "Pending" and not c.get("Pod", "pod-2", NS)["spec"].get("nodeName")

    c.apply(pod("pod-3"))
    c.run(10)
    assert gates(c, "pod-3") == [GATE], "pod-2's reservation must keep pod-3 gated"
    assert phase(c, "pod-3") == "Pending"

    c.delete("Pod", "pod-2", NS)
    assert run_until(c, lambda: gates(c, "pod-3") == [])
    assert run_until(c, lambda: phase(c, "pod-3") == "Running")
    assert c.errors == []


def test_with_another_gate_the_pod_waits_until_only_volcanos_is_left():
    """Volcano e2e "Multiple scheduling gates: scheduler skips until only Volcano gate remains,
    then removes it": both gates stay while the other one is there; once it is removed, the
    scheduler removes Volcano's and the pod runs."""
    c = cluster()
    c.apply(pod("pod-multigate", gates=["example.com/other-gate"]))
    for _ in range(10):
        c.run(1)
        assert sorted(gates(c, "pod-multigate")) == sorted(["example.com/other-gate", GATE])
        assert phase(c, "pod-multigate") == "Pending"
    p = c.get("Pod", "pod-multigate", NS)
    c.api.update(dict(p, spec=dict(p["spec"], schedulingGates=[{"name": GATE}])))
    assert run_until(c, lambda: gates(c, "pod-multigate") == [])
    assert run_until(c, lambda: phase(c, "pod-multigate") == "Running")
    assert c.errors == []


def test_without_the_feature_gate_the_scheduler_lifts_nothing():
    """SchedulingGatesQueueAdmission is Alpha and off by default in Volcano's scheduler: a pod
    that carries the gate and opted in keeps it, and the scheduler writes no condition on it
    (a gated pod's condition is the API server's: Volcano's RecordJobStatusEvent)."""
    c = cluster(feature_gates=())
    c.apply(pod("gated", gates=[GATE]))
    c.run(10)
    assert gates(c, "gated") == [GATE] and phase(c, "gated") == "Pending"
    assert c.scheduler.last is not None and c.scheduler.last.ungate == []
    conditions = c.get("Pod", "gated", NS)["status"].get("conditions") or []
    assert not [x for x in conditions if x.get("reason") == "Unschedulable"]
    assert c.errors == []


def test_a_pod_that_did_not_opt_in_keeps_volcanos_gate():
    """Volcano lifts the gate only for pods annotated scheduling.volcano.sh/queue-allocation-gate:
    "true" (its allocate action only warns about the others)."""
    c = cluster()
    c.apply(pod("not-opted-in", gates=[GATE], opt_in=False))
    c.run(10)
    assert gates(c, "not-opted-in") == [GATE]
    assert c.errors == []


def test_scheduler_reports_the_pods_to_ungate():
    """volcanic.Scheduler(feature_gates=...): Decisions.ungate names the pods let through, the
    second of two one-slot pods not (capacity's reservation); off by default."""
    objs = [node("n1"),
            {"kind": "Queue", "metadata": {"name": QUEUE}, "spec": {"weight": 1, "capability": dict(SLOT)}},
            {"kind": "PodGroup", "metadata": {"name": PG, "namespace": NS},
             "spec": {"minMember": 1, "queue": QUEUE}, "status": {"phase": "Inqueue"}}]
    objs += [dict(pod(n, gates=[GATE]), metadata=dict(pod(n)["metadata"], creationTimestamp=t))
             for n, t in (("a", "2024-01-01T00:00:01Z"), ("b", "2024-01-01T00:00:02Z"))]
    on = volcanic.Scheduler(CAPACITY_CONF, feature_gates={FEATURE})
    off = volcanic.Scheduler(CAPACITY_CONF)
    for s in (on, off):
        for o in objs:
            s.upsert(o)
    assert on.run_once().ungate == ["default/a"]
    assert off.run_once().ungate == []


def test_feature_gates_must_be_names():
    """A bare string is a mistake for a set of names (it would read as single letters)."""
    for make in (volcanic.Scheduler, volcanic.Cluster):
        with pytest.raises(ValueError, match="feature_gates: must be a collection of gate names"):
            make(feature_gates=FEATURE)
    with pytest.raises(ValueError, match="feature_gates: gate names must be strings, got 1"):
        volcanic.Scheduler(feature_gates=[1])


def test_a_pod_update_may_remove_gates_but_not_add_them():
    """Kubernetes' pod update validation (validateOnlyDeletedSchedulingGates): what the scheduler
    and the spec's user do is allowed, adding a gate is not."""
    c = volcanic.Cluster()
    c.apply(pod("p", gates=["a", "b"], opt_in=False))
    p = c.get("Pod", "p", NS)
    c.api.update(dict(p, spec=dict(p["spec"], schedulingGates=[{"name": "b"}])))
    assert gates(c, "p") == ["b"]
    p = c.get("Pod", "p", NS)
    with pytest.raises(InvalidObject, match="only deletion is allowed, but found new scheduling gate 'c'"):
        c.api.update(dict(p, spec=dict(p["spec"], schedulingGates=[{"name": "b"}, {"name": "c"}])))


def test_the_scheduler_command_takes_the_feature_gates(monkeypatch):
    """`volcanic scheduler --feature-gates` (Volcano's scheduler has the flag) reaches the
    scheduler daemon; so do `up`'s."""
    import volcanic.real.scheduler as daemon_module
    seen = []

    class Daemon:
        def __init__(self, *args, feature_gates=frozenset(), **kwargs):
            seen.append(feature_gates)

        def run(self, stop):
            pass
    monkeypatch.setattr(daemon_module, "SchedulerDaemon", Daemon)
    process = SimpleNamespace(health=None, registry=None)
    for command in ("scheduler", "up"):
        args = parse_args([command, "--feature-gates", f"{FEATURE}=true"])
        _scheduler(process, None, args.config)
        assert FEATURE in seen[-1]
    _scheduler(process, None, parse_args(["scheduler"]).config)
    assert FEATURE not in seen[-1]


def test_the_scheduler_role_may_update_pods():
    """`volcanic install --all`'s scheduler ClusterRole lets it write the pod without the gate
    (Volcano's chart: installer/helm/chart/volcano/templates/scheduler.yaml, pods patch)."""
    from volcanic.real.manifests.accounts import RULES
    assert any("pods" in r["resources"] and "update" in r["verbs"] for r in RULES["scheduler"])
