"""Shared helpers for the Python scheduler plugin tests."""

from __future__ import annotations

import itertools
import pathlib
from typing import Any

import yaml

import volcanic

NOW = 1_700_000_000
SCENARIOS = pathlib.Path(__file__).resolve().parents[1] / "scenarios"
_ids = itertools.count()


def make_plugin(prefix: str = "py", *, node_local: bool = False, **hooks: Any) -> type[volcanic.Plugin]:
    """Registers a volcanic.Plugin subclass under a fresh name with the given hooks (functions
    taking self first) and class attributes; returns the class."""
    name = f"{prefix}-{next(_ids)}"
    attributes = {"name": name, "node_local": node_local, **hooks}
    cls = type(f"Plugin_{name.replace('-', '_')}", (volcanic.Plugin,), attributes)
    return volcanic.register_plugin(cls)


def conf(*tiers: list, actions: str = "allocate") -> dict[str, Any]:
    """A configuration from tiers of plugin names (or plugin option dicts)."""
    return {"actions": actions,
            "tiers": [{"plugins": [p if isinstance(p, dict) else {"name": p} for p in tier]} for tier in tiers]}


def decisions(d: volcanic.Decisions) -> dict[str, Any]:
    """What a session decided, without its timings."""
    return d.outcome()


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {"kind": "PriorityClass", "metadata": {"name": name}, "value": value}


def scenario_objects(path: str) -> list[dict[str, Any]]:
    """The objects of a scenario file under tests/scenarios."""
    return yaml.safe_load((SCENARIOS / path).read_text())["objects"]
