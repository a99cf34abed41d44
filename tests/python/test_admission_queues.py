"""Queue admission (reference §3 intro, §3.5; volcanic/admission/queues.py): each rule called
directly, positive and negative, then end to end through volcanic.Cluster. Messages are
Volcano's (pkg/webhooks/admission/queues). The hierarchical checks are in
test_admission_queue_hierarchy.py; builders in admission_queue_helpers.py."""

from __future__ import annotations

from typing import Any

import pytest

from admission_queue_helpers import DEFAULT, ROOT, chain_of, create, delete, queue, update
import volcanic
from volcanic.admission import AdmissionConf, volcano_chain
from volcanic.admission import queues as Q

# --- Mutation ---------------------------------------------------------------------------------

def test_queue_hierarchy_root_prefix_prefixes_root_and_weight_1():
    """queue_hierarchy_root_prefix (§3.5 mutate): both hierarchy annotations set and the path
    not starting with "root" -> "root/" and "1/" are prefixed."""
    q = queue("dev", annotations={Q.HIERARCHY: "sci/dev", Q.HIERARCHY_WEIGHTS: "2/3"})
    out = Q.queue_hierarchy_root_prefix(create(q))
    assert out["metadata"]["annotations"] == {Q.HIERARCHY: "root/sci/dev", Q.HIERARCHY_WEIGHTS: "1/2/3"}
    assert q["metadata"]["annotations"][Q.HIERARCHY] == "sci/dev"  # the request's object is not changed


def test_queue_hierarchy_root_prefix_leaves_rooted_partial_and_updates_alone():
    """queue_hierarchy_root_prefix (§3.5 mutate): nothing when the path starts with "root",
    when only one annotation is set, or on UPDATE."""
    rooted = queue("dev", annotations={Q.HIERARCHY: "root/dev", Q.HIERARCHY_WEIGHTS: "1/3"})
    assert Q.queue_hierarchy_root_prefix(create(rooted)) == rooted
    partial = queue("dev", annotations={Q.HIERARCHY: "sci/dev"})
    assert Q.queue_hierarchy_root_prefix(create(partial)) == partial
    q = queue("dev", annotations={Q.HIERARCHY: "sci/dev", Q.HIERARCHY_WEIGHTS: "2/3"})
    assert Q.queue_hierarchy_root_prefix(update(q, q)) == q


def test_queue_reclaimable_default_sets_true_only_when_unset():
    """queue_reclaimable_default (§3.5 mutate): reclaimable nil -> true; false stays false."""
    assert Q.queue_reclaimable_default(create(queue("a")))["spec"]["reclaimable"] is True
    assert Q.queue_reclaimable_default(create(queue("a", reclaimable=False)))["spec"]["reclaimable"] is False
    no_spec = {"kind": "Queue", "metadata": {"name": "a"}}
    assert Q.queue_reclaimable_default(create(no_spec))["spec"] == {"reclaimable": True}
    assert "reclaimable" not in Q.queue_reclaimable_default(update(queue("a"), queue("a")))["spec"]


def test_queue_weight_default_turns_0_and_unset_into_1():
    """queue_weight_default (§3.5 mutate): weight 0 (or unset) -> 1; other weights stay."""
    assert Q.queue_weight_default(create(queue("a", weight=0)))["spec"]["weight"] == 1
    q = queue("a")
    del q["spec"]["weight"]
    assert Q.queue_weight_default(create(q))["spec"]["weight"] == 1
    assert Q.queue_weight_default(create(queue("a", weight=7)))["spec"]["weight"] == 7
    assert Q.queue_weight_default(update(queue("a", weight=0), queue("a")))["spec"]["weight"] == 0


# --- Validation: CREATE and UPDATE ------------------------------------------------------------

@pytest.mark.parametrize("spec, message", [
    ({"weight": "x"}, "spec.weight: must be an integer, got string"),
    ({"weight": 2 ** 31}, "spec.weight: Invalid value: 2147483648: must fit in a 32-bit integer"),
    ({"parent": ["a"]}, "spec.parent: must be a string, got array"),
    ({"reclaimable": "yes"}, "spec.reclaimable: must be a boolean, got string"),
    ({"capability": ["cpu"]}, "spec.capability: must be an object, got array"),
    ({"deserved": {"cpu": "lots"}}, "spec.deserved.cpu: quantities must match the regular expression"),
    ({"guarantee": {"resource": {"memory": True}}}, "spec.guarantee.resource.memory: quantities must match"),
])
def test_queue_well_formed_denies_wrong_types_naming_the_field(spec, message):
    """queue_well_formed (§3 intro, the CRD schema): a field of the wrong type is denied with
    a message naming it."""
    q = queue("a")
    q["spec"].update(spec)
    assert message in Q.queue_well_formed(create(q))


