"""Queue admission (reference §3 intro, §3.5; volcanic/admission/queues.py): each rule called
directly, positive and negative, then end to end through volcanic.Cluster. Messages are
Volcano's (pkg/webhooks/admission/queues)."""

from __future__ import annotations

import copy
from typing import Any

from builders import StaticLister as Lister
import pytest
from volcanic.admission import AdmissionConf
from volcanic.admission import queues as Q
from volcanic.admission import volcano_chain
from volcanic.admission.chain import AdmissionRequest

import volcanic

# --- Helpers --------------------------------------------------------------------------------

def queue(name: str, parent: str | None = None, state: str | None = "Open", capability: dict | None = None,
          deserved: dict | None = None, guarantee: dict | None = None, annotations: dict | None = None,
          allocated: dict | None = None, **spec: Any) -> dict:
    q: dict[str, Any] = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                         "metadata": {"name": name}, "spec": {"weight": 1, **spec}}
    if parent is not None:
        q["spec"]["parent"] = parent
    for field, value in (("capability", capability), ("deserved", deserved)):
        if value is not None:
            q["spec"][field] = value
    if guarantee is not None:
        q["spec"]["guarantee"] = {"resource": guarantee}
    if annotations is not None:
        q["metadata"]["annotations"] = annotations
    status = {}
    if state is not None:
        status["state"] = state
    if allocated is not None:
        status["allocated"] = allocated
    if status:
        q["status"] = status
    return q


ROOT = queue("root", reclaimable=False)
DEFAULT = queue("default", parent="root", reclaimable=True)


def create(obj: dict, *stored: dict) -> AdmissionRequest:
    return AdmissionRequest("CREATE", obj, None, Lister(ROOT, DEFAULT, *stored))


def update(obj: dict, old: dict, *stored: dict) -> AdmissionRequest:
    return AdmissionRequest("UPDATE", obj, old, Lister(ROOT, DEFAULT, old, *stored))


def delete(old: dict, *stored: dict) -> AdmissionRequest:
    return AdmissionRequest("DELETE", None, old, Lister(ROOT, DEFAULT, old, *stored))


def chain_of(depth: int) -> list[dict]:
    """Queues q1 (child of root) .. q<depth>, each the parent of the next."""
    return [queue(f"q{i}", parent="root" if i == 1 else f"q{i - 1}") for i in range(1, depth + 1)]


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
             "action": "CloseQueue", "target": {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "name": "q"}})
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


# Hierarchical checks: parent.

def test_queue_parent_not_self_denies_own_name():
    """queue_parent_not_self (§3.5, CREATE or parent change): parent != self."""
    assert Q.queue_parent_not_self(create(queue("a", parent="a"))) == "queue a cannot use itself as parent"
    assert Q.queue_parent_not_self(update(queue("a", parent="a"), queue("a", parent="root"))) == (
        "queue a cannot use itself as parent")


def test_queue_parent_not_self_allows_other_parents():
    """queue_parent_not_self (§3.5): another parent, root, or an unchanged parent pass."""
    assert Q.queue_parent_not_self(create(queue("a", parent="b"), queue("b"))) is None
    assert Q.queue_parent_not_self(create(queue("a", parent="root"))) is None


def test_queue_depth_within_limit_denies_a_sixth_level_and_missing_ancestors():
    """queue_depth_within_limit (§3.5): depth <= --max-queue-depth (5; a child of root is at
    depth 1); an ancestor that does not exist is reported on the way up."""
    chain = chain_of(5)
    assert Q.queue_depth_within_limit(create(queue("q6", parent="q5"), *chain)) == (
        "queue q6 exceeds the maximum allowed depth of 5")
    assert Q.queue_depth_within_limit(create(queue("q3", parent="q2"), *chain_of(2)), max_depth=2) == (
        "queue q3 exceeds the maximum allowed depth of 2")
    assert Q.queue_depth_within_limit(create(queue("c", parent="p"))) == (
        'failed to get parent queue p of queue c: queue.scheduling.volcano.sh "p" not found')
    orphan = queue("p", parent="gone")
    assert Q.queue_depth_within_limit(create(queue("c", parent="p"), orphan)) == (
        'failed to get parent queue gone of queue c: queue.scheduling.volcano.sh "gone" not found')


