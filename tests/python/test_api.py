"""The public Python API: volcanic.schedule, volcanic.Scheduler, errors (DESIGN.md contract)."""

from __future__ import annotations

import json

import pytest

from builders import node, pod, podgroup, queue
import volcanic

NOW = 1_700_000_000


def test_public_api_is_exactly_the_contract():
    assert sorted(volcanic.__all__) == ["AdmissionError", "Cluster", "ConfigError", "Decisions", "InvalidObject",
                                        "Plugin", "PluginError", "Scheduler", "register_plugin", "schedule"]
    assert issubclass(volcanic.PluginError, RuntimeError)
    assert issubclass(volcanic.AdmissionError, ValueError)
    assert issubclass(volcanic.InvalidObject, ValueError)
    assert issubclass(volcanic.ConfigError, ValueError)


def test_schedule_binds_a_gang_and_reports_status():
    objs = [node("n1"), podgroup("pg", 2), pod("a", "pg"), pod("b", "pg")]
    d = volcanic.schedule(objs, now=NOW)
    assert d.binds == {"ns/a": "n1", "ns/b": "n1"}
    assert d.evictions == [] and d.pipelined == {}
    pg = d.podgroups["ns/pg"]
    assert pg["phase"] == "Inqueue"  # bound pods are not Running until the kubelet says so
    assert pg["conditions"][0]["type"] == "Scheduled"
    assert pg["conditions"][0]["lastTransitionTime"] == "2023-11-14T22:13:20Z"
    assert d.queues["default"]["allocated"] == {"cpu": "2", "memory": "2Gi", "pods": "2"}
    assert d.queues["root"]["allocated"] == {"cpu": "2", "memory": "2Gi", "pods": "2"}


def test_other_kinds_are_skipped_and_json_text_is_accepted():
    objs = [{"kind": "ConfigMap", "metadata": {"name": "x"}}, node("n1"), pod("solo", None)]
    d = volcanic.schedule(objs, now=NOW, bare_pods_as_groups=True)
    assert d.binds == {"ns/solo": "n1"}
    s = volcanic.Scheduler(bare_pods_as_groups=True)
    s.upsert(json.dumps(node("n1")))
    s.upsert(json.dumps(pod("solo", None)).encode())
    assert s.run_once(NOW).binds == {"ns/solo": "n1"}


def test_pods_of_other_schedulers_use_resources_but_are_not_scheduled():
    other = pod("other", None, cpu="3", node_name="n1", phase="Running")
    other["spec"]["schedulerName"] = "default-scheduler"
    pending_other = pod("pending-other", None)
    pending_other["spec"]["schedulerName"] = "default-scheduler"
    d = volcanic.schedule([node("n1"), other, pending_other, podgroup("pg", 1), pod("big", "pg", cpu="2")], now=NOW)
    assert d.binds == {}
    assert d.unschedulable["ns/big"] == "0/1 nodes are unavailable: 1 Insufficient cpu."


def test_queue_quantities_are_the_callers_own_dicts():
    """Equal quantities are formatted once and handed out as copies: changing one dict a
    session returned changes no other, nor what a later session returns."""
    s = volcanic.Scheduler()
    for o in [node("n1"), podgroup("pg", 1), pod("a", "pg")]:
        s.upsert(o)
    d = s.run_once(NOW)
    root, default = d.queues["root"]["allocated"], d.queues["default"]["allocated"]
    assert root == default == {"cpu": "1", "memory": "1Gi", "pods": "1"}
    root["cpu"] = "999"
    assert default["cpu"] == "1"
    assert s.run_once(NOW).queues["root"]["allocated"]["cpu"] == "1"


def test_scheduler_assumes_binds_until_forgotten():
    s = volcanic.Scheduler(bare_pods_as_groups=True)
    for o in [node("n1", cpu="1"), pod("a", None), pod("b", None)]:
        s.upsert(o)
    first = s.run_once(NOW)
    assert len(first.binds) == 1
    (bound,) = first.binds
    assert s.run_once(NOW).binds == {}  # the node is full with the assumed bind
    s.forget(bound)  # the bind failed: the pod is pending again
    assert len(s.run_once(NOW).binds) == 1
    with pytest.raises(KeyError):
        s.forget("ns/nope")


def test_scheduler_confirmed_bind_and_delete():
    s = volcanic.Scheduler(bare_pods_as_groups=True)
    s.upsert(node("n1", cpu="1"))
    s.upsert(pod("a", None))
    assert s.run_once(NOW).binds == {"ns/a": "n1"}
    s.upsert(pod("a", None, node_name="n1", phase="Running"))  # the bind landed
    s.upsert(pod("b", None))
    assert s.run_once(NOW).binds == {}
    s.delete("Pod", "a", "ns")
    assert s.run_once(NOW).binds == {"ns/b": "n1"}


