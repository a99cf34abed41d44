"""The extender plugin (docs/extender.md): Volcano v1.15.1's pkg/scheduler/plugins/extender,
extension points answered over HTTP, against a local extender (http.server on 127.0.0.1:0)
per test. Each verb is checked with the answers and errors extender.go reads, with
`extender.ignorable` true and false; extender_test.go's cases are ported where they apply
(TestIsInterested, TestHasManagedResources and TestHasResourcesInList on a task's requests).
The wire itself (payloads, decoding, transport) is in test_extender_wire.py."""

from __future__ import annotations

from typing import Any

import pytest

from builders import node, pod, podgroup, queue
from extender_helpers import Reply, conf, extender, fake, schedule, three_nodes_one_pod  # noqa: F401 - fixture
import job_helpers
from pyplugin_helpers import priority_class, scenario_objects
import volcanic
from volcanic.scheduler.conf import load_conf
from volcanic.scheduler.extender import parse_config, predicate_verdict, requests_managed
from volcanic.scheduler.plugins import Unresolvable, plugin_names, without_unknown_plugins

# Configuration: Volcano falls back silently (parseExtenderConfig); volcanic refuses by name.

URL = "http://127.0.0.1:9"


@pytest.mark.parametrize("arguments, named", [
    ({"extender.httpTimeout": "soon"}, "extender.httpTimeout"),
    ({"extender.httpTimeout": 5}, "extender.httpTimeout"),
    ({"extender.predicateVerb": 1}, "extender.predicateVerb"),
    ({"extender.allocateFuncVerb": ["allocate"]}, "extender.allocateFuncVerb"),
    ({"extender.managedResources": "nvidia.com/gpu"}, "extender.managedResources"),
    ({"extender.managedResources": ["nvidia.com/gpu", 1]}, "extender.managedResources"),
    ({"extender.ignorable": "maybe"}, "extender.ignorable"),
    ({"extender.jobEnqueuedVerb": "enqueued"}, '"extender.jobEnqueuedVerb"'),  # not read by v1.15.1
    ({"urlPrefix": URL}, '"urlPrefix"'),
    ({"extender.urlPrefix": "127.0.0.1:8080"}, "extender.urlPrefix"),
    ({"extender.urlPrefix": None, "extender.predicateVerb": "predicate"}, "extender.urlPrefix"),
])
def test_bad_arguments_are_refused_when_the_configuration_loads(arguments, named):
    args = {"extender.urlPrefix": URL, **arguments}
    if args["extender.urlPrefix"] is None:
        del args["extender.urlPrefix"]
    with pytest.raises(volcanic.ConfigError) as e:
        volcanic.Scheduler(conf({"name": "extender", "arguments": args}))
    assert str(e.value).startswith("plugin extender: ") and named in str(e.value)


def test_arguments_as_volcano_reads_them():
    c = parse_config({"extender.urlPrefix": URL + "//", "extender.predicateVerb": "filter",
                      "extender.ignorable": "true", "extender.httpTimeout": "",
                      "extender.managedResources": ["nvidia.com/gpu"]})
    assert (c.url_prefix, c.timeout, c.verbs, c.ignorable, c.managed) == \
        (URL, 1.0, {"predicate": "filter"}, True, frozenset({"nvidia.com/gpu"}))
    assert parse_config({"extender.httpTimeout": "250ms"}).timeout == 0.25
    assert parse_config({"extender.httpTimeout": "0s"}).timeout is None  # Go: no timeout
    assert parse_config({}).verbs == {} and parse_config({"extender.ignorable": "F"}).ignorable is False
    volcanic.Scheduler(conf(extender()))  # no verb: nothing to call, nothing needed


def test_every_scheduler_knows_the_extender_without_registering_it():
    assert "extender" in plugin_names()
    assert without_unknown_plugins(load_conf(conf(extender())))[1] == []
    with pytest.raises(volcanic.ConfigError, match="built-in"):
        volcanic.register_plugin(type("Mine", (volcanic.Plugin,), {"name": "extender"}))


