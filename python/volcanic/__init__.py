"""volcanic: a Volcano-compatible batch scheduler with a native C++ core.

The public API is what this module exports; everything else is internal.
"""

from volcanic.cluster import Cluster
from volcanic.errors import AdmissionError, ConfigError, InvalidObject
from volcanic.scheduler import Decisions, Scheduler, schedule

__all__ = ["AdmissionError", "Cluster", "ConfigError", "Decisions", "InvalidObject", "Scheduler", "schedule"]
__version__ = "0.1.0"
