"""Python scheduler plugins (docs/plugins-python.md): every hook through volcanic.schedule and
volcanic.Scheduler, in tiers beside native plugins, with Volcano's combination rules
(reference §4.4: first non-zero order wins, AND of predicates, votes, victim intersection
within a tier) and enable flags."""

from __future__ import annotations

import copy

import pytest

from builders import node, pod, podgroup, queue
from pyplugin_helpers import NOW, conf, decisions, make_plugin, priority_class, scenario_objects
import volcanic
from volcanic.scheduler.plugins import plugin_names, unregister_plugin


def prefer(name_of_first: str):
    """An order hook putting the object named `name_of_first` first."""
    return lambda self, a, b: (a.name != name_of_first) - (b.name != name_of_first)


# Orders: the first plugin in tier order with an opinion decides (tiers.h FirstNonZero).

def test_python_job_order_before_native_priority_wins():
    objs = [priority_class("high", 1000), priority_class("low", 10), node("n1", cpu="2"),
            podgroup("hi", priorityClassName="high"), pod("hi-0", "hi", cpu="2"),
            podgroup("lo", priorityClassName="low"), pod("lo-0", "lo", cpu="2")]
    py = make_plugin(job_order=prefer("lo"))
    assert volcanic.schedule(objs, conf(["priority", "gang"], ["predicates"]), now=NOW).binds == {"ns/hi-0": "n1"}
    assert volcanic.schedule(objs, conf([py.name, "priority", "gang"], ["predicates"]), now=NOW).binds == \
        {"ns/lo-0": "n1"}
    # After priority in the tier, priority's opinion comes first.
    assert volcanic.schedule(objs, conf(["priority", py.name, "gang"], ["predicates"]), now=NOW).binds == \
        {"ns/hi-0": "n1"}
    # enableJobOrder: false leaves the Python hook out.
    off = {"name": py.name, "enableJobOrder": False}
    assert volcanic.schedule(objs, conf([off, "priority", "gang"], ["predicates"]), now=NOW).binds == \
        {"ns/hi-0": "n1"}


def test_python_task_order_picks_the_task_and_yields_to_priority_before_it():
    a, b = pod("a", "pg", cpu="2"), pod("b", "pg", cpu="2")
    a["spec"]["priority"] = 100
    objs = [node("n1", cpu="2"), podgroup("pg"), a, b]
    py = make_plugin(task_order=prefer("b"))
    assert volcanic.schedule(objs, conf([py.name, "priority", "gang"]), now=NOW).binds == {"ns/b": "n1"}
    assert volcanic.schedule(objs, conf(["priority", py.name, "gang"]), now=NOW).binds == {"ns/a": "n1"}


def test_python_queue_order_picks_the_queue():
    objs = [node("n1", cpu="2"), queue("q1"), queue("q2"), podgroup("pg1", queue="q1"), pod("p1", "pg1", cpu="2"),
            podgroup("pg2", queue="q2"), pod("p2", "pg2", cpu="2")]
    py = make_plugin(queue_order=prefer("q2"))
    assert volcanic.schedule(objs, conf([py.name, "gang"]), now=NOW).binds == {"ns/p2": "n1"}
    assert volcanic.schedule(objs, conf([py.name, "gang"]), now=NOW).binds == {"ns/p2": "n1"}
    prefer_q1 = make_plugin(queue_order=prefer("q1"))
    assert volcanic.schedule(objs, conf([prefer_q1.name, py.name, "gang"]), now=NOW).binds == {"ns/p1": "n1"}


# Predicates: AND with the native ones; the reason shows in the unschedulable histogram.

@pytest.mark.parametrize("node_local", [False, True])
def test_python_predicate_rejects_with_its_reason(node_local):
    py = make_plugin(node_local=node_local,
                     predicate=lambda self, task, n: "node is bad" if n.labels.get("bad") == "yes" else None)
    objs = [node("n1", labels={"bad": "yes"}), node("n2", labels={"bad": "yes"}), node("n3", cpu="1"),
            podgroup("pg"), pod("p", "pg", cpu="2")]
    d = volcanic.schedule(objs, conf(["gang", "predicates", py.name]), now=NOW)
    assert d.binds == {}
    assert d.unschedulable["ns/p"] == "0/3 nodes are unavailable: 1 Insufficient cpu, 2 node is bad."
    objs.append(node("n4"))
    assert volcanic.schedule(objs, conf(["gang", "predicates", py.name]), now=NOW).binds == {"ns/p": "n4"}
    # enablePredicate: false leaves it out: n1 is the first node by name.
    off = {"name": py.name, "enablePredicate": False}
    assert volcanic.schedule(objs, conf(["gang", "predicates", off]), now=NOW).binds == {"ns/p": "n1"}


