"""The errors volcanic raises for caller mistakes."""

from __future__ import annotations

from volcanic.kube.errors import AdmissionError, InvalidObject

__all__ = ["AdmissionError", "ConfigError", "InvalidObject", "PluginError"]


class ConfigError(ValueError):
    """A bad scheduler configuration; the message names what is unknown and lists what is known."""


class PluginError(RuntimeError):
    """A scheduler plugin failed while a session ran (a Python plugin raised, or answered a
    hook with a value of the wrong type). `plugin` is the plugin's name; the message names the
    hook and carries the traceback. The session that failed changed nothing in the cache."""

    def __init__(self, message: str, plugin: str = "") -> None:
        super().__init__(message)
        self.plugin = plugin
