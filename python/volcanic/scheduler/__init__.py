"""The scheduler: configuration loading and the Python face of the native engine."""

from volcanic.scheduler.conf import load_conf
from volcanic.scheduler.engine import Decisions, Scheduler, schedule
from volcanic.scheduler.plugins import Plugin, register_plugin

__all__ = ["Decisions", "Plugin", "Scheduler", "load_conf", "register_plugin", "schedule"]