def test_queue_depth_within_limit_allows_five_levels_and_unchanged_parents():
    """queue_depth_within_limit (§3.5): the fifth level is allowed; an UPDATE that keeps the
    parent is not re-checked."""
    assert Q.queue_depth_within_limit(create(queue("q5", parent="q4"), *chain_of(4))) is None
    deep = queue("q6", parent="q5")
    assert Q.queue_depth_within_limit(update(dict(deep, metadata={"name": "q6", "labels": {}}), deep,
                                             *chain_of(5))) is None


def test_queue_parent_exists_denies_a_missing_parent():
    """queue_parent_exists (§3.5, CREATE or parent change): the parent exists."""
    assert Q.queue_parent_exists(create(queue("c", parent="p"))) == (
        'failed to get parent queue of queue c: queue.scheduling.volcano.sh "p" not found')


def test_queue_parent_exists_allows_existing_parents_and_root():
    """queue_parent_exists (§3.5): an existing parent, root or no parent pass."""
    assert Q.queue_parent_exists(create(queue("c", parent="p"), queue("p", parent="root"))) is None
    assert Q.queue_parent_exists(create(queue("c", parent="root"))) is None
    assert Q.queue_parent_exists(create(queue("c"))) is None


def test_queue_parent_has_no_allocated_pods_denies_a_busy_leaf_parent():
    """queue_parent_has_no_allocated_pods (§3.5): a parent without child queues must have no
    allocated pods (status.allocated["pods"])."""
    busy = queue("team", parent="root", allocated={"cpu": "2", "pods": "2"})
    assert Q.queue_parent_has_no_allocated_pods(create(queue("c", parent="team"), busy)) == (
        "queue team cannot be the parent queue of queue c because it has allocated Pods: 2")
    moved = queue("c", parent="root")
    assert Q.queue_parent_has_no_allocated_pods(update(dict(moved, spec=dict(moved["spec"], parent="team")),
                                                       moved, busy)) is not None


def test_queue_parent_has_no_allocated_pods_allows_idle_leaves_and_existing_parents():
    """queue_parent_has_no_allocated_pods (§3.5): an idle leaf, or a parent that already has
    children (its pods are its children's), may take a child."""
    idle = queue("team", parent="root", allocated={"cpu": "0", "pods": "0"})
    assert Q.queue_parent_has_no_allocated_pods(create(queue("c", parent="team"), idle)) is None
    busy = queue("team", parent="root", allocated={"pods": "3"})
    sibling = queue("s", parent="team")
    assert Q.queue_parent_has_no_allocated_pods(create(queue("c", parent="team"), busy, sibling)) is None


def test_queue_root_resources_unchanged_denies_changing_roots_resources():
    """queue_root_resources_unchanged (§3.5 root protection): an UPDATE of root may not
    change capability, deserved or guarantee."""
    changed = copy.deepcopy(ROOT)
    changed["spec"]["capability"] = {"cpu": "10"}
    assert Q.queue_root_resources_unchanged(update(changed, ROOT)) == (
        "root queue's resource attributes (capability, deserved, guarantee) cannot be modified")
    changed = copy.deepcopy(ROOT)
    changed["spec"]["guarantee"] = {"resource": {"cpu": "1"}}
    assert Q.queue_root_resources_unchanged(update(changed, ROOT)) is not None


def test_queue_root_resources_unchanged_allows_other_changes_and_queues():
    """queue_root_resources_unchanged (§3.5): root's other fields, equal quantities written
    differently, and other queues' resources may change."""
    old = queue("root", capability={"cpu": "2"})
    new = queue("root", capability={"cpu": "2000m"}, weight=5)
    assert Q.queue_root_resources_unchanged(update(new, old)) is None
    assert Q.queue_root_resources_unchanged(update(queue("a", capability={"cpu": "9"}), queue("a"))) is None


def test_root_protection_flag_selects_the_rule():
    """--enable-root-queue-protection (AdmissionConf.root_queue_protection): on by default."""
    assert Q.queue_root_resources_unchanged in Q.validators(AdmissionConf())
    assert Q.queue_root_resources_unchanged not in Q.validators(AdmissionConf(root_queue_protection=False))


