"""The one clock: Unix seconds everywhere, RFC 3339 in objects.

Every timestamp volcanic writes (creationTimestamp, conditions, events) and every `now` it
reads is Unix seconds, whether the clock is the wall clock of a real cluster or the virtual
clock of the embedded one (which starts at a fixed date), so a condition stamped by the
scheduler reads the same as one stamped by the API server.
"""

from __future__ import annotations

from datetime import datetime, timezone
import functools
import time
from typing import Callable, Protocol

# Where the embedded cluster's virtual clock starts (2024-01-01T00:00:00Z), so that a
# cluster's history, a fill and a synthetic benchmark are the same on every run.
EPOCH = 1704067200.0


class Timer:
    """Work due at a time; cancel() makes it a no-op. Timers due at the same time run in the
    order they were made, those made with `last` after all the others. (A slotted class, not
    a dataclass: a replay makes one per pod event.)"""

    __slots__ = ("due", "last", "seq", "fn", "cancelled")

    def __init__(self, due: float, last: bool, seq: int, fn: Callable[[], None]) -> None:
        self.due, self.last, self.seq, self.fn, self.cancelled = due, last, seq, fn, False

    def __lt__(self, other: Timer) -> bool:
        return (self.due, self.last, self.seq) < (other.due, other.last, other.seq)

    def cancel(self) -> None:
        self.cancelled = True


class Clock(Protocol):
    def now(self) -> float:
        """Unix seconds."""

    def after(self, delay: float, fn: Callable[[], None], last: bool = False) -> Timer:
        """Runs fn `delay` seconds from now (a negative delay means now); with `last`, after
        every other timer due then, those made later included."""

    def passed(self, t: float) -> bool:
        """Whether the clock is done with instant t: the timers due by then have run, and one
        made now for t runs after them, `last` or not."""


def rfc3339(seconds: float) -> str:
    """Unix seconds as an RFC 3339 timestamp with second precision, as metav1.Time."""
    return _rfc3339(int(seconds))


@functools.lru_cache(maxsize=4096)  # many writes share a second
def _rfc3339(seconds: int) -> str:
    day, s = divmod(seconds, 86400)
    return f"{_date(day)}T{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}Z"


@functools.lru_cache(maxsize=1024)  # a simulation's writes cover few days, each many seconds
def _date(day: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(day * 86400))


def rfc3339_micro(seconds: float) -> str:
    """Unix seconds as metav1.MicroTime (Leases, events.k8s.io)."""
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def seconds_of(timestamp: str | None) -> float | None:
    """Unix seconds of an RFC 3339 timestamp (metav1.Time or MicroTime); None if absent."""
    if not timestamp:
        return None
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
