"""volcanic: a Volcano-compatible batch scheduler with a native C++ core.

The public API is what this module exports; everything else is internal. The names load on
first use (PEP 562), so `import volcanic` costs nothing and a command that needs only a part
of volcanic (`volcanic install --print`, the webhook) does not load the embedded cluster.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time, __getattr__ below
    from volcanic.cluster import Cluster
    from volcanic.errors import AdmissionError, ConfigError, InvalidObject, PluginError
    from volcanic.scheduler import Decisions, Plugin, Scheduler, register_plugin, schedule

# Each public name and the module it comes from.
_HOMES = {
    "AdmissionError": "volcanic.errors", "ConfigError": "volcanic.errors", "InvalidObject": "volcanic.errors",
    "PluginError": "volcanic.errors", "Cluster": "volcanic.cluster", "Decisions": "volcanic.scheduler",
    "Plugin": "volcanic.scheduler", "Scheduler": "volcanic.scheduler", "register_plugin": "volcanic.scheduler",
    "schedule": "volcanic.scheduler",
}

__all__ = ["AdmissionError", "Cluster", "ConfigError", "Decisions", "InvalidObject", "Plugin", "PluginError",
           "Scheduler", "register_plugin", "schedule"]


def __getattr__(name: str) -> Any:
    """A public name, imported from its home and kept here; `__version__`, read once."""
    if name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name]), name)
    elif name == "__version__":
        from volcanic._version import version
        value = version()
    else:
        raise AttributeError(f"module 'volcanic' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, "__version__"})
