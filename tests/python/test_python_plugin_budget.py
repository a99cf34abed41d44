"""A Scheduler's python_hook_budget bounds the wall time all Python hooks of one session take
together: the call that exhausts it fails the session with volcanic.PluginError naming the
plugin and the hook, and the session is rolled back. A hook running Python code is
interrupted; a hook blocked in C fails when it returns (docs/plugins-python.md, "Time
budget")."""

from __future__ import annotations

import time

import pytest

from builders import node, pod, podgroup
from pyplugin_helpers import NOW, conf, make_plugin
import volcanic

OBJECTS = [node("n1"), node("n2"), podgroup("pg"), pod("p", "pg")]


def scheduler(plugin: type, budget: float | None) -> volcanic.Scheduler:
    s = volcanic.Scheduler(conf(["gang", plugin.name]), python_hook_budget=budget)
    for obj in OBJECTS:
        s.upsert(obj)
    return s


def spin(self, task, n):
    """A hook stuck in Python code; `except Exception` does not stop the budget."""
    try:
        while True:
            pass
    except Exception:
        return 0.0


def test_a_hook_stuck_in_python_is_interrupted_and_the_session_rolled_back():
    stuck = {"on": True}

    def node_order(self, task, n):
        return spin(self, task, n) if stuck["on"] else (5.0 if n.name == "n2" else 0.0)
    plugin = make_plugin("spinning", node_order=node_order)
    s = scheduler(plugin, 0.2)
    start = time.monotonic()
    with pytest.raises(volcanic.PluginError) as e:
        s.run_once(now=NOW)
    assert time.monotonic() - start < 5  # interrupted, not waited out
    assert e.value.plugin == plugin.name
    assert str(e.value).startswith(f'plugin "{plugin.name}" exceeded the Python hook time budget in node_order: '
                                   "Python hooks took ")
    assert str(e.value).endswith("over the budget of 0.2 s (Scheduler python_hook_budget)")
    stuck["on"] = False
    # Rolled back: the session UID and the bind are those of a scheduler that never failed.
    again = s.run_once(now=NOW)
    fresh = scheduler(plugin, 0.2).run_once(now=NOW)
    assert again.outcome() == fresh.outcome()
    assert again.binds == {"ns/p": "n2"}


def test_a_hook_blocked_in_c_fails_when_it_returns():
    plugin = make_plugin("sleeping", node_order=lambda self, task, n: time.sleep(0.3) or 0.0)
    s = scheduler(plugin, 0.05)
    start = time.monotonic()
    with pytest.raises(volcanic.PluginError, match=f'plugin "{plugin.name}" exceeded the Python hook time budget '
                                                    "in node_order"):
        s.run_once(now=NOW)
    assert time.monotonic() - start >= 0.3


def test_the_budget_is_for_all_calls_of_a_session_together_and_starts_afresh_each_session():
    calls = []

    def node_order(self, task, n):
        calls.append(n.name)
        time.sleep(0.1)
        return 0.0
    plugin = make_plugin("slowish", node_order=node_order)
    s = scheduler(plugin, 1.0)
    for _ in range(6):  # about 0.2 s a session (two nodes), 1.2 s in all: sessions do not add up
        assert s.run_once(now=NOW).binds == {"ns/p": "n1"}
        s.forget("ns/p")
    calls.clear()
    with pytest.raises(volcanic.PluginError, match="exceeded the Python hook time budget in node_order"):
        scheduler(plugin, 0.18).run_once(now=NOW)  # the calls of one session add up: the second goes over
    assert len(calls) == 2


def test_without_a_budget_a_slow_hook_only_takes_its_time():
    plugin = make_plugin("unbounded", node_order=lambda self, task, n: time.sleep(0.05) or 0.0)
    assert scheduler(plugin, None).run_once(now=NOW).binds == {"ns/p": "n1"}


@pytest.mark.parametrize("budget", [0, -1, float("nan"), float("inf"), True, "1"])
def test_a_bad_budget_is_refused(budget):
    with pytest.raises(ValueError, match="python_hook_budget: must be a positive number of seconds or None"):
        volcanic.Scheduler(python_hook_budget=budget)


def test_the_embedded_cluster_gives_its_scheduler_the_budget():
    """Cluster(python_hook_budget=...) (and `volcanic scheduler --python-hook-budget`, through
    the same SchedulerLoop): a session past the budget binds nothing and its error is kept."""
    from job_helpers import job, pods, task
    from job_helpers import node as cluster_node
    slow = {"on": True}
    plugin = make_plugin("sleeping-cluster",
                         node_order=lambda self, task, n: (time.sleep(0.2) if slow["on"] else None) or 0.0)
    c = volcanic.Cluster(conf(["gang", plugin.name], actions="enqueue, allocate"), python_hook_budget=0.1)
    c.apply([cluster_node("n1"), cluster_node("n2"), job("j", task("t", 1))])  # two nodes: scored
    c.run(2)
    assert not any(p["spec"].get("nodeName") for p in pods(c).values())
    assert any("exceeded the Python hook time budget in node_order" in e for e in c.errors)
    slow["on"] = False
    c.run(1)
    assert all(p["spec"].get("nodeName") for p in pods(c).values())


def test_the_scheduler_command_takes_a_budget():
    from volcanic.cli.main import build_parser
    args = build_parser().parse_args(["scheduler", "--python-hook-budget", "500ms"])
    assert args.python_hook_budget == 0.5
    with pytest.raises(SystemExit):  # refused when parsed, not when the scheduler starts
        build_parser().parse_args(["scheduler", "--python-hook-budget", "0s"])
