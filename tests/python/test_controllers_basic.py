"""The queue controller, the PodGroup controller and the garbage collector on a MemoryStore
with a virtual clock (reference §2.5, §2.6, §2.7)."""

from __future__ import annotations

import pytest
from volcanic.cluster.clock import VirtualClock
from volcanic.cluster.store import MemoryStore
from volcanic.controllers.gc import GarbageCollector
from volcanic.controllers.podgroup import PodGroupController, min_resources, pod_requests
from volcanic.kube.quantity import format_quantity, parse_quantity
from volcanic.controllers.queue import CLOSED_BY_PARENT, QueueController, ensure_default_queues
from volcanic.controllers.runtime import INDEXES, Context, Runner
from volcanic.errors import AdmissionError
from volcanic.kube.clock import rfc3339
from volcanic.kube.informers import Informers
from volcanic.kube.kinds import KINDS


class Harness:
    """A store, informers, the given controllers and a runner on a virtual clock."""

    def __init__(self, *controllers, scheduler_names=("volcano",), store_class=MemoryStore):
        self.clock = VirtualClock()
        self.store = store_class(clock=self.clock.now)
        ensure_default_queues(self.store)
        self.informers = Informers(self.store, list(KINDS), INDEXES)
        self.ctx = Context(store=self.store, lister=self.informers, clock=self.clock,
                           scheduler_names=scheduler_names)
        self.controllers = [c(self.ctx) for c in controllers]
        self.runner = Runner(self.informers, self.controllers, self.clock)
        self.settle()

    def settle(self):
        self.runner.settle()

    def run(self, seconds):
        """Advances the clock by `seconds`, running timers and controllers."""
        until = self.clock.now() + seconds
        self.settle()
        while self.clock.fire_next(until):
            self.settle()
        self.clock.advance_to(until)
        self.settle()

    # Objects.
    def queue(self, name, **spec):
        return self.store.create({"kind": "Queue", "metadata": {"name": name}, "spec": {"weight": 1, **spec}})

    def set_queue_state(self, name, state):
        q = self.store.get("Queue", name)
        self.store.update_status(dict(q, status=dict(q.get("status") or {}, state=state)))

    def podgroup(self, name, queue="default", phase="Pending", ns="ns"):
        pg = self.store.create({"kind": "PodGroup", "metadata": {"name": name, "namespace": ns},
                                "spec": {"minMember": 1, "queue": queue}})
        return self.store.update_status(dict(pg, status={"phase": phase}))

    def command(self, action, queue, name=None):
        target = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "name": queue,
                  "uid": self.store.get("Queue", queue)["metadata"]["uid"]}
        meta = {"name": name or f"{queue}-{action.lower()}", "namespace": "default"}
        return self.store.create({"kind": "Command", "metadata": meta, "action": action, "target": target})

    def state(self, name):
        return (self.store.get("Queue", name).get("status") or {}).get("state")

    def annotation(self, name, key=CLOSED_BY_PARENT):
        return (self.store.get("Queue", name)["metadata"].get("annotations") or {}).get(key)

    def events(self, reason=None, name=None, ns="default"):
        return [e for e in self.store.list("Event", ns)
                if (reason is None or e["reason"] == reason)
                and (name is None or e["involvedObject"]["name"] == name)]


# ---------------------------------------------------------------------------------------------
# Queue controller (§2.6)

def test_ensure_default_queues_creates_root_and_default_open():
    """§1.4 / DESIGN "Public Python API": root and default exist and are Open from time 0."""
    store = MemoryStore()
    ensure_default_queues(store)
    ensure_default_queues(store)  # idempotent
    root, default = store.get("Queue", "root"), store.get("Queue", "default")
    assert root["spec"] == {"weight": 1, "reclaimable": False}
    assert default["spec"] == {"weight": 1, "reclaimable": True, "parent": "root"}
    assert root["status"]["state"] == default["status"]["state"] == "Open"
    assert len(store.list("Queue")) == 2


def test_ensure_default_queues_keeps_existing_queue():
    """§1.4: only missing queues are created."""
    store = MemoryStore()
    store.create({"kind": "Queue", "metadata": {"name": "default"}, "spec": {"weight": 7}})
    ensure_default_queues(store)
    assert store.get("Queue", "default")["spec"] == {"weight": 7}


