"""A Python plugin that raises, or answers a hook with the wrong type, fails the session with
volcanic.PluginError naming the plugin, the hook and the traceback, and leaves the cache as it
was: the next session decides exactly what a fresh scheduler decides (docs/plugins-python.md,
"Errors")."""

from __future__ import annotations

import pytest

from builders import node, pod, podgroup, queue
from pyplugin_helpers import NOW, conf, decisions, make_plugin, priority_class, scenario_objects
import volcanic


class Faulty(volcanic.Plugin):
    """Defines every hook with a neutral answer; raises ZeroDivisionError in `fail_in` when the
    hook's argument is named `fail_on` (or on its first call when fail_on is None)."""

    name = "faulty"
    fail_in: str | None = None
    fail_on: str | None = None
    calls: dict[str, int] = {}

    def _hook(self, hook, *objs):
        Faulty.calls[hook] = Faulty.calls.get(hook, 0) + 1
        if hook == Faulty.fail_in and (Faulty.fail_on is None or any(o.name == Faulty.fail_on for o in objs)):
            return 1 / 0

    def job_order(self, a, b):
        self._hook("job_order", a, b)
        return 0

    def task_order(self, a, b):
        self._hook("task_order", a, b)
        return 0

    def queue_order(self, a, b):
        self._hook("queue_order", a, b)
        return 0

    def predicate(self, task, n):
        self._hook("predicate", task)

    def node_order(self, task, n):
        self._hook("node_order", task)
        return 0.0

    def batch_node_order(self, task, nodes):
        self._hook("batch_node_order", task)
        return [0.0] * len(nodes)

    def preemptable(self, preemptor, candidates):
        self._hook("preemptable", preemptor)

    def reclaimable(self, reclaimer, candidates):
        self._hook("reclaimable", reclaimer)

    def job_ready(self, job):
        self._hook("job_ready", job)
        return True

    def job_pipelined(self, job):
        self._hook("job_pipelined", job)

    def job_enqueueable(self, job):
        self._hook("job_enqueueable", job)

    def overused(self, queue):
        self._hook("overused", queue)
        return False

    def on_session_open(self, session):
        self._hook("on_session_open")

    def on_session_close(self, session):
        self._hook("on_session_close")


volcanic.register_plugin(Faulty)


@pytest.fixture(autouse=True)
def reset_faulty():
    Faulty.fail_in, Faulty.fail_on, Faulty.calls = None, None, {}
    yield
    Faulty.fail_in, Faulty.fail_on = None, None


def allocate_cluster():
    """Two queues; an early job binds and commits before a late one; a Pending PodGroup the
    session enqueues; a gang that cannot fit gets its Unschedulable condition at close."""
    return [priority_class("high", 1000), priority_class("low", 10), node("n1", cpu="4"), node("n2", cpu="4"),
            queue("q1"), queue("q2"),
            podgroup("early", 2, queue="q1", priorityClassName="high"), pod("e0", "early"), pod("e1", "early"),
            podgroup("late", 1, queue="q1", priorityClassName="low"), pod("l0", "late"),
            podgroup("pending", 1, queue="q2", phase="Pending", minResources={"cpu": "1"}), pod("w0", "pending"),
            podgroup("huge", 1, queue="q2"), pod("h0", "huge", cpu="16")]


ALLOCATE_CONF = conf(["priority", "gang", "faulty"], ["predicates", "proportion", "nodeorder"],
                     actions="enqueue, allocate, backfill")
PREEMPT = "preempt/enough-tasks-for-large-task-of-other-job.yaml"
PREEMPT_CONF = conf(["conformance", "gang", "priority", "proportion", "faulty"], actions="preempt")
RECLAIM = "reclaim/overusing-queue-gives-back-preemptable-task.yaml"
RECLAIM_CONF = conf(["conformance", "gang", "proportion", "faulty"], actions="reclaim")


def fails_then_recovers(objs, configuration, hook, fail_on=None):
    """Runs a session failing in `hook`, checks the error, then checks the next session (the
    plugin behaving) decides what a fresh scheduler decides. Returns the error."""
    s = volcanic.Scheduler(configuration)
    for obj in objs:
        s.upsert(obj)
    Faulty.fail_in, Faulty.fail_on = hook, fail_on
    with pytest.raises(volcanic.PluginError) as e:
        s.run_once(now=NOW)
    assert Faulty.calls.get(hook), f"{hook} was never called"
    Faulty.fail_in = None
    again = s.run_once(now=NOW)
    fresh = volcanic.Scheduler(configuration)
    for obj in objs:
        fresh.upsert(obj)
    assert decisions(again) == decisions(fresh.run_once(now=NOW))
    return e.value


def check_error(error, hook):
    assert error.plugin == "faulty"
    text = str(error)
    assert text.startswith(f'plugin "faulty" failed in {hook}:\nTraceback (most recent call last):')
    assert "in _hook" in text and text.endswith("ZeroDivisionError: division by zero")


