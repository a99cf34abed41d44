"""volcanic: a Volcano-compatible batch scheduler with a native C++ core.

The public API is what this module exports; everything else is internal.
"""

from volcanic.errors import ConfigError, InvalidObject
from volcanic.scheduler import Decisions, Scheduler, schedule

__all__ = ["ConfigError", "Decisions", "InvalidObject", "Scheduler", "schedule"]
__version__ = "0.1.0"
