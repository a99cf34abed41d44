"""The job controller against a real API server's lag, played on the embedded cluster.

A job's pod creates and SyncJob's status write are not waited for (Store.create_async,
Store.update_status_async): on a real API server they go out in the background while the
controller moves on to other jobs. Here the embedded store's answers to them are held and
given later on the virtual clock, the order a slow API server gives. And the watch may bring
the pods a sync created after the next sync has run: that sync must count them, not create
them again."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Callable

from job_helpers import cluster, job, node, phase, pods, status, task, wait
import volcanic
from volcanic.controllers.job.policy import Request
from volcanic.kube.errors import AdmissionError, Conflict
from volcanic.kube.store import attempt, done


def _job_of(obj: dict) -> str:
    return obj["metadata"]["labels"]["volcano.sh/job-name"] if obj["kind"] == "Pod" else obj["metadata"]["name"]


class HeldAnswers:
    """The store's answers to a job's pod creates and status writes, given as a loaded API
    server gives them: a job's after delays[job] virtual seconds, others' at the next step of
    the clock (other kinds' writes, the scheduler's, are answered at once)."""

    def __init__(self, c: volcanic.Cluster, fail: int = 0, delays: dict[str, float] | None = None,
                 refuse: tuple[str, ...] = (), twice: tuple[str, ...] = ()) -> None:
        self.c, self.delays = c, delays or {}
        self.out: list[str] = []       # jobs with a status write out
        self.creating: list[str] = []  # jobs with pod creates out, once per create
        self.created: list[tuple[str, list[str], list[str]]] = []  # (job, self.out, self.creating) per create sent
        self.conflicts = 0             # writes the API server refused as stale
        self.fail = fail               # the first `fail` writes fail as conflicts
        self.refuse = set(refuse)      # pods whose first create is refused
        self.twice = set(twice)        # pods whose first create is done twice (a create that timed out)
        self.sent: list[str] = []      # the pods whose creates were sent
        self.on_answer: Callable[[], None] = lambda: None  # called after each answer is given

    def update_status_async(self, obj: dict) -> Future:
        if obj["kind"] != "Job":
            return done(self.c.api.update_status, obj)
        return self._hold(obj, self.out, self._write)

    def create_async(self, obj: dict) -> Future:
        if obj["kind"] != "Pod":
            return done(self.c.api.create, obj)
        self.created.append((_job_of(obj), list(self.out), list(self.creating)))
        self.sent.append(obj["metadata"]["name"])
        assert self.sent.count(obj["metadata"]["name"]) < 5, "a pod created again and again"
        return self._hold(obj, self.creating, self._create)

    def _hold(self, obj: dict, out: list[str], answer: Callable[[dict], Any]) -> Future:
        name, future = _job_of(obj), _Answer()
        out.append(name)

        def give() -> None:
            out.remove(name)
            result = answer(obj)
            future.set_exception(result) if isinstance(result, Exception) else future.set_result(result)
            self.on_answer()
        self.c._clock.after(self.delays.get(name, 0.0), give)
        return future

    def _write(self, obj: dict) -> Any:
        if self.fail:
            self.fail -= 1
            return Conflict("Job", obj["metadata"]["name"], "default", "the object has been modified")
        answer = attempt(self.c.api.update_status, obj)
        self.conflicts += isinstance(answer, Conflict)
        return answer

    def _create(self, obj: dict) -> Any:
        if obj["metadata"]["name"] in self.refuse:
            self.refuse.discard(obj["metadata"]["name"])
            return AdmissionError("pod refused by a test", kind="Pod", name=obj["metadata"]["name"])
        if obj["metadata"]["name"] in self.twice:
            self.twice.discard(obj["metadata"]["name"])
            self.c.api.create(obj)  # the answer to this one was lost: the client sees the next
        return attempt(self.c.api.create, obj)

    def jobs_created(self) -> list[tuple[str, list[str], list[str]]]:
        """The first create of each job, in order."""
        first: dict[str, tuple[str, list[str], list[str]]] = {}
        for record in self.created:
            first.setdefault(record[0], record)
        return list(first.values())


class _Answer(Future):
    def result(self, timeout: Any = None) -> Any:
        assert self.done(), "the controller waited for an answer still out, holding up every job"
        return super().result(timeout)


def held_cluster(monkeypatch, fail: int = 0, delays: dict[str, float] | None = None,
                 refuse: tuple[str, ...] = (), twice: tuple[str, ...] = ()) -> tuple[volcanic.Cluster, HeldAnswers]:
    c = cluster(node("n1", cpu="16"))
    held = HeldAnswers(c, fail, delays, refuse, twice)
    monkeypatch.setattr(c.api, "update_status_async", held.update_status_async)
    monkeypatch.setattr(c.api, "create_async", held.create_async)
    return c, held


def test_the_next_jobs_pods_are_created_while_the_first_jobs_work_is_out(monkeypatch) -> None:
    """Two jobs admitted in one session: the second job's pods are created while the first
    job's pod creates and status write are still out. A job's next action waits for its own
    write and sends the next one with that write's resourceVersion, though the watch has not
    brought it yet: no write is refused as stale, and the statuses end right."""
    c, held = held_cluster(monkeypatch)
    c.apply([job("a", task("t", 3)), job("b", task("t", 3))])
    assert wait(c, lambda: len(held.jobs_created()) == 2, 5)
    second, writes_out, creates_out = held.jobs_created()[1]
    assert second == "b" and "a" in writes_out + creates_out
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
    c, held = held_cluster(monkeypatch, delays={"a": 5.0})
    ctrl = c.controllers["job-controller"]
    c.apply(job("a", task("t", 3)))
    assert wait(c, lambda: len(pods(c, "a")) == 3 and held.out == ["a"], 15)  # the sync's write, after its creates
    c.run(0.5)  # the watch brings a's pods: requests for a
    assert ctrl.expectations.parked.get("default/a")
    c.apply(job("b", task("t", 3)))
    assert wait(c, lambda: len(held.jobs_created()) == 2, 3)
    assert held.jobs_created() == [("a", [], []), ("b", ["a"], [])]
    assert wait(c, lambda: all(phase(c, j) == "Running" for j in "ab"), 20)
    c.run(5)
    assert all(status(c, j).get("running") == 3 for j in "ab")
    assert ctrl.expectations.parked == {} and held.conflicts == 0 and c.errors == []


def test_a_failed_status_write_retries_its_request(monkeypatch) -> None:
    """A background write the API server refuses is the failure of the action that sent it:
    its request is retried with back-off, as when the write was waited for, and the job's
    status ends right."""
    c, held = held_cluster(monkeypatch, fail=2)
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
    create_async, pump = c.api.create_async, c.informers.pump

    def create_and_lag(obj: dict) -> Future:
        created.append(obj["metadata"]["name"])
        answer = create_async(obj)
        if len(created) == 3:  # the first sync's creates: the watch falls behind them
            monkeypatch.setattr(c.informers, "pump", lambda: None)
            ctrl.queue.add(ctrl._job_request(c.get("Job", "a"), "OutOfSync"))
        return answer
    monkeypatch.setattr(c.api, "create_async", create_and_lag)
    c.apply(job("a", task("t", 3)))
    assert wait(c, lambda: bool(created), 5)
    assert sorted(created) == ["a-t-0", "a-t-1", "a-t-2"]
    assert status(c, "a").get("pending") == 3
    monkeypatch.setattr(c.informers, "pump", pump)
    assert wait(c, lambda: phase(c, "a") == "Running", 10)
    assert len(created) == 3 and status(c, "a").get("running") == 3
    assert c.errors == []


def test_a_jobs_creates_out_hold_up_neither_other_jobs_nor_its_own_status(monkeypatch) -> None:
    """Job a's pod creates are answered only after 5 s: the controller goes on, and job b's pods
    are created while a's creates are out; a's sync resumes once they are all answered, and
    only then writes a's status (Volcano's syncJob waits for its creates before it writes),
    counting the three pods."""
    c, held = held_cluster(monkeypatch, delays={"a": 5.0})
    ctrl = c.controllers["job-controller"]
    c.apply(job("a", task("t", 3)))
    assert wait(c, lambda: len(held.creating) == 3, 5)
    c.apply(job("b", task("t", 3)))
    assert wait(c, lambda: len(held.jobs_created()) == 2, 3)
    assert held.jobs_created()[1] == ("b", [], ["a", "a", "a"])
    assert (status(c, "a").get("pending"), not ctrl.expectations.satisfied("default/a")) == (None, True)
    assert wait(c, lambda: status(c, "a").get("pending") == 3 or phase(c, "a") == "Running", 10)
    assert wait(c, lambda: all(phase(c, j) == "Running" for j in "ab"), 20)
    c.run(1)
    assert all(status(c, j).get("running") == 3 for j in "ab")
    assert len(held.created) == 6 and held.conflicts == 0 and ctrl.expectations.parked == {} and c.errors == []


def test_a_create_refused_in_the_background_is_failed_create_and_retried(monkeypatch) -> None:
    """A pod create the API server refuses after the controller moved on fails that sync as a
    waited-for create does: one FailedCreate Warning Event naming the pod, and the request is
    retried with back-off, which creates the pod; the job then runs whole."""
    c, held = held_cluster(monkeypatch, delays={"a": 1.0}, refuse=("a-t-1",))
    c.apply(job("a", task("t", 3)))
    assert wait(c, lambda: phase(c, "a") == "Running", 20)
    failed = [e for e in c.list("Event") if e["reason"] == "FailedCreate"]
    assert len(failed) == 1 and "failed to create pod a-t-1" in failed[0]["message"]
    assert sorted(name for name, *_ in held.created) == ["a"] * 4  # three, and a-t-1 again
    c.run(1)
    assert status(c, "a").get("running") == 3 and c.errors == []


def test_an_action_that_comes_as_creates_are_answered_waits_for_the_resumed_sync(monkeypatch) -> None:
    """An AbortJob comes right when job a's creates are answered, before the controller took
    the answers (and before the watch brought the pods): the stopped sync resumes first, its
    status write goes out, and the abort waits for that write aside, then runs. Had it run at
    once, two status writes of one job would be out, the first one's answer lost."""
    c, held = held_cluster(monkeypatch, delays={"a": 2.0})
    ctrl = c.controllers["job-controller"]
    c.apply(job("a", task("t", 3)))
    assert wait(c, lambda: len(held.creating) == 3, 5)
    uid = c.get("Job", "a")["metadata"]["uid"]
    abort = Request("default", "a", job_uid=uid, event="CommandIssued", action="AbortJob")
    pump = c.informers.pump
    c.informers.pump = lambda: None

    def abort_now() -> None:
        if not held.creating:
            held.on_answer = lambda: None
            for waiting in ctrl.expectations.parked.pop("default/a", []):  # (a's status events: queued again)
                ctrl.queue.add(waiting)
            ctrl.process(abort)
            assert ctrl.expectations.parked["default/a"] == [abort] and held.out == ["a"]  # the resumed sync's write
            c.informers.pump = pump
    held.on_answer = abort_now
    assert wait(c, lambda: phase(c, "a") == "Aborted", 20)
    assert held.conflicts == 0 and ctrl.expectations.out == {} and ctrl.expectations.parked == {} and c.errors == []


