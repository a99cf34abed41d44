"""The job controller's expectations (volcanic.controllers.job.expectations), alone: a job's
work out and the requests parked behind it, and the stamps that coalesce SyncJob requests.
The controller's use of them against a lagging API server is in test_job_sync_lag.py."""

from __future__ import annotations

from concurrent.futures import Future

from volcanic.controllers.job.expectations import JobExpectations, Out
from volcanic.controllers.job.policy import Request
from volcanic.controllers.job.sync import CreatesOut, WriteOut

JOB = {"metadata": {"namespace": "default", "name": "a", "uid": "u"}}


def _request(event: str = "OutOfSync", pod: str = "") -> Request:
    return Request("default", "a", job_uid="u", pod_name=pod, event=event)


def test_a_job_is_satisfied_once_its_work_is_answered_and_observed_once() -> None:
    e = JobExpectations()
    write: Future = Future()
    out = Out(WriteOut(write), _request(), JOB, "SyncJob")
    assert e.satisfied("default/a") and e.observe("default/a") is None
    e.expect(out)
    assert not e.satisfied("default/a") and e.observe("default/a") is None  # still out: kept
    assert e.satisfied("default/b")  # one job's work holds up no other job
    write.set_result(JOB)
    assert e.satisfied("default/a")
    assert e.observe("default/a") is out and e.observe("default/a") is None and e.out == {}


def test_creates_are_answered_when_all_of_them_are() -> None:
    e = JobExpectations()
    first, second = Future(), Future()
    e.expect(Out(CreatesOut.of([({}, first), ({}, second)]), _request(), JOB, "SyncJob"))
    first.set_result({})
    assert not e.satisfied("default/a")
    second.set_exception(RuntimeError("refused"))  # an answer too
    assert e.satisfied("default/a")


def test_parked_requests_are_released_in_order_only_once_the_job_is_satisfied() -> None:
    e = JobExpectations()
    write: Future = Future()
    e.expect(Out(WriteOut(write), _request(), JOB, "SyncJob"))
    first, second = _request("PodPending", "a-t-0"), _request("PodRunning", "a-t-1")
    e.park(first)
    e.park(second)
    assert e.has_parked("default/a") and e.release("default/a") == []
    assert e.parked == {"default/a": [first, second]}
    write.set_result(JOB)
    assert e.release("default/a") == [first, second]
    assert not e.has_parked("default/a") and e.release("default/a") == []


def test_a_sync_request_is_done_by_a_sync_started_after_its_event() -> None:
    e = JobExpectations()
    before, after = _request("PodRunning", "a-t-0"), _request("PodRunning", "a-t-1")
    e.stamp(before)
    started = e.sync_starts()
    e.stamp(after)
    e.synced("default/a", started)
    assert e.synced_since("default/a", e.take_stamp(before))
    assert not e.synced_since("default/a", e.take_stamp(after))  # came after the sync began
    assert e.take_stamp(before) is None and not e.synced_since("default/a", None)  # unstamped
    e.forget("default/a")
    e.stamp(before)
    assert not e.synced_since("default/a", e.take_stamp(before))
