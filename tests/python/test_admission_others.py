"""PodGroup, Pod and Command admission (reference §3 intro, §3.3, §3.4, §1.2;
volcanic/admission/{podgroups,pods,commands}.py): each rule called directly, positive and
negative, then end to end through volcanic.Cluster; last, no rule of any module raises on
malformed input."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from builders import StaticLister as Lister
import volcanic
from volcanic.admission import AdmissionConf, volcano_chain
from volcanic.admission import commands as C
from volcanic.admission import podgroups as PG
from volcanic.admission import pods as P
from volcanic.admission import queues as Q
from volcanic.admission.chain import AdmissionRequest
from volcanic.kube.keys import POD_QUEUE_NAME


def queue(name: str, state: str | None = "Open") -> dict:
    q = {"kind": "Queue", "metadata": {"name": name}, "spec": {"weight": 1}}
    if state is not None:
        q["status"] = {"state": state}
    return q


def namespace(name: str, **annotations: str) -> dict:
    return {"kind": "Namespace", "metadata": {"name": name, "annotations": annotations}}


def podgroup(name: str = "pg", ns: str = "ns", **spec: Any) -> dict:
    return {"kind": "PodGroup", "metadata": {"name": name, "namespace": ns}, "spec": {"minMember": 1, **spec}}


def pod(name: str = "p", ns: str = "ns", scheduler: str | None = "volcano", annotations: dict | None = None,
        **spec: Any) -> dict:
    s = {"containers": [{"name": "c", "image": "busybox"}], **spec}
    if scheduler is not None:
        s["schedulerName"] = scheduler
    return {"kind": "Pod", "metadata": {"name": name, "namespace": ns, "annotations": annotations or {}}, "spec": s}


def command(action: Any, kind: str = "Job", target: str = "j", ns: str = "ns") -> dict:
    api = "batch.volcano.sh/v1alpha1" if kind == "Job" else "scheduling.volcano.sh/v1beta1"
    return {"apiVersion": "bus.volcano.sh/v1alpha1", "kind": "Command", "metadata": {"name": "cmd", "namespace": ns},
            "action": action, "target": {"apiVersion": api, "kind": kind, "name": target, "uid": "u"}}


def job(name: str = "j", ns: str = "ns") -> dict:
    return {"kind": "Job", "metadata": {"name": name, "namespace": ns}, "spec": {}}


def create(obj: Any, *stored: dict) -> AdmissionRequest:
    return AdmissionRequest("CREATE", obj, None, Lister(queue("root"), queue("default"), *stored))


def update(obj: Any, *stored: dict) -> AdmissionRequest:
    return AdmissionRequest("UPDATE", obj, copy.deepcopy(obj), Lister(queue("root"), queue("default"), *stored))


# === PodGroups (§3.4) ========================================================================

def test_podgroup_queue_from_namespace_takes_the_namespaces_queue():
    """podgroup_queue_from_namespace (§3.4 mutate): a PodGroup in "default" (or with no queue,
    the CRD's default) moves to the queue its namespace names in
    scheduling.volcano.sh/queue-name."""
    ns = namespace("ns", **{POD_QUEUE_NAME: "team"})
    pg = podgroup(queue="default")
    assert PG.podgroup_queue_from_namespace(create(pg, ns))["spec"]["queue"] == "team"
    assert pg["spec"]["queue"] == "default"  # the request's object is not changed
    assert PG.podgroup_queue_from_namespace(create(podgroup(), ns))["spec"]["queue"] == "team"


def test_podgroup_queue_from_namespace_leaves_other_queues_and_plain_namespaces():
    """podgroup_queue_from_namespace (§3.4 mutate): an explicit other queue stays; a
    namespace without the annotation, or a missing one, changes nothing; UPDATE is left alone."""
    ns = namespace("ns", **{POD_QUEUE_NAME: "team"})
    assert PG.podgroup_queue_from_namespace(create(podgroup(queue="mine"), ns))["spec"]["queue"] == "mine"
    plain = create(podgroup(queue="default"), namespace("ns"))
    assert PG.podgroup_queue_from_namespace(plain)["spec"]["queue"] == "default"
    assert PG.podgroup_queue_from_namespace(create(podgroup(queue="default")))["spec"]["queue"] == "default"
    assert PG.podgroup_queue_from_namespace(update(podgroup(queue="default"), ns))["spec"]["queue"] == "default"


@pytest.mark.parametrize("spec, message", [
    ({"queue": 5}, "spec.queue: must be a string, got integer"),
    ({"minMember": "2"}, "spec.minMember: must be an integer, got string"),
    ({"networkTopology": "hard"}, "spec.networkTopology: must be an object, got string"),
    ({"subGroupPolicy": [{"name": "a", "networkTopology": {"highestTierAllowed": "1"}}]},
     "spec.subGroupPolicy[0].networkTopology.highestTierAllowed: must be an integer, got string"),
])
def test_podgroup_well_formed_denies_wrong_types(spec, message):
    """podgroup_well_formed (§3 intro, the CRD schema): wrong types are denied naming the field
    (minMember >= 0 is the CRD schema's: test_crd_schema.py)."""
    assert PG.podgroup_well_formed(create(podgroup(**spec))) == message


def test_podgroup_well_formed_allows_typed_podgroups():
    """podgroup_well_formed (§3 intro): a typed PodGroup passes; a spec that is not an object
    is left to the API server, which refuses it."""
    pg = podgroup(queue="q", minMember=0, networkTopology={"mode": "hard", "highestTierAllowed": 2},
                  subGroupPolicy=[{"name": "a", "networkTopology": {"highestTierName": "zone"}}])
    assert PG.podgroup_well_formed(create(pg)) is None
    assert PG.podgroup_well_formed(create({"kind": "PodGroup", "metadata": {"name": "x"}, "spec": "x"})) is None


def test_podgroup_queue_open_denies_missing_and_closed_queues():
    """podgroup_queue_open (§3.4 validate): the queue must exist and be Open."""
    assert PG.podgroup_queue_open(create(podgroup(queue="nope"))) == (
        'unable to find queue: queue.scheduling.volcano.sh "nope" not found')
    assert PG.podgroup_queue_open(create(podgroup(queue="q"), queue("q", "Closed"))) == (
        "can only submit PodGroup to queue with state `Open`, queue `q` status is `Closed`.")
    assert PG.podgroup_queue_open(create(podgroup(queue="q"), queue("q", None))) == (
        "can only submit PodGroup to queue with state `Open`, queue `q` status is ``.")


def test_podgroup_queue_open_allows_open_queues():
    """podgroup_queue_open (§3.4 validate): an Open queue, the default queue for a PodGroup
    without one, or an explicit "" (Volcano skips it) pass; UPDATE is not checked."""
    assert PG.podgroup_queue_open(create(podgroup(queue="q"), queue("q"))) is None
    assert PG.podgroup_queue_open(create(podgroup())) is None
    assert PG.podgroup_queue_open(create(podgroup(queue=""))) is None
    assert PG.podgroup_queue_open(update(podgroup(queue="nope"))) is None


def test_podgroup_network_topology_exclusive_denies_both_tier_fields():
    """podgroup_network_topology_exclusive (§3.4 validate): highestTierAllowed and
    highestTierName not together, at the top or in a subGroupPolicy (the first one named)."""
    both = {"mode": "hard", "highestTierAllowed": 1, "highestTierName": "zone"}
    assert PG.podgroup_network_topology_exclusive(create(podgroup(networkTopology=both))) == (
        "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously.")
    policies = [{"name": "ok", "networkTopology": {"highestTierAllowed": 1}},
                {"name": "bad", "networkTopology": both}, {"name": "worse", "networkTopology": both}]
    assert PG.podgroup_network_topology_exclusive(create(podgroup(subGroupPolicy=policies))) == (
        "in subGroupPolicy 'bad': must not specify 'highestTierAllowed' and 'highestTierName' "
        "in networkTopology simultaneously.")
    assert PG.podgroup_network_topology_exclusive(create(podgroup(networkTopology=both, subGroupPolicy=policies))) == (
        "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously. "
        "in subGroupPolicy 'bad': must not specify 'highestTierAllowed' and 'highestTierName' "
        "in networkTopology simultaneously.")


def test_podgroup_network_topology_exclusive_allows_one_tier_field():
    """podgroup_network_topology_exclusive (§3.4 validate): one of the two, or neither, passes."""
    pg = podgroup(networkTopology={"mode": "soft", "highestTierName": "zone"},
                  subGroupPolicy=[{"name": "a", "networkTopology": {"highestTierAllowed": 2}}, {"name": "b"}])
    assert PG.podgroup_network_topology_exclusive(create(pg)) is None
    assert PG.podgroup_network_topology_exclusive(create(podgroup())) is None


def test_cluster_podgroup_admission_end_to_end():
    """§3.4 through volcanic.Cluster: the namespace's queue is taken; a Closed queue refuses
    a PodGroup with an AdmissionError naming it, and nothing is stored."""
    c = volcanic.Cluster()
    c.apply([namespace("team-ns", **{POD_QUEUE_NAME: "team"}),
             {"kind": "Queue", "metadata": {"name": "team"}, "spec": {"weight": 1}}])
    c.run(1)
    stored = c.apply(podgroup("pg1", ns="team-ns", queue="default"))
    assert stored["spec"]["queue"] == "team"
    c.apply(command("CloseQueue", kind="Queue", target="team", ns="default"))
    c.run(1)
    assert c.get("Queue", "team")["status"]["state"] in ("Closed", "Closing")
    state = c.get("Queue", "team")["status"]["state"]
    with pytest.raises(volcanic.AdmissionError) as e:
        c.apply(podgroup("pg2", ns="team-ns", queue="team"))
    assert str(e.value) == f"can only submit PodGroup to queue with state `Open`, queue `team` status is `{state}`."
    assert (e.value.kind, e.value.namespace, e.value.name) == ("PodGroup", "team-ns", "pg2")
    assert c.get("PodGroup", "pg2", "team-ns") is None
    assert c.errors == []


# === Pods (§3.3) =============================================================================

JDB_MIN, JDB_MAX = P.JDB_MIN_AVAILABLE, P.JDB_MAX_UNAVAILABLE


@pytest.mark.parametrize("annotations, message", [
    ({JDB_MIN: "0"}, f'invalid value <"0"> for {JDB_MIN}, it must be a positive integer'),
    ({JDB_MAX: "-3"}, f'invalid value <"-3"> for {JDB_MAX}, it must be a positive integer'),
    ({JDB_MIN: "100%"}, f'invalid value <"100%"> for {JDB_MIN}, it must be a valid percentage which between 1% ~ 99%'),
    ({JDB_MIN: "0%"}, f'invalid value <"0%"> for {JDB_MIN}, it must be a valid percentage which between 1% ~ 99%'),
    ({JDB_MIN: "abc"}, f'invalid value strconv.Atoi: parsing "abc": invalid syntax for {JDB_MIN}'),
    ({JDB_MIN: ""}, f'invalid value strconv.Atoi: parsing "": invalid syntax for {JDB_MIN}'),
    ({JDB_MIN: "2", JDB_MAX: "1"},
     f"not allow configure multiple annotations <[{JDB_MIN} {JDB_MAX}]> at same time"),
])
def test_pod_jdb_annotations_denies_bad_budgets(annotations, message):
    """pod_jdb_annotations (§3.3 validate): at most one of the two annotations; the value a
    positive integer or a percentage in 1%..99%."""
    assert P.pod_jdb_annotations(create(pod(annotations=annotations))) == message


def test_pod_jdb_annotations_allows_good_budgets_and_other_schedulers():
    """pod_jdb_annotations (§3.3 validate): good values pass; pods of other schedulers (or
    none) and UPDATEs are not checked."""
    for value in ("1", "3", "1%", "50%", "99%"):
        assert P.pod_jdb_annotations(create(pod(annotations={JDB_MIN: value}))) is None
    bad = {JDB_MIN: "0", JDB_MAX: "x"}
    assert P.pod_jdb_annotations(create(pod(scheduler="default-scheduler", annotations=bad))) is None
    assert P.pod_jdb_annotations(create(pod(scheduler=None, annotations=bad))) is None
    assert P.pod_jdb_annotations(update(pod(annotations=bad))) is None
    assert P.pod_jdb_annotations(create(pod(scheduler="mine", annotations=bad)), scheduler_names=("mine",)) is not None


def test_pod_queue_allocation_gate_adds_the_gate_once():
    """pod_queue_allocation_gate (§3.3 mutate): a pod annotated
    scheduling.volcano.sh/queue-allocation-gate: "true" gets that scheduling gate, after any
    it has, and not twice."""
    opted = pod(annotations={P.QUEUE_ALLOCATION_GATE: "true"})
    assert P.pod_queue_allocation_gate(create(opted))["spec"]["schedulingGates"] == [{"name": P.QUEUE_ALLOCATION_GATE}]
    gated = pod(annotations={P.QUEUE_ALLOCATION_GATE: "true"}, schedulingGates=[{"name": "other"}])
    assert P.pod_queue_allocation_gate(create(gated))["spec"]["schedulingGates"] == [
        {"name": "other"}, {"name": P.QUEUE_ALLOCATION_GATE}]
    twice = pod(annotations={P.QUEUE_ALLOCATION_GATE: "true"}, schedulingGates=[{"name": P.QUEUE_ALLOCATION_GATE}])
    assert P.pod_queue_allocation_gate(create(twice)) == twice


def test_pod_queue_allocation_gate_leaves_pods_not_opted_in_and_follows_the_feature_gate():
    """pod_queue_allocation_gate (§3.3 mutate): no annotation (or not "true") -> unchanged;
    the rule is in the chain only with the SchedulingGatesQueueAdmission feature gate, off by
    default as in Volcano (Alpha)."""
    for given in ({}, {P.QUEUE_ALLOCATION_GATE: "false"}):
        p = pod(annotations=given)
        assert P.pod_queue_allocation_gate(create(p)) == p
    assert P.pod_queue_allocation_gate not in P.mutators(AdmissionConf())
    gated = AdmissionConf(feature_gates=frozenset({"SchedulingGatesQueueAdmission"}))
    assert P.mutators(gated) == [P.pod_queue_allocation_gate]


GROUPS = (
    {"resourceGroup": "gpu", "object": {"key": "namespace", "value": ["ml", "train"]},
     "schedulerName": "volcano", "labels": {"pool": "gpu"},
     "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
     "affinity": json.dumps({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
         "nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]}}})},
    {"resourceGroup": "batch", "object": {"key": "annotation", "value": ["team: batch"]}, "labels": {"pool": "batch"}},
    {"resourceGroup": "cpu", "labels": {"pool": "cpu"}},
)


def test_pod_resource_group_applies_the_first_matching_group():
    """pod_resource_group (§3.3 mutate): by namespace, by annotation, or by the
    volcano.sh/resource-group annotation; the first match merges labels into nodeSelector,
    sets affinity, appends tolerations and sets schedulerName."""
    p = pod(ns="ml", scheduler="default-scheduler", nodeSelector={"zone": "a"},
            tolerations=[{"key": "x", "operator": "Exists"}])
    out = P.pod_resource_group(create(p), groups=GROUPS)["spec"]
    assert out["nodeSelector"] == {"zone": "a", "pool": "gpu"}
    assert out["tolerations"] == [{"key": "x", "operator": "Exists"},
                                  {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert out["schedulerName"] == "volcano"
    assert out["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    by_annotation = P.pod_resource_group(create(pod(annotations={"team": "batch"})), groups=GROUPS)
    assert by_annotation["spec"]["nodeSelector"] == {"pool": "batch"}
    by_name = P.pod_resource_group(create(pod(annotations={P.RESOURCE_GROUP_ANNOTATION: "cpu"})), groups=GROUPS)
    assert by_name["spec"]["nodeSelector"] == {"pool": "cpu"}


def test_pod_resource_group_keeps_own_affinity_and_unmatched_pods():
    """pod_resource_group (§3.3 mutate): a pod with its own affinity keeps it; a pod no group
    matches is unchanged; UPDATE is left alone."""
    own = {"podAffinity": {}}
    out = P.pod_resource_group(create(pod(ns="ml", affinity=own)), groups=GROUPS)["spec"]
    assert out["affinity"] == own and out["nodeSelector"] == {"pool": "gpu"}
    other = pod(ns="web", annotations={"team": "web"})
    assert P.pod_resource_group(create(other), groups=GROUPS) == other
    assert P.pod_resource_group(update(pod(ns="ml")), groups=GROUPS) == pod(ns="ml")
    assert P.mutators(AdmissionConf()) == []


def test_cluster_pod_admission_end_to_end():
    """§3.3 through volcanic.Cluster: a Volcano pod with both budgets is refused (nothing
    stored), a default-scheduler pod is not judged, resource groups mutate stored pods."""
    conf = AdmissionConf(scheduler_names=("volcano",), resource_groups=GROUPS)
    c = volcanic.Cluster(admission=volcano_chain(conf))
    with pytest.raises(volcanic.AdmissionError, match="not allow configure multiple annotations") as e:
        c.apply(pod("bad", ns="web", annotations={JDB_MIN: "1", JDB_MAX: "1"}))
    assert (e.value.kind, e.value.namespace, e.value.name) == ("Pod", "web", "bad")
    assert c.get("Pod", "bad", "web") is None
    c.apply(pod("other", ns="web", scheduler="default-scheduler", annotations={JDB_MIN: "0"}))
    stored = c.apply(pod("gpu", ns="ml", scheduler="default-scheduler"))
    assert stored["spec"]["schedulerName"] == "volcano" and stored["spec"]["nodeSelector"] == {"pool": "gpu"}


# === Commands (§1.2) =========================================================================

@pytest.mark.parametrize("cmd, message", [
    ({"action": "AbortJob"}, "target: Required value"),
    ({"target": {"kind": "Job", "name": "j"}}, "action: Required value"),
    ({"action": 3, "target": {"kind": "Job", "name": "j"}}, "action: must be a string, got integer"),
    ({"action": "AbortJob", "target": "j"}, "target: must be an object, got string"),
    ({"action": "AbortJob", "target": {"name": "j"}}, "target.kind: Required value"),
    ({"action": "AbortJob", "target": {"kind": "Pod", "name": "j"}},
     'target.kind: Unsupported value: "Pod": supported values: "Job", "Queue"'),
    ({"action": "AbortJob", "target": {"kind": "Job"}}, "target.name: Required value"),
])
def test_command_well_formed_denies_missing_or_wrong_fields(cmd, message):
    """command_well_formed (§1.2): action and target (a Job or Queue reference) are required
    and typed."""
    obj = {"kind": "Command", "metadata": {"name": "c", "namespace": "ns"}, **cmd}
    assert C.command_well_formed(create(obj)) == message


def test_command_well_formed_allows_job_and_queue_commands():
    """command_well_formed (§1.2): a Job or Queue command passes; DELETE is not checked."""
    assert C.command_well_formed(create(command("AbortJob"))) is None
    assert C.command_well_formed(create(command("OpenQueue", kind="Queue", target="q"))) is None
    assert C.command_well_formed(AdmissionRequest("DELETE", None, command("x"), Lister())) is None


def test_command_action_known_denies_unknown_or_mismatched_actions():
    """command_action_known (§1.2 actions): the action must be one the target's kind takes."""
    assert C.command_action_known(create(command("FooJob"))) == (
        'action: Unsupported value: "FooJob": supported values: "AbortJob", "RestartJob", "RestartTask", '
        '"RestartPod", "RestartPartition", "TerminateJob", "CompleteJob", "ResumeJob" (for a Job target)')
    assert C.command_action_known(create(command("OpenQueue"))) is not None
    assert C.command_action_known(create(command("AbortJob", kind="Queue", target="q"))) == (
        'action: Unsupported value: "AbortJob": supported values: "OpenQueue", "CloseQueue" (for a Queue target)')
    assert C.command_action_known(create(command("SyncJob"))) is not None  # internal, not a command


def test_command_action_known_allows_every_known_action():
    """command_action_known (§1.2 actions): each Job and Queue action passes."""
    for action in C.JOB_ACTIONS:
        assert C.command_action_known(create(command(action))) is None
    for action in C.QUEUE_ACTIONS:
        assert C.command_action_known(create(command(action, kind="Queue", target="q"))) is None


def test_command_target_exists_denies_missing_targets():
    """command_target_exists: the Job in the Command's namespace, or the Queue, must exist."""
    assert C.command_target_exists(create(command("AbortJob"))) == 'target: Not found: Job "j" in namespace "ns"'
    assert C.command_target_exists(create(command("AbortJob"), job("j", ns="elsewhere"))) is not None
    assert C.command_target_exists(create(command("OpenQueue", kind="Queue", target="q"))) == (
        'target: Not found: Queue "q"')


def test_command_target_exists_allows_existing_targets():
    """command_target_exists: an existing Job in the namespace, or an existing Queue."""
    assert C.command_target_exists(create(command("AbortJob"), job("j", ns="ns"))) is None
    assert C.command_target_exists(create(command("CloseQueue", kind="Queue", target="q"), queue("q"))) is None


def test_cluster_command_admission_end_to_end():
    """Commands through volcanic.Cluster: an unknown target is refused with an AdmissionError
    naming the Command and nothing is stored; a known Queue command runs."""
    c = volcanic.Cluster()
    with pytest.raises(volcanic.AdmissionError, match='target: Not found: Job "nope" in namespace "default"') as e:
        c.apply(command("AbortJob", target="nope", ns="default"))
    assert (e.value.kind, e.value.namespace, e.value.name) == ("Command", "default", "cmd")
    assert c.list("Command") == []
    c.apply({"kind": "Queue", "metadata": {"name": "q"}, "spec": {"weight": 1}})
    c.run(1)
    c.apply(command("CloseQueue", kind="Queue", target="q", ns="default"))
    c.run(1)
    assert c.get("Queue", "q")["status"]["state"] == "Closed"
    assert c.errors == []


# === No rule raises on malformed input =======================================================

class BrokenLister:
    """A lister that fails, or answers with junk."""

    def __init__(self, junk: bool) -> None:
        self.junk = junk

    def get(self, kind, name, namespace=None):
        if self.junk:
            return {"metadata": "x", "spec": ["y"], "status": 3}
        raise RuntimeError("lister down")

    def list(self, kind, namespace=None):
        if self.junk:
            return [None, "x", {"metadata": {"name": 5}, "spec": {"parent": 7, "capability": "z"}}]
        raise RuntimeError("lister down")


MALFORMED: list[Any] = [
    {},
    {"metadata": "x", "spec": "x", "status": "x"},
    {"metadata": {"name": 1, "namespace": 2, "annotations": ["a"]}, "spec": None, "status": None},
    {"metadata": {"name": "a", "annotations": {Q.HIERARCHY: 5, Q.HIERARCHY_WEIGHTS: None,
                                               JDB_MIN: 7, P.QUEUE_ALLOCATION_GATE: "true"}},
     "spec": {"parent": {"x": 1}, "capability": ["cpu"], "deserved": {"cpu": None, 3: "1"},
              "guarantee": {"resource": "x"}, "weight": "heavy", "queue": ["q"], "networkTopology": "t",
              "subGroupPolicy": "p", "schedulingGates": "g", "nodeSelector": [1], "tolerations": {},
              "schedulerName": 5},
     "status": {"state": 5, "allocated": {"pods": "many"}}, "action": ["a"], "target": ["t"]},
    {"metadata": {"name": "a"}, "spec": {"guarantee": "x", "subGroupPolicy": [None, 3, {"networkTopology": 1}],
                                         "capability": {"cpu": float("nan")}}, "target": {"kind": 5, "name": []}},
]


def _all_rules():
    conf = AdmissionConf(resource_groups=GROUPS)
    for module in (Q, PG, P, C):
        for rule in [*module.mutators(conf), *module.validators(conf)]:
            yield module.__name__.rsplit(".", 1)[1], rule
    yield "pods", P.pod_queue_allocation_gate


@pytest.mark.parametrize("obj", MALFORMED)
@pytest.mark.parametrize("operation", ["CREATE", "UPDATE", "DELETE"])
def test_no_rule_raises_on_malformed_input(obj, operation):
    """§3 intro: malformed objects (wrong types anywhere, junk or failing listers) are denied
    or passed on, never raised on; a mutator always returns an object."""
    for lister in (Lister(queue("root")), BrokenLister(junk=False), BrokenLister(junk=True)):
        for kind, rule in _all_rules():
            current = dict(copy.deepcopy(obj), kind={"queues": "Queue", "podgroups": "PodGroup",
                                                      "pods": "Pod", "commands": "Command"}[kind])
            request = AdmissionRequest(operation, None if operation == "DELETE" else current,
                                       current if operation != "CREATE" else None, lister)
            result = rule(request)
            assert result is None or isinstance(result, (str, dict)), (rule, result)