def test_new_queue_is_opened_and_parented_to_root():
    """§2.6 Sync: spec.parent is patched to root; state "" counts as Open and is written."""
    h = Harness(QueueController)
    h.queue("q1")
    h.settle()
    q = h.store.get("Queue", "q1")
    assert q["spec"]["parent"] == "root"
    assert q["status"] == {"state": "Open", "allocated": {}}
    assert "parent" not in h.store.get("Queue", "root")["spec"]
    assert h.runner.errors == []


def test_queue_keeps_explicit_parent():
    """§2.6 Sync: only an empty parent is patched."""
    h = Harness(QueueController)
    h.queue("p")
    h.queue("c", parent="p")
    h.settle()
    assert h.store.get("Queue", "c")["spec"]["parent"] == "p"
    assert h.state("c") == "Open"
    assert h.runner.errors == []


def test_status_counts_podgroups_by_phase_and_keeps_allocated():
    """§2.6 Sync: PodGroups counted by phase (zero counts omitted); status.allocated, written
    by the scheduler, is kept."""
    h = Harness(QueueController)
    h.queue("q1")
    h.settle()
    q = h.store.get("Queue", "q1")
    h.store.update_status(dict(q, status=dict(q["status"], allocated={"cpu": "2"})))
    for i, phase in enumerate(["Pending", "Pending", "Running", "Inqueue", "Unknown", "Completed"]):
        h.podgroup(f"pg{i}", queue="q1", phase=phase)
    h.podgroup("other", queue="default", phase="Running")
    h.settle()
    assert h.store.get("Queue", "q1")["status"] == {
        "state": "Open", "allocated": {"cpu": "2"},
        "pending": 2, "running": 1, "inqueue": 1, "unknown": 1, "completed": 1}
    # A phase change and a deletion are counted; a count that drops to 0 is omitted.
    pg = h.store.get("PodGroup", "pg3", "ns")
    h.store.update_status(dict(pg, status={"phase": "Running"}))
    h.store.delete("PodGroup", "pg4", "ns")
    h.settle()
    assert h.store.get("Queue", "q1")["status"] == {
        "state": "Open", "allocated": {"cpu": "2"}, "pending": 2, "running": 2, "completed": 1}
    assert h.store.get("Queue", "default")["status"]["running"] == 1
    assert h.runner.errors == []


# (initial state, has PodGroups, action) -> resulting state; §2.6 state machine table.
STATE_TABLE = [
    ("Open", False, "OpenQueue", "Open"),
    ("Open", False, "CloseQueue", "Closed"),
    ("Open", True, "CloseQueue", "Closing"),
    ("Open", True, "SyncQueue", "Open"),
    ("", True, "SyncQueue", "Open"),
    ("", False, "CloseQueue", "Closed"),
    ("Closed", False, "OpenQueue", "Open"),
    ("Closed", True, "OpenQueue", "Open"),
    ("Closed", True, "CloseQueue", "Closed"),
    ("Closed", True, "SyncQueue", "Closed"),
    ("Closing", True, "OpenQueue", "Open"),
    ("Closing", False, "CloseQueue", "Closed"),
    ("Closing", True, "CloseQueue", "Closing"),
    ("Closing", False, "SyncQueue", "Closed"),
    ("Closing", True, "SyncQueue", "Closing"),
    ("Unknown", True, "OpenQueue", "Open"),
    ("Unknown", False, "CloseQueue", "Closed"),
    ("Unknown", True, "CloseQueue", "Closing"),
    ("Unknown", True, "SyncQueue", "Unknown"),
    ("Unknown", False, "SyncQueue", "Unknown"),
]


@pytest.mark.parametrize("initial,has_pgs,action,expected", STATE_TABLE)
def test_queue_state_machine(initial, has_pgs, action, expected):
    """§2.6 State machine: every row of the table (OpenQueue/CloseQueue through a Command)."""
    h = Harness(QueueController)
    h.queue("q1")
    h.settle()
    if has_pgs:
        h.podgroup("pg", queue="q1", phase="Completed")  # any phase counts as a PodGroup
        h.settle()
    h.set_queue_state("q1", initial)
    h.settle()
    assert h.state("q1") == initial  # a status write alone does not trigger a sync
    if action == "SyncQueue":
        h.controllers[0].queue.add(("q1", "SyncQueue", "OutOfSync"))
    else:
        h.command(action, "q1")
    h.settle()
    assert h.state("q1") == expected
    assert h.runner.errors == []