@pytest.mark.parametrize("mutate, message", [
    (lambda p: p["spec"]["containers"][0]["resources"]["requests"].update(cpu="1.2.3"),
     'Pod ns/p: spec.containers[0].resources.requests.cpu: invalid quantity "1.2.3": '),
    (lambda p: p["spec"].update(priority="high"), "Pod ns/p: spec.priority: must be an integer, got string"),
    (lambda p: p["metadata"].pop("name"), "Pod ns/<unnamed>: metadata.name: is required"),
    (lambda p: p["spec"].update(containers={}), "Pod ns/p: spec.containers: must be an array, got object"),
    (lambda p: p["metadata"]["annotations"].update(x=3), "Pod ns/p: metadata.annotations.x: must be a string"),
    (lambda p: p["spec"].update(topologySpreadConstraints=[
        {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]),
     "Pod ns/p: spec.topologySpreadConstraints[0].maxSkew: must be an integer of at least 1"),
    (lambda p: p["spec"].update(topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Sometimes"}]),
     "Pod ns/p: spec.topologySpreadConstraints[0].whenUnsatisfiable: must be DoNotSchedule or ScheduleAnyway"),
])
def test_malformed_objects_name_object_and_field(mutate, message):
    p = pod("p", "pg")
    mutate(p)
    s = volcanic.Scheduler()
    with pytest.raises(volcanic.InvalidObject) as e:
        s.upsert(p)
    assert str(e.value).startswith(message)
    # Nothing was applied: the scheduler has no such pod.
    s.upsert(node("n1"))
    assert s.run_once(NOW).binds == {}


def test_each_object_is_read_alone_whatever_came_before_it():
    """The engine converts each object over the last one of its kind (bindings/convert.h): a field
    the earlier pod had and this one lacks must be gone, a changed type must be the new one, and an
    object refused midway must leave nothing behind for the next."""
    pinned = pod("pinned", None, cpu="3")
    pinned["spec"].update(nodeSelector={"zone": "a"}, priority=5,
                          tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule"}])
    pinned["spec"]["containers"].append({"name": "side", "resources": {"requests": {"cpu": "1"}}})
    bad = pod("bad", None)
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = 3  # an int: read as 3 CPUs
    bad["spec"]["overhead"] = {"memory": ["1Gi"]}  # refused, after the cpu above was read
    plain = pod("plain", None, cpu="1")  # no selector, one container, cpu back to a string
    s = volcanic.Scheduler(bare_pods_as_groups=True)
    s.upsert(node("b", cpu="8", labels={"zone": "b"}))
    s.upsert(pinned)
    with pytest.raises(volcanic.InvalidObject, match=r"^Pod ns/bad: spec\.overhead\.memory: "):
        s.upsert(bad)
    for i in range(20):  # kinds it does not read, past the number of kinds given a tree of their own
        assert not s.upsert({"kind": f"Kind{i}", "metadata": {"name": "x", "labels": {"k": str(i)}}})
    s.upsert(plain)
    d = s.run_once(NOW)
    assert d.binds == {"ns/plain": "b"}
    assert "node(s) didn't match Pod's node affinity/selector" in d.unschedulable["ns/pinned"]
    assert d.queues["default"]["allocated"] == {"cpu": "1", "memory": "1Gi", "pods": "1"}


def test_malformed_objects_of_every_kind():
    cases = [
        (node("n1", cpu="lots"), "Node n1: status.allocatable.cpu: invalid quantity"),
        (podgroup("pg", -1), "PodGroup ns/pg: spec.minMember: must be >= 0"),
        (queue("q", weight=0), "Queue q: spec.weight: must be in [1, 65535]"),
        ({"kind": "PriorityClass", "metadata": {"name": "pc"}}, "PriorityClass pc: value: is required"),
        ({"kind": "Pod", "metadata": "x"}, "Pod <unnamed>: metadata: must be an object, got string"),
    ]
    for obj, message in cases:
        with pytest.raises(volcanic.InvalidObject, match=message.replace("[", r"\[").replace("]", r"\]")):
            volcanic.Scheduler().upsert(obj)
    with pytest.raises(volcanic.InvalidObject, match="unsupported type"):
        volcanic.Scheduler().upsert({"kind": "Pod", "metadata": {"name": object()}})
    deep = {"kind": "Pod", "spec": {"containers": [{}, {"resources": {"requests": {"cpu": {1}}}}]}}
    path = r"^spec\.containers\[1\]\.resources\.requests\.cpu: unsupported type set$"
    with pytest.raises(volcanic.InvalidObject, match=path):
        volcanic.Scheduler().upsert(deep)
    with pytest.raises(volcanic.InvalidObject, match=r"^spec\.ports\[0\]: integer out of range$"):
        volcanic.Scheduler().upsert({"kind": "Pod", "spec": {"ports": (2 ** 64,)}})
    with pytest.raises(volcanic.InvalidObject, match="not valid JSON"):
        volcanic.Scheduler().upsert("{not json")


@pytest.mark.parametrize("conf, message", [
    ("actions: allocate, teleport", 'unknown action "teleport"; known actions: allocate, backfill, enqueue'),
    ({"actions": "allocate", "tiers": [{"plugins": [{"name": "magic"}]}]}, 'unknown plugin "magic"; known plugins:'),
    ({"actions": "allocate", "tiers": [{"plugins": [{"name": "overcommit", "arguments": {"factor": 2}}]}]},
     'plugin overcommit: unknown argument "factor"; known arguments: overcommit-factor'),
    ("actions: [", "invalid YAML"),
    ("- a list", "must be a map"),
    ({"actions": "allocate", "tiers": [{"plugins": [{"name": "drf", "enableHierarchy": True},
                                                   {"name": "proportion"}]}]},
     "proportion and drf with hierarchy enabled conflicts"),
])
def test_bad_configuration(conf, message):
    with pytest.raises(volcanic.ConfigError) as e:
        volcanic.Scheduler(conf)
    assert message in str(e.value)


def test_yaml_and_dict_configurations_are_the_same():
    text = """
actions: "enqueue, allocate"
tiers:
- plugins:
  - name: gang
  - name: binpack
    arguments: {binpack.weight: 10, binpack.cpu: "5"}
  - name: predicates
"""
    objs = [node("n1"), node("n2"), pod("old", None, node_name="n2", phase="Running"), pod("p", None)]
    by_text = volcanic.schedule(objs, text, now=NOW, bare_pods_as_groups=True)
    import yaml
    by_dict = volcanic.schedule(objs, yaml.safe_load(text), now=NOW, bare_pods_as_groups=True)
    assert by_text.binds == by_dict.binds == {"ns/p": "n2"}


def test_default_configuration_is_volcanos():
    # enqueue runs first: a Pending PodGroup is enqueued and allocated in one session.
    d = volcanic.schedule([node("n1"), podgroup("pg", 1, phase="Pending"), pod("a", "pg")], now=NOW)
    assert d.binds == {"ns/a": "n1"}
    # Without enqueue in the actions, allocate skips nothing: Pending jobs are promoted.
    d = volcanic.schedule([node("n1"), podgroup("pg", 1, phase="Pending"), pod("a", "pg")],
                          "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n", now=NOW)
    assert d.binds == {"ns/a": "n1"}


def test_not_ready_nodes_are_left_out_and_overcommitted_ones_take_nothing():
    not_ready = node("sick")
    not_ready["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    overfull = node("overfull", cpu="1")
    hog = pod("hog", None, cpu="2", node_name="overfull", phase="Running")
    hog["spec"]["schedulerName"] = "default-scheduler"
    conf = "actions: allocate\ntiers:\n- plugins: [{name: gang}, {name: predicates}]\n"
    d = volcanic.schedule([not_ready, overfull, hog, node("ok", cpu="1"), podgroup("pg", 2),
                           pod("a", "pg"), pod("b", "pg")], conf, now=NOW)
    assert d.binds == {}
    # The not-ready node is not counted in "0/N" (reference §4.1: the snapshot skips it).
    assert d.unschedulable["ns/b"] == "0/2 nodes are unavailable: 2 Insufficient cpu."


def test_a_pod_its_queue_has_no_room_for_says_so():
    d = volcanic.schedule([node("n1", cpu="1"), podgroup("pg", 1), pod("big", "pg", cpu="2")], now=NOW)
    assert d.unschedulable["ns/big"] == "Queue <default> is overused when considering task <big>, ignore it."


def test_run_once_changed_only_reports_only_statuses_that_differ_from_the_objects():
    """The cluster loop's status writer: a status equal to what the object says, or to what
    an earlier session reported (taken as written), is not sent; the echo of a written status
    changes nothing the scheduler reads, so it needs no session."""
    s = volcanic.Scheduler()
    for o in (node("n1"), podgroup("pg", 1), pod("a", "pg")):
        s.upsert(o)
    d = s.run_once(now=NOW, changed_only=True)
    assert d.binds == {"ns/a": "n1"} and "default" in d.queues
    allocated = d.queues["default"]["allocated"]
    bound = pod("a", "pg")
    bound["spec"]["nodeName"] = "n1"
    bound["status"] = {"phase": "Running"}
    assert s.upsert(bound) is True
    d = s.run_once(now=NOW + 1, changed_only=True)
    assert d.podgroups["ns/pg"]["phase"] == "Running"
    assert "default" not in d.queues  # reported by the first session, unchanged since
    pg = podgroup("pg", 1)
    pg["status"] = {"phase": "Running", "conditions": d.podgroups["ns/pg"]["conditions"], "running": 1}
    assert s.upsert(pg) is False  # the echo of the status reported
    q = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "default"},
         "spec": {"weight": 1}, "status": {"allocated": allocated, "running": 1}}
    assert s.upsert(q) is False
    again = s.run_once(now=NOW + 2, changed_only=True)
    assert again.podgroups == {} and "default" not in again.queues
    # A write that failed is forgotten: the next session reports it again.
    s.forget_status("PodGroup", "ns/pg")
    s.forget_status("Queue", "default")
    s.forget_status("Queue", "gone")  # an object that is gone: nothing to do
    again = s.run_once(now=NOW + 3, changed_only=True)
    assert again.podgroups["ns/pg"]["phase"] == "Running" and again.queues["default"]["allocated"] == allocated
    assert "ns/pg" in s.run_once(now=NOW + 4).podgroups  # the default still reports every one


def test_a_gang_still_being_created_gets_pod_conditions_once_its_count_holds():
    """docs/scheduler.md "Pod conditions of a gang still being created": a gang below
    minAvailable whose pod count grew since the last session (a job controller midway through
    its pods) has its PodGroup condition, but its pods get theirs (gang's reason, reference
    §4.6) only once the count holds still for a session; the session that held them back says
    so, for a loop that skips sessions when nothing changed."""
    s = volcanic.Scheduler()
    for obj in (node("n1"), podgroup("pg", 3), pod("a", "pg")):
        s.upsert(obj)
    d = s.run_once(now=NOW)
    assert d.podgroups["ns/pg"]["conditions"][0]["type"] == "Unschedulable"
    assert (d.unschedulable, d.deferred) == ({}, True)
    s.upsert(pod("b", "pg"))
    d = s.run_once(now=NOW + 1)
    assert (d.unschedulable, d.deferred) == ({}, True)
    d = s.run_once(now=NOW + 2)
    assert set(d.unschedulable) == {"ns/a", "ns/b"} and not d.deferred
    assert d.unschedulable["ns/a"].startswith("3/2 tasks in gang unschedulable: pod group is not ready, 2 Pending")


def test_the_embedded_loop_runs_the_session_a_held_back_condition_waits_for():
    """The loop skips a session when nothing changed since one that decided nothing; a session
    that held pod conditions back decided something still to come."""
    c = volcanic.Cluster()
    c.apply([node("n1"), podgroup("pg", 3), pod("a", "pg")])
    c.run(0)  # the session at 0 s sees one pod
    c.apply(pod("b", "pg"))
    c.run(1)  # the one at 1 s sees two
    assert not any(cond.get("type") == "PodScheduled" for p in c.list("Pod", "ns")
                   for cond in (p.get("status") or {}).get("conditions") or [])
    c.run(1)
    assert all(any(cond.get("type") == "PodScheduled" and cond["status"] == "False"
                   for cond in p["status"].get("conditions") or []) for p in c.list("Pod", "ns"))


def test_gang_leaves_a_podgroup_without_pods_as_it_is():
    """Volcano v1.15.1 pkg/scheduler/plugins/gang/gang.go OnSessionClose skips a job without
    tasks (volcano#4011, since v1.12; the reference's §4.6 predates it): a PodGroup whose pods
    do not exist yet gets no condition; once it has a pod short of its gang, Unschedulable."""
    d = volcanic.schedule([node("n1"), podgroup("pg", 3, phase="Pending")], now=NOW)
    status = d.podgroups["ns/pg"]
    assert status["phase"] == "Inqueue" and not status.get("conditions")  # enqueued, no condition
    d = volcanic.schedule([node("n1"), podgroup("pg", 3, phase="Inqueue"), pod("a", "pg")], now=NOW)
    (cond,) = d.podgroups["ns/pg"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"]) == ("Unschedulable", "True", "NotEnoughResources")
    assert cond["message"].startswith("3/1 tasks in gang unschedulable: ")
