"""Runs every YAML scenario in tests/scenarios through volcanic.schedule.

A scenario re-expresses one of Volcano's own test cases (its `source` names
it) as objects in and decisions out; see tests/scenarios/README.md.
"""

from __future__ import annotations

import pathlib

import pytest
import yaml

import volcanic

SCENARIO_DIR = pathlib.Path(__file__).resolve().parents[1] / "scenarios"
SCENARIOS = sorted(SCENARIO_DIR.rglob("*.yaml"))
# Scenarios run at a fixed time so condition timestamps are stable.
NOW = 1_700_000_000


def _load(path: pathlib.Path) -> dict:
    with path.open() as f:
        return yaml.safe_load(f)


def _schedule(sc: dict) -> volcanic.Decisions:
    usage = {node: {"cpu": u["cpu"], "memory": u["memory"], "time": NOW - u.get("age", 0)}
             for node, u in (sc.get("nodeUsage") or {}).items()}
    return volcanic.schedule(sc["objects"], sc.get("conf"), now=NOW, node_usage=usage)


@pytest.mark.parametrize("path", SCENARIOS, ids=[str(p.relative_to(SCENARIO_DIR)) for p in SCENARIOS])
def test_scenario(path: pathlib.Path) -> None:
    sc = _load(path)
    assert sc.get("source"), f"{path}: every scenario names the Volcano test it comes from"
    expect = sc["expect"]
    if "configError" in expect:
        with pytest.raises(volcanic.ConfigError) as err:
            _schedule(sc)
        assert expect["configError"] in str(err.value)
        return
    d = _schedule(sc)
    if "binds" in expect:
        assert d.binds == (expect["binds"] or {})
    if "bindCount" in expect:
        assert len(d.binds) == expect["bindCount"]
    if "pipelined" in expect:
        assert d.pipelined == (expect["pipelined"] or {})
    if "evictions" in expect:
        assert d.evictions == (expect["evictions"] or [])
    for key, phase in (expect.get("podgroups") or {}).items():
        assert d.podgroups[key]["phase"] == phase, key
    for key, conds in (expect.get("conditions") or {}).items():
        got = {c["type"]: c for c in d.podgroups[key]["conditions"]}
        for want in conds:
            if want.get("absent"):
                assert want["type"] not in got, (key, want["type"])
                continue
            assert want["type"] in got, (key, want["type"])
            for field, value in want.items():
                assert got[want["type"]][field] == value, (key, field)
    for key, reason in (expect.get("unschedulable") or {}).items():
        assert d.unschedulable.get(key) == reason, key  # null: no reason at all
    for key, want in (expect.get("why") or {}).items():
        got = d.why[key]
        for field, name in (("reasons", "reasons"), ("position", "position"), ("queuePosition", "queue_position")):
            if field in want:
                assert got[name] == want[field], (key, field)
    for name, allocated in (expect.get("queues") or {}).items():
        assert d.queues[name]["allocated"] == allocated, name


def test_there_are_enough_scenarios() -> None:
    assert len(SCENARIOS) >= 40