def test_queue_well_formed_allows_a_typed_queue_and_leaves_non_objects_to_the_api_server():
    """queue_well_formed (§3 intro): a well-typed queue passes; a spec that is not an object
    is the API server's to refuse (it names the field), so the rule lets it through."""
    assert Q.queue_well_formed(create(queue("a", capability={"cpu": 2, "memory": "1Gi"}, parent="root"))) is None
    assert Q.queue_well_formed(create({"kind": "Queue", "metadata": {"name": "a"}, "spec": "x"})) is None
    assert Q.queue_well_formed(delete(queue("a"))) is None


def test_queue_quantities_valid_denies_negative_and_fractional_counts():
    """queue_quantities_valid (§3.5): quantities may not be negative; pods and extended
    resources must be whole numbers (Kubernetes' ValidateResourceQuantityValue)."""
    q = queue("a", capability={"cpu": "-1"})
    assert Q.queue_quantities_valid(create(q)) == (
        'requestBody.spec.capability.cpu: Invalid value: "-1": must be greater than or equal to 0')
    q = queue("a", deserved={"nvidia.com/gpu": "500m"}, guarantee={"memory": "-1Gi"})
    assert Q.queue_quantities_valid(create(q)) == (
        '[requestBody.spec.deserved.nvidia.com/gpu: Invalid value: "500m": must be an integer, '
        'requestBody.spec.guarantee.resource.memory: Invalid value: "-1Gi": must be greater than or equal to 0]')


def test_queue_quantities_valid_allows_valid_quantities():
    """queue_quantities_valid (§3.5): fractional cpu and whole extended resources are valid."""
    q = queue("a", capability={"cpu": "500m", "nvidia.com/gpu": 2, "pods": "10"}, deserved={"cpu": "0"})
    assert Q.queue_quantities_valid(create(q)) is None


def test_queue_guarantee_within_deserved_denies_missing_or_smaller_deserved():
    """queue_guarantee_within_deserved (§3.5): deserved[r] must exist and be >= guarantee[r]."""
    q = queue("a", guarantee={"cpu": "2"})
    assert Q.queue_guarantee_within_deserved(create(q)) == (
        'requestBody.spec.deserved.cpu: Invalid value: "<nil>": deserved[cpu] must be >= guarantee[cpu]=2')
    q = queue("a", guarantee={"cpu": "2000m"}, deserved={"cpu": "1500m"})
    assert Q.queue_guarantee_within_deserved(create(q)) == (
        'requestBody.spec.deserved.cpu: Invalid value: "1500m": deserved[cpu]=1500m must be >= guarantee[cpu]=2')


def test_queue_guarantee_within_deserved_allows_enough_deserved():
    """queue_guarantee_within_deserved (§3.5): deserved equal to guarantee is enough."""
    q = queue("a", guarantee={"cpu": "2", "memory": "1Gi"}, deserved={"cpu": "2", "memory": "2Gi"})
    assert Q.queue_guarantee_within_deserved(create(q)) is None


def test_queue_deserved_within_capability_denies_deserved_above_capability():
    """queue_deserved_within_capability (§3.5): deserved[r] <= capability[r]."""
    q = queue("a", capability={"cpu": "2"}, deserved={"cpu": "3"})
    assert Q.queue_deserved_within_capability(create(q)) == (
        'requestBody.spec.deserved.cpu: Invalid value: "3": deserved[cpu]=3 must be <= capability[cpu]=2')


def test_queue_deserved_within_capability_ignores_unlimited_resources():
    """queue_deserved_within_capability (§3.5): a resource without a capability is unlimited."""
    q = queue("a", capability={"cpu": "2"}, deserved={"cpu": "2", "memory": "64Gi"})
    assert Q.queue_deserved_within_capability(create(q)) is None


def test_queue_state_valid_denies_other_states():
    """queue_state_valid (§3.5): status.state, if set, is Open or Closed."""
    assert Q.queue_state_valid(create(queue("a", state="wrong"))) == (
        'requestBody.spec.state: Invalid value: "wrong": queue state must be in [Open Closed]')
    closing, opened = queue("a", state="Closing"), queue("a", state="Open")
    assert "queue state must be in [Open Closed]" in Q.queue_state_valid(update(closing, opened))