def test_closing_queue_becomes_closed_when_last_podgroup_goes():
    """§2.6: Closing -> Closed once no PodGroups are left (a PodGroup delete triggers the sync)."""
    h = Harness(QueueController)
    h.queue("q1")
    h.podgroup("pg", queue="q1", phase="Running")
    h.settle()
    h.command("CloseQueue", "q1")
    h.settle()
    assert h.state("q1") == "Closing"
    h.store.delete("PodGroup", "pg", "ns")
    h.settle()
    assert h.state("q1") == "Closed"
    assert h.runner.errors == []


def test_command_is_consumed_once_and_recorded():
    """§1.2 / §2.1 "bus Command" row / §2.6: the Command is deleted, then applied once; the
    close is recorded as a Normal CloseQueue Event "Close queue succeed"."""
    h = Harness(QueueController)
    h.queue("q1")
    h.settle()
    h.command("CloseQueue", "q1")
    h.settle()
    assert h.store.list("Command") == []
    assert h.state("q1") == "Closed"
    events = h.events("CloseQueue", "q1")
    assert [(e["type"], e["message"], e["source"]["component"]) for e in events] == [
        ("Normal", "Close queue succeed", "vc-controller-manager")]
    h.run(10)
    assert len(h.events("CloseQueue", "q1")) == 1  # not applied again
    h.command("OpenQueue", "q1")
    h.settle()
    assert h.store.list("Command") == []
    assert h.state("q1") == "Open"
    assert h.runner.errors == []


