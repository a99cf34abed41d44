"""What Python plugins see (docs/plugins-python.md, "Views"): read-only, live views in engine
units, valid only while their session runs; sessions with Python plugins in several threads;
plugins found through the "volcanic.plugins" entry points."""

from __future__ import annotations

from collections.abc import Mapping
import importlib.metadata
import math
import operator
import threading

import pytest

from builders import node, pod, podgroup, queue
from pyplugin_helpers import NOW, conf, decisions, make_plugin, priority_class
import volcanic
from volcanic.scheduler import plugins as plugin_module

GiB = 2**30


def cluster():
    running = pod("r", "pg-run", cpu="500m", memory="1Gi", node_name="n1", phase="Running",
                  labels={"app": "db"}, annotations={"volcano.sh/task-spec": "master"})
    pending = pod("p", "pg", cpu="1500m", memory="2Gi", labels={"app": "web"})
    pending["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "1"
    gpu_node = node("n2", cpu="8", memory="16Gi", labels={"gpu": "yes"}, **{"nvidia.com/gpu": "2"})
    gpu_node["metadata"]["annotations"] = {"rack": "r7"}
    gpu_node["spec"] = {"taints": [{"key": "gpu", "value": "true", "effect": "PreferNoSchedule"}]}
    return [priority_class("high", 1000), node("n1", cpu="4", memory="8Gi"), gpu_node,
            queue("q1", weight=3, capability={"cpu": "10"}),
            podgroup("pg-run", queue="q1", phase="Running"), running,
            podgroup("pg", queue="q1", priorityClassName="high"), pending]


def test_views_show_the_objects_in_engine_units():
    seen = {}

    class Look(volcanic.Plugin):
        name = "look"

        def on_session_open(self, session):
            jobs = {j.key: j for j in session.jobs}
            job, run = jobs["ns/pg"], jobs["ns/pg-run"]
            task, r = job.tasks[0], run.tasks[0]
            n1, n2 = session.nodes
            q1 = next(q for q in session.queues if q.name == "q1")
            seen.update(
                task=(task.name, task.namespace, task.key, task.job.key, task.priority, task.status, task.node,
                      task.node_name, task.preemptable, dict(task.labels)),
                resreq=(task.resreq["cpu"], task.resreq.cpu, task.resreq["memory"], task.resreq.memory,
                        task.resreq["nvidia.com/gpu"], task.resreq["pods"], task.resreq["hugepages-2Mi"],
                        task.resreq["never-heard-of"], task.resreq.get("never-heard-of", "absent"),
                        "nvidia.com/gpu" in task.resreq, "ephemeral-storage" in task.resreq,
                        dict(task.resreq), isinstance(task.resreq, Mapping)),
                running=(r.status, r.node is n1, r.node_name, r.role, dict(r.annotations)["volcano.sh/task-spec"]),
                job=(job.name, job.namespace, job.queue, job.priority, job.min_available, job.phase,
                     job.creation_timestamp, len(job.tasks), dict(run.allocated)),
                nodes=(n1.name, n2.name, dict(n2.labels), dict(n2.annotations), n2.taints, n1.taints,
                       dict(n2.allocatable), dict(n1.used), dict(n1.idle), n1.idle["cpu"] + n1.used["cpu"],
                       [t.key for t in n1.tasks], n2.tasks),
                queue=(q1.name, q1.weight, q1.parent, q1.state, q1.reclaimable, q1.capability["cpu"],
                       q1.capability["memory"], dict(q1.capability), dict(q1.allocated), dict(q1.deserved)),
                session=(session.now, session.uid))
    volcanic.register_plugin(Look)
    volcanic.schedule(cluster(), conf(["gang", "look"]), now=NOW)
    assert seen["task"] == ("p", "ns", "ns/p", "ns/pg", 1, "Pending", None, None, True, {"app": "web"})
    assert seen["resreq"] == (1500, 1500, 2 * GiB, 2 * GiB, 1000, 1000, 0, 0, "absent", True, False,
                              {"cpu": 1500, "memory": 2 * GiB, "pods": 1000, "nvidia.com/gpu": 1000}, True)
    assert seen["running"] == ("Running", True, "n1", "master", "master")
    assert seen["job"] == ("pg", "ns", "q1", 1000, 1, "Inqueue", 0.0, 1, {"cpu": 500, "memory": GiB, "pods": 1000})
    assert seen["nodes"] == (
        "n1", "n2", {"gpu": "yes"}, {"rack": "r7"}, [{"key": "gpu", "value": "true", "effect": "PreferNoSchedule"}],
        [], {"cpu": 8000, "memory": 16 * GiB, "pods": 110_000, "nvidia.com/gpu": 2000},
        {"cpu": 500, "memory": GiB, "pods": 1000}, {"cpu": 3500, "memory": 7 * GiB, "pods": 109_000}, 4000,
        ["ns/r"], [])
    assert seen["queue"] == ("q1", 3, None, "Open", True, 10_000, math.inf, {"cpu": 10_000},
                             {"cpu": 500, "memory": GiB, "pods": 1000}, {})
    assert seen["session"] == (NOW, "session-1")


def test_views_are_live_and_one_object_per_engine_object():
    used, views = [], []

    def node_order(self, task, n):
        views.append((task, n))
        if n.name == "n1":
            used.append(n.used["cpu"])
        return 0.0
    plugin = make_plugin("live", node_order=node_order)
    objs = [node("n1", cpu="8"), node("n2", cpu="8")]
    for j in range(3):
        objs += [podgroup(f"pg{j}"), pod(f"p{j}", f"pg{j}", cpu="1")]
    d = volcanic.schedule(objs, conf(["gang", plugin.name]), now=NOW)
    assert d.binds == {"ns/p0": "n1", "ns/p1": "n1", "ns/p2": "n1"}
    assert used == [0, 1000, 2000]
    assert len({id(n) for t, n in views}) == 2  # one view per node for the whole session
    assert len({id(t) for t, n in views}) == 3


def test_views_are_read_only():
    errors = []

    def on_session_open(self, session):
        task = session.jobs[0].tasks[0]
        for attempt in (lambda: setattr(task, "name", "x"), lambda: setattr(task, "extra", 1),
                        lambda: operator.setitem(task.resreq, "cpu", 1), lambda: operator.delitem(task.labels, "app"),
                        lambda: type(task)(), lambda: type(task.resreq)(), lambda: setattr(session, "now", 0)):
            try:
                attempt()
                errors.append("allowed")
            except (AttributeError, TypeError) as e:
                errors.append(type(e).__name__)
    plugin = make_plugin("readonly", on_session_open=on_session_open)
    volcanic.schedule(cluster(), conf(["gang", plugin.name]), now=NOW)
    assert errors == ["AttributeError", "AttributeError", "TypeError", "TypeError", "TypeError", "TypeError",
                      "AttributeError"]


def test_views_raise_after_their_session():
    kept = {}

    def on_session_open(self, session):
        job = next(j for j in session.jobs if j.name == "pg")
        kept.update(session=session, job=job, task=job.tasks[0], node=session.nodes[0],
                    queue=session.queues[0], resreq=job.tasks[0].resreq, labels=job.tasks[0].labels)
    plugin = make_plugin("keeper", on_session_open=on_session_open)
    volcanic.schedule(cluster(), conf(["gang", plugin.name]), now=NOW)
    message = "view used after its session ended"
    for name in ("session", "job", "task", "node", "queue"):
        with pytest.raises(RuntimeError, match=message):
            getattr(kept[name], "uid" if name == "session" else "name")
        assert "of an ended session" in repr(kept[name])
    with pytest.raises(RuntimeError, match=message):
        kept["resreq"]["cpu"]
    with pytest.raises(RuntimeError, match=message):
        len(kept["labels"])
    with pytest.raises(RuntimeError, match=message):
        "app" in kept["labels"]


def test_views_of_one_object_compare_equal_across_plugins():
    got = {}
    first = make_plugin("eq", on_session_open=lambda self, s: got.setdefault("a", s.nodes[0]) and None)
    second = make_plugin("eq", on_session_open=lambda self, s: got.update(
        b=s.nodes[0], same=got["a"] == s.nodes[0], other=got["a"] != s.nodes[1],
        hashes=hash(got["a"]) == hash(s.nodes[0]), distinct=got["a"] is not s.nodes[0]))
    volcanic.schedule(cluster(), conf(["gang", first.name, second.name]), now=NOW)
    assert (got["same"], got["other"], got["hashes"], got["distinct"]) == (True, True, True, True)


def test_sessions_with_python_plugins_in_two_threads_do_not_deadlock():
    def predicate(self, task, n):
        return None if int(n.name[1:]) % 3 else "every third node is out"

    def node_order(self, task, n):
        return float(n.idle["cpu"])
    plugin = make_plugin("threaded", predicate=predicate, node_order=node_order)
    objs = [node(f"n{i}", cpu="4") for i in range(30)]
    for j in range(40):
        objs += [podgroup(f"pg{j}", 2), pod(f"a{j}", f"pg{j}"), pod(f"b{j}", f"pg{j}")]
    configuration = conf(["priority", "gang", plugin.name], ["predicates", "proportion"])
    expected = decisions(volcanic.schedule(objs, configuration, now=NOW, bare_pods_as_groups=True))
    results, errors = {}, []

    def work(key):
        try:
            s = volcanic.Scheduler(configuration, bare_pods_as_groups=True)
            for obj in objs:
                s.upsert(obj)
            out = []
            for _ in range(3):
                out.append(decisions(s.run_once(now=NOW)))
                for k in out[-1]["binds"]:
                    s.forget(k)
            results[key] = out
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in ("a", "b")]
    for t in threads:
        t.start()
    ticks = 0
    while any(t.is_alive() for t in threads) and ticks < 600_000:
        ticks += 1  # Python work in the main thread meanwhile: the sessions do not hold the GIL
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "deadlock"
    assert not errors
    repeat = dict(expected, podgroup_events={})  # an unchanged PodGroup Event is not reported again
    assert expected["podgroup_events"]
    assert results["a"] == results["b"] == [expected, repeat, repeat]