# predicateVerb (extender.go AddPredicateFn).

def test_predicate_rejects_nodes_with_the_extenders_message(fake):
    fake.answers["predicate"] = lambda r: {} if r["node"]["Name"] == "n3" else {"status": "card busy", "code": 2}
    configuration = conf(extender(fake, predicateVerb="predicate"))
    assert schedule(three_nodes_one_pod(), configuration).binds == {"ns/p": "n3"}
    fake.answers["predicate"] = {"status": "card busy"}
    d = schedule(three_nodes_one_pod(), configuration)
    assert d.binds == {} and d.unschedulable["ns/p"] == "0/3 nodes are unavailable: 3 card busy."


@pytest.mark.parametrize("message, code, verdict", [
    ("", 3, None),                     # no message: fits, whatever the code
    ("busy", 0, Unresolvable),         # code 0 with a message: api.Error
    ("busy", 1, Unresolvable),         # Error: PredicateForPreemptAction keeps it too
    ("busy", 2, str),                  # Unschedulable: preempt may evict there
    ("busy", 3, Unresolvable),         # UnschedulableAndUnresolvable
    ("busy", 4, Unresolvable),         # Wait
    ("busy", 5, Unresolvable),         # Skip
    ("busy", 7, None),                 # no code allocate rejects on
    ("busy", -1, None),
])
def test_predicate_codes_as_volcanos_allocate_and_preempt_read_them(message, code, verdict):
    got = predicate_verdict(message, code)
    if verdict is None:
        assert got is None
    else:
        assert got == message and type(got) is verdict


def preempt_cluster() -> list[dict]:
    objs = [priority_class("high", 1000), node("n1", cpu="2"), podgroup("lo"),
            pod("lo-0", "lo", node_name="n1", phase="Running"), pod("lo-1", "lo", node_name="n1", phase="Running"),
            podgroup("hi", priorityClassName="high"), pod("hi", "hi")]
    objs[-1]["spec"]["priorityClassName"] = "high"
    return objs


PREEMPT_TIER = ("priority", "gang", "conformance")


@pytest.mark.parametrize("code, preempted", [(2, True), (0, False), (3, False)])
def test_an_unschedulable_code_lets_preempt_evict_and_others_do_not(fake, code, preempted):
    # The extender turns hi away from n1 until something there is being released.
    fake.answers["predicate"] = lambda r: {} if r["task"]["Name"] != "hi" or r["node"]["Releasing"]["MilliCPU"] \
        else {"status": "no room yet", "code": code}
    d = schedule(preempt_cluster(), conf(extender(fake, predicateVerb="predicate"), actions="allocate, preempt",
                                         first=PREEMPT_TIER))
    assert (len(d.evictions), d.pipelined) == ((1, {"ns/hi": "n1"}) if preempted else (0, {}))


# prioritizeVerb (AddBatchNodeOrderFn): nodeScore by node name, added to the other scores.

def test_prioritize_scores_nodes_by_name(fake):
    fake.answers["prioritize"] = {"nodeScore": {"n2": 5, "n3": 10.5, "elsewhere": 100}}
    d = schedule(three_nodes_one_pod(), conf(extender(fake, prioritizeVerb="prioritize")))
    assert d.binds == {"ns/p": "n3"}
    [request] = fake.requests("prioritize")
    assert [n["Name"] for n in request["nodes"]] == ["n1", "n2", "n3"] and request["task"]["Name"] == "p"
    # One node fitting is taken without scoring, as Volcano's prioritizeNodes does.
    schedule([node("n1"), podgroup("pg"), pod("p", "pg")], conf(extender(fake, prioritizeVerb="prioritize")))
    assert len(fake.requests("prioritize")) == 1


@pytest.mark.parametrize("answer", [Reply(500), {"errorMessage": "no scores today", "nodeScore": {"n3": 1}}, {},
                                    {"nodeScore": None}])
