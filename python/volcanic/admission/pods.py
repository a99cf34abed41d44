"""Volcano's pods admission (reference §3); filled in by the admission work."""

from __future__ import annotations

from typing import Any


def mutators(conf: Any) -> list:
    return []


def validators(conf: Any) -> list:
    return []