class EntryPointPlugin(volcanic.Plugin):
    name = "from-entry-point"

    def node_order(self, task, n):
        return 5.0 if n.name == "n2" else 0.0


class WrongName(volcanic.Plugin):
    name = "not-what-the-entry-point-says"


@pytest.fixture
def entry_points(monkeypatch):
    """Fakes the installed "volcanic.plugins" entry points; counts the scans."""
    scans = []
    group = plugin_module.ENTRY_POINT_GROUP
    eps = [importlib.metadata.EntryPoint("from-entry-point", f"{__name__}:EntryPointPlugin", group),
           importlib.metadata.EntryPoint("wrongly-named", f"{__name__}:WrongName", group),
           importlib.metadata.EntryPoint("missing-module", "no_such_module_xyz:Plugin", group)]

    def fake(**kwargs):
        scans.append(kwargs)
        return [ep for ep in eps if ep.group == kwargs.get("group")]
    monkeypatch.setattr(importlib.metadata, "entry_points", fake)
    monkeypatch.setattr(plugin_module, "_entry_points", None)
    monkeypatch.setattr(plugin_module, "_loaded", set())
    return scans


def test_entry_point_plugins_load_lazily_once(entry_points):
    objs = [node("n1"), node("n2"), podgroup("pg"), pod("p", "pg")]
    volcanic.schedule(objs, conf(["gang"]), now=NOW)
    assert entry_points == []  # nothing unknown: no scan
    d = volcanic.schedule(objs, conf(["gang", "from-entry-point"]), now=NOW)
    assert d.binds == {"ns/p": "n2"}
    volcanic.Scheduler(conf(["gang", "from-entry-point"]))
    with pytest.raises(volcanic.ConfigError, match='unknown plugin "nowhere"'):
        volcanic.Scheduler(conf(["nowhere"]))
    assert entry_points == [{"group": "volcanic.plugins"}]


def test_bad_entry_points_are_config_errors(entry_points):
    with pytest.raises(volcanic.ConfigError, match=r'plugin "wrongly-named": entry point ".*:WrongName" '
                                                   r"\(group volcanic.plugins\) must be a volcanic.Plugin subclass "
                                                   r'whose name is "wrongly-named"'):
        volcanic.Scheduler(conf(["wrongly-named"]))
    with pytest.raises(volcanic.ConfigError, match=r'plugin "missing-module": entry point "no_such_module_xyz:Plugin"'
                                                   r".*failed to load: ModuleNotFoundError"):
        volcanic.Scheduler(conf(["missing-module"]))