@pytest.mark.parametrize("ignorable", [False, True])
def test_a_prioritize_error_scores_nothing(fake, answer, ignorable):
    # Volcano's PrioritizeNodes then returns no score at all and allocate takes no node of the
    # group (docs/extender.md, differences): here the extender adds nothing and the others decide.
    fake.answers["prioritize"] = answer
    d = schedule(three_nodes_one_pod(), conf(extender(fake, prioritizeVerb="prioritize", ignorable=ignorable)))
    assert d.binds == {"ns/p": "n1"}


# preemptableVerb and reclaimableVerb: victims by UID; status 0 abstains; an error leaves the
# tier without victims (nil with Permit or Reject: extender.go returns no victims either way).



def test_preemptable_names_the_victims(fake):
    # Without gang beside it (gang keeps minMember: it would allow lo-0 only).
    fake.answers["preemptable"] = lambda r: {"status": 1, "victims": [r["evictees"][-1], {"UID": "stranger"}]}
    d = schedule(preempt_cluster(), conf(extender(fake, preemptableVerb="preemptable"), actions="preempt",
                                         first=("priority", "conformance"), second=None))
    [request] = fake.requests("preemptable")
    assert request["evictor"]["Name"] == "hi"
    assert sorted(t["Name"] for t in request["evictees"]) == ["lo-0", "lo-1"]
    assert d.evictions == [f"ns/{request['evictees'][-1]['Name']}"] and d.pipelined == {"ns/hi": "n1"}


@pytest.mark.parametrize("answer, evicted", [
    ({"status": 0, "victims": []}, 1),      # Abstain: the other plugins decide
    ({"status": -1, "victims": []}, 0),     # a status with no victim: none in this tier
    (Reply(500), 0),
])
@pytest.mark.parametrize("ignorable", [False, True])
def test_preemptable_abstains_or_leaves_no_victim(fake, answer, evicted, ignorable):
    fake.answers["preemptable"] = answer
    d = schedule(preempt_cluster(), conf(extender(fake, preemptableVerb="preemptable", ignorable=ignorable),
                                         actions="preempt", first=PREEMPT_TIER, second=None))
    assert len(d.evictions) == evicted


RECLAIM = "reclaim/overusing-queue-gives-back-preemptable-task.yaml"


def test_reclaimable_names_the_victims(fake):
    fake.answers["reclaimable"] = lambda r: {"status": 1, "victims": [r["evictees"][0]]}
    d = schedule(scenario_objects(RECLAIM), conf(extender(fake, reclaimableVerb="reclaimable"), actions="reclaim",
                                                 first=("conformance", "gang", "proportion"), second=None))
    requests = fake.requests("reclaimable")
    assert requests and d.evictions == [f"{requests[0]['evictees'][0]['Namespace']}/"
                                        f"{requests[0]['evictees'][0]['Name']}"]
    fake.answers["reclaimable"] = Reply(404)
    d = schedule(scenario_objects(RECLAIM), conf(extender(fake, reclaimableVerb="reclaimable"), actions="reclaim",
                                                 first=("conformance", "gang", "proportion"), second=None))
    assert d.evictions == []


# jobEnqueueableVerb: a vote; an error permits when ignorable, else rejects.

@pytest.mark.parametrize("answer, ignorable, phase", [
    ({"status": 1}, False, "Inqueue"), ({"status": -1}, False, "Pending"), ({"status": 0}, False, "Inqueue"),
    (Reply(500), True, "Inqueue"), (Reply(500), False, "Pending"),
])
def test_job_enqueueable(fake, answer, ignorable, phase):
    fake.answers["enqueueable"] = answer
    objs = [node("n1"), podgroup("pg", phase="Pending", minResources={"cpu": "1"}), pod("p", "pg")]
    d = schedule(objs, conf(extender(fake, jobEnqueueableVerb="enqueueable", ignorable=ignorable),
                            actions="enqueue"))
    assert d.podgroups["ns/pg"]["phase"] == phase
    assert fake.requests("enqueueable") == [{"job": {"UID": "ns/pg", "PgUID": fake.requests("enqueueable")[0]["job"][
        "PgUID"], "Name": "pg", "Namespace": "ns", "Queue": "default", "Priority": 0, "MinAvailable": 1}}]


