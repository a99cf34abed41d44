"""Hostile input never crashes the process: every failure is InvalidObject or ConfigError."""

from __future__ import annotations

import copy
import json
import threading

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import pytest

from builders import node, pod, podgroup, queue, walk
import volcanic

NOW = 1_700_000_000


def test_deep_nesting_is_refused_not_a_stack_overflow():
    deep: dict = {}
    cursor = deep
    for _ in range(100_000):
        cursor["x"] = {}
        cursor = cursor["x"]
    p = pod("p", "pg")
    p["spec"]["affinity"] = deep
    with pytest.raises(volcanic.InvalidObject, match="nested deeper than 64 levels"):
        volcanic.Scheduler().upsert(p)
    text = '{"kind":"Pod","metadata":{"name":"a"},"spec":{"affinity":{"x":' + "[" * 100_000 + "]" * 100_000 + "}}}"
    with pytest.raises(volcanic.InvalidObject, match="nested deeper than 64 levels"):
        volcanic.Scheduler().upsert(text)


@pytest.mark.parametrize("cpu, message", [
    ("-4", 'quantity "-4" must not be negative'),
    ("10T", 'quantity "10T" is too large'),
])
def test_negative_and_huge_quantities_are_refused(cpu, message):
    with pytest.raises(volcanic.InvalidObject, match=message):
        volcanic.Scheduler().upsert(pod("p", "pg", cpu=cpu))
    with pytest.raises(volcanic.InvalidObject, match=message):
        volcanic.Scheduler().upsert(node("n", cpu=cpu))


def test_out_of_range_integers_are_refused():
    with pytest.raises(volcanic.InvalidObject, match="value: integer out of range"):
        volcanic.Scheduler().upsert({"kind": "PriorityClass", "metadata": {"name": "pc"}, "value": 2**64 - 1})
    with pytest.raises(volcanic.InvalidObject, match="PriorityClass pc: value: out of range"):
        volcanic.Scheduler().upsert('{"kind": "PriorityClass", "metadata": {"name": "pc"}, "value": 18446744073709551615}')
    p = pod("p", "pg")
    p["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 2**32 + 80}]
    with pytest.raises(volcanic.InvalidObject, match=r"hostPort: must be in \[1, 65535\]"):
        volcanic.Scheduler().upsert(p)


@pytest.mark.parametrize("value", ["nan", "inf", "1e999"])
def test_non_finite_plugin_arguments_are_refused(value):
    conf = {"actions": "allocate", "tiers": [{"plugins": [{"name": "binpack", "arguments": {"binpack.weight": value}}]}]}
    with pytest.raises(volcanic.ConfigError, match="binpack.weight must be a finite number"):
        volcanic.Scheduler(conf)
    conf["tiers"][0]["plugins"][0]["arguments"]["binpack.weight"] = float(value)
    with pytest.raises(volcanic.ConfigError, match="not JSON compliant"):
        volcanic.Scheduler(conf)


def test_sessions_and_updates_from_several_threads():
    s = volcanic.Scheduler()
    for i in range(200):
        s.upsert(node(f"n{i}"))
    for j in range(300):
        s.upsert(podgroup(f"pg{j}", 2))
        for t in range(2):
            s.upsert(pod(f"pg{j}-w-{t}", f"pg{j}"))
    errors = []

    def churn():
        try:
            for k in range(300):
                s.delete("Node", f"n{k % 200}")
                s.upsert(node(f"n{k % 200}"))
                s.upsert(pod(f"extra-{k}", None))
        except Exception as e:  # noqa: BLE001 - the test reports any failure
            errors.append(e)

    worker = threading.Thread(target=churn)
    worker.start()
    for _ in range(5):
        s.run_once(NOW)
    worker.join()
    assert errors == []


def test_two_global_default_priority_classes_pick_the_first_by_name():
    objs = [node("n1", cpu="1"),
            {"kind": "PriorityClass", "metadata": {"name": "b-high"}, "value": 100, "globalDefault": True},
            {"kind": "PriorityClass", "metadata": {"name": "a-low"}, "value": 1, "globalDefault": True},
            {"kind": "PriorityClass", "metadata": {"name": "mid"}, "value": 50},
            podgroup("default-prio", 1), podgroup("mid-prio", 1, priorityClassName="mid"),
            pod("d", "default-prio"), pod("m", "mid-prio")]
    conf = "actions: allocate\ntiers:\n- plugins: [{name: priority}, {name: gang}, {name: predicates}]\n"
    # a-low (1) is the default, so the PodGroup with "mid" (50) wins the only CPU.
    assert volcanic.schedule(objs, conf, now=NOW).binds == {"ns/m": "n1"}


def test_gated_pods_wait():
    gated = pod("g", None)
    gated["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    assert volcanic.schedule([node("n1"), gated], now=NOW).binds == {}


def test_queue_capability_of_zero_cpu_means_no_limit():
    objs = [node("n1"), queue("q", capability={"cpu": "0", "nvidia.com/gpu": "1"}), podgroup("pg", 1, queue="q"),
            pod("a", "pg")]
    assert volcanic.schedule(objs, now=NOW).binds == {"ns/a": "n1"}


KINDS = [node("n1"), pod("p", "pg", node_name="n1", phase="Running"), podgroup("pg", 1),
         queue("q", capability={"cpu": "2"}), {"kind": "PriorityClass", "metadata": {"name": "pc"}, "value": 3}]
JUNK = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=8)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(KINDS), st.data(), JUNK)
def test_mutated_objects_raise_invalid_object_or_schedule(base, data, junk):
    obj = copy.deepcopy(base)
    paths = [p for p, _ in walk(obj) if p]
    path = data.draw(st.sampled_from(paths))
    target = obj
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = junk
    s = volcanic.Scheduler()
    try:
        s.upsert(obj)
    except volcanic.InvalidObject:
        return
    s.upsert(node("n2"))
    s.run_once(NOW)
    json.dumps(vars(s.run_once(NOW)))  # decisions are plain data


