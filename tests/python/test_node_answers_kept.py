"""A Scheduler keeps its node answers (the per-class node index, src/volcanic/framework/
node_search.h; docs/scheduler.md "How it stays fast") from one session to the next,
refreshing only the nodes that changed since a class last looked: the decisions must be
those of a scheduler that evaluates every node (allocate's volcanic.nodeIndex: false) and of
one that builds the index anew each session (a neutral Python plugin with node hooks does
that: a Python plugin's answers are promised only within a session,
docs/plugins-python.md). All three run side by side over a long random history: pods of a
few classes (classes come and go, so class ids are reused), binds confirmed or forgotten,
pods ending, nodes resized (new Ready nodes)."""

from __future__ import annotations

import random

from builders import node, pod, podgroup
from pyplugin_helpers import conf, make_plugin
import volcanic

NEUTRAL = make_plugin("neutral", node_local=True, predicate=lambda self, task, n: None,
                      node_order=lambda self, task, n: 0.0)
TIER = ["gang", "predicates", "nodeorder", "binpack"]


def _history(seed: int, sessions: int = 120):
    """Per session: the objects to upsert and delete before it, from one seeded history;
    seed 4 draws from a hundred classes, more than a scheduler keeps indexes for (64)."""
    rng = random.Random(seed)
    cpus = [f"{m}m" for m in range(100, 3100, 30)] if seed == 4 else ["1", "2", "3", "500m"]
    nodes = {f"n{i}": rng.choice(["4", "8", "16"]) for i in range(12)}
    live: dict[str, str] = {}  # pod -> cpu, of the pods alive
    steps, serial = [], 0
    for _ in range(sessions):
        upserts, deletes = [], []
        for _ in range(rng.randint(0, 4)):  # arrivals: few classes, so ids are freed and reused
            serial += 1
            name, cpu = f"p{serial}", rng.choice(cpus)
            live[name] = cpu
            upserts += [podgroup(f"g{serial}"), pod(name, f"g{serial}", cpu=cpu)]
        for name in rng.sample(sorted(live), k=min(len(live), rng.randint(0, 3))):  # departures
            deletes.append(name)
            del live[name]
        if rng.random() < 0.08:  # a node resized or gone and back: new Ready nodes
            n = rng.choice(sorted(nodes))
            nodes[n] = rng.choice(["4", "8", "16"])
            upserts.append(node(n, cpu=nodes[n]))
        steps.append((upserts, deletes, rng.random() < 0.1))
    return [node(n, cpu=c) for n, c in sorted(nodes.items())], steps


def _cpus(steps) -> dict[str, str]:
    return {o["metadata"]["name"]: o["spec"]["containers"][0]["resources"]["requests"]["cpu"]
            for upserts, _, _ in steps for o in upserts if o["kind"] == "Pod"}


MODES = {"kept": conf(TIER, actions="allocate, backfill"),
         "anew": conf(TIER + [NEUTRAL.name], actions="allocate, backfill"),
         "every node": dict(conf(TIER, actions="allocate, backfill"),
                            configurations=[{"name": "allocate", "arguments": {"volcanic.nodeIndex": False}}])}


def _run(seed: int, mode: str) -> list:
    s = volcanic.Scheduler(MODES[mode])
    first, steps = _history(seed)
    cpus = _cpus(steps)
    for o in first:
        s.upsert(o)
    out, placed = [], {}
    for t, (upserts, deletes, forget) in enumerate(steps):
        for o in upserts:
            s.upsert(o)
        for name in deletes:
            s.delete("Pod", name, "ns")
            placed.pop(name, None)
        if forget and placed:  # a bind that failed: the pod is pending again
            name = sorted(placed)[0]
            s.forget(f"ns/{name}")
            del placed[name]
        d = s.run_once(now=1_700_000_000 + t)
        for key, n in d.binds.items():
            name = key.split("/")[1]
            placed[name] = n
            s.upsert(pod(name, f"g{name[1:]}", cpu=cpus[name], node_name=n, phase="Running"))
        out.append((sorted(d.binds.items()), sorted(d.unschedulable.items())))
    return out


def test_kept_node_answers_decide_as_answers_made_anew():
    for seed in (1, 2, 3, 4):
        kept = _run(seed, "kept")
        assert kept == _run(seed, "anew") == _run(seed, "every node")
        assert sum(len(b) for b, _ in kept) > 100  # the history placed many pods