# queueOverusedVerb and jobReadyVerb: an error answers `!ignorable`.

@pytest.mark.parametrize("answer, ignorable, bound", [
    ({"overused": True}, False, False), ({"overused": False}, False, True), ({}, False, True),
    (Reply(500), False, False), (Reply(500), True, True),
])
def test_queue_overused(fake, answer, ignorable, bound):
    fake.answers["overused"] = answer
    objs = [node("n1"), queue("q1", weight=3), podgroup("pg", queue="q1"), pod("p", "pg")]
    d = schedule(objs, conf(extender(fake, queueOverusedVerb="overused", ignorable=ignorable)))
    assert bool(d.binds) is bound
    assert {"queue": {"UID": "q1", "Name": "q1", "Weight": 3}} in fake.requests("overused")


@pytest.mark.parametrize("answer, ignorable, bound", [
    ({"status": True}, False, True), ({"status": False}, False, False), ({}, False, False),
    (Reply(500), False, True), (Reply(500), True, False),  # as extender.go has it
])
def test_job_ready(fake, answer, ignorable, bound):
    fake.answers["ready"] = answer
    d = schedule(three_nodes_one_pod(), conf(extender(fake, jobReadyVerb="ready", ignorable=ignorable)))
    assert bool(d.binds) is bound


# onSessionOpenVerb / onSessionCloseVerb.

def test_session_open_and_close(fake):
    objs = [*three_nodes_one_pod(), queue("q1")]
    objs[1]["metadata"]["labels"] = {"volcano.sh/revocable-zone": "rz1"}
    schedule(objs, conf(extender(fake, onSessionOpenVerb="open", onSessionCloseVerb="close",
                                 predicateVerb="predicate")))
    assert fake.verbs() == ["open", "predicate", "predicate", "predicate", "close"]
    opened = fake.requests("open")[0]
    assert list(opened) == ["Jobs", "Nodes", "Queues", "NamespaceInfo", "RevocableNodes", "NodeList"]
    assert list(opened["Jobs"]) == ["ns/pg"] and list(opened["Nodes"]) == ["n1", "n2", "n3"]
    assert sorted(opened["Queues"]) == ["default", "q1", "root"]
    assert list(opened["RevocableNodes"]) == ["n2"] and opened["NodeList"] is None
    assert fake.requests("close") == [{}]


@pytest.mark.parametrize("ignorable, verbs", [
    (False, ["open", "close"]),  # OnSessionOpen returns before registering anything
    (True, ["open", "predicate", "predicate", "predicate", "close"]),
])
def test_a_session_open_error_turns_the_extender_off_unless_ignorable(fake, ignorable, verbs):
    fake.answers["open"] = Reply(502)
    fake.answers["predicate"] = {"status": "never"}
    d = schedule(three_nodes_one_pod(), conf(extender(fake, onSessionOpenVerb="open", onSessionCloseVerb="close",
                                                      predicateVerb="predicate", ignorable=ignorable)))
    assert fake.verbs() == verbs and bool(d.binds) is not ignorable


# allocateFuncVerb / deallocateFuncVerb (addEventHandler): an allocation the extender refuses is
# rolled back at once (statement.go Allocate / Pipeline), and the deallocation is told.