def test_a_create_answered_already_exists_while_the_watch_lags_is_counted_not_sent_again(monkeypatch) -> None:
    """A create whose first answer was lost (it was done, the retry says AlreadyExists) is
    expected like a created pod: the resumed sync counts it while the watch has not brought it,
    instead of creating it again at every answer."""
    c, held = held_cluster(monkeypatch, twice=("a-t-1",))
    pump = c.informers.pump
    # the watch falls behind the creates (from the first answer once the pods are being made)
    held.on_answer = lambda: held.sent and setattr(c.informers, "pump", lambda: None)
    c.apply(job("a", task("t", 3)))
    assert wait(c, lambda: len(held.sent) >= 3 and not held.creating, 5)
    c.run(3)
    assert sorted(held.sent) == ["a-t-0", "a-t-1", "a-t-2"]
    assert len(pods(c, "a")) == 3 and status(c, "a").get("pending") == 3  # a-t-1 counted though unseen
    held.on_answer = lambda: None
    c.informers.pump = pump
    assert wait(c, lambda: phase(c, "a") == "Running", 10)
    assert sorted(held.sent) == ["a-t-0", "a-t-1", "a-t-2"] and c.errors == []


def test_a_job_deleted_while_its_creates_are_out_is_forgotten_with_them(monkeypatch) -> None:
    """The answers to a deleted job's creates are no one's to count: no sync runs again, no
    pod is expected for it, nothing is left waiting."""
    c, held = held_cluster(monkeypatch, delays={"a": 3.0})
    ctrl = c.controllers["job-controller"]
    c.apply(job("a", task("t", 3)))
    assert wait(c, lambda: len(held.creating) == 3, 5)
    c.delete("Job", "a")
    c.run(5)
    assert not held.creating and ctrl.expectations.out == {} and ctrl.expectations.parked == {}
    assert "default/a" not in ctrl.actions._unseen and len(held.sent) == 3 and c.errors == []


