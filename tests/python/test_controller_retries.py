"""Controllers' retries under a storm of failures, as client-go's
workqueue.DefaultControllerRateLimiter paces them (k8s.io/client-go
util/workqueue/default_rate_limiters.go: the longer of a per-item exponential back-off, 5 ms
to 1000 s, and an overall token bucket of 10 a second holding 100). Issue 33, "Faults on a
real API server" 2: with a busy API server refusing every write, each failed sync was
retried after its own 5 ms back-off alone, so thousands of syncs re-sent their pod creates at
once and kept the server saturated."""

from __future__ import annotations

import pytest

from volcanic.cluster.clock import VirtualClock
from volcanic.cluster.store import MemoryStore
from volcanic.controllers.runtime import Context, Controller, RetryBucket, Runner
from volcanic.kube.errors import Unavailable
from volcanic.kube.informers import Informers


class _Failing(Controller):
    """Every request fails `fails` times (through retry_later, or by raising for the Runner),
    then succeeds; the clock's time of every attempt is recorded."""

    name = "failing"

    def __init__(self, ctx, fails=1, raise_for_runner=False):
        super().__init__(ctx)
        self.fails, self.raise_for_runner = fails, raise_for_runner
        self.attempts: dict[int, list[float]] = {}  # seconds since the controller started
        self.start = ctx.clock.now()

    def process(self, request):
        times = self.attempts.setdefault(request, [])
        times.append(self.ctx.clock.now() - self.start)
        if len(times) > self.fails:
            self.forget(request)
            return
        if self.raise_for_runner:
            raise Unavailable("Pod", "ns", str(request), "the server is currently unable to handle the request")
        self.retry_later(request)


def _run(controller_args, requests=300, seconds=60.0):
    clock = VirtualClock()
    store = MemoryStore(clock=clock.now)
    informers = Informers(store, [])
    ctx = Context(store=store, lister=informers, clock=clock)
    c = _Failing(ctx, **controller_args)
    runner = Runner(informers, [c], clock)
    for r in range(requests):
        c.queue.add(r)
    runner.settle()
    until = clock.now() + seconds
    while clock.fire_next(until):
        runner.settle()
    return c


@pytest.mark.parametrize("raise_for_runner", [False, True], ids=["retry_later", "runner"])
def test_a_storm_of_failures_is_retried_at_ten_a_second_after_a_burst_of_a_hundred(raise_for_runner):
    """300 requests fail at once: 100 are retried at their own back-off (5 ms), the other
    200 at 10 a second, the last about 20 s later; every one is retried, none twice early."""
    c = _run({"raise_for_runner": raise_for_runner})
    retried = sorted(times[1] for times in c.attempts.values())
    assert len(retried) == 300
    assert retried[99] == pytest.approx(0.005, abs=1e-6)
    assert retried[100] >= 0.1 - 1e-6
    assert retried[-1] == pytest.approx(20.0, abs=0.01)
    in_any_second = max(sum(1 for t in retried[100:] if s <= t < s + 1) for s in range(21))
    assert in_any_second <= 11


def test_a_lone_failure_keeps_its_own_back_off():
    """A few failures are not slowed by the bucket: 5 ms, 10 ms, 20 ms after each other."""
    c = _run({"fails": 3}, requests=1)
    times = c.attempts[0]
    assert [round(b - a, 4) for a, b in zip(times, times[1:])] == [0.005, 0.01, 0.02]


def test_the_retry_bucket_fills_at_ten_a_second():
    clock = VirtualClock()
    bucket = RetryBucket(clock)
    assert [bucket.reserve() for _ in range(100)] == [0.0] * 100
    assert bucket.reserve() == pytest.approx(0.1)
    assert bucket.reserve() == pytest.approx(0.2)
    clock.advance_to(clock.now() + 60)  # full again, never more than 100
    assert [bucket.reserve() for _ in range(100)] == [0.0] * 100
    assert bucket.reserve() == pytest.approx(0.1)
