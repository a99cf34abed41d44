"""The errors volcanic raises for caller mistakes."""

from __future__ import annotations


class InvalidObject(ValueError):
    """A malformed Kubernetes object; the message names the object and the field."""


class ConfigError(ValueError):
    """A bad scheduler configuration; the message names what is unknown and lists what is known."""


class AdmissionError(ValueError):
    """An admission rule denied a request; the message is the rule's (Volcano's wording where
    Volcano has one), and kind, namespace and name say which object it was about."""

    def __init__(self, message: str, kind: str = "", namespace: str | None = None,
                 name: str | None = None) -> None:
        super().__init__(message)
        self.kind, self.namespace, self.name = kind, namespace, name


class PluginError(RuntimeError):
    """A scheduler plugin failed while a session ran (a Python plugin raised, or answered a
    hook with a value of the wrong type). `plugin` is the plugin's name; the message names the
    hook and carries the traceback. The session that failed changed nothing in the cache."""

    def __init__(self, message: str, plugin: str = "") -> None:
        super().__init__(message)
        self.plugin = plugin
