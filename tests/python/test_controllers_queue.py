"""The queue controller on a MemoryStore with a virtual clock (reference §2.6): default
queues, status, the state machine, commands and the hierarchy (closing and opening
with the parent)."""

from __future__ import annotations

import pytest

from controller_helpers import Harness
import volcanic
from volcanic.cluster.store import MemoryStore
from volcanic.controllers.queue import QueueController, ensure_default_queues
from volcanic.kube.crds import defaulted
from volcanic.real.manifests import manifests

# ---------------------------------------------------------------------------------------------
# Queue controller (§2.6)

def test_ensure_default_queues_creates_root_and_default_open():
    """§1.4 / DESIGN "Public Python API": root and default exist and are Open from time 0, as
    Volcano's scheduler creates them (pkg/scheduler/cache/cache.go newDefaultAndRootQueue,
    v1.15.1: weight 1, root not reclaimable, default reclaimable, neither with a parent; the
    embedded cluster gave default the parent root until issue "One vocabulary, one table")."""
    store = MemoryStore()
    ensure_default_queues(store)
    ensure_default_queues(store)  # idempotent
    root, default = store.get("Queue", "root"), store.get("Queue", "default")
    assert root["spec"] == {"weight": 1, "reclaimable": False}
    assert default["spec"] == {"weight": 1, "reclaimable": True}
    assert root["status"]["state"] == default["status"]["state"] == "Open"
    assert len(store.list("Queue")) == 2


def test_install_applies_the_queues_the_embedded_cluster_creates():
    """One definition: `volcanic install`'s queues equal the embedded cluster's, field by field
    once the API server has defaulted them with the CRD's schema (but the status and the
    metadata the store fills in)."""
    embedded = {q["metadata"]["name"]: q for q in volcanic.Cluster().list("Queue")}
    installed = {q["metadata"]["name"]: defaulted(q) for q in manifests() if q["kind"] == "Queue"}
    assert set(installed) == set(embedded) == {"root", "default"}
    for name, q in installed.items():
        e = embedded[name]
        assert (q["apiVersion"], q["kind"], q["spec"]) == (e["apiVersion"], e["kind"], e["spec"])
        assert set(q["metadata"]) == {"name"}


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


def test_podgroups_are_counted_by_phase_for_metrics_not_written():
    """§2.6 Sync: PodGroups counted by phase (zero counts omitted) for the metrics; the status
    is written only when its state changes (Volcano's syncQueue applies status.state alone,
    pkg/controllers/queue/queue_controller_action.go), so status.allocated, written by the
    scheduler, is kept and a PodGroup's phase change writes nothing."""
    h = Harness(QueueController)
    h.queue("q1")
    h.settle()
    q = h.store.get("Queue", "q1")
    h.store.update_status(dict(q, status=dict(q["status"], allocated={"cpu": "2"})))
    version = h.store.get("Queue", "q1")["metadata"]["resourceVersion"]
    controller = h.runner.controllers[0]
    for i, phase in enumerate(["Pending", "Pending", "Running", "Inqueue", "Unknown", "Completed"]):
        h.podgroup(f"pg{i}", queue="q1", phase=phase)
    h.podgroup("other", queue="default", phase="Running")
    h.settle()
    assert controller.podgroup_counts("q1") == {"pending": 2, "running": 1, "inqueue": 1, "unknown": 1,
                                                "completed": 1}
    # A phase change and a deletion are counted; a count that drops to 0 is omitted.
    pg = h.store.get("PodGroup", "pg3", "ns")
    h.store.update_status(dict(pg, status={"phase": "Running"}))
    h.store.delete("PodGroup", "pg4", "ns")
    h.settle()
    assert controller.podgroup_counts("q1") == {"pending": 2, "running": 2, "completed": 1}
    assert controller.podgroup_counts("default") == {"running": 1}
    q = h.store.get("Queue", "q1")
    assert q["status"] == {"state": "Open", "allocated": {"cpu": "2"}}
    assert q["metadata"]["resourceVersion"] == version
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
