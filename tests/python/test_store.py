"""The embedded object store: Kubernetes API semantics (uid, resourceVersion, generation,
status subresource, optimistic concurrency, finalizers, cascading deletion, watch)."""

from __future__ import annotations

import pytest

import volcanic
from volcanic.cluster.store import MemoryStore
from volcanic.kube.clock import EPOCH
from volcanic.kube.errors import AlreadyExists, Conflict, NotFound
from volcanic.kube.objects import clone


def _cm(name, data=None, ns="default", **meta):
    return {"kind": "ConfigMap", "metadata": {"name": name, "namespace": ns, **meta}, "data": data or {}}


def _pod(name, owner=None, **meta):
    p = {"kind": "Pod", "metadata": {"name": name, **meta}, "spec": {"containers": []},
         "status": {"phase": "Running"}}
    if owner:
        p["metadata"]["ownerReferences"] = [{"kind": owner["kind"], "name": owner["metadata"]["name"],
                                             "uid": owner["metadata"]["uid"]}]
    return p


def test_create_fills_metadata_from_the_clock_and_ignores_status():
    now = [EPOCH + 90.0]
    s = MemoryStore(clock=lambda: now[0])
    p = s.create(_pod("p"))
    meta = p["metadata"]
    assert meta["namespace"] == "default"
    assert meta["generation"] == 1 and meta["resourceVersion"] == "1"
    assert meta["creationTimestamp"] == "2024-01-01T00:01:30Z"
    assert len(meta["uid"]) == 36
    assert p["status"] == {"phase": "Pending"}  # the status sent is ignored; the server sets Pending
    assert MemoryStore().create(_pod("p"))["metadata"]["uid"] == meta["uid"]  # deterministic
    with pytest.raises(AlreadyExists):
        s.create(_pod("p"))


def test_update_conflicts_on_a_stale_version_and_bumps_generation_on_spec_change():
    s = MemoryStore()
    cm = s.create(_cm("c", {"a": "1"}))
    same = s.update(cm)
    assert same["metadata"]["generation"] == 1
    changed = dict(same, data={"a": "2"})
    new = s.update(changed)
    assert new["metadata"]["generation"] == 2
    with pytest.raises(Conflict, match="the object has been modified"):
        s.update(dict(cm, data={"a": "3"}))  # cm carries an old resourceVersion
    unversioned = clone(new)  # what writes return is read-only
    unversioned["data"] = {"a": "4"}
    del unversioned["metadata"]["resourceVersion"]
    assert s.update(unversioned)["data"] == {"a": "4"}  # no version: last write wins
    with pytest.raises(NotFound):
        s.update(_cm("missing"))


def test_status_is_a_subresource():
    s = MemoryStore()
    p = clone(s.create(_pod("p")))
    p["status"] = {"phase": "Succeeded"}
    p = clone(s.update_status(p))
    assert p["status"] == {"phase": "Succeeded"}
    p["status"] = {"phase": "Failed"}
    p["spec"]["nodeName"] = "n1"
    p = s.update(p)
    assert p["status"] == {"phase": "Succeeded"} and p["spec"]["nodeName"] == "n1"


def test_a_podgroups_status_is_written_with_the_object():
    """Volcano's PodGroup CRD has no status subresource (`subresources: {}`), and its scheduler
    writes PodGroup status with a plain Update (pkg/scheduler/cache/cache.go)."""
    s = volcanic.Cluster().api
    pg = s.create({"kind": "PodGroup", "metadata": {"name": "pg"}, "spec": {"minMember": 1},
                   "status": {"phase": "Pending"}})
    assert pg["status"] == {"phase": "Pending"}  # kept on create
    running = s.update(dict(pg, status={"phase": "Running"}))
    assert running["status"] == {"phase": "Running"}  # and on update
    assert running["metadata"]["generation"] == 1
    # update_status is that update too: it checks the version, and writes what else was sent
    with pytest.raises(Conflict):
        s.update_status(dict(pg, status={"phase": "Inqueue"}))
    done = s.update_status(dict(running, spec={"minMember": 2}, status={"phase": "Completed"}))
    assert done["status"] == {"phase": "Completed"} and done["metadata"]["generation"] == 2


def test_finalizers_hold_deletion_and_owners_cascade():
    s = MemoryStore()
    owner = s.create({"kind": "Job", "metadata": {"name": "j"}, "spec": {}})
    child = s.create(_pod("child", owner))
    held = s.create(_pod("held", owner, finalizers=["example.com/keep"]))
    s.delete("Job", "j")
    assert s.get("Job", "j") is None
    assert s.get("Pod", "child") is None
    held = s.get("Pod", "held")
    assert held["metadata"]["deletionTimestamp"] == "2024-01-01T00:00:00Z"
    held["metadata"]["finalizers"] = []
    s.update(held)
    assert s.get("Pod", "held") is None
    with pytest.raises(NotFound):
        s.delete("Pod", child["metadata"]["name"])