def test_command_for_a_job_is_left_alone_and_unknown_action_warns():
    """§2.6: only Commands targeting a Queue are the queue controller's; another action on a
    queue is deleted with a Warning Event (Volcano syncs the queue silently)."""
    h = Harness(QueueController)
    h.store.create({"kind": "Command", "metadata": {"name": "job-cmd", "namespace": "default"},
                    "action": "AbortJob", "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                                                     "name": "j1", "uid": "x"}})
    h.command("AbortJob", "default", name="bad")
    h.settle()
    assert [c["metadata"]["name"] for c in h.store.list("Command")] == ["job-cmd"]
    warnings = h.events("AbortJob", "default")
    assert len(warnings) == 1 and warnings[0]["type"] == "Warning"
    assert h.state("default") == "Open"
    assert h.runner.errors == []


def test_closing_a_parent_closes_and_marks_children_and_opening_reopens_them():
    """§2.6 Hierarchy: closing closes children and marks them closed-by-parent; opening the
    parent re-opens the marked children (Volcano sets the mark to "false"); a child closed
    by hand is left closed."""
    h = Harness(QueueController)
    h.queue("p")
    h.queue("c1", parent="p")
    h.queue("c2", parent="p")
    h.queue("g", parent="c1")
    h.settle()
    h.command("CloseQueue", "c2")
    h.settle()
    h.command("CloseQueue", "p")
    h.settle()
    assert [h.state(n) for n in ("p", "c1", "c2", "g")] == ["Closed"] * 4
    assert h.annotation("c1") == "true" and h.annotation("g") == "true"
    assert h.annotation("c2") is None  # it was closed before its parent
    h.command("OpenQueue", "p")
    h.settle()
    assert [h.state(n) for n in ("p", "c1", "c2", "g")] == ["Open", "Open", "Closed", "Open"]
    assert h.annotation("c1") == "false" and h.annotation("g") == "false"
    assert h.runner.errors == []


def test_closing_parent_with_podgroups_closes_children():
    """§2.6 Hierarchy: a Closing parent also closes its children."""
    h = Harness(QueueController)
    h.queue("p")
    h.queue("c", parent="p")
    h.podgroup("pg", queue="p", phase="Running")
    h.settle()
    h.command("CloseQueue", "p")
    h.settle()
    assert (h.state("p"), h.state("c"), h.annotation("c")) == ("Closing", "Closed", "true")
    assert h.runner.errors == []


def test_new_child_of_a_closed_parent_is_closed():
    """§2.6 Hierarchy (syncHierarchicalQueue): an open queue under a Closed parent is closed
    and marked."""
    h = Harness(QueueController)
    h.queue("p")
    h.settle()
    h.command("CloseQueue", "p")
    h.settle()
    h.queue("c", parent="p")
    h.settle()
    assert (h.state("c"), h.annotation("c")) == ("Closed", "true")
    assert h.runner.errors == []


def test_child_cannot_be_opened_while_parent_is_closed():
    """§2.6 Hierarchy: OpenQueue on a child of a Closed parent fails; it is retried with the
    workqueue back-off (15 times) and then dropped with a Warning OpenQueue Event."""
    h = Harness(QueueController)
    h.queue("p")
    h.queue("c", parent="p")
    h.settle()
    h.command("CloseQueue", "c")
    h.settle()
    h.command("CloseQueue", "p")
    h.settle()
    h.command("OpenQueue", "c")
    h.run(600)
    assert h.state("c") == "Closed"
    warnings = h.events("OpenQueue", "c")
    assert len(warnings) == 1 and warnings[0]["type"] == "Warning"
    assert "because its parent queue p is closing or closed" in warnings[0]["message"]
    assert h.runner.errors == []


def test_child_open_succeeds_once_parent_opens_within_retries():
    """§2.6 Hierarchy: the failed open is retried, so it succeeds after the parent opens."""
    h = Harness(QueueController)
    h.queue("p")
    h.queue("c", parent="p")
    h.settle()
    h.command("CloseQueue", "c")  # closed by hand: opening p does not re-open it
    h.settle()
    h.command("CloseQueue", "p")
    h.settle()
    h.command("OpenQueue", "c")
    h.run(1)
    assert h.state("c") == "Closed"
    h.command("OpenQueue", "p")
    h.run(600)
    assert (h.state("p"), h.state("c")) == ("Open", "Open")
    assert h.events("OpenQueue", "c") == []
    assert h.runner.errors == []


def test_manual_close_clears_closed_by_parent_mark():
    """§2.6 Hierarchy: a CloseQueue Command on a queue closed by its parent clears the mark,
    so re-opening the parent leaves it closed."""
    h = Harness(QueueController)
    h.queue("p")
    h.queue("c", parent="p")
    h.settle()
    h.command("CloseQueue", "p")
    h.settle()
    assert h.annotation("c") == "true"
    h.command("CloseQueue", "c")
    h.settle()
    assert h.annotation("c") == "false"
    h.command("OpenQueue", "p")
    h.settle()
    assert (h.state("p"), h.state("c")) == ("Open", "Closed")
    assert h.runner.errors == []


def test_root_cannot_be_closed():
    """§2.6 (closeHierarchicalQueue): root cannot be closed."""
    h = Harness(QueueController)
    h.command("CloseQueue", "root")
    h.settle()
    assert h.state("root") == "Open" and h.state("default") == "Open"
    assert h.store.list("Command") == []
    assert h.runner.errors == []


# ---------------------------------------------------------------------------------------------
# PodGroup controller (§2.5)

def make_pod(name, ns="ns", scheduler="volcano", annotations=None, labels=None, owners=None, containers=None,
             **spec):
    meta = {"name": name, "namespace": ns}
    if annotations:
        meta["annotations"] = annotations
    if labels:
        meta["labels"] = labels
    if owners:
        meta["ownerReferences"] = owners
    return {"kind": "Pod", "metadata": meta,
            "spec": {"schedulerName": scheduler,
                     "containers": containers or [{"name": "c", "resources": {"requests": {"cpu": "500m",
                                                                                        "memory": "1Gi"}}}],
                     **spec}}


def test_bare_pod_gets_its_own_podgroup():
    """§2.5: podgroup-<pod uid>, minMember 1, minResources = requests, queue default, status
    Pending, a controller ownerReference to the pod; the pod is annotated with its name."""
    h = Harness(PodGroupController)
    pod = h.store.create(make_pod("p1"))
    h.settle()
    uid = pod["metadata"]["uid"]
    pg = h.store.get("PodGroup", f"podgroup-{uid}", "ns")
    assert pg["spec"] == {"minMember": 1, "queue": "default", "minResources": {"cpu": "500m", "memory": "1Gi"}}
    assert pg["status"] == {"phase": "Pending"}
    assert pg["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "p1", "uid": uid,
                                                  "controller": True, "blockOwnerDeletion": True}]
    assert "annotations" not in pg["metadata"] and "labels" not in pg["metadata"]
    assert h.store.get("Pod", "p1", "ns")["metadata"]["annotations"] == {
        "scheduling.k8s.io/group-name": f"podgroup-{uid}"}
    # The PodGroup goes with its pod.
    h.store.delete("Pod", "p1", "ns")
    assert h.store.list("PodGroup") == []
    assert h.runner.errors == []


def test_owned_pods_share_the_owner_podgroup():
    """§2.5: podgroup-<controller owner uid> with the pod's ownerReferences; a second pod of
    the same owner joins it."""
    h = Harness(PodGroupController)
    owners = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid", "controller": True}]
    h.store.create(make_pod("a", owners=owners))
    h.store.create(make_pod("b", owners=owners))
    h.settle()
    [pg] = h.store.list("PodGroup")
    assert pg["metadata"]["name"] == "podgroup-rs-uid"
    assert pg["metadata"]["ownerReferences"] == owners
    for name in ("a", "b"):
        assert h.store.get("Pod", name, "ns")["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == \
            "podgroup-rs-uid"
    assert h.runner.errors == []


def test_pod_with_only_non_controller_owners_gets_its_own_podgroup():
    """§2.5 (GeneratePodgroupName, newPGOwnerReferences): only a controller owner counts."""
    h = Harness(PodGroupController)
    owners = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "cm-uid"}]
    pod = h.store.create(make_pod("a", owners=owners))
    h.settle()
    pg = h.store.get("PodGroup", f"podgroup-{pod['metadata']['uid']}", "ns")
    assert pg["metadata"]["ownerReferences"][0]["kind"] == "Pod"
    assert h.runner.errors == []