def test_a_podgroup_first_seen_past_pending_syncs_its_job() -> None:
    """A list gives an object's latest state, not the changes that led to it: the
    controller-manager lists each kind before kopf starts, kopf lists again, and after a
    restart a PodGroup whose create landed between the two (sent by the controller-manager that
    was killed) and that the scheduler made Inqueue before kopf listed is first seen Inqueue.
    Volcano's job controller acts only on a PodGroup's update (pkg/controllers/job/
    job_controller.go registers only an UpdateFunc), so a job whose phase was already Pending
    had nothing else to sync it: the e2e kill-and-restart test's job was left with no pods.
    A PodGroup first seen past Pending stands for the update. Here its ADDED event is lost."""
    c = cluster(node("n1"))
    feed = c.informers.watch
    offer = feed.offer
    feed.offer = lambda event, obj: None if (obj["kind"], event) == ("PodGroup", "ADDED") else offer(event, obj)
    c.apply(job("a", task("t", 2)))
    assert wait(c, lambda: phase(c, "a") == "Pending" and c.list("PodGroup", "default"), 5)
    c.run(3)
    assert pods(c, "a") == {}  # the PodGroup is unseen, so not Inqueue for anyone yet
    [pg] = c.list("PodGroup", "default")
    c.api.update_status(dict(pg, status=dict(pg.get("status") or {}, phase="Inqueue")))
    assert wait(c, lambda: phase(c, "a") == "Running", 10)
    assert sorted(pods(c, "a")) == ["a-t-0", "a-t-1"] and c.errors == []


def test_jobs_created_together_send_their_gangs_pods_before_any_jobs_extras(monkeypatch) -> None:
    """Volcano's e2e schedulingbase "Schedule Multiple Jobs" (test/e2e/schedulingbase/
    job_scheduling.go): three Jobs of 16 pods, minAvailable 2, created together on a cluster
    with room for 16. A job's creates that bring it to minAvailable go out first and its
    extras once those are answered, so every job's gang is sent before any job's extras: a
    session in the middle of the burst sees each gang whole, and each Job gets its two pods.
    (All of a job's creates at once put the third job's pods behind 32 others.)"""
    c, held = held_cluster(monkeypatch, delays={j: 0.25 for j in ("a", "b", "c")})
    c.apply([job(j, task("t", 16), min_available=2) for j in "abc"])
    assert wait(c, lambda: len(held.sent) >= 6, 5)
    assert sorted(held.sent[:6]) == sorted(f"{j}-t-{i}" for j in "abc" for i in range(2))
    assert wait(c, lambda: all(phase(c, j) == "Running" for j in "abc"), 10)
    assert all(status(c, j).get("running", 0) >= 2 for j in "abc")
    assert c.errors == []