def test_allocate_refused_is_rolled_back_and_deallocated(fake):
    fake.answers["allocate"] = {"errorMessage": "no card left"}
    configuration = conf(extender(fake, allocateFuncVerb="allocate", deallocateFuncVerb="deallocate"))
    d = schedule([node("n1"), podgroup("pg"), pod("p", "pg")], configuration)
    assert d.binds == {} and d.unschedulable["ns/p"] == "no card left"
    [(_, allocated), (_, deallocated)] = fake.calls
    assert (allocated["task"]["NodeName"], allocated["task"]["Status"]) == ("n1", 2)  # Allocated on n1
    assert fake.verbs() == ["allocate", "deallocate"] and deallocated["task"]["Status"] == 1  # Pending again
    fake.answers["allocate"] = {}
    assert schedule([node("n1"), podgroup("pg"), pod("p", "pg")], configuration).binds == {"ns/p": "n1"}


@pytest.mark.parametrize("answer, ignorable, bound", [
    (Reply(500), False, False), (Reply(500), True, True),
    ({"errorMessage": "no"}, True, False),  # the answer's message refuses even when ignorable
    ({"errorMessage": ""}, False, True),
])
def test_allocate_errors(fake, answer, ignorable, bound):
    fake.answers["allocate"] = answer
    d = schedule([node("n1"), podgroup("pg"), pod("p", "pg")],
                 conf(extender(fake, allocateFuncVerb="allocate", ignorable=ignorable)))
    assert bool(d.binds) is bound


def test_a_refused_placement_lets_the_job_try_its_next_task(fake):
    fake.answers["allocate"] = lambda r: {"errorMessage": "not p0"} if r["task"]["Name"] == "p0" else {}
    objs = [node("n1"), podgroup("pg"), pod("p0", "pg"), pod("p1", "pg")]
    d = schedule(objs, conf(extender(fake, allocateFuncVerb="allocate")))
    assert d.binds == {"ns/p1": "n1"}


def test_deallocate_is_told_of_a_gang_given_back_and_its_errors_change_nothing(fake):
    fake.answers["deallocate"] = Reply(500)
    objs = [node("n1", cpu="1"), podgroup("pg", min_member=2), pod("p0", "pg"), pod("p1", "pg")]
    d = schedule(objs, conf(extender(fake, allocateFuncVerb="allocate", deallocateFuncVerb="deallocate")))
    assert d.binds == {} and fake.verbs() == ["allocate", "deallocate"]


def test_backfill_cannot_be_refused_as_in_volcano(fake):
    # Volcano's Session.Allocate (backfill) does not read the event's error.
    fake.answers["allocate"] = {"errorMessage": "no"}
    best_effort = pod("be", "pg")
    best_effort["spec"]["containers"][0]["resources"] = {}
    d = schedule([node("n1"), podgroup("pg"), best_effort], conf(extender(fake, allocateFuncVerb="allocate"),
                                                                 actions="backfill"))
    assert d.binds == {"ns/be": "n1"} and fake.verbs() == ["allocate"]


# managedResources (extender_test.go): the extender is asked only about tasks requesting one of
# them. The task's requests are read, with limits standing in for missing requests (as the API
# server defaults them) and init containers counted.

def containers(*resources: dict) -> list[dict]:
    return [{"name": f"c{i}", "resources": r} for i, r in enumerate(resources)]


GPU = {"nvidia.com/gpu": "1"}
CPU = {"cpu": "100m"}