def test_queue_priority_class_annotations_labels_and_topology_are_copied():
    """§2.5: queue from the pod annotation, priorityClassName from the pod, preemptable,
    cooldown-time, revocable-zone and jdb-* annotations (jdb-min-available wins),
    preemptable/cooldown-time labels, network-topology annotations as spec.networkTopology."""
    h = Harness(PodGroupController)
    annotations = {"scheduling.volcano.sh/queue-name": "q1", "volcano.sh/preemptable": "false",
                   "volcano.sh/cooldown-time": "60s", "volcano.sh/revocable-zone": "*",
                   "volcano.sh/jdb-min-available": "1", "volcano.sh/jdb-max-unavailable": "2",
                   "volcano.sh/other": "not copied", "volcano.sh/network-topology-highest-tier": "2"}
    labels = {"volcano.sh/preemptable": "true", "app": "x"}
    pod = h.store.create(make_pod("p1", annotations=annotations, labels=labels, priorityClassName="high"))
    h.settle()
    pg = h.store.get("PodGroup", f"podgroup-{pod['metadata']['uid']}", "ns")
    assert pg["spec"]["queue"] == "q1"
    assert pg["spec"]["priorityClassName"] == "high"
    assert pg["spec"]["networkTopology"] == {"mode": "hard", "highestTierAllowed": 2}
    assert pg["metadata"]["annotations"] == {
        "volcano.sh/preemptable": "false", "volcano.sh/cooldown-time": "60s", "volcano.sh/revocable-zone": "*",
        "volcano.sh/jdb-min-available": "1"}
    assert pg["metadata"]["labels"] == {"volcano.sh/preemptable": "true"}
    assert h.runner.errors == []


def test_pods_of_other_schedulers_or_with_a_group_are_ignored():
    """§2.5: only pods of the configured scheduler names without a group-name annotation."""
    h = Harness(PodGroupController, scheduler_names=("volcano", "other-volcano"))
    h.store.create(make_pod("default-sched", scheduler="default-scheduler"))
    h.store.create(make_pod("grouped", annotations={"scheduling.k8s.io/group-name": "pg1"}))
    h.store.create(make_pod("second", scheduler="other-volcano"))
    h.settle()
    pgs = h.store.list("PodGroup")
    assert len(pgs) == 1 and pgs[0]["metadata"]["ownerReferences"][0]["name"] == "second"
    assert "annotations" not in h.store.get("Pod", "default-sched", "ns")["metadata"]
    assert h.runner.errors == []


