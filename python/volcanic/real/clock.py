"""The wall clock with timers, for daemons: the same Clock the embedded cluster's virtual
clock is, so the scheduler loop and controllers run unchanged on it."""

from __future__ import annotations

import heapq
import threading
import time
from typing import Callable

from volcanic.kube.clock import Timer

# Seconds a daemon's loop waits for more after an event or answer wakes it (Watch.wait's
# linger): a burst of thousands of pod events is taken a few milliseconds' worth at a time
# instead of one thread switch per event, for that much added latency.
LINGER = 0.005


class WallClock:
    """Unix seconds; after() queues work that run_due() runs once it is due."""

    def __init__(self) -> None:
        self._timers: list[Timer] = []
        self._seq = 0
        self._lock = threading.Lock()
        # Called by after(): a daemon's loop sets it to end its wait, so that a timer another
        # thread queues (a background write's answer) runs at once, not when the wait times out.
        self.on_timer: Callable[[], None] = lambda: None

    def now(self) -> float:
        return time.time()

    def after(self, delay: float, fn: Callable[[], None], last: bool = False) -> Timer:
        with self._lock:
            self._seq += 1
            timer = Timer(time.time() + max(0.0, delay), last, self._seq, fn)
            heapq.heappush(self._timers, timer)
        self.on_timer()
        return timer

    def passed(self, t: float) -> bool:
        return t < time.time()

    def run_due(self) -> float:
        """Runs every timer due now; returns seconds until the next one (at most 1)."""
        while True:
            with self._lock:
                while self._timers and self._timers[0].cancelled:
                    heapq.heappop(self._timers)
                if not self._timers or self._timers[0].due > time.time():
                    wait = self._timers[0].due - time.time() if self._timers else 1.0
                    return max(0.0, min(wait, 1.0))
                timer = heapq.heappop(self._timers)
            timer.fn()
