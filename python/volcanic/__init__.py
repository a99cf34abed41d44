"""volcanic: a Volcano-compatible batch scheduler with a native C++ core.

The public API is what this module exports; everything else is internal.
"""

from volcanic.cluster import Cluster
from volcanic.errors import AdmissionError, ConfigError, InvalidObject, PluginError
from volcanic.scheduler import Decisions, Plugin, Scheduler, register_plugin, schedule

__all__ = ["AdmissionError", "Cluster", "ConfigError", "Decisions", "InvalidObject", "Plugin", "PluginError",
           "Scheduler", "register_plugin", "schedule"]
__version__ = "0.1.0"