def test_python_predicate_and_native_predicate_both_apply():
    py = make_plugin(predicate=lambda self, task, n: None if n.name != "n2" else "no n2")
    objs = [node("n1", labels={"zone": "b"}), node("n2", labels={"zone": "a"}), node("n3", labels={"zone": "a"}),
            podgroup("pg"), pod("p", "pg")]
    objs[-1]["spec"]["nodeSelector"] = {"zone": "a"}
    assert volcanic.schedule(objs, conf(["gang", "predicates", py.name]), now=NOW).binds == {"ns/p": "n3"}


# Scores: summed with the native ones; enableNodeOrder applies.

@pytest.mark.parametrize("node_local", [False, True])
def test_python_node_order_scores_add_to_native_ones(node_local):
    py = make_plugin(node_local=node_local, node_order=lambda self, task, n: 1000.0 if n.name == "n2" else 0)
    objs = [node("n1"), node("n2"), node("n3", cpu="8"), podgroup("pg"), pod("p", "pg")]
    assert volcanic.schedule(objs, conf(["gang", "predicates", "nodeorder"]), now=NOW).binds == {"ns/p": "n3"}
    assert volcanic.schedule(objs, conf(["gang", "predicates", "nodeorder", py.name]), now=NOW).binds == \
        {"ns/p": "n2"}
    off = {"name": py.name, "enableNodeOrder": False}
    assert volcanic.schedule(objs, conf(["gang", "predicates", "nodeorder", off]), now=NOW).binds == {"ns/p": "n3"}


@pytest.mark.parametrize("node_local", [False, True])
def test_python_batch_node_order_scores_the_fitting_nodes(node_local):
    seen = []

    def batch(self, task, nodes):
        seen.append(sorted(n.name for n in nodes))
        return [10.0 if n.name == "n3" else 1 for n in nodes]
    py = make_plugin(node_local=node_local, batch_node_order=batch)
    objs = [node("n1"), node("n2", cpu="1"), node("n3"), node("n4"), podgroup("pg"), pod("p", "pg", cpu="2")]
    assert volcanic.schedule(objs, conf(["gang", "predicates", py.name]), now=NOW).binds == {"ns/p": "n3"}
    assert seen == [["n1", "n3", "n4"]]


def test_node_local_batch_scores_only_nodes_that_changed():
    calls = {True: [], False: []}

    def counting(node_local):
        return make_plugin(node_local=node_local,
                           batch_node_order=lambda self, task, nodes: calls[node_local].append(len(nodes))
                           or [0.0] * len(nodes))
    objs = [node(f"n{i}", cpu="8") for i in range(10)]
    for j in range(5):
        objs += [podgroup(f"pg{j}"), pod(f"p{j}", f"pg{j}", cpu="1")]
    local, generic = counting(True), counting(False)
    a = volcanic.schedule(objs, conf(["gang", local.name]), now=NOW)
    b = volcanic.schedule(objs, conf(["gang", generic.name]), now=NOW)
    assert a.binds == b.binds and len(a.binds) == 5
    # One task class: all 10 nodes once, then only the node the last placement changed.
    assert calls[True] == [10, 1, 1, 1, 1]
    assert calls[False] == [10] * 5


# Victims: within a tier the answers intersect; a later tier is asked only when the set is empty.

PREEMPT = "preempt/enough-tasks-for-large-task-of-other-job.yaml"


