"""The scheduler's cycle is armed only when something changed (volcanic/scheduler/loop.py): an
idle cluster costs no timers, and the sessions that run, and when, are exactly those of a loop
woken every period (Volcano's scheduler runs a session every schedule period,
pkg/scheduler/scheduler.go runOnce under wait.Until; a session with nothing new decides
nothing, so skipping it changes nothing)."""

from __future__ import annotations

import random

import volcanic
from job_helpers import job, node, task


def _every_period(c: volcanic.Cluster) -> None:
    """Makes c's scheduler the loop it replaced: a cycle at every period boundary (last among
    the timers due then), a session there when something changed."""
    loop, clock = c.scheduler, c._clock
    loop._cycle_timer.cancel()
    loop._mark_dirty = lambda: setattr(loop, "_dirty", True)

    def cycle() -> None:
        clock.after(loop.period, cycle, last=True)
        loop._session()
    clock.after(0.0, cycle, last=True)


def _workload(seed: int) -> list[tuple[float, dict]]:
    """Jobs arriving at odd times over ten minutes, gangs and singles, finishing after odd
    durations, more than the nodes hold at once."""
    rng = random.Random(seed)
    arrivals = []
    for i in range(40):
        replicas = rng.choice([1, 1, 2, 4])
        t = task(replicas=replicas, cpu=rng.choice(["1", "2", "3"]), duration=f"{rng.uniform(5, 120):.3f}s")
        arrivals.append((round(rng.uniform(0, 600), 3), job(f"j{i}", t, min_available=replicas)))
    return sorted(arrivals, key=lambda a: a[0])


def _replay(seed: int, every_period: bool) -> tuple[list, volcanic.Cluster]:
    c = volcanic.Cluster()
    c.apply([node("n1", cpu="8"), node("n2", cpu="8")])  # the largest gang, 4 pods of 3 CPUs, fits
    if every_period:
        _every_period(c)
    sessions: list = []
    c.scheduler.on_session = lambda d, *_: sessions.append((c.now, sorted(d.binds.items())))
    for at, j in _workload(seed):
        c.run(at - c.now)
        c.apply(j)
    c.run(3600)
    return sessions, c


def test_sessions_are_those_of_a_loop_woken_every_period():
    for seed in (1, 2, 3):
        lazy, c = _replay(seed, every_period=False)
        periodic, _ = _replay(seed, every_period=True)
        assert lazy == periodic
        assert all(j["status"]["state"]["phase"] == "Completed" for j in c.list("Job"))
        assert len(lazy) < 600  # sessions ran only where something changed, not each second


def test_an_idle_cluster_costs_no_timers():
    c = volcanic.Cluster()
    c.apply([node("n1"), job("j", task(duration="30s"))])
    c.run(60)
    assert c.get("Job", "j")["status"]["state"]["phase"] == "Completed"
    fired, sessions = c._clock.fired, c.scheduler.sessions
    c.run(30 * 86400)  # a month with nothing to do
    assert c._clock.fired - fired == 0 and c.scheduler.sessions == sessions
    c.apply(job("k", task(duration="30s")))  # work after the quiet month wakes the loop again
    c.run(5)  # PodGroup enqueued, pods made, pods placed: a few sessions
    assert c.get("Job", "k")["status"]["state"]["phase"] == "Running"
    assert c.scheduler.sessions - sessions <= 5
