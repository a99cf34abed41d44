"""Invariants on random clusters (DESIGN.md "Tests"): no node over-committed, no gang
partly bound, no queue over its capability, no required anti-affinity broken, decisions independent of input order,
incremental Scheduler equal to one-shot schedule, class index equal to full search."""

from __future__ import annotations

from collections import defaultdict
import copy
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import node, pod, podgroup, queue
import volcanic

NOW = 1_700_000_000
CPU = {"500m": 500, "1": 1000, "2": 2000, "3": 3000}
MEM = {"512Mi": 512, "1Gi": 1024, "2Gi": 2048}
CONF_WITH_BINPACK = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder},
            {name: binpack}]
"""


def _no_index(conf: str) -> str:
    return conf + 'configurations:\n- name: allocate\n  arguments: {"volcanic.nodeIndex": false}\n'


@st.composite
def clusters(draw):
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    objs = []
    nodes = []
    for i in range(rng.randint(1, 7)):
        n = node(f"n{i}", cpu=str(rng.randint(1, 8)), memory=f"{rng.randint(1, 12)}Gi", pods=str(rng.randint(2, 8)),
                 labels={"zone": rng.choice("ab"), "kubernetes.io/hostname": f"n{i}"})
        if rng.random() < 0.2:
            n["spec"] = {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]}
        nodes.append(n)
    objs += nodes
    queues = [f"q{i}" for i in range(rng.randint(1, 3))]
    for q in queues:
        spec = {}
        if rng.random() < 0.3:
            spec["capability"] = {"cpu": str(rng.randint(1, 10))}
        objs.append(queue(q, weight=rng.randint(1, 4), **spec))
    jobs = rng.randint(1, 7)
    # Distinct seconds: jobs created in the same second go in the order the scheduler first saw
    # them (test_scheduling_order.py), so only with distinct ones is input order irrelevant.
    seconds = rng.sample(range(60), jobs)
    for j in range(jobs):
        tasks = rng.randint(1, 5)
        g = podgroup(f"job{j}", rng.randint(1, tasks), queue=rng.choice(queues),
                     phase=rng.choice(["Pending", "Inqueue"]))
        g["metadata"]["creationTimestamp"] = f"2024-01-01T00:00:{seconds[j]:02d}Z"
        objs.append(g)
        cpu, mem = rng.choice(list(CPU)), rng.choice(list(MEM))
        selector = {"zone": rng.choice("ab")} if rng.random() < 0.3 else None
        tolerate = rng.random() < 0.3
        spread = rng.random() < 0.2  # one pod of the job per host
        for t in range(tasks):
            running = rng.random() < 0.2
            p = pod(f"job{j}-w-{t}", f"job{j}", cpu=cpu, memory=mem,
                    node_name=rng.choice(nodes)["metadata"]["name"] if running else "",
                    phase="Running" if running else "Pending")
            if selector:
                p["spec"]["nodeSelector"] = selector
            if tolerate:
                p["spec"]["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
            if spread:
                p["metadata"]["labels"] = {"app": f"job{j}"}
                p["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": f"job{j}"}}, "topologyKey": "kubernetes.io/hostname"}]}}
            objs.append(p)
    return objs


def _req(p):
    r = p["spec"]["containers"][0]["resources"]["requests"]
    return CPU[r["cpu"]], MEM[r["memory"]]


def _decisions(d):
    return (d.binds, d.pipelined, d.evictions, {k: v["phase"] for k, v in d.podgroups.items()}, d.unschedulable,
            d.queues)


PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(clusters())
def test_no_overcommit_no_partial_gang_no_queue_over_capability(objs):
    d = volcanic.schedule(objs, now=NOW)
    pods = {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o for o in objs if o["kind"] == "Pod"}
    nodes = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Node"}
    used = defaultdict(lambda: [0, 0, 0])
    for key, p in pods.items():
        where = p["spec"].get("nodeName") or d.binds.get(key)
        if where:
            cpu, mem = _req(p)
            used[where][0] += cpu
            used[where][1] += mem
            used[where][2] += 1
    for name, (cpu, mem, count) in used.items():
        if any(p["spec"].get("nodeName") == name for p in pods.values()) and name not in d.binds.values():
            continue  # only nodes this session placed pods on are checked: input may start over-committed
        alloc = nodes[name]["status"]["allocatable"]
        assert cpu <= int(alloc["cpu"]) * 1000
        assert mem <= int(alloc["memory"][:-2]) * 1024
        assert count <= int(alloc["pods"])
    groups = {o["metadata"]["name"]: o for o in objs if o["kind"] == "PodGroup"}
    for g, pg in groups.items():
        members = [k for k, p in pods.items() if p["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == g]
        new = [k for k in members if k in d.binds]
        ready = [k for k in members if k in d.binds or pods[k]["spec"].get("nodeName")]
        assert not new or len(ready) >= pg["spec"]["minMember"], g
    for key in d.binds:
        app = (pods[key]["metadata"].get("labels") or {}).get("app")
        if app and pods[key]["spec"].get("affinity"):
            here = [k for k, p in pods.items() if (p["metadata"].get("labels") or {}).get("app") == app
                    and (p["spec"].get("nodeName") or d.binds.get(k)) == d.binds[key]]
            assert here == [key], f"anti-affinity broken on {d.binds[key]}: {here}"
    caps = {o["metadata"]["name"]: int(o["spec"]["capability"]["cpu"]) * 1000
            for o in objs if o["kind"] == "Queue" and "capability" in o["spec"]}
    for q, cap in caps.items():
        members = [k for k, p in pods.items()
                   if groups[p["metadata"]["annotations"]["scheduling.k8s.io/group-name"]]["spec"]["queue"] == q]
        if any(k in d.binds for k in members):
            total = sum(_req(pods[k])[0] for k in members if k in d.binds or pods[k]["spec"].get("nodeName"))
            assert total <= cap, q


@PROPS
@given(clusters(), st.randoms(use_true_random=False))
def test_same_decisions_for_shuffled_input(objs, rnd):
    shuffled = list(objs)
    rnd.shuffle(shuffled)
    assert _decisions(volcanic.schedule(objs, now=NOW)) == _decisions(volcanic.schedule(shuffled, now=NOW))


@PROPS
@given(clusters(), st.randoms(use_true_random=False))
def test_incremental_scheduler_equals_schedule(objs, rnd):
    s = volcanic.Scheduler()
    noise = [node("ghost", cpu="64"), pod("ghost-pod", None, node_name="n0", phase="Running")]
    for o in objs + noise:
        changed = copy.deepcopy(o)
        changed.setdefault("metadata", {}).setdefault("labels", {})["stale"] = "yes"
        s.upsert(changed)  # an older version first, replaced below
    order = list(objs)
    rnd.shuffle(order)
    for o in order:
        s.upsert(o)
    s.delete("Node", "ghost")
    s.delete("Pod", "ghost-pod", "ns")
    assert _decisions(s.run_once(NOW)) == _decisions(volcanic.schedule(objs, now=NOW))


@PROPS
@given(clusters())
def test_class_index_equals_full_search(objs):
    for conf in (CONF_WITH_BINPACK,):
        assert _decisions(volcanic.schedule(objs, conf, now=NOW)) == \
            _decisions(volcanic.schedule(objs, _no_index(conf), now=NOW))
    default = "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins: [{name: priority}, {name: gang}]\n" \
              "- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]\n"
    assert _decisions(volcanic.schedule(objs, default, now=NOW)) == \
        _decisions(volcanic.schedule(objs, _no_index(default), now=NOW))