# Hierarchical checks: resources.

def test_queue_capability_within_ancestors_denies_more_than_the_nearest_ancestor():
    """queue_capability_within_ancestors (§3.5): child capability <= the nearest ancestor's
    capability for that resource (a parent without one defers to the grandparent)."""
    p = queue("p", parent="root", capability={"cpu": "2", "memory": "4Gi"})
    assert Q.queue_capability_within_ancestors(create(queue("c", parent="p", capability={"cpu": "4"}), p)) == (
        "queue c capability[cpu]=4 exceeds its ancestor's capability=2")
    assert Q.queue_capability_within_ancestors(create(queue("c", parent="p", capability={"memory": "8Gi"}), p)) == (
        "queue c capability[memory]=8Gi exceeds its ancestor's capability=4Gi")
    mid = queue("mid", parent="p")
    assert Q.queue_capability_within_ancestors(create(queue("c", parent="mid", capability={"cpu": "2500m"}),
                                                      p, mid)) == (
        "queue c capability[cpu]=2500m exceeds its ancestor's capability=2")
    assert Q.queue_capability_within_ancestors(create(queue("c", parent="p"))) == (
        'parent queue p not found: queue.scheduling.volcano.sh "p" not found')


def test_queue_capability_within_ancestors_allows_smaller_or_unbounded():
    """queue_capability_within_ancestors (§3.5): within the ancestor's capability, or a
    resource no ancestor bounds, or a child of root."""
    p = queue("p", parent="root", capability={"cpu": "2"})
    c = queue("c", parent="p", capability={"cpu": "2", "nvidia.com/gpu": "8"})
    assert Q.queue_capability_within_ancestors(create(c, p)) is None
    assert Q.queue_capability_within_ancestors(create(queue("c", parent="root", capability={"cpu": "99"}))) is None


def test_queue_siblings_within_parent_denies_sums_above_the_parent():
    """queue_siblings_within_parent (§3.5): Σ siblings' guarantee (this queue included) <=
    the parent's guarantee, and Σ deserved <= the parent's deserved."""
    p = queue("p", parent="root", deserved={"cpu": "4"}, guarantee={"cpu": "2"})
    s = queue("s", parent="p", deserved={"cpu": "3"}, guarantee={"cpu": "1"})
    c = queue("c", parent="p", deserved={"cpu": "2"}, guarantee={"cpu": "1"})
    assert Q.queue_siblings_within_parent(create(c, p, s)) == (
        "parent queue p validation failed: sum of children's deserved (cpu 5000.00, memory 0.00) "
        "exceeds parent's deserved limit (cpu 4000.00, memory 0.00)")
    c = queue("c", parent="p", deserved={"cpu": "1"}, guarantee={"cpu": "1500m"})
    assert Q.queue_siblings_within_parent(create(c, p, s)) == (
        "parent queue p validation failed: sum of children's guarantee (cpu 2500.00, memory 0.00) "
        "exceeds parent's guarantee limit (cpu 2000.00, memory 0.00)")
    gpu = queue("c", parent="p", deserved={"nvidia.com/gpu": "1"})
    assert "sum of children's deserved (cpu 3000.00, memory 0.00, nvidia.com/gpu 1000.00)" in (
        Q.queue_siblings_within_parent(create(gpu, p, s)))


def test_queue_siblings_within_parent_allows_sums_within_the_parent():
    """queue_siblings_within_parent (§3.5): sums equal to the parent's pass; the queue's own
    stored version is replaced by the one sent."""
    p = queue("p", parent="root", deserved={"cpu": "4"}, guarantee={"cpu": "2"})
    s = queue("s", parent="p", deserved={"cpu": "3"}, guarantee={"cpu": "1"})
    c = queue("c", parent="p", deserved={"cpu": "1"}, guarantee={"cpu": "1"})
    assert Q.queue_siblings_within_parent(create(c, p, s)) is None
    old = queue("c", parent="p", deserved={"cpu": "1"})
    assert Q.queue_siblings_within_parent(update(c, old, p, s)) is None