def test_watch_streams_events_in_commit_order():
    s = MemoryStore()
    w = s.watch(["ConfigMap"])
    everything = s.watch()
    cm = s.create(_cm("c"))
    s.update(dict(cm, data={"x": "y"}))
    s.create(_pod("p"))
    s.delete("ConfigMap", "c")
    assert [(e, o["metadata"]["name"]) for e, o in w.drain()] == [("ADDED", "c"), ("MODIFIED", "c"),
                                                                 ("DELETED", "c")]
    assert [e for e, _ in everything.drain()] == ["ADDED", "MODIFIED", "ADDED", "DELETED"]
    assert w.drain() == []


def test_namespaces_kinds_and_copies():
    s = MemoryStore()
    s.create(_cm("c", ns="a"))
    s.create(_cm("c", ns="b"))
    q = s.create({"kind": "Queue", "metadata": {"name": "q", "namespace": "ignored"}, "spec": {"weight": 1}})
    assert "namespace" not in q["metadata"]
    assert s.get("Queue", "q", "whatever")["metadata"]["name"] == "q"
    assert [o["metadata"]["namespace"] for o in s.list("ConfigMap")] == ["a", "b"]
    assert len(s.list("ConfigMap", "a")) == 1
    got = s.get("ConfigMap", "c", "a")
    got["data"]["mutated"] = "yes"
    assert s.get("ConfigMap", "c", "a")["data"] == {}
    with pytest.raises(volcanic.InvalidObject, match="unknown kind 'Deployment'; known kinds: "):
        s.create({"kind": "Deployment", "metadata": {"name": "d"}})
    with pytest.raises(volcanic.InvalidObject, match="metadata.name: is required"):
        s.create({"kind": "ConfigMap", "metadata": {}})


def test_shared_reads_hand_out_the_committed_objects_and_get_copies():
    """`shared` is the no-copy reader admission reads through; get/list stay copies."""
    s = MemoryStore()
    committed = s.create(_cm("c", ns="a"))
    assert s.shared.get("ConfigMap", "c", "a") is committed
    assert s.shared.list("ConfigMap", "a") == [committed] and s.shared.list("ConfigMap", "b") == []
    assert s.get("ConfigMap", "c", "a") == committed and s.get("ConfigMap", "c", "a") is not committed


def test_clone_copies_containers_shares_immutables_and_falls_back_to_deepcopy():
    """The store's deep copy: new dicts and lists, shared str/int/float/bool/None; anything
    else (tuples, sets, other objects, odd keys, deep nesting) goes through copy.deepcopy."""
    import math
    text = "a" * 50
    obj = {"spec": {"items": [{"name": text, "n": 2 ** 70, "x": math.nan, "on": True, "none": None}]}}
    copied = clone(obj)
    assert copied == {"spec": {"items": [{"name": text, "n": 2 ** 70, "x": copied["spec"]["items"][0]["x"],
                                          "on": True, "none": None}]}}
    assert math.isnan(copied["spec"]["items"][0]["x"])
    assert copied["spec"] is not obj["spec"] and copied["spec"]["items"][0] is not obj["spec"]["items"][0]
    assert copied["spec"]["items"][0]["name"] is text  # immutable: shared
    copied["spec"]["items"][0]["name"] = "changed"
    assert obj["spec"]["items"][0]["name"] == text

    odd = {"t": ([1], 2), "s": {3}, 4: [5], "deep": _nested(300)}
    copied = clone(odd)
    assert copied == odd and copied["t"][0] is not odd["t"][0] and copied[4] is not odd[4]
    assert copied["s"] is not odd["s"]


def _nested(depth: int) -> list:
    out: list = []
    for _ in range(depth):
        out = [out]
    return out


def test_uids_are_version_8_uuids_of_the_counter():
    """Deterministic uids: valid RFC 9562 UUIDs (version 8, RFC 4122 variant), distinct per
    object counter, the counter in the last 48 bits."""
    import uuid

    from volcanic.cluster.store import uid_of
    counters = (1, 2, 99, 10 ** 6, 2 ** 40, 2 ** 48 - 1)
    uids = [uid_of(n) for n in counters]
    for n, text in zip(counters, uids):
        u = uuid.UUID(text)
        assert str(u) == text and u.version == 8 and u.variant == uuid.RFC_4122
        assert u.int & (2 ** 48 - 1) == n
    assert len(set(uids)) == len(uids)


def test_rfc3339_matches_the_datetime_formatting():
    from datetime import datetime, timezone

    from volcanic.kube.clock import rfc3339
    for t in (0, EPOCH, EPOCH + 86399.9, EPOCH + 86400, -1, -86401, 253402300799):
        assert rfc3339(t) == datetime.fromtimestamp(int(t), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_watch_wakes_its_reader_from_another_thread_and_keeps_an_early_wake():
    """wait() returns on an event or a wake() from another thread; a wake() that came while
    the reader was busy ends its next wait() at once (no event lost to the lock-free offer)."""
    import threading
    s = MemoryStore()
    w = s.watch(["ConfigMap"])
    w.wake()
    assert w.wait(timeout=5.0) is False  # woken early: returns at once, with no event
    threading.Timer(0.05, lambda: s.create(_cm("c"))).start()
    assert w.wait(timeout=5.0) is True and [e for e, _ in w.drain()] == ["ADDED"]
    threading.Timer(0.05, w.wake).start()
    assert w.wait(timeout=5.0) is False
    assert w.wait(timeout=0.05) is False  # the wake was used: this one times out
