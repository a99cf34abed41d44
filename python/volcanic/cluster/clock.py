"""The virtual clock: time moves only when run() moves it, straight to the next due work.

It reads Unix seconds, like every clock in volcanic, starting at EPOCH (2024-01-01T00:00:00Z)
so that a cluster's history is the same on every run.
"""

from __future__ import annotations

import heapq
from typing import Callable

from volcanic.kube.clock import EPOCH, Timer


class VirtualClock:
    """Unix seconds from `start`, and a heap of timers ordered by (due, last, creation): the
    heap holds (due, last, seq, timer) tuples, compared in C (seq is unique, so timers
    themselves are never compared)."""

    def __init__(self, start: float = EPOCH) -> None:
        self.start = start
        self._now = start
        self._seq = 0
        self.fired = 0  # timers run so far: what a simulation costs, beside what it does
        self._passed = float("-inf")  # run() is done with every instant up to this one
        self._timers: list[tuple[float, bool, int, Timer]] = []

    def now(self) -> float:
        return self._now

    def after(self, delay: float, fn: Callable[[], None], last: bool = False) -> Timer:
        """Runs fn at now + delay (a negative delay means now); see kube.clock.Clock."""
        if delay != delay or delay == float("inf"):
            raise ValueError(f"timer delay: must be a finite number, got {delay!r}")
        self._seq += 1
        timer = Timer(self._now + max(0.0, delay), last, self._seq, fn)
        heapq.heappush(self._timers, (timer.due, last, self._seq, timer))
        return timer

    def next_due(self) -> float | None:
        while self._timers and self._timers[0][3].cancelled:
            heapq.heappop(self._timers)
        return self._timers[0][0] if self._timers else None

    def fire_next(self, until: float) -> bool:
        """Moves to the earliest timer due by `until` and runs it; False if there is none."""
        due = self.next_due()
        if due is None or due > until:
            return False
        timer = heapq.heappop(self._timers)[3]
        self._now = max(self._now, timer.due)
        self.fired += 1
        timer.fn()
        return True

    def advance_to(self, t: float) -> None:
        """Moves to t, done with every instant up to it (the caller fired what was due)."""
        self._now = max(self._now, t)
        self._passed = self._now

    def passed(self, t: float) -> bool:
        return t <= self._passed
