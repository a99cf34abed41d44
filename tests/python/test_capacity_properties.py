"""The capacity plugin with hierarchical queues, on random trees (DESIGN.md "Tests": no queue over its
capability). After one "enqueue, allocate" session no queue holds more than its own capability or any
ancestor's, unless it already did before the session (then the session adds nothing there), and every
queue's status.allocated is the sum of its subtree's tasks."""

from __future__ import annotations

from collections import defaultdict
import random
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import node, pod, podgroup, queue
import volcanic

NOW = 1_700_000_000
CONF = """
actions: "enqueue, allocate"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: capacity, enableHierarchy: true}, {name: nodeorder}]
"""
CPU_M = {"500m": 500, "1": 1000, "2": 2000}
MEM_MI = {"512Mi": 512, "1Gi": 1024, "2Gi": 2048}
UNITS = {"": 1, "m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 1e3, "M": 1e6, "G": 1e9}


def _quantity(text: str) -> float:
    number, unit = re.fullmatch(r"([0-9.]+)([a-zA-Z]*)", text).groups()
    return float(number) * UNITS[unit]


@st.composite
def trees(draw):
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    objs = [node(f"n{i}", cpu=str(rng.randint(2, 8)), memory=f"{rng.randint(4, 16)}Gi")
            for i in range(rng.randint(1, 4))]
    names = [f"q{i}" for i in range(rng.randint(1, 6))]
    parent = {name: rng.choice(["root"] + names[:i]) for i, name in enumerate(names)}
    caps = {}
    for name in names:
        spec = {"parent": parent[name]}
        cap = {}
        if rng.random() < 0.6:
            cap["cpu"] = str(rng.randint(1, 8))
        if rng.random() < 0.3:
            cap["memory"] = f"{rng.randint(1, 8)}Gi"
        if cap:
            spec["capability"] = cap
        if rng.random() < 0.5:
            spec["deserved"] = {"cpu": str(rng.randint(1, 6))}
        if rng.random() < 0.2:
            spec["guarantee"] = {"resource": {"cpu": "1"}}
        caps[name] = cap
        objs.append(queue(name, **spec))
    leaves = [n for n in names if n not in parent.values()] + ["default"]
    nodes = [o["metadata"]["name"] for o in objs if o["kind"] == "Node"]
    for j in range(rng.randint(1, 8)):
        tasks = rng.randint(1, 4)
        members = rng.randint(1, tasks)
        cpu, mem = rng.choice(list(CPU_M)), rng.choice(list(MEM_MI))
        spec = {}
        if rng.random() < 0.5:
            spec["minResources"] = {"cpu": f"{CPU_M[cpu] * members}m", "memory": f"{MEM_MI[mem] * members}Mi"}
        q = rng.choice(leaves) if rng.random() < 0.95 else rng.choice(names)  # sometimes an inner queue
        objs.append(podgroup(f"job{j}", members, queue=q, phase=rng.choice(["Pending", "Inqueue"]), **spec))
        for t in range(tasks):
            running = rng.random() < 0.15
            objs.append(pod(f"job{j}-{t}", f"job{j}", cpu=cpu, memory=mem, node_name=rng.choice(nodes) if running else "",
                            phase="Running" if running else "Pending"))
    return objs, parent, caps


def _ancestors(name: str, parent: dict[str, str]) -> list[str]:
    out = []
    while name != "root":
        name = parent.get(name, "root")
        out.append(name)
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees())
def test_no_queue_over_its_or_an_ancestors_capability(tree):
    objs, parent, caps = tree
    d = volcanic.schedule(objs, CONF, now=NOW)
    queue_of = {o["metadata"]["name"]: o["spec"]["queue"] for o in objs if o["kind"] == "PodGroup"}
    before, after = defaultdict(lambda: [0, 0]), defaultdict(lambda: [0, 0])
    for p in objs:
        if p["kind"] != "Pod":
            continue
        key = f"ns/{p['metadata']['name']}"
        r = p["spec"]["containers"][0]["resources"]["requests"]
        use = (CPU_M[r["cpu"]], MEM_MI[r["memory"]] * 2**20)
        q = queue_of[p["metadata"]["annotations"]["scheduling.k8s.io/group-name"]]
        for holder in [q] + _ancestors(q, parent):
            for i in range(2):
                if p["spec"].get("nodeName"):
                    before[holder][i] += use[i]
                if p["spec"].get("nodeName") or key in d.binds:
                    after[holder][i] += use[i]
    for name in list(parent) + ["default", "root"]:
        got = d.queues[name]["allocated"]
        assert [_quantity(got.get("cpu", "0")) * 1000, _quantity(got.get("memory", "0"))] == after[name], name
    for name in parent:
        for holder in [name] + _ancestors(name, parent):
            cap = caps.get(holder, {})
            for i, dim in enumerate(("cpu", "memory")):
                if dim not in cap:
                    continue
                limit = _quantity(cap[dim]) * (1000 if dim == "cpu" else 1)
                assert after[name][i] <= max(limit, before[holder][i]), (name, holder, dim)
