"""Invariants of preempt and reclaim on random clusters (issue 5; reference §4.3, §4.4, §4.6):
- never a victim that is labelled non-preemptable, in kube-system or system-critical (conformance);
- never a gang taken below its minAvailable (gang);
- every node that loses pods gains a pipelined preemptor that the freed room and the node's
  idle resources cover (evict-until-fits: nothing is evicted for nothing);
- reclaim takes from a queue only while the queue is above its deserved share (proportion) in
  some resource, counting the victims before. (The last victim may take the queue below it by
  less than its own request: Volcano's own reclaim cases need that, e.g. 1-cpu victims of a
  queue deserving 1.5 cpu, tests/scenarios/reclaim/sort-reclaimees-from-overusing-queues.yaml.)"""

from __future__ import annotations

from collections import defaultdict
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import node, pod, podgroup, queue
import volcanic
from volcanic.kube.quantity import parse_quantity


def _milli(text):
    return float(parse_quantity(text)[0] * 1000)

NOW = 1_700_000_000
TIERS = """
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""
# Volcano's reclaim_test.go tier: proportion's victim rule counts only in the tier that decides
# (§4.4), so it sits beside gang and conformance here.
RECLAIM_CONF = """
actions: "reclaim"
tiers:
- plugins: [{name: conformance}, {name: gang}, {name: proportion}, {name: priority}]
- plugins: [{name: drf}, {name: predicates}, {name: nodeorder}]
"""
CPU_CHOICES = [500, 1000, 2000]
CRITICAL = ("system-cluster-critical", "system-node-critical")


def _conf(actions):
    return f'actions: "{actions}"' + TIERS


@st.composite
def busy_clusters(draw):
    """Nodes filled by running jobs of 'busy' queues; starving jobs of higher priority wait in
    busy queues (preemptors) and in 'new' queues without running pods (reclaimers)."""
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    objs = [{"kind": "PriorityClass", "metadata": {"name": "low"}, "value": 10},
            {"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
            {"kind": "PriorityClass", "metadata": {"name": "system-cluster-critical"}, "value": 2000000000}]
    free = {}
    for i in range(rng.randint(1, 4)):
        cpu = rng.choice([2, 4, 6])
        objs.append(node(f"n{i}", cpu=str(cpu), memory="64Gi", pods="20"))
        free[f"n{i}"] = cpu * 1000
    busy = [f"busy{i}" for i in range(rng.randint(1, 2))]
    new = [f"new{i}" for i in range(rng.randint(0, 2))]
    objs += [queue(q, weight=rng.randint(1, 4)) for q in busy + new]
    for j in range(rng.randint(1, 5)):
        ns = "kube-system" if rng.random() < 0.15 else "ns"
        tasks, cpu = rng.randint(1, 5), rng.choice(CPU_CHOICES)
        spec = {"priorityClassName": rng.choice(["low", "low", "high", CRITICAL[0]])}
        objs.append(podgroup(f"run{j}", rng.randint(0, tasks), queue=rng.choice(busy), ns=ns,
                             phase="Running", **spec))
        for t in range(tasks):
            fits = [n for n, f in free.items() if f >= cpu]
            if not fits:
                break
            n = rng.choice(fits)
            free[n] -= cpu
            labels = {"volcano.sh/preemptable": "false"} if rng.random() < 0.2 else {}
            p = pod(f"run{j}-{t}", f"run{j}", cpu=f"{cpu}m", memory="1Gi", ns=ns, node_name=n,
                    phase="Running", labels=labels)
            if spec["priorityClassName"] in CRITICAL:
                p["spec"]["priorityClassName"] = spec["priorityClassName"]
            objs.append(p)
    for j in range(rng.randint(1, 3)):
        tasks, cpu = rng.randint(1, 3), rng.choice(CPU_CHOICES)
        objs.append(podgroup(f"want{j}", rng.randint(1, tasks), queue=rng.choice(busy + new),
                             phase="Inqueue", priorityClassName="high"))
        objs += [pod(f"want{j}-{t}", f"want{j}", cpu=f"{cpu}m", memory="1Gi") for t in range(tasks)]
    return objs


def _pods(objs):
    return {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o for o in objs if o["kind"] == "Pod"}


def _cpu(p):
    return _milli(p["spec"]["containers"][0]["resources"]["requests"]["cpu"])


def _request(p):
    requests = p["spec"]["containers"][0]["resources"]["requests"]
    return {r: _milli(requests[r]) for r in ("cpu", "memory")}


def _groups(objs):
    return {f"{o['metadata']['namespace']}/{o['metadata']['name']}": o for o in objs if o["kind"] == "PodGroup"}


def _group_of(p):
    return f"{p['metadata']['namespace']}/{p['metadata']['annotations']['scheduling.k8s.io/group-name']}"


def _check_common(objs, d):
    pods, groups = _pods(objs), _groups(objs)
    assert len(set(d.evictions)) == len(d.evictions)
    lost = defaultdict(int)
    for key in d.evictions:
        p = pods[key]
        assert p["metadata"].get("labels", {}).get("volcano.sh/preemptable") != "false", key
        assert p["metadata"]["namespace"] != "kube-system", key
        assert p["spec"].get("priorityClassName") not in CRITICAL, key
        lost[_group_of(p)] += 1
    for g, n in lost.items():
        running = sum(1 for p in pods.values() if _group_of(p) == g and p["status"]["phase"] == "Running")
        assert running - n >= groups[g]["spec"]["minMember"], g
    # Evict until fits: a node that loses pods gets a preemptor, covered by what was freed.
    freed = defaultdict(float)
    for key in d.evictions:
        freed[pods[key]["spec"]["nodeName"]] += _cpu(pods[key])
    taken = defaultdict(float)
    for key, n in d.pipelined.items():
        taken[n] += _cpu(pods[key])
    for n, cpu in freed.items():
        assert taken[n] > 0, f"{n} lost pods for no preemptor"
        capacity = next(_milli(o["status"]["allocatable"]["cpu"])
                        for o in objs if o["kind"] == "Node" and o["metadata"]["name"] == n)
        used = sum(_cpu(p) for p in pods.values() if p["spec"].get("nodeName") == n)
        assert taken[n] <= capacity - used + cpu + 1e-6


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(busy_clusters(), st.sampled_from(["preempt", "reclaim", "reclaim, preempt", "allocate, reclaim, preempt"]))
def test_victims_are_allowed_and_worth_it(objs, actions):
    _check_common(objs, volcanic.schedule(objs, _conf(actions), now=NOW))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(busy_clusters())
def test_reclaim_takes_only_from_queues_above_their_deserved_share(objs):
    d = volcanic.schedule(objs, RECLAIM_CONF, now=NOW)
    _check_common(objs, d)
    pods, groups = _pods(objs), _groups(objs)
    allocated = defaultdict(lambda: {"cpu": 0.0, "memory": 0.0})
    for p in pods.values():
        if p["status"]["phase"] == "Running":
            for r, v in _request(p).items():
                allocated[groups[_group_of(p)]["spec"]["queue"]][r] += v
    for key in d.evictions:  # in eviction order
        q = groups[_group_of(pods[key])]["spec"]["queue"]
        assert q.startswith("busy"), key
        deserved = {r: _milli(d.queues[q]["deserved"].get(r, "0")) for r in ("cpu", "memory")}
        assert any(allocated[q][r] > deserved[r] for r in deserved), (key, q, allocated[q], deserved)
        for r, v in _request(pods[key]).items():
            allocated[q][r] -= v