class DenyingStore(MemoryStore):
    """A store whose admission denies PodGroups in a queue that does not exist (§3.4)."""

    def create(self, obj):
        queue = (obj.get("spec") or {}).get("queue")
        if obj.get("kind") == "PodGroup" and self.get("Queue", queue) is None:
            raise AdmissionError(f"unable to find job queue: {queue}", kind="PodGroup")
        return super().create(obj)


def test_denied_podgroup_is_retried_with_back_off():
    """§2.5: a failed PodGroup create (here an admission denial) is requeued with the rate
    limiter's back-off until it succeeds; the pod is annotated only then."""
    h = Harness(PodGroupController, store_class=DenyingStore)
    pod = h.store.create(make_pod("p1", annotations={"scheduling.volcano.sh/queue-name": "later"}))
    h.run(5)
    assert h.store.list("PodGroup") == []
    assert "scheduling.k8s.io/group-name" not in h.store.get("Pod", "p1", "ns")["metadata"]["annotations"]
    h.queue("later")
    h.run(30)
    assert h.store.get("PodGroup", f"podgroup-{pod['metadata']['uid']}", "ns")["spec"]["queue"] == "later"
    assert h.runner.errors == []



def test_denied_podgroup_back_off_is_capped_and_never_overflows():
    """§2.5: the rate limiter's back-off (5 ms doubling, at most 1000 s) goes on for as long
    as the denial lasts; a thousand failures and more must neither overflow (2**n as a float)
    nor stop the retries."""
    h = Harness(PodGroupController, store_class=DenyingStore)
    pod = h.store.create(make_pod("p1", annotations={"scheduling.volcano.sh/queue-name": "later"}))
    h.run(1_100_000)  # > 1024 retries at the 1000 s cap
    assert h.store.list("PodGroup") == []
    assert h.runner.errors == []
    h.queue("later")
    h.run(1000)
    assert h.store.get("PodGroup", f"podgroup-{pod['metadata']['uid']}", "ns") is not None
    assert h.runner.errors == []


def test_controllers_have_no_unused_kinds_attribute():
    """The runtime's Controller has no `kinds` (the informers watch every kind): the
    controllers do not declare one nobody reads."""
    for controller in (QueueController, PodGroupController, GarbageCollector):
        assert not hasattr(controller, "kinds")