def test_an_update_of_a_closing_queue_is_not_denied_for_the_state_it_already_has():
    """Issue "Hardening", defect 8: the queue controller keeps a queue Closing while it has
    jobs; Volcano then denies every update of it for that state (volcano#3517), a field the
    user did not send. volcanic checks an UPDATE's state only when it changes."""
    closing = queue("a", state="Closing")
    assert Q.queue_state_valid(update(closing, closing)) is None
    c = volcanic.Cluster()
    c.apply(queue("q", weight=1))
    c.run(0)
    c.apply({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
             "spec": {"schedulerName": "volcano", "queue": "q", "minAvailable": 1, "tasks": [{"name": "t", "replicas": 1,
                      "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}]}})
    c.run(0)
    c.apply({"apiVersion": "bus.volcano.sh/v1alpha1", "kind": "Command", "metadata": {"name": "close", "namespace": "default"},
             "action": "CloseQueue", "target": {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "name": "q",
                                                "uid": c.get("Queue", "q")["metadata"]["uid"]}})
    c.run(0)
    assert c.get("Queue", "q")["status"]["state"] == "Closing"  # a job is still in it
    q = c.get("Queue", "q")
    q["spec"]["weight"] = 5
    assert c.apply(q)["spec"]["weight"] == 5


def test_queue_state_valid_allows_open_closed_and_unset():
    """queue_state_valid (§3.5): Open, Closed and no state pass."""
    for state in ("Open", "Closed", None, ""):
        assert Q.queue_state_valid(create(queue("a", state=state))) is None


def test_queue_hierarchy_annotations_valid_denies_bad_annotations():
    """queue_hierarchy_annotations_valid (§3.5): same number of segments, weights numbers > 0,
    no path that is a prefix of another queue's."""
    def q(h, w):
        return queue("a", annotations={Q.HIERARCHY: h, Q.HIERARCHY_WEIGHTS: w})
    assert Q.queue_hierarchy_annotations_valid(create(q("root/a", "1"))) == (
        'requestBody.metadata.annotations: Invalid value: "root/a": '
        "volcano.sh/hierarchy must have the same length with volcano.sh/hierarchy-weights")
    assert Q.queue_hierarchy_annotations_valid(create(q("root/a", "1/x"))) == (
        'requestBody.metadata.annotations: Invalid value: "1/x": x in the 1/x is invalid number: '
        'strconv.ParseFloat: parsing "x": invalid syntax')
    assert Q.queue_hierarchy_annotations_valid(create(q("root/a", "1/0"))) == (
        'requestBody.metadata.annotations: Invalid value: "1/0": 0 in the 1/0 must be larger than 0')
    dev = queue("dev", annotations={Q.HIERARCHY: "root/sci/dev", Q.HIERARCHY_WEIGHTS: "1/1/1"})
    sci = queue("sci", annotations={Q.HIERARCHY: "root/sci", Q.HIERARCHY_WEIGHTS: "1/1"})
    assert Q.queue_hierarchy_annotations_valid(create(sci, dev)) == (
        'requestBody.metadata.annotations: Invalid value: "root/sci": '
        "root/sci is not allowed to be in the sub path of root/sci/dev of queue dev")


def test_queue_hierarchy_annotations_valid_allows_good_annotations():
    """queue_hierarchy_annotations_valid (§3.5): a path sharing only a name prefix with
    another (root/sci vs root/scidev) is fine, as are queues without the annotations."""
    scidev = queue("scidev", annotations={Q.HIERARCHY: "root/scidev", Q.HIERARCHY_WEIGHTS: "1/1"})
    sci = queue("sci", annotations={Q.HIERARCHY: "root/sci", Q.HIERARCHY_WEIGHTS: "1/2.5"})
    assert Q.queue_hierarchy_annotations_valid(create(sci, scidev)) is None
    assert Q.queue_hierarchy_annotations_valid(create(queue("plain"))) is None


# --- Validation: DELETE -------------------------------------------------------------------

def test_queue_delete_protected_denies_root_and_default():
    """queue_delete_protected (§3.5 DELETE): default and root cannot be deleted."""
    assert Q.queue_delete_protected(delete(DEFAULT)) == "`default` queue can not be deleted"
    assert Q.queue_delete_protected(delete(ROOT)) == "`root` queue can not be deleted"


def test_queue_delete_protected_allows_other_queues():
    """queue_delete_protected (§3.5 DELETE): any other queue may go."""
    assert Q.queue_delete_protected(delete(queue("a"))) is None
    assert Q.queue_delete_protected(create(DEFAULT)) is None


def test_queue_delete_without_allocated_pods_denies_a_busy_queue():
    """queue_delete_without_allocated_pods (§3.5, --enable-queue-allocated-pods-check)."""
    busy = queue("a", allocated={"pods": "3", "cpu": "3"})
    assert Q.queue_delete_without_allocated_pods(delete(busy)) == (
        "queue a cannot be deleted because it has allocated Pods: 3")


def test_queue_delete_without_allocated_pods_allows_an_idle_queue_and_is_off_by_default():
    """queue_delete_without_allocated_pods (§3.5): no allocated pods pass; the flag is off by
    default, so the rule is not in the chain."""
    assert Q.queue_delete_without_allocated_pods(delete(queue("a", allocated={"pods": "0"}))) is None
    assert Q.queue_delete_without_allocated_pods(delete(queue("a"))) is None
    assert Q.queue_delete_without_allocated_pods not in Q.validators(AdmissionConf())
    assert Q.queue_delete_without_allocated_pods in Q.validators(AdmissionConf(queue_allocated_pods_check=True))


def test_queue_delete_without_children_denies_a_parent():
    """queue_delete_without_children (§3.5 DELETE): a queue with child queues cannot go."""
    p = queue("p", parent="root")
    assert Q.queue_delete_without_children(delete(p, queue("b", parent="p"), queue("a", parent="p"))) == (
        "queue p can not be deleted because it has 2 child queues: a, b")


def test_queue_delete_without_children_allows_a_leaf():
    """queue_delete_without_children (§3.5 DELETE): a leaf queue may go."""
    assert Q.queue_delete_without_children(delete(queue("p", parent="root"), queue("x", parent="root"))) is None


def test_validators_follow_volcanos_order_and_bind_the_depth_flag():
    """§3.5: the chain's order is Volcano's (then volcanic's own job-order rule);
    --max-queue-depth reaches the depth rule."""
    names = [getattr(r, "__name__", "") for r in Q.validators(AdmissionConf(max_queue_depth=2))]
    assert names == ["queue_well_formed", "queue_quantities_valid", "queue_guarantee_within_deserved",
                     "queue_deserved_within_capability", "queue_state_valid", "queue_hierarchy_annotations_valid",
                     "queue_parent_not_self", "queue_depth_within_limit", "queue_parent_exists",
                     "queue_parent_has_no_allocated_pods", "queue_root_resources_unchanged",
                     "queue_capability_within_ancestors", "queue_siblings_within_parent",
                     "queue_capability_covers_descendants", "queue_children_within_parent",
                     "queue_delete_protected", "queue_delete_without_children",
                     "queue_job_order_valid"]  # volcanic's own, after Volcano's chain
    depth = Q.validators(AdmissionConf(max_queue_depth=2))[7]
    assert depth(create(queue("q3", parent="q2"), *chain_of(2))) == "queue q3 exceeds the maximum allowed depth of 2"
    assert [r.__name__ for r in Q.mutators(AdmissionConf())] == [
        "queue_hierarchy_root_prefix", "queue_reclaimable_default", "queue_weight_default"]


# --- End to end through volcanic.Cluster ---------------------------------------------------

@pytest.fixture
def cluster():
    c = volcanic.Cluster()
    yield c
    assert c.errors == []


def q_obj(name: str, **spec: Any) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": spec}


def test_cluster_denies_an_invalid_queue_and_stores_nothing(cluster):
    """§3.5 through Cluster.apply: AdmissionError names the Queue; nothing of the apply is stored."""
    with pytest.raises(volcanic.AdmissionError) as e:
        cluster.apply([q_obj("ok"), q_obj("bad", capability={"cpu": "-2"})])
    assert str(e.value) == 'requestBody.spec.capability.cpu: Invalid value: "-2": must be greater than or equal to 0'
    assert (e.value.kind, e.value.namespace, e.value.name) == ("Queue", None, "bad")
    assert cluster.get("Queue", "ok") is None and cluster.get("Queue", "bad") is None


def test_cluster_queue_defaults_and_the_controllers_parent_patch_pass(cluster):
    """§3.5 mutate, and the queue controller's spec.parent=root patch (an UPDATE) is admitted."""
    cluster.apply(q_obj("team"))
    stored = cluster.get("Queue", "team")
    assert stored["spec"]["weight"] == 1 and stored["spec"]["reclaimable"] is True
    cluster.run(1)
    assert cluster.get("Queue", "team")["spec"]["parent"] == "root"
    assert cluster.get("Queue", "team")["status"]["state"] == "Open"


def test_cluster_delete_protects_root_default_and_parents(cluster):
    """§3.5 DELETE through Cluster.delete: root and default stay; a parent goes only after
    its children."""
    for name in ("default", "root"):
        with pytest.raises(volcanic.AdmissionError, match=f"`{name}` queue can not be deleted") as e:
            cluster.delete("Queue", name)
        assert (e.value.kind, e.value.name) == ("Queue", name)
        assert cluster.get("Queue", name) is not None
    cluster.apply([q_obj("p", parent="root", capability={"cpu": "4"}), q_obj("c", parent="p")])
    cluster.run(1)
    with pytest.raises(volcanic.AdmissionError, match="queue p can not be deleted because it has 1 child queues: c"):
        cluster.delete("Queue", "p")
    cluster.delete("Queue", "c")
    cluster.delete("Queue", "p")
    assert cluster.get("Queue", "p") is None


def test_cluster_hierarchical_queue_checks(cluster):
    """§3.5 hierarchical checks through the cluster: capability against the parent, the
    siblings' deserved sum, the depth limit, and root protection."""
    cluster.apply(q_obj("p", parent="root", capability={"cpu": "8"}, deserved={"cpu": "4"}))
    cluster.apply(q_obj("a", parent="p", capability={"cpu": "8"}, deserved={"cpu": "3"}))
    with pytest.raises(volcanic.AdmissionError, match=r"queue b capability\[cpu\]=16 exceeds its ancestor's"):
        cluster.apply(q_obj("b", parent="p", capability={"cpu": "16"}))
    with pytest.raises(volcanic.AdmissionError, match="sum of children's deserved"):
        cluster.apply(q_obj("b", parent="p", deserved={"cpu": "2"}))
    cluster.apply(q_obj("b", parent="p", deserved={"cpu": "1"}))
    for i in range(3, 6):  # p(1) a(2) l3 l4 l5
        cluster.apply(q_obj(f"l{i}", parent="a" if i == 3 else f"l{i - 1}"))
    with pytest.raises(volcanic.AdmissionError, match="queue l6 exceeds the maximum allowed depth of 5"):
        cluster.apply(q_obj("l6", parent="l5"))
    root = cluster.get("Queue", "root")
    root["spec"]["capability"] = {"cpu": "100"}
    with pytest.raises(volcanic.AdmissionError, match="root queue's resource attributes"):
        cluster.apply(root)
    cluster.run(1)
    assert cluster.get("Queue", "l5")["status"]["state"] == "Open"


def _busy_cluster(conf: AdmissionConf | None = None) -> volcanic.Cluster:
    chain = volcano_chain(conf) if conf is not None else None
    c = volcanic.Cluster(admission=chain)
    c.apply([{"kind": "Node", "metadata": {"name": "n1"},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
             q_obj("team", parent="root")])
    c.run(1)
    c.apply([{"kind": "PodGroup", "metadata": {"name": "pg", "namespace": "default"},
              "spec": {"minMember": 1, "queue": "team"}},
             {"kind": "Pod", "metadata": {"name": "p", "namespace": "default",
                                          "annotations": {"scheduling.k8s.io/group-name": "pg",
                                                          "volcanic/sim-duration": "1h"}},
              "spec": {"schedulerName": "volcano",
                       "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}])
    c.run(3)
    assert c.get("Queue", "team")["status"]["allocated"]["pods"] == "1"
    return c


def test_cluster_a_busy_leaf_cannot_become_a_parent():
    """§3.5 (parent with no children has no allocated pods): read from the status.allocated
    the scheduler writes."""
    c = _busy_cluster()
    with pytest.raises(volcanic.AdmissionError,
                       match="queue team cannot be the parent queue of queue sub because it has allocated Pods: 1"):
        c.apply(q_obj("sub", parent="team"))
    c.delete("Queue", "team")  # the allocated-pods check on delete is off by default
    assert c.errors == []


def test_cluster_allocated_pods_check_on_delete():
    """§3.5 DELETE with --enable-queue-allocated-pods-check."""
    c = _busy_cluster(AdmissionConf(scheduler_names=("volcano",), queue_allocated_pods_check=True))
    with pytest.raises(volcanic.AdmissionError, match="queue team cannot be deleted because it has allocated Pods: 1"):
        c.delete("Queue", "team")
    assert c.get("Queue", "team") is not None
