"""When the scheduler's sessions run (the loop's cadence; volcanic.scheduler.loop puts it
together with feeding the engine and writing its decisions).

- Sessions run at period boundaries (start + k * period), and only at those where something
  the engine reads changed since a session that decided nothing: the engine is
  deterministic, so that session would decide the same nothing again. The cycle is armed only
  then (mark_dirty), so an idle cluster costs no timer at all (a simulated month of it is
  free) and the sessions that run, and when, are those of a loop woken every period. At its
  boundary the cycle runs after every other timer due then, so a session sees everything that
  happened at that instant; what comes once the clock is done with the instant
  (Cluster.apply() after run() returned at a boundary) waits for the next one, as it would for
  a cycle that ran.
- Time alone can change a decision (sla's waiting time running out): the engine reports the
  earliest such instant after each session (Decisions.wake_at), and wake_at arms a timer for
  it that marks the next boundary's session due, as a change would. The latest session's
  instant replaces the one before; a loop without such decisions arms nothing.
- With `settle` (seconds), a session also starts once nothing changed for that long, instead
  of waiting out the period, and `settle` seconds after new work comes (new_work: a new
  PodGroup to enqueue, a pod that fills its gang), busy or not: new work opens a window that
  the rest of its burst falls into, so that a session sees the Jobs created together
  together, as Volcano's period-long window does, rather than giving the first gang of a
  burst the whole cluster before the next one's pods exist (Volcano's e2e schedulingbase
  "Schedule Multiple Jobs"). A Job's pods are bound a moment after the last one is created,
  not up to a period later. Without it (the embedded cluster's default) sessions run only
  every period, as Volcano's do.
"""

from __future__ import annotations

import math
from typing import Callable

from volcanic.kube.clock import Clock, Timer


class Cadence:
    """Calls `session` when one is due; the session calls began() first, which says whether
    one is due (and takes the due mark)."""

    def __init__(self, clock: Clock, period: float, settle: float | None, session: Callable[[], None]) -> None:
        self.clock, self.period, self.settle = clock, period, settle
        self._session = session
        self.dirty = False  # a session is due
        self._start = clock.now()
        self._next_cycle = 0  # the first boundary (start + k * period) a cycle may still run at
        self._cycle_timer: Timer | None = None
        self._wake_timer: Timer | None = None  # for the instant a decision changes with time alone
        self._settling = False  # a settle check is queued on the clock
        self._work_session = False  # a session for new work is queued on the clock
        self._changed_at = self._session_at = float("-inf")
        self._aside = False  # step_aside(): sessions are run by someone else

    def began(self) -> bool:
        """A session starts: whether one is due (it then no longer is)."""
        if not self.dirty:
            return False
        self.dirty = False
        self._session_at = self.clock.now()
        return True

    def mark_dirty(self) -> None:
        """A session is due at the next boundary: the cycle is armed for it."""
        self.dirty = True
        if self._cycle_timer is not None or self._aside:
            return
        now = self.clock.now()
        k = max(self._next_cycle, math.ceil((now - self._start) / self.period))
        while self._boundary(k) < now or self.clock.passed(self._boundary(k)):
            k += 1  # a quotient rounded down, or a boundary at now that the clock is done with
        self._next_cycle = k
        self._cycle_timer = self.clock.after(self._boundary(k) - now, self._cycle, last=True)

    def changed(self) -> None:
        """What the engine reads changed: a session is due, and with settle, one once it is quiet."""
        self.mark_dirty()
        if self.settle is None:
            return
        self._changed_at = self.clock.now()
        if not self._settling:
            self._settling = True
            self.clock.after(self.settle, self._settled)

    def new_work(self) -> None:
        """With settle: a session `settle` seconds from now, unless one for earlier new work is
        already due (this work is in its window)."""
        if self.settle is None or self._work_session:
            return
        self._work_session = True
        self.clock.after(self.settle, self._work_arrived)

    def wake_at(self, at: float | None) -> None:
        """A session is due at `at` (None: no decision waits on time): the latest session's
        answer replaces the one before."""
        if self._wake_timer is not None:
            self._wake_timer.cancel()
            self._wake_timer = None
        if at is not None and not self._aside:
            self._wake_timer = self.clock.after(max(0.0, at - self.clock.now()), self._woken)

    def step_aside(self) -> None:
        """Sessions are run by someone else from now on (a test driving Volcano's every-period
        loop, a daemon sharing the store): no timer is armed any more; `dirty` still says
        whether something changed."""
        self._aside = True
        for timer in (self._cycle_timer, self._wake_timer):
            if timer is not None:
                timer.cancel()
        self._cycle_timer = self._wake_timer = None

    def _boundary(self, k: int) -> float:
        return self._start + k * self.period

    def _cycle(self) -> None:
        self._cycle_timer = None
        self._next_cycle += 1
        self._session()

    def _settled(self) -> None:
        """A session once nothing changed for `settle` seconds since the last change and the
        last session; checked again later while changes keep coming."""
        assert self.settle is not None  # changed() queues this check only with settle
        quiet_from = max(self._changed_at, self._session_at) + self.settle
        if self.dirty and self.clock.now() < quiet_from:
            self.clock.after(quiet_from - self.clock.now(), self._settled)
            return
        self._settling = False
        self._session()

    def _work_arrived(self) -> None:
        self._work_session = False
        self._session()

    def _woken(self) -> None:
        self._wake_timer = None
        self.mark_dirty()
