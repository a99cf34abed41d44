"""The job controller against a real API server's lag, played on the embedded cluster.

SyncJob's status write is not waited for (Store.update_status_async): on a real API server it
goes out in the background while the controller moves on to the next job's pods. Here the
embedded store's writes are held until the controller waits for them (before the same job's
next action), which is the order a slow API server gives. And the watch may bring the pods a
sync created after the next sync has run: that sync must count them, not create them again."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import volcanic
from volcanic.kube.errors import Conflict
from volcanic.kube.store import attempt, done
from job_helpers import cluster, job, node, phase, pods, status, task, wait


class HeldWrites:
    """update_status_async whose Job status writes are answered after they are sent, as a
    loaded API server answers: a job's after delays[job] virtual seconds, others' at the next
    step of the clock (other kinds' writes, the scheduler's, are done at once)."""

    def __init__(self, c: volcanic.Cluster, fail: int = 0, delays: dict[str, float] | None = None) -> None:
        self.c, self.delays = c, delays or {}
        self.out: list[str] = []      # jobs with a status write out
        self.conflicts = 0            # writes the API server refused as stale
        self.fail = fail              # the first `fail` writes fail as conflicts

    def __call__(self, obj: dict) -> Future:
        if obj["kind"] != "Job":
            return done(self.c.api.update_status, obj)
        name, future = obj["metadata"]["name"], _Answer()
        self.out.append(name)
        self.c._clock.after(self.delays.get(name, 0.0), lambda: self._answer(name, obj, future))
        return future

    def _answer(self, name: str, obj: dict, future: Future) -> None:
        self.out.remove(name)
        if self.fail:
            self.fail -= 1
            future.set_exception(Conflict("Job", name, "default", "the object has been modified"))
            return
        answer = attempt(self.c.api.update_status, obj)
        if isinstance(answer, Conflict):
            self.conflicts += 1
        future.set_exception(answer) if isinstance(answer, Exception) else future.set_result(answer)


class _Answer(Future):
    def result(self, timeout: Any = None) -> Any:
        assert self.done(), "the controller waited for a status write still out, holding up every job"
        return super().result(timeout)


def held_cluster(monkeypatch, fail: int = 0, delays: dict[str, float] | None = None
                 ) -> tuple[volcanic.Cluster, HeldWrites, list]:
    c = cluster(node("n1", cpu="16"))
    held = HeldWrites(c, fail, delays)
    monkeypatch.setattr(c.api, "update_status_async", held)
    created: list[tuple[str, list[str]]] = []  # (job of the pods created, jobs with a write out then)
    create_many = c.api.create_many

    def recording(objs: list[dict]) -> list:
        created.append((objs[0]["metadata"]["labels"]["volcano.sh/job-name"], list(held.out)))
        return create_many(objs)
    monkeypatch.setattr(c.api, "create_many", recording)
    return c, held, created


def test_the_next_jobs_pods_are_created_while_a_status_write_is_out(monkeypatch) -> None:
    """Two jobs admitted in one session: the second job's pods are created while the first
    job's status write (its pod counts) is still out. A job's next action waits for its own
    write and sends the next one with that write's resourceVersion, though the watch has not
    brought it yet: no write is refused as stale, and the statuses end right."""
    c, held, created = held_cluster(monkeypatch)
    c.apply([job("a", task("t", 3)), job("b", task("t", 3))])
    assert wait(c, lambda: len(created) == 2, 5)
    assert created[1][0] == "b" and "a" in created[1][1]
    assert wait(c, lambda: all(phase(c, j) == "Running" for j in "ab"), 10)
    c.run(1)
    assert all(status(c, j).get("running") == 3 for j in "ab")
    assert held.conflicts == 0
    assert c.errors == []


def test_a_request_for_a_job_whose_write_is_out_waits_aside_not_in_the_way(monkeypatch) -> None:
    """Requests for job a arrive (its pods' events) while a's status write is out: they wait
    for it aside, and job b, applied after, still gets its pods while a's write is out. (Had
    they waited for a's write in the controller's one thread, b would have waited too.) Once
    a's write is answered, a's requests run, in order, and both statuses end right."""
    c, held, created = held_cluster(monkeypatch, delays={"a": 5.0})
    ctrl = c.controllers["job-controller"]
    c.apply(job("a", task("t", 3)))
    assert wait(c, lambda: len(pods(c, "a")) == 3, 10)
    assert held.out == ["a"]  # the write of the sync that created a's pods
    c.run(0.5)  # the watch brings a's pods: requests for a
    assert ctrl._parked.get("default/a")
    c.apply(job("b", task("t", 3)))
    assert wait(c, lambda: len(created) == 2, 3)
    assert created == [("a", []), ("b", ["a"])]
    assert wait(c, lambda: all(phase(c, j) == "Running" for j in "ab"), 20)
    c.run(5)
    assert all(status(c, j).get("running") == 3 for j in "ab")
    assert ctrl._parked == {} and held.conflicts == 0 and c.errors == []


def test_a_failed_status_write_retries_its_request(monkeypatch) -> None:
    """A background write the API server refuses is the failure of the action that sent it:
    its request is retried with back-off, as when the write was waited for, and the job's
    status ends right."""
    c, held, _ = held_cluster(monkeypatch, fail=2)
    c.apply(job("a", task("t", 2)))
    assert wait(c, lambda: len(pods(c, "a")) == 2, 5)
    assert held.fail == 0
    assert wait(c, lambda: phase(c, "a") == "Running", 10)
    c.run(1)
    assert status(c, "a").get("running") == 2
    assert c.errors == []


def test_pods_created_before_the_watch_brings_them_are_counted_not_created_again(monkeypatch) -> None:
    """client-go's ControllerExpectations: a sync that runs before the watch has brought the
    pods the previous one created counts them as pending and does not create them again
    (each a 409 AlreadyExists on a real API server, and a lower pending count written)."""
    c = cluster(node("n1", cpu="16"))
    ctrl = c.controllers["job-controller"]
    created: list[str] = []
    create_many, pump = c.api.create_many, c.informers.pump

    def create_and_lag(objs: list[dict]) -> list:
        created.extend(o["metadata"]["name"] for o in objs)
        answers = create_many(objs)
        if len(created) == len(objs):  # the first creation: the watch falls behind it
            monkeypatch.setattr(c.informers, "pump", lambda: None)
            ctrl.queue.add(ctrl._job_request(c.get("Job", "a"), "OutOfSync"))
        return answers
    monkeypatch.setattr(c.api, "create_many", create_and_lag)
    c.apply(job("a", task("t", 3)))
    assert wait(c, lambda: bool(created), 5)
    assert sorted(created) == ["a-t-0", "a-t-1", "a-t-2"]
    assert status(c, "a").get("pending") == 3
    monkeypatch.setattr(c.informers, "pump", pump)
    assert wait(c, lambda: phase(c, "a") == "Running", 10)
    assert len(created) == 3 and status(c, "a").get("running") == 3
    assert c.errors == []
