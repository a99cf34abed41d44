"""One table of extension points (issue "One vocabulary, one table", item 2): the engine's
extension points are one list in src/volcanic/framework/extension_points.h, from which the
plugin handle, the session's combined callbacks, the enable flags and the Python hook names are
made. The hooks Python plugins may define, and their enable flags, are what
docs/plugins-python.md documents."""

from __future__ import annotations

from pathlib import Path
import re

from volcanic import _core
from volcanic.scheduler.plugins import HOOKS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plugins-python.md"


def documented_hooks() -> dict[str, str | None]:
    """hook -> enable flag, from the docs' table of hooks."""
    rows = re.findall(r"^\| `(\w+)\(.*?\` \|.*\| (`\w+`|-) \|$", DOCS.read_text(), re.M)
    return {name: None if flag == "-" else flag.strip("`") for name, flag in rows}


def test_python_hooks_are_the_tables_python_points():
    python_points = {name: flag for name, flag, python in _core.EXTENSION_POINTS if python}
    assert HOOKS == _core.PLUGIN_HOOKS == tuple(python_points)
    assert documented_hooks() == python_points


def test_every_point_has_a_distinct_name():
    names = [name for name, _, _ in _core.EXTENSION_POINTS]
    assert len(names) == len(set(names))
    assert names[-2:] == ["on_session_open", "on_session_close"]
