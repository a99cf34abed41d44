"""Queue admission's hierarchical checks (reference §3.5; volcanic/admission/queues.py and
queue_readers.py): a queue's parent and its resources against ancestors, siblings and
descendants, each rule called directly. Messages are Volcano's
(pkg/webhooks/admission/queues/validate). Builders in admission_queue_helpers.py."""

from __future__ import annotations

import copy

from admission_queue_helpers import ROOT, chain_of, create, queue, update
from volcanic.admission import AdmissionConf
from volcanic.admission import queues as Q

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
