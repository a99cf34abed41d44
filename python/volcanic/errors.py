"""The errors volcanic raises for caller mistakes."""

from __future__ import annotations


class InvalidObject(ValueError):
    """A malformed Kubernetes object; the message names the object and the field."""


class ConfigError(ValueError):
    """A bad scheduler configuration; the message names what is unknown and lists what is known."""