def preempt_objects() -> list[dict]:
    """Volcano's preempt case with a preemptor that one eviction makes room for."""
    objs = copy.deepcopy(scenario_objects(PREEMPT))
    preemptor = next(o for o in objs if o["metadata"]["name"] == "preemptor1")
    preemptor["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "4", "memory": "4G"}
    return objs


def preempt_conf(*extra_first_tier, second_tier=()):
    first = [{"name": "conformance"}, {"name": "gang"}, {"name": "priority"}, {"name": "proportion"},
             *extra_first_tier]
    tiers = [first] + ([list(second_tier)] if second_tier else [])
    return conf(*tiers, actions="preempt")


def test_python_preemptable_intersects_with_native_victims_in_its_tier():
    objs = preempt_objects()
    assert volcanic.schedule(objs, preempt_conf(), now=NOW).evictions == ["c1/preemptee2"]
    only_first = make_plugin(preemptable=lambda self, preemptor, candidates:
                             [c for c in candidates if c.name == "preemptee1"])
    d = volcanic.schedule(objs, preempt_conf(only_first.name), now=NOW)
    assert d.evictions == ["c1/preemptee1"] and d.pipelined == {"c1/preemptor1": "n1"}
    # Task keys work as well as views.
    by_key = make_plugin(preemptable=lambda self, preemptor, candidates: ["c1/preemptee1"])
    assert volcanic.schedule(objs, preempt_conf(by_key.name), now=NOW).evictions == ["c1/preemptee1"]
    # In a later tier it is not asked: the first tier's victims decide.
    assert volcanic.schedule(objs, preempt_conf(second_tier=[only_first.name]), now=NOW).evictions == \
        ["c1/preemptee2"]
    # An empty answer empties the tier's set: nothing is evicted.
    none = make_plugin(preemptable=lambda self, preemptor, candidates: [])
    assert volcanic.schedule(objs, preempt_conf(none.name), now=NOW).evictions == []
    off = {"name": none.name, "enablePreemptable": False}
    assert volcanic.schedule(objs, preempt_conf(off), now=NOW).evictions == ["c1/preemptee2"]


def test_python_preemptable_sees_the_preemptor_and_the_candidates():
    seen = []

    def record(self, preemptor, candidates):
        seen.append((preemptor.key, sorted(c.key for c in candidates)))
        return None  # abstains
    py = make_plugin(preemptable=record)
    d = volcanic.schedule(preempt_objects(), preempt_conf(py.name), now=NOW)
    assert d.evictions == ["c1/preemptee2"]
    # preemptee3 is labelled not preemptable: the action leaves it out before asking plugins.
    assert seen and seen[0] == ("c1/preemptor1", ["c1/preemptee1", "c1/preemptee2"])


def test_python_reclaimable_abstains_or_vetoes():
    objs = scenario_objects("reclaim/overusing-queue-gives-back-preemptable-task.yaml")
    tier = [{"name": "conformance"}, {"name": "gang"}, {"name": "proportion"}]
    assert volcanic.schedule(objs, conf(tier, actions="reclaim"), now=NOW).evictions == ["c1/preemptee2"]
    abstain = make_plugin(reclaimable=lambda self, reclaimer, candidates: None)
    veto = make_plugin(reclaimable=lambda self, reclaimer, candidates: [])
    assert volcanic.schedule(objs, conf(tier + [{"name": abstain.name}], actions="reclaim"), now=NOW).evictions == \
        ["c1/preemptee2"]
    d = volcanic.schedule(objs, conf(tier + [{"name": veto.name}], actions="reclaim"), now=NOW)
    assert d.evictions == [] and d.pipelined == {}
    off = {"name": veto.name, "enableReclaimable": False}
    assert volcanic.schedule(objs, conf(tier + [off], actions="reclaim"), now=NOW).evictions == ["c1/preemptee2"]


# Job predicates and votes.

def test_python_job_ready_false_keeps_the_job_unbound():
    objs = [node("n1"), podgroup("pg"), pod("p", "pg")]
    never = make_plugin(job_ready=lambda self, job: False)
    always = make_plugin(job_ready=lambda self, job: True)
    assert volcanic.schedule(objs, conf(["gang", never.name]), now=NOW).binds == {}
    assert volcanic.schedule(objs, conf(["gang", always.name]), now=NOW).binds == {"ns/p": "n1"}
    off = {"name": never.name, "enableJobReady": False}
    assert volcanic.schedule(objs, conf(["gang", off]), now=NOW).binds == {"ns/p": "n1"}


def test_python_job_pipelined_reject_vote_rejects():
    objs = scenario_objects("allocate/pipeline-onto-releasing-resources.yaml")
    reject = make_plugin(job_pipelined=lambda self, job: False)
    abstain = make_plugin(job_pipelined=lambda self, job: None)
    permit = make_plugin(job_pipelined=lambda self, job: True)
    for plugin, pipelined in [(abstain, {"c1/new": "n1"}), (permit, {"c1/new": "n1"}), (reject, {})]:
        d = volcanic.schedule(objs, conf(["gang", "predicates", plugin.name]), now=NOW)
        assert d.pipelined == pipelined, plugin.name
    # A Permit in an earlier tier decides before gang's Reject in a later one: gang rejects a
    # job with fewer tasks pipelined or ready than minMember (here 1 of 2; two more tasks
    # fit nowhere, so the job stays valid and allocate goes on after them).
    objs = copy.deepcopy(objs)
    next(o for o in objs if o["metadata"]["name"] == "pg1")["spec"]["minMember"] = 2
    new = next(o for o in objs if o["metadata"]["name"] == "new")
    for name in ("new2", "new3"):
        big = copy.deepcopy(new)
        big["metadata"]["name"] = name
        big["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "4"
        objs.append(big)
    first = make_plugin(task_order=prefer("new"))
    assert volcanic.schedule(objs, conf([first.name], ["gang", "predicates"]), now=NOW).pipelined == {}
    d = volcanic.schedule(objs, conf([first.name, permit.name], ["gang", "predicates"]), now=NOW)
    assert d.pipelined == {"c1/new": "n1"}


def test_python_job_enqueueable_votes_and_its_enable_flag():
    # Volcano asks the vote only for a PodGroup with minResources.
    objs = [node("n1"), podgroup("pg", phase="Pending", minResources={"cpu": "1"}), pod("p", "pg")]
    reject = make_plugin(job_enqueueable=lambda self, job: False if job.name == "pg" else None)
    d = volcanic.schedule(objs, conf(["gang", reject.name], actions="enqueue, allocate"), now=NOW)
    assert d.podgroups["ns/pg"]["phase"] == "Pending" and d.binds == {}
    off = {"name": reject.name, "enableJobEnqueued": False}
    d = volcanic.schedule(objs, conf(["gang", off], actions="enqueue, allocate"), now=NOW)
    assert d.podgroups["ns/pg"]["phase"] == "Inqueue" and d.binds == {"ns/p": "n1"}


def test_python_overused_skips_the_queue():
    objs = [node("n1"), node("n2"), queue("q1"), queue("q2"), podgroup("pg1", queue="q1"), pod("p1", "pg1"),
            podgroup("pg2", queue="q2"), pod("p2", "pg2")]
    py = make_plugin(overused=lambda self, q: q.name == "q1")
    assert volcanic.schedule(objs, conf(["gang", py.name]), now=NOW).binds == {"ns/p2": "n1"}
    off = {"name": py.name, "enabledOverused": False}
    assert sorted(volcanic.schedule(objs, conf(["gang", off]), now=NOW).binds) == ["ns/p1", "ns/p2"]


# Session hooks, arguments, Scheduler.

def test_session_hooks_see_the_session_before_and_after_the_actions():
    seen = []

    class Watcher(volcanic.Plugin):
        name = "watcher"

        def on_session_open(self, session):
            seen.append(("open", session.now, session.uid, [j.key for j in session.jobs],
                         [n.name for n in session.nodes], [q.name for q in session.queues],
                         [t.status for t in session.jobs[0].tasks]))

        def on_session_close(self, session):
            seen.append(("close", [t.status for t in session.jobs[0].tasks]))
    volcanic.register_plugin(Watcher)
    s = volcanic.Scheduler(conf(["gang", "watcher"]))
    for obj in [node("n1"), node("n2"), podgroup("pg"), pod("p", "pg")]:
        s.upsert(obj)
    assert s.run_once(now=NOW).binds == {"ns/p": "n1"}
    assert seen == [("open", NOW, "session-1", ["ns/pg"], ["n1", "n2"], ["default", "root"], ["Pending"]),
                    ("close", ["Binding"])]


def test_arguments_reach_the_plugin_and_bad_ones_are_config_errors():
    got = []

    class Args(volcanic.Plugin):
        name = "args"

        def __init__(self, arguments):
            super().__init__(arguments)
            if set(arguments) - {"weight", "mode"}:
                raise ValueError(f"unknown argument {sorted(set(arguments) - {'weight', 'mode'})[0]}")
            got.append(dict(arguments))

        def node_order(self, task, n):
            return float(self.arguments.get("weight", 0)) * (n.name == "n2")
    volcanic.register_plugin(Args)
    objs = [node("n1"), node("n2"), podgroup("pg"), pod("p", "pg")]
    d = volcanic.schedule(objs, conf(["gang", {"name": "args", "arguments": {"weight": 2, "mode": "x"}}]), now=NOW)
    assert d.binds == {"ns/p": "n2"}
    assert got[-1] == {"weight": 2, "mode": "x"}
    volcanic.schedule(objs, conf(["gang", "args"]), now=NOW)
    assert got[-1] == {}
    with pytest.raises(volcanic.ConfigError, match=r"^plugin args: unknown argument extra$"):
        volcanic.Scheduler(conf([{"name": "args", "arguments": {"extra": 1}}]))


def test_a_plugin_is_built_per_session_and_hooks_run_through_scheduler():
    built = []

    class Counter(volcanic.Plugin):
        name = "built-counter"

        def __init__(self, arguments):
            super().__init__(arguments)
            built.append(self)

        def predicate(self, task, n):
            return None if n.name == "n2" else "not n2"
    volcanic.register_plugin(Counter)
    s = volcanic.Scheduler(conf(["gang", "built-counter"]))
    assert len(built) == 1  # checking the configuration's arguments
    for obj in [node("n1"), node("n2"), podgroup("pg"), pod("p", "pg")]:
        s.upsert(obj)
    assert s.run_once(now=NOW).binds == {"ns/p": "n2"}
    s.upsert(pod("q", "pg"))
    assert s.run_once(now=NOW).binds == {"ns/q": "n2"}
    assert len(built) == 3 and len(set(map(id, built))) == 3


# Registration.

def test_register_plugin_errors():
    class NoName(volcanic.Plugin):
        pass
    with pytest.raises(volcanic.ConfigError, match="needs a class attribute `name`"):
        volcanic.register_plugin(NoName)

    class Clash(volcanic.Plugin):
        name = "binpack"
    with pytest.raises(volcanic.ConfigError, match='"binpack" is the name of a built-in plugin'):
        volcanic.register_plugin(Clash)

    class NotAPlugin:
        name = "not-a-plugin"

        def predicate(self, task, n):
            return None
    with pytest.raises(TypeError, match="is not a subclass of volcanic.Plugin"):
        volcanic.register_plugin(NotAPlugin)
    with pytest.raises(TypeError, match="is not a subclass of volcanic.Plugin"):
        volcanic.register_plugin(NotAPlugin())

    class BadHook(volcanic.Plugin):
        name = "bad-hook"
        predicate = 3
    with pytest.raises(TypeError, match=r"BadHook.predicate must be a method"):
        volcanic.register_plugin(BadHook)
    with pytest.raises(volcanic.ConfigError, match='unknown plugin "bad-hook"'):
        volcanic.Scheduler(conf(["bad-hook"]))


def test_registered_name_is_usable_at_once_and_a_taken_name_is_refused():
    @volcanic.register_plugin
    class First(volcanic.Plugin):
        name = "taken"

        def node_order(self, task, n):
            return 10.0 if n.name == "n1" else 0
    assert First.name == "taken"
    assert "taken" in plugin_names()
    objs = [node("n1"), node("n2"), podgroup("pg"), pod("p", "pg")]
    assert volcanic.schedule(objs, conf(["gang", "taken"]), now=NOW).binds == {"ns/p": "n1"}

    class Second(volcanic.Plugin):
        name = "taken"

        def node_order(self, task, n):
            return 10.0 if n.name == "n2" else 0
    message = (r'^register_plugin: a plugin named "taken" is already registered \(test_python_plugins\..*First\); '
               r'give .*Second another name, or call unregister_plugin\("taken"\) first to replace it$')
    with pytest.raises(volcanic.ConfigError, match=message):
        volcanic.register_plugin(Second)
    with pytest.raises(volcanic.ConfigError, match="already registered"):
        volcanic.register_plugin(First)  # the same class again is no exception
    assert volcanic.schedule(objs, conf(["gang", "taken"]), now=NOW).binds == {"ns/p": "n1"}


def test_unregistering_frees_the_name_and_schedulers_keep_what_they_took():
    class First(volcanic.Plugin):
        name = "replaceable"

        def node_order(self, task, n):
            return 10.0 if n.name == "n1" else 0

    class Second(First):
        def node_order(self, task, n):
            return 10.0 if n.name == "n2" else 0
    volcanic.register_plugin(First)
    objs = [node("n1"), node("n2"), podgroup("pg"), pod("p", "pg")]
    before = volcanic.Scheduler(conf(["gang", "replaceable"]))
    unregister_plugin("replaceable")
    assert "replaceable" not in plugin_names()
    with pytest.raises(volcanic.ConfigError, match='unknown plugin "replaceable"'):
        volcanic.Scheduler(conf(["gang", "replaceable"]))
    volcanic.register_plugin(Second)
    after = volcanic.Scheduler(conf(["gang", "replaceable"]))
    for s in (before, after):
        for obj in objs:
            s.upsert(obj)
    assert before.run_once(now=NOW).binds == {"ns/p": "n1"}
    assert after.run_once(now=NOW).binds == {"ns/p": "n2"}
    with pytest.raises(volcanic.ConfigError, match='no Python plugin is registered as "nothing-here"'):
        unregister_plugin("nothing-here")


def test_python_and_native_hooks_are_timed_per_plugin_and_hook():
    calls = []
    scorer = make_plugin(node_order=lambda self, task, n: calls.append(n.name) or 0.0)
    objs = [node("n1"), node("n2"), podgroup("pg"), pod("p", "pg"), pod("q", "pg")]
    d = volcanic.schedule(objs, conf(["gang", scorer.name], ["predicates"]), now=NOW)
    assert len(d.binds) == 2
    mine = d.plugin_timings[scorer.name]
    assert mine["node_order"]["calls"] == len(calls) > 0
    assert mine["on_session_open"]["calls"] == 1 and mine["on_session_close"]["calls"] == 1
    assert d.plugin_timings["gang"]["job_ready"]["calls"] > 0
    assert d.plugin_timings["predicates"]["predicate"]["calls"] > 0
    for hooks in d.plugin_timings.values():
        for t in hooks.values():
            assert isinstance(t["seconds"], float) and t["seconds"] >= 0 and isinstance(t["calls"], int)
    assert "plugin_timings" not in d.outcome() and "action_seconds" not in d.outcome()


def test_timings_can_be_left_out_without_changing_the_decisions():
    """run_once(timings=False), as the scheduler loop runs its sessions."""
    objs = [node("n1"), node("n2"), podgroup("pg"), pod("p", "pg"), pod("q", "pg")]
    timed, untimed = (volcanic.Scheduler(conf(["gang"], ["predicates"])) for _ in range(2))
    for s in (timed, untimed):
        for obj in objs:
            s.upsert(obj)
    with_timings, without = timed.run_once(now=NOW), untimed.run_once(now=NOW, timings=False)
    assert with_timings.plugin_timings and without.plugin_timings == {}
    assert without.outcome() == with_timings.outcome() and len(without.binds) == 2


# The embedded cluster runs Python plugins in its scheduler; a failing one is reported and
# retried, and the cluster goes on.

def test_python_plugins_in_the_embedded_cluster():
    state = {"fail": True}

    class Picky(volcanic.Plugin):
        name = "picky-cluster"

        def predicate(self, task, n):
            if state["fail"]:
                raise RuntimeError("not today")
            return None if n.name == "n2" else "only n2"
    volcanic.register_plugin(Picky)
    c = volcanic.Cluster(conf(["priority", "gang"], ["predicates", "picky-cluster"],
                              actions="enqueue, allocate, backfill"))
    ready = [{"type": "Ready", "status": "True"}]
    c.apply([{"kind": "Node", "metadata": {"name": n}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi",
                                                                                   "pods": "110"},
                                                                   "conditions": ready}} for n in ("n1", "n2")])
    c.apply({"kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
             "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "busybox"}]}})
    c.run(2)
    assert c.get("Pod", "p").get("spec", {}).get("nodeName") is None
    assert any('plugin "picky-cluster" failed in predicate' in e and "RuntimeError: not today" in e
               for e in c.errors)
    state["fail"] = False
    c.run(2)
    assert c.get("Pod", "p")["spec"]["nodeName"] == "n2"


# Issue "Hardening", defect 6: an order hook that is no order at all (here a coin toss) must
# give some order, not corrupt memory in the sort (std::sort's unguarded insertion ran past
# the range and aborted the interpreter).
@pytest.mark.parametrize("hook", ["job_order", "task_order", "queue_order"])
def test_an_inconsistent_order_hook_is_survived(hook):
    import random
    coin = random.Random(3)
    py = make_plugin(**{hook: lambda self, a, b: coin.choice((-1, 1))})
    objs = [node(f"n{i}", cpu="4", memory="64Gi") for i in range(4)] + [queue("q1"), queue("q2")]
    for j in range(40):
        objs.append(podgroup(f"pg{j}", min_member=1, queue=f"q{1 + j % 2}"))
        objs += [pod(f"p{j}-{t}", f"pg{j}", cpu="100m") for t in range(20)]
    d = volcanic.schedule(objs, conf([py.name, "priority", "gang"], ["predicates"], actions="allocate, backfill"),
                          now=NOW)
    assert len(d.binds) == 160  # 4 nodes of 4 CPUs hold 160 pods of 100m, in any order