def test_queue_capability_covers_descendants_denies_a_parent_below_its_subtree():
    """queue_capability_covers_descendants (§3.5): a parent's capability >= the largest
    capability in its subtree (looking below children that set none)."""
    old = queue("p", parent="root", capability={"cpu": "8"})
    new = queue("p", parent="root", capability={"cpu": "2"})
    child = queue("c", parent="p", capability={"cpu": "4"})
    assert Q.queue_capability_covers_descendants(update(new, old, child)) == (
        "queue p capability[cpu]=2 is smaller than its descendants' max capability=4")
    mid = queue("mid", parent="p")
    leaf = queue("leaf", parent="mid", capability={"cpu": "6"})
    assert "max capability=6" in Q.queue_capability_covers_descendants(update(new, old, mid, leaf))


def test_queue_capability_covers_descendants_allows_a_large_enough_parent():
    """queue_capability_covers_descendants (§3.5): a capability covering the subtree, or a
    parent without capability, passes."""
    old = queue("p", parent="root", capability={"cpu": "8"})
    child = queue("c", parent="p", capability={"cpu": "4"})
    assert Q.queue_capability_covers_descendants(update(queue("p", parent="root", capability={"cpu": "4"}),
                                                        old, child)) is None
    assert Q.queue_capability_covers_descendants(update(queue("p", parent="root"), old, child)) is None


def test_queue_children_within_parent_denies_shrinking_below_the_children():
    """queue_children_within_parent (§3.5): Σ children's guarantee/deserved <= the queue's."""
    old = queue("p", parent="root", deserved={"cpu": "4"})
    new = queue("p", parent="root", deserved={"cpu": "2"})
    children = [queue("a", parent="p", deserved={"cpu": "2"}), queue("b", parent="p", deserved={"cpu": "1"})]
    assert Q.queue_children_within_parent(update(new, old, *children)) == (
        "queue p validation failed: sum of children's deserved (cpu 3000.00, memory 0.00) "
        "exceeds parent's deserved limit (cpu 2000.00, memory 0.00)")


def test_queue_children_within_parent_allows_enough_room():
    """queue_children_within_parent (§3.5): children within the queue's values pass."""
    old = queue("p", parent="root", deserved={"cpu": "4"})
    new = queue("p", parent="root", deserved={"cpu": "3"})
    children = [queue("a", parent="p", deserved={"cpu": "2"}), queue("b", parent="p", deserved={"cpu": "1"})]
    assert Q.queue_children_within_parent(update(new, old, *children)) is None


def test_hierarchical_resource_checks_run_only_on_create_or_a_relevant_change():
    """§3.5 (needsValidateHierarchicalQueue): an UPDATE that changes none of parent,
    capability, deserved, guarantee skips the resource checks; root never runs them."""
    p = queue("p", parent="root", deserved={"cpu": "1"})
    over = queue("c", parent="p", deserved={"cpu": "5"})  # stored before the parent shrank
    relabelled = copy.deepcopy(over)
    relabelled["metadata"]["labels"] = {"team": "x"}
    relabelled["spec"]["weight"] = 4
    assert Q.queue_siblings_within_parent(update(relabelled, over, p)) is None
    bigger = copy.deepcopy(over)
    bigger["spec"]["deserved"] = {"cpu": "6"}
    assert Q.queue_siblings_within_parent(update(bigger, over, p)) is not None
    root = queue("root", deserved={"cpu": "1"})
    assert Q.queue_children_within_parent(update(root, ROOT, over, p)) is None


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
    """§3.5: the chain's order is Volcano's; --max-queue-depth reaches the depth rule."""
    names = [getattr(r, "__name__", "") for r in Q.validators(AdmissionConf(max_queue_depth=2))]
    assert names == ["queue_well_formed", "queue_quantities_valid", "queue_guarantee_within_deserved",
                     "queue_deserved_within_capability", "queue_state_valid", "queue_hierarchy_annotations_valid",
                     "queue_parent_not_self", "queue_depth_within_limit", "queue_parent_exists",
                     "queue_parent_has_no_allocated_pods", "queue_root_resources_unchanged",
                     "queue_capability_within_ancestors", "queue_siblings_within_parent",
                     "queue_capability_covers_descendants", "queue_children_within_parent",
                     "queue_delete_protected", "queue_delete_without_children"]
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
