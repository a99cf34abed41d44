"""The scheduler's cycle is armed only when something the engine reads changed
(volcanic/scheduler/loop.py): an idle cluster costs no timers, the echo of a status the
scheduler wrote costs no session, and the sessions that decide something, what they decide
and when, are exactly those of a loop that runs a session every period (Volcano's scheduler,
pkg/scheduler/scheduler.go runOnce under wait.Until; a session over the view of one that
decided nothing decides nothing, so skipping it changes nothing)."""

from __future__ import annotations

from concurrent.futures import Future
import random

from job_helpers import job, node, task
import volcanic
from volcanic.kube.errors import Conflict


def _every_period(c: volcanic.Cluster) -> None:
    """Makes c's scheduler Volcano's loop: a session at every period boundary (last among the
    timers due then), whatever changed."""
    loop, clock = c.scheduler, c._clock
    loop.cadence.step_aside()

    def cycle() -> None:
        clock.after(loop.period, cycle, last=True)
        loop.cadence.dirty = True
        loop.run_session()
    clock.after(0.0, cycle, last=True)




def _statuses(podgroups: dict) -> dict:
    """PodGroup statuses without the conditions' transitionID: it names the session
    (session-<n>), and the loops run different numbers of sessions."""
    return {k: dict(st, conditions=[{f: v for f, v in c.items() if f != "transitionID"} for c in st["conditions"]])
            for k, st in podgroups.items()}


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
    told: dict = {}  # pod -> the last reason it was unschedulable for

    def record(d, *_) -> None:
        """A session's effects: binds, evictions, statuses to write (the engine reports only
        those that changed) and new reasons for pods it could not place (every session
        reports them all; the loop writes only a new one)."""
        reasons = {k: v for k, v in d.unschedulable.items() if told.get(k) != v}
        told.update(reasons)
        if d.binds or d.evictions or d.podgroups or d.queues or reasons:
            sessions.append((c.now, d.binds, d.evictions, _statuses(d.podgroups), d.queues, reasons))
    c.scheduler.on_session = record
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
        assert c.scheduler.sessions < 600  # sessions ran only where something changed, not each second


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


def test_the_echo_of_a_written_status_costs_no_session():
    """A bare pod (the trace replay's unit): one session enqueues and binds it, one writes its
    PodGroup Running once the kubelet has started it, and then nothing, however long it runs:
    the echoes of the scheduler's own PodGroup and Queue status writes, and the queue
    controller's counts, change nothing the engine reads."""
    c = volcanic.Cluster()
    c.apply(node("n1"))
    c.run(0)
    before = c.scheduler.sessions
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
             "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "x"}]}})
    c.run(3600)
    assert c.get("Pod", "p")["status"]["phase"] == "Running"
    assert c.get("PodGroup", c.get("Pod", "p")["metadata"]["annotations"]["scheduling.k8s.io/group-name"]
                 )["status"]["phase"] == "Running"
    assert c.scheduler.sessions - before == 2


def test_a_status_write_that_failed_is_decided_again():
    """The engine takes the statuses it reports as written; when a write fails (here, once),
    the loop has it forgotten and the next session writes it again."""
    c = volcanic.Cluster()
    c.apply(node("n1"))
    c.run(0)
    real, failed = c.api.update_status_async, []

    def failing_once(obj):
        if obj["kind"] == "PodGroup" and (obj.get("status") or {}).get("phase") == "Running" and not failed:
            failed.append(obj["metadata"]["name"])
            f: Future = Future()
            f.set_exception(Conflict("PodGroup", "default", failed[0], "the object has been modified"))
            return f
        return real(obj)
    c.api.update_status_async = failing_once
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
             "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "x"}]}})
    c.run(60)
    assert failed and c.get("PodGroup", failed[0])["status"]["phase"] == "Running"


def test_the_echo_of_a_written_status_is_not_read_again():
    """The watch brings the loop's own status writes back; what they carry is what the engine
    took as written, on top of what it had seen, so they are not upserted into it again
    (each upsert converts and parses the object)."""
    c = volcanic.Cluster()
    c.apply(node("n1"))
    c.run(0)
    seen: list = []
    upsert = c.scheduler.engine.upsert
    c.scheduler.engine.upsert = lambda obj: seen.append(obj["kind"]) or upsert(obj)
    version = int(c.get("Queue", "default")["metadata"]["resourceVersion"])
    c.apply(job("j", task(duration="30s")))
    c.run(120)
    assert c.get("Job", "j")["status"]["state"]["phase"] == "Completed"
    assert int(c.get("Queue", "default")["metadata"]["resourceVersion"]) > version  # allocated written
    assert "Queue" not in seen  # and never read back


def test_an_instants_updates_of_an_object_are_one_upsert():
    """Updates are coalesced per instant (volcanic/scheduler/loop.py): a bare pod's creation
    and the group annotation the PodGroup controller adds at the same instant are one upsert,
    as are its bind and its start (the kubelet starts it at once); the PodGroup's creation
    and its Pending status are one. The sessions are those of a loop that upserts every
    event: bind, PodGroup Running a period later, PodGroup Completed after the exit."""
    c = volcanic.Cluster()
    c.apply(node("n1"))
    c.run(0)
    seen: list = []
    upsert = c.scheduler.engine.upsert
    c.scheduler.engine.upsert = lambda obj: seen.append((c.now, obj["kind"], (obj.get("status") or {}).get("phase"),
                                                         bool(obj["spec"].get("nodeName")) if obj["kind"] == "Pod"
                                                         else None)) or upsert(obj)
    sessions = c.scheduler.sessions
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": {
        "volcanic/sim-duration": "30s"}},
        "spec": {"schedulerName": "volcano", "restartPolicy": "Never", "containers": [{"name": "c", "image": "x",
                                                             "resources": {"requests": {"cpu": "1"}}}]}})
    c.run(60)
    assert c.get("Pod", "p")["status"]["phase"] == "Succeeded"
    pods = [(t, phase, bound) for t, kind, phase, bound in seen if kind == "Pod"]
    assert pods == [(0.0, "Pending", False), (1.0, "Running", True), (31.0, "Succeeded", True)]
    assert [kind for _, kind, _, _ in seen].count("PodGroup") == 1
    assert c.scheduler.sessions - sessions == 3
    assert c.get("PodGroup", c.get("Pod", "p")["metadata"]["annotations"]["scheduling.k8s.io/group-name"]
                 )["status"]["phase"] == "Completed"
