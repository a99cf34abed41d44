"""Python plugin hooks added for the extender plugin (docs/plugins-python.md): the event hooks
on_allocate / on_deallocate, with on_allocate's refusal rolling the placement back as
Volcano's statement.go Allocate / Pipeline do (an AllocateFunc setting Event.Err); a
predicate's Unresolvable reason; an instance leaving out a hook its class defines."""

from __future__ import annotations

import pytest

from builders import node, pod, podgroup
from pyplugin_helpers import NOW, conf, make_plugin, priority_class
import volcanic
from volcanic.scheduler.plugins import Unresolvable


def recorder(refuse: dict[str, str] | None = None, **hooks):
    """A plugin recording its events as "+name@node" / "-name"; refusing the tasks named in
    `refuse` with the reason given."""
    events: list[str] = []

    def on_allocate(self, task):
        events.append(f"+{task.name}@{task.node_name}")
        return (refuse or {}).get(task.name)

    def on_deallocate(self, task):
        events.append(f"-{task.name}")

    return make_plugin("events", on_allocate=on_allocate, on_deallocate=on_deallocate, **hooks), events


def test_events_are_told_of_placements_and_of_a_gang_given_back():
    py, events = recorder()
    objs = [node("n1", cpu="1"), podgroup("pg", min_member=2), pod("p0", "pg"), pod("p1", "pg"),
            podgroup("solo"), pod("s", "solo", cpu="500m")]
    d = volcanic.schedule(objs, conf(["priority", "gang", "predicates", py.name]), now=NOW)
    assert d.binds == {"ns/s": "n1"}
    assert "+p0@n1" in events and "-p0" in events  # pg does not fit: its allocation is given back
    assert events.index("+p0@n1") < events.index("-p0")


def test_a_refused_allocation_is_undone_and_the_task_goes_unplaced():
    py, events = recorder({"p0": "card 0 is broken", "p1": ""})
    objs = [node("n1"), podgroup("pg"), pod("p0", "pg"), pod("p1", "pg"), pod("p2", "pg")]
    d = volcanic.schedule(objs, conf(["gang", "predicates", py.name]), now=NOW)
    assert d.binds == {"ns/p2": "n1"}
    assert d.unschedulable["ns/p0"] == "card 0 is broken"
    assert d.unschedulable["ns/p1"] == f"placement refused by plugin {py.name}"
    assert events[:4] == ["+p0@n1", "-p0", "+p1@n1", "-p1"]


def test_a_refused_pipeline_evicts_nobody():
    py, _ = recorder({"hi": "not here"})
    objs = [priority_class("high", 1000), node("n1", cpu="2"), podgroup("lo"),
            pod("lo-0", "lo", node_name="n1", phase="Running"), pod("lo-1", "lo", node_name="n1", phase="Running"),
            podgroup("hi", priorityClassName="high"), pod("hi", "hi")]
    objs[-1]["spec"]["priorityClassName"] = "high"
    configuration = conf(["priority", "gang", "conformance", py.name], actions="preempt")
    assert volcanic.schedule(objs, configuration, now=NOW).evictions == []
    fine, _ = recorder()
    d = volcanic.schedule(objs, conf(["priority", "gang", "conformance", fine.name], actions="preempt"), now=NOW)
    assert len(d.evictions) == 1 and d.pipelined == {"ns/hi": "n1"}


def test_backfill_and_undone_evictions_cannot_be_refused():
    py, events = recorder({"be": "no"})
    best_effort = pod("be", "pg")
    best_effort["spec"]["containers"][0]["resources"] = {}
    d = volcanic.schedule([node("n1"), podgroup("pg"), best_effort], conf(["gang", "predicates", py.name],
                                                                         actions="backfill"), now=NOW)
    assert d.binds == {"ns/be": "n1"} and events == ["+be@n1"]


def test_a_wrong_answer_from_on_allocate_fails_the_session():
    py = make_plugin("events", on_allocate=lambda self, task: 1)
    with pytest.raises(volcanic.PluginError, match="on_allocate returned int; expected None"):
        volcanic.schedule([node("n1"), podgroup("pg"), pod("p", "pg")], conf(["gang", py.name]), now=NOW)


def test_events_are_timed_like_any_hook():
    py, _ = recorder()
    d = volcanic.schedule([node("n1"), podgroup("pg"), pod("p", "pg")], conf(["gang", py.name]), now=NOW)
    assert d.plugin_timings[py.name]["on_allocate"]["calls"] == 1


def test_an_unresolvable_reason_keeps_preempt_off_the_node():
    objs = [priority_class("high", 1000), node("n1", cpu="2"), podgroup("lo"),
            pod("lo-0", "lo", node_name="n1", phase="Running"), pod("lo-1", "lo", node_name="n1", phase="Running"),
            podgroup("hi", priorityClassName="high"), pod("hi", "hi")]
    objs[-1]["spec"]["priorityClassName"] = "high"

    def refusing(reason_type):
        # hi may go to n1 only once something there is being released
        return make_plugin("pred", predicate=lambda self, task, n: reason_type("full")
                           if task.name == "hi" and not n.releasing.cpu else None)

    for reason_type, evicted in ((str, 1), (Unresolvable, 0)):
        py = refusing(reason_type)
        d = volcanic.schedule(objs, conf(["priority", "gang", "conformance"], [py.name],
                                         actions="allocate, preempt"), now=NOW)
        assert len(d.evictions) == evicted


def test_an_instance_may_leave_out_a_hook_its_class_defines():
    class Sometimes(volcanic.Plugin):
        name = "sometimes"

        def __init__(self, arguments):
            super().__init__(arguments)
            if not arguments.get("on"):
                self.predicate = None

        def predicate(self, task, n):
            return "never"

    volcanic.register_plugin(Sometimes)
    try:
        objs = [node("n1"), podgroup("pg"), pod("p", "pg")]
        d = volcanic.schedule(objs, conf(["gang", "sometimes"]), now=NOW)
        assert d.binds == {"ns/p": "n1"} and "predicate" not in d.plugin_timings.get("sometimes", {})
        on = {"name": "sometimes", "arguments": {"on": True}}
        assert volcanic.schedule(objs, conf(["gang", on]), now=NOW).binds == {}
    finally:
        from volcanic.scheduler.plugins import unregister_plugin
        unregister_plugin("sometimes")