def test_min_resources_follow_kubernetes_pod_requests():
    """§2.5 minResources = pod requests x minMember (util.CalTaskRequests: quota's
    PodUsageFunc): containers summed, a missing request defaulted from its limit, at least
    the largest init container, sidecars added, overhead added, extended resources kept,
    untracked resources dropped, nothing for a terminal pod."""
    pod = make_pod("p", containers=[
        {"name": "a", "resources": {"requests": {"cpu": "250m", "memory": "512Mi"},
                                    "limits": {"nvidia.com/gpu": "1", "memory": "1Gi"}}},
        {"name": "b", "resources": {"limits": {"cpu": "1", "memory": "512Mi"}, "requests": {"pods": "1"}}},
    ], initContainers=[
        {"name": "init", "resources": {"requests": {"cpu": "2", "memory": "100Mi"}}},
        {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
    ], overhead={"memory": "1Mi"})
    # cpu: max(250m + 1 + 100m, 2) = 2; memory: 512Mi + 512Mi + 1Mi (the init's 100Mi is less)
    assert {k: format_quantity(v) for k, v in pod_requests(pod).items()} == {
        "cpu": "2", "memory": "1025Mi", "nvidia.com/gpu": "1"}
    assert min_resources(pod, 3) == {"cpu": "6", "memory": "3075Mi", "nvidia.com/gpu": "3"}
    assert min_resources(pod, 0) == {}
    assert pod_requests(dict(pod, status={"phase": "Succeeded"})) == {}


def test_quantity_canonical_form():
    """§2.5 minResources are Kubernetes quantities in their canonical form."""
    cases = {"0.5": "500m", "1500": "1500", "2000": "2k", "1.5Gi": "1536Mi", "1024Ki": "1Mi",
             "100Ki": "100Ki", "1e3": "1e3", "0": "0", "512": "512", "1Mi": "1Mi", "1000M": "1G"}
    for text, canonical in cases.items():
        assert format_quantity(parse_quantity(text)) == canonical, text
    value, fmt = parse_quantity("512Mi")
    assert format_quantity((value * 2, fmt)) == "1Gi"
    with pytest.raises(ValueError):
        parse_quantity("1.5.3")


# ---------------------------------------------------------------------------------------------
# Garbage collector (§2.7)

def make_job(h, name, ttl=None, phase="Running", finished_at=None):
    spec = {"minAvailable": 1, "tasks": []}
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    job = h.store.create({"kind": "Job", "metadata": {"name": name, "namespace": "ns"}, "spec": spec})
    state = {"phase": phase}
    if finished_at is not None:
        state["lastTransitionTime"] = rfc3339(h.clock.start + finished_at)
    return h.store.update_status(dict(job, status={"state": state}))


def job_pod(h, job, name):
    owner = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": job["metadata"]["name"],
             "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    return h.store.create(make_pod(name, owners=[owner], annotations={"scheduling.k8s.io/group-name": "x"}))


def test_gc_deletes_finished_job_after_ttl_with_its_pods():
    """§2.7: expireAt = lastTransitionTime + TTL; requeued until then, then deleted (with
    its pods, by ownerReference cascade)."""
    h = Harness(GarbageCollector)
    h.run(10)
    job = make_job(h, "j1", ttl=100, phase="Completed", finished_at=10)
    job_pod(h, job, "j1-task-0")
    h.run(99)  # t = 109
    assert h.store.get("Job", "j1", "ns") is not None
    h.run(1)  # t = 110
    assert h.store.get("Job", "j1", "ns") is None
    assert h.store.list("Pod") == []
    assert h.runner.errors == []


@pytest.mark.parametrize("phase", ["Failed", "Terminated"])
def test_gc_deletes_failed_and_terminated_jobs(phase):
    """§2.7: Failed and Terminated count as finished; an already expired job goes at once."""
    h = Harness(GarbageCollector)
    h.run(50)
    make_job(h, "j1", ttl=0, phase=phase, finished_at=50)
    make_job(h, "j2", ttl=10, phase=phase, finished_at=0)
    h.settle()
    assert h.store.list("Job") == []
    assert h.runner.errors == []


def test_gc_keeps_running_jobs_and_jobs_without_ttl():
    """§2.7: only jobs with ttlSecondsAfterFinished and a finished phase are collected."""
    h = Harness(GarbageCollector)
    make_job(h, "running", ttl=1, phase="Running", finished_at=0)
    make_job(h, "no-ttl", phase="Completed", finished_at=0)
    make_job(h, "aborted", ttl=1, phase="Aborted", finished_at=0)
    h.run(1000)
    assert sorted(j["metadata"]["name"] for j in h.store.list("Job")) == ["aborted", "no-ttl", "running"]
    assert h.runner.errors == []


def test_gc_rechecks_the_latest_job_before_deleting():
    """§2.7: the job is re-read and re-checked; a job that restarted before its TTL expired
    is not deleted, and a longer TTL postpones the deletion."""
    h = Harness(GarbageCollector)
    make_job(h, "restarted", ttl=100, phase="Completed", finished_at=0)
    make_job(h, "longer", ttl=100, phase="Completed", finished_at=0)
    h.run(50)
    j = h.store.get("Job", "restarted", "ns")
    h.store.update_status(dict(j, status={"state": {"phase": "Running", "lastTransitionTime": rfc3339(h.clock.start + 50)}}))
    j = h.store.get("Job", "longer", "ns")
    h.store.update(dict(j, spec=dict(j["spec"], ttlSecondsAfterFinished=200)))
    h.run(100)  # t = 150
    assert sorted(j["metadata"]["name"] for j in h.store.list("Job")) == ["longer", "restarted"]
    h.run(50)  # t = 200
    assert [j["metadata"]["name"] for j in h.store.list("Job")] == ["restarted"]
    assert h.runner.errors == []
