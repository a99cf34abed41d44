"""volcanic's version, written in one place: pyproject.toml's [project] version.

An installed volcanic reads it from its package metadata, which the build copies from
pyproject.toml. A source checkout run in place (PYTHONPATH=python) reads the checkout's own
pyproject.toml first, so an older installed copy's metadata never speaks for it.
"""

from __future__ import annotations

from importlib import metadata
import pathlib
import tomllib

# Where pyproject.toml is in a source checkout: python/volcanic/_version.py -> the root.
PYPROJECT = pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml"
UNKNOWN = "0+unknown"  # neither installed nor in a checkout


def version() -> str:
    """The version of the volcanic this module belongs to."""
    checkout = checkout_version(PYPROJECT)
    if checkout is not None:
        return checkout
    try:
        return metadata.version("volcanic")
    except metadata.PackageNotFoundError:
        return UNKNOWN


def checkout_version(path: pathlib.Path) -> str | None:
    """[project] version of `path` when it is volcanic's pyproject.toml, else None."""
    try:
        with path.open("rb") as f:
            project = tomllib.load(f).get("project") or {}
    except (OSError, tomllib.TOMLDecodeError):
        return None
    if project.get("name") != "volcanic" or not isinstance(project.get("version"), str):
        return None
    return project["version"]
