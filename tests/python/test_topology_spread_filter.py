"""Hard topology spread: DoNotSchedule constraints are a filter of the predicates plugin, as
Volcano's predicates wrap kube-scheduler's PodTopologySpread filter
(pkg/scheduler/plugins/predicates/predicates.go; kube's
pkg/scheduler/framework/plugins/podtopologyspread/filtering.go): a node whose domain would
hold more than maxSkew pods above the emptiest domain fails, a node without the topology key
fails for good. Issue "What Volcano's own e2e suites and a fault probe found" item 13: with
Kubernetes' sig-scheduling specs, 4 replicas with maxSkew 1 were placed 3/1 on two nodes, and
preemption bound a pod into skew 2.
"""

from __future__ import annotations

from typing import Any

from job_helpers import node
import volcanic

NOW = 1.7e9
SPREAD = {"app": "web"}
# binpack strongly prefers the fullest node, so only the filter spreads the pods.
PACKING = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
  - name: binpack
    arguments: {binpack.weight: 10}
"""
PREEMPTING = """
actions: "enqueue, allocate, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: predicates
  - name: proportion
  - name: binpack
    arguments: {binpack.weight: 10}
"""


def group(name: str, min_member: int = 1, phase: str = "Inqueue", priority_class: str | None = None) -> dict:
    spec: dict[str, Any] = {"minMember": min_member, "queue": "default"}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"kind": "PodGroup", "metadata": {"name": name, "namespace": "ns", "uid": "pg-" + name,
                                               "creationTimestamp": "2023-11-14T00:00:00Z"},
            "spec": spec, "status": {"phase": phase}}


def pod(name: str, pg: str, cpu: str = "1", labels: dict | None = None, node_name: str | None = None,
        spread: list[dict] | None = None, priority: int = 0) -> dict:
    spec: dict[str, Any] = {"schedulerName": "volcano", "priority": priority,
                            "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if spread:
        spec["topologySpreadConstraints"] = spread
    if node_name:
        spec["nodeName"] = node_name
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "ns", "uid": "uid-" + name,
                                        "labels": labels or {},
                                        "annotations": {"scheduling.k8s.io/group-name": pg}},
            "spec": spec, "status": {"phase": "Running" if node_name else "Pending"}}


def hard(key: str = "kubernetes.io/hostname", max_skew: int = 1, **extra: Any) -> list[dict]:
    return [{"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": SPREAD}, **extra}]


def test_four_replicas_with_max_skew_1_go_two_and_two():
    objects = [node("n1"), node("n2"), group("web", min_member=4)]
    objects += [pod(f"web-{i}", "web", labels=SPREAD, spread=hard()) for i in range(4)]
    d = volcanic.schedule(objects, PACKING, now=NOW)
    assert sorted(d.binds.values()) == ["n1", "n1", "n2", "n2"]
    # Without the constraint binpack stacks them all on one node.
    for o in objects:
        o.get("spec", {}).pop("topologySpreadConstraints", None)
    assert len(set(volcanic.schedule(objects, PACKING, now=NOW).binds.values())) == 1


def test_pods_already_running_count_and_unrelated_pods_do_not():
    objects = [node("n1"), node("n2"), group("old", phase="Running"), group("new"),
               pod("old-0", "old", labels=SPREAD, node_name="n1"), pod("old-1", "old", labels=SPREAD, node_name="n1"),
               pod("other", "old", labels={"app": "db"}, node_name="n2"),
               pod("new-0", "new", labels=SPREAD, spread=hard())]
    assert volcanic.schedule(objects, PACKING, now=NOW).binds == {"ns/new-0": "n2"}


def test_a_node_without_the_key_fails_for_good_and_skew_names_the_rule():
    objects = [node("n1", labels={"zone": "a"}), node("n2", labels={"zone": "a"}), node("bare"), group("old", phase="Running"), group("new"),
               pod("old-0", "old", labels=SPREAD, node_name="n1"),
               pod("new-0", "new", labels=SPREAD, spread=hard("zone", max_skew=1, minDomains=2))]
    d = volcanic.schedule(objects, PACKING, now=NOW)
    # One zone only, minDomains 2: the fewest is taken as 0, so zone a (1 pod + itself) is full.
    assert d.binds == {}
    assert d.unschedulable["ns/new-0"] == (
        "0/3 nodes are unavailable: 1 node(s) didn't match pod topology spread constraints (missing required "
        "label), 2 node(s) didn't match pod topology spread constraints.")
    objects[-1]["spec"]["topologySpreadConstraints"] = hard("zone", max_skew=2)
    assert volcanic.schedule(objects, PACKING, now=NOW).binds["ns/new-0"] in ("n1", "n2")


def test_domains_the_pod_cannot_use_do_not_count_under_node_affinity_honor():
    objects = [node("n1", labels={"zone": "a"}), node("n2", labels={"zone": "b", "pool": "gpu"}), group("old", phase="Running"), group("new"),
               pod("old-0", "old", labels=SPREAD, node_name="n1")]
    new = pod("new-0", "new", labels=SPREAD, spread=hard("zone"))
    new["spec"]["nodeSelector"] = {"zone": "a"}
    # Honor (the default): zone b is not the pod's to use, so zone a's 1 pod is the fewest.
    assert volcanic.schedule(objects + [new], PACKING, now=NOW).binds == {"ns/new-0": "n1"}
    new["spec"]["topologySpreadConstraints"] = hard("zone", nodeAffinityPolicy="Ignore")
    assert volcanic.schedule(objects + [new], PACKING, now=NOW).binds == {}  # zone b's 0 is the fewest


def test_the_filter_can_be_switched_off():
    conf = PACKING.replace("  - name: predicates\n",
                           "  - name: predicates\n    arguments: {predicate.PodTopologySpreadEnable: false}\n")
    objects = [node("n1"), node("n2"), group("web", min_member=4)]
    objects += [pod(f"web-{i}", "web", labels=SPREAD, spread=hard()) for i in range(4)]
    assert len(set(volcanic.schedule(objects, conf, now=NOW).binds.values())) == 1


def test_preemption_leaves_no_domain_over_max_skew():
    """n1 holds a matching and an unrelated low-priority pod, n2 one big unrelated pod; both are
    full. Evicting the unrelated pod on n1 would free room but leave skew 2 there; the
    preemptor goes where the skew holds after its victims are gone."""
    priority = [{"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
                {"kind": "PriorityClass", "metadata": {"name": "low"}, "value": 1}]
    objects = priority + [node("n1", cpu="2"), node("n2", cpu="2"),
                          group("low", min_member=1, phase="Running", priority_class="low"),
                          group("high", priority_class="high"),
                          pod("a1", "low", labels=SPREAD, node_name="n1", priority=1),
                          pod("a2", "low", labels={"app": "db"}, node_name="n1", priority=1),
                          pod("b", "low", cpu="2", labels={"app": "db"}, node_name="n2", priority=1),
                          pod("p", "high", labels=SPREAD, spread=hard(), priority=1000)]
    d = volcanic.schedule(objects, PREEMPTING, now=NOW)
    (target,) = d.pipelined.values()
    left = {"n1": {"a1", "a2"}, "n2": {"b"}}
    matching = {n: sum(1 for p in pods if p == "a1" and f"ns/{p}" not in d.evictions) for n, pods in left.items()}
    matching[target] += 1
    assert max(matching.values()) - min(matching.values()) <= 1, (d.evictions, d.pipelined)