@pytest.mark.parametrize("hook", ["job_order", "task_order", "queue_order", "predicate", "node_order",
                                  "batch_node_order", "job_ready", "job_enqueueable", "overused",
                                  "on_session_open", "on_session_close"])
def test_an_exception_in_any_hook_fails_the_session_and_changes_nothing(hook):
    check_error(fails_then_recovers(allocate_cluster(), ALLOCATE_CONF, hook), hook)


def test_exceptions_in_victim_and_pipeline_hooks():
    check_error(fails_then_recovers(scenario_objects(PREEMPT), PREEMPT_CONF, "preemptable"), "preemptable")
    check_error(fails_then_recovers(scenario_objects(RECLAIM), RECLAIM_CONF, "reclaimable"), "reclaimable")
    pipeline = scenario_objects("allocate/pipeline-onto-releasing-resources.yaml")
    check_error(fails_then_recovers(pipeline, conf(["gang", "predicates", "faulty"]), "job_pipelined"),
                "job_pipelined")


def test_binds_committed_before_the_failure_are_rolled_back():
    # early binds and commits first (higher priority); job_ready then raises for late.
    fails_then_recovers(allocate_cluster(), ALLOCATE_CONF, "job_ready", fail_on="late")
    s = volcanic.Scheduler(ALLOCATE_CONF)
    for obj in allocate_cluster():
        s.upsert(obj)
    Faulty.fail_in, Faulty.fail_on = "job_ready", "late"
    with pytest.raises(volcanic.PluginError):
        s.run_once(now=NOW)
    Faulty.fail_in = None
    d = s.run_once(now=NOW)
    assert {"ns/e0", "ns/e1", "ns/l0", "ns/w0"} <= set(d.binds)
    assert d.podgroups["ns/pending"]["phase"] == "Inqueue"
    assert d.podgroups["ns/huge"]["conditions"][0]["transitionID"] == "session-1"


def test_evictions_and_pipelines_committed_before_the_failure_are_rolled_back():
    # on_session_close runs after preempt committed its evictions.
    objs = scenario_objects(PREEMPT)
    fails_then_recovers(objs, PREEMPT_CONF, "on_session_close")
    s = volcanic.Scheduler(PREEMPT_CONF)
    for obj in objs:
        s.upsert(obj)
    Faulty.fail_in = "on_session_close"
    with pytest.raises(volcanic.PluginError):
        s.run_once(now=NOW)
    Faulty.fail_in = None
    d = s.run_once(now=NOW)
    assert d.evictions == ["c1/preemptee2", "c1/preemptee1"] and d.pipelined == {"c1/preemptor1": "n1"}


def test_after_a_failure_no_plugin_hook_is_called_again():
    s = volcanic.Scheduler(ALLOCATE_CONF)
    for obj in allocate_cluster():
        s.upsert(obj)
    Faulty.fail_in = "on_session_open"
    with pytest.raises(volcanic.PluginError):
        s.run_once(now=NOW)
    assert Faulty.calls == {"on_session_open": 1}


@pytest.mark.parametrize("hooks, message", [
    ({"job_order": lambda self, a, b: "first"}, "job_order returned str; expected an int"),
    ({"job_order": lambda self, a, b: float("nan")}, "job_order returned nan; expected an int"),
    ({"predicate": lambda self, t, n: 1}, "predicate returned int; expected None (fits) or a str"),
    ({"node_order": lambda self, t, n: None}, "node_order returned NoneType; expected a number"),
    ({"node_order": lambda self, t, n: float("inf")}, "node_order returned inf; expected a finite number"),
    ({"batch_node_order": lambda self, t, nodes: [1.0]}, "batch_node_order returned 1 scores for 2 nodes"),
    ({"batch_node_order": lambda self, t, nodes: {n.name: 1.0 for n in nodes}},
     "batch_node_order returned dict; expected a sequence of numbers, one per node"),
    ({"batch_node_order": lambda self, t, nodes: ["1"] * len(nodes)},
     "batch_node_order returned str; expected a number"),
    ({"job_ready": lambda self, job: None}, "job_ready returned NoneType; expected a bool"),
    ({"job_ready": lambda self, job: 1}, "job_ready returned int; expected a bool"),
    ({"overused": lambda self, q: "no"}, "overused returned str; expected a bool"),
])
def test_an_answer_of_the_wrong_type_is_a_plugin_error(hooks, message):
    plugin = make_plugin("wrong", **hooks)
    objs = [node("n1"), node("n2"), podgroup("pg"), pod("p", "pg"), podgroup("pg2"), pod("q", "pg2")]
    with pytest.raises(volcanic.PluginError) as e:
        volcanic.schedule(objs, conf(["gang", plugin.name]), now=NOW)
    assert e.value.plugin == plugin.name
    assert str(e.value).startswith(f'plugin "{plugin.name}" failed in {message.split()[0]}:\n{message}')