# Issue "Hardening", defect 9: each bad input raises the error the contract names for it.
@pytest.mark.parametrize("where", ["value", "key", "text"])
def test_a_lone_surrogate_is_an_invalid_object(where):
    p = pod("p", "pg")
    if where == "value":
        p["metadata"]["labels"] = {"app": "a\ud800"}
    elif where == "key":
        p["metadata"]["labels"] = {"a\ud800": "x"}
    with pytest.raises(volcanic.InvalidObject, match="lone surrogate"):
        volcanic.Scheduler().upsert(json.dumps(p, ensure_ascii=False) + "\ud800" if where == "text" else p)


@pytest.mark.parametrize("kind", [["Pod"], {"Pod": 1}, 3])
def test_a_kind_that_is_not_a_string_is_an_invalid_object(kind):
    with pytest.raises(volcanic.InvalidObject, match="kind: must be a string"):
        volcanic.schedule([{"kind": kind, "metadata": {"name": "a"}}])


@pytest.mark.parametrize("argument", [{"enableTopologyAwarePreemption": "sometimes"},
                                      {"minCandidateNodesAbsolute": -1}, {"noSuchSwitch": True}])
def test_a_bad_preempt_argument_is_a_config_error_naming_it(argument):
    conf = {"actions": "preempt", "tiers": [{"plugins": [{"name": "gang"}]}],
            "configurations": [{"name": "preempt", "arguments": argument}]}
    with pytest.raises(volcanic.ConfigError, match=next(iter(argument))):
        volcanic.Scheduler(conf)


@pytest.mark.parametrize("now", [1e300, float("inf"), float("nan"), True, "0"])
def test_run_once_refuses_a_time_it_cannot_hold(now):
    with pytest.raises(ValueError, match="now: must be Unix seconds"):
        volcanic.Scheduler().run_once(now=now)
