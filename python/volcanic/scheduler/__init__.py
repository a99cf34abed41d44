"""The scheduler: configuration loading and the Python face of the native engine."""

from volcanic.scheduler.conf import load_conf
from volcanic.scheduler.engine import Decisions, Scheduler, schedule

__all__ = ["Decisions", "Scheduler", "load_conf", "schedule"]