@pytest.mark.parametrize("managed, spec, interested", [
    # TestIsInterested
    ([], {"containers": containers({"requests": CPU})}, True),
    (["nvidia.com/gpu"], {"containers": containers({"requests": {**CPU, **GPU}})}, True),
    (["nvidia.com/gpu"], {"containers": containers({"limits": GPU})}, True),
    (["nvidia.com/gpu"], {"containers": containers({"requests": CPU}),
                          "initContainers": containers({"requests": GPU})}, True),
    (["nvidia.com/gpu"], {"containers": containers({"requests": {**CPU, "memory": "128Mi"}})}, False),
    (["nvidia.com/gpu", "amd.com/gpu"], {"containers": containers({"requests": {**CPU, "amd.com/gpu": "1"}})}, True),
    # TestHasManagedResources
    (["nvidia.com/gpu"], {"containers": []}, False),
    (["nvidia.com/gpu"], {"containers": containers({"requests": GPU})}, True),
    (["nvidia.com/gpu"], {"containers": containers({"requests": GPU, "limits": GPU})}, True),
    (["nvidia.com/gpu"], {"containers": containers({"requests": CPU}, {"requests": GPU})}, True),
    (["nvidia.com/gpu"], {"containers": containers({})}, False),
    (["nvidia.com/gpu", "amd.com/gpu"], {"containers": containers({"requests": {**GPU, "intel.com/gpu": "1"}})},
     True),
], ids=["empty-managed", "requests", "limits", "init-container", "none", "one-of-two", "no-containers",
        "requests-2", "requests-and-limits", "second-container", "empty-requirements", "partial"])
def test_only_tasks_requesting_a_managed_resource_are_asked(fake, managed, spec, interested):
    p = pod("p", "pg")
    p["spec"].update(spec)
    gpu_node = node("n1", **{"nvidia.com/gpu": "8", "amd.com/gpu": "8", "intel.com/gpu": "8"})
    fake.answers["predicate"] = {"status": "asked"}
    d = schedule([gpu_node, podgroup("pg"), p], conf(extender(fake, predicateVerb="predicate",
                                                              managedResources=managed), actions="allocate, backfill"))
    assert bool(fake.requests("predicate")) is interested and bool(d.binds) is not interested


@pytest.mark.parametrize("managed, requested, expected", [  # TestHasResourcesInList
    (["nvidia.com/gpu"], [], False),
    (["nvidia.com/gpu"], ["cpu", "nvidia.com/gpu"], True),
    (["nvidia.com/gpu"], ["cpu", "memory"], False),
    (["nvidia.com/gpu", "amd.com/gpu"], ["cpu", "nvidia.com/gpu", "amd.com/gpu"], True),
    (["nvidia.com/gpu", "amd.com/gpu"], ["cpu", "amd.com/gpu"], True),
    ([], ["cpu", "nvidia.com/gpu"], False),
])
def test_requests_managed(managed, requested, expected):
    assert requests_managed(requested, frozenset(managed)) is expected


def test_managed_resources_also_gate_the_other_task_verbs(fake):
    fake.answers["allocate"] = {"errorMessage": "asked"}
    d = schedule(three_nodes_one_pod(), conf(extender(fake, allocateFuncVerb="allocate", prioritizeVerb="prioritize",
                                                      managedResources=["nvidia.com/gpu"])))
    assert d.binds == {"ns/p": "n1"} and fake.calls == []


# End to end in the embedded cluster: a Volcano Job placed by the extender's answers.

def test_a_volcano_job_goes_where_the_extender_says(fake):
    fake.answers["predicate"] = lambda r: {"status": "zone a is full"} \
        if r["node"]["Node"]["metadata"]["labels"].get("zone") == "a" else {}
    fake.answers["prioritize"] = lambda r: {"nodeScore": {n["Name"]: 100 if n["Name"] == "n2" else 0
                                                          for n in r["nodes"]}}
    c = volcanic.Cluster(conf=conf(extender(fake, predicateVerb="predicate", prioritizeVerb="prioritize"),
                                   actions="enqueue, allocate, backfill", second=("predicates", "proportion")))
    c.apply([job_helpers.node("n1", labels={"zone": "a"}), job_helpers.node("n2"), job_helpers.node("n3")])
    c.apply(job_helpers.job("j", job_helpers.task("t", 2), min_available=2))
    c.run(3)
    pods = c.list("Pod", job_helpers.NS)
    assert len(pods) == 2 and all(p["status"]["phase"] == "Running" for p in pods)
    assert {p["spec"]["nodeName"] for p in pods} == {"n2"}, c.errors
    assert c.errors == []