def test_wrong_votes_and_victims_are_plugin_errors():
    vote = make_plugin("wrong", job_enqueueable=lambda self, job: 1)
    objs = [node("n1"), podgroup("pg", phase="Pending", minResources={"cpu": "1"}), pod("p", "pg")]
    with pytest.raises(volcanic.PluginError, match="job_enqueueable returned int; expected True"):
        volcanic.schedule(objs, conf(["gang", vote.name], actions="enqueue"), now=NOW)
    stranger = make_plugin("wrong", preemptable=lambda self, p, candidates: ["c1/preemptor1"])
    preempt = conf(["conformance", "gang", "priority", stranger.name], actions="preempt")
    with pytest.raises(volcanic.PluginError, match="preemptable returned c1/preemptor1, which is not a candidate"):
        volcanic.schedule(scenario_objects(PREEMPT), preempt, now=NOW)
    text = make_plugin("wrong", reclaimable=lambda self, r, candidates: "c1/preemptee2")
    reclaim = conf(["conformance", "gang", "proportion", text.name], actions="reclaim")
    with pytest.raises(volcanic.PluginError, match="reclaimable returned str; expected None"):
        volcanic.schedule(scenario_objects(RECLAIM), reclaim, now=NOW)


def test_failing_constructor():
    class Broken(volcanic.Plugin):
        name = "broken-init"
        sessions = 0

        def __init__(self, arguments):
            super().__init__(arguments)
            Broken.sessions += 1
            if Broken.sessions > 1:
                raise RuntimeError("cannot start")
    volcanic.register_plugin(Broken)
    objs = [node("n1"), podgroup("pg"), pod("p", "pg")]
    s = volcanic.Scheduler(conf(["gang", "broken-init"]))  # the first build checks the arguments
    for obj in objs:
        s.upsert(obj)
    with pytest.raises(volcanic.PluginError, match=r'(?s)plugin "broken-init" failed in __init__:\nTraceback.*'
                                                   r"RuntimeError: cannot start$") as e:
        s.run_once(now=NOW)
    assert e.value.plugin == "broken-init"
    Broken.sessions = -10
    assert decisions(s.run_once(now=NOW)) == decisions(volcanic.schedule(objs, conf(["gang"]), now=NOW))
    Broken.sessions = 1
    with pytest.raises(volcanic.PluginError, match="cannot start"):
        volcanic.Scheduler(conf(["broken-init"]))


def test_a_hook_cannot_call_back_into_its_own_scheduler():
    holder = {}

    def predicate(self, task, n):
        holder["s"].upsert(node("n9"))
    plugin = make_plugin("reentrant", predicate=predicate)
    s = holder["s"] = volcanic.Scheduler(conf(["gang", plugin.name]))
    for obj in [node("n1"), podgroup("pg"), pod("p", "pg")]:
        s.upsert(obj)
    with pytest.raises(volcanic.PluginError, match="cannot use the Scheduler whose session is running it"):
        s.run_once(now=NOW)
    # The scheduler still works (the mutex was never taken twice).
    s.upsert(node("n2"))


# Issue "Hardening", defect 6: SystemExit and KeyboardInterrupt are not errors of the plugin but
# requests to stop; they reach the caller as themselves, after the session is rolled back.
@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit])
def test_an_interrupt_in_a_hook_propagates_after_the_session_is_rolled_back(interrupt):
    raised = []

    def job_order(self, a, b):
        if not raised:
            raised.append(True)
            raise interrupt()
        return 0
    py = make_plugin(job_order=job_order)
    objs = allocate_cluster()
    configuration = conf(["priority", "gang", py.name], ["predicates", "proportion", "nodeorder"],
                         actions="enqueue, allocate, backfill")
    s = volcanic.Scheduler(configuration)
    for obj in objs:
        s.upsert(obj)
    with pytest.raises(interrupt):
        s.run_once(now=NOW)
    assert decisions(s.run_once(now=NOW)) == decisions(volcanic.schedule(objs, configuration, now=NOW))


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit])
def test_an_interrupt_in_a_constructor_propagates(interrupt):
    class Interrupted(volcanic.Plugin):
        name = f"interrupted-init-{interrupt.__name__}"

        def __init__(self, arguments):
            raise interrupt()
    volcanic.register_plugin(Interrupted)
    with pytest.raises(interrupt):
        volcanic.Scheduler(conf(["gang", Interrupted.name]))
    objs = [node("n1"), podgroup("pg"), pod("p", "pg")]
    assert volcanic.schedule(objs, conf(["gang"]), now=NOW).binds == {"ns/p": "n1"}  # nothing left pending
