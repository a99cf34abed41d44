"""Volcano's cronjob-controller (volcanic/controllers/cronjob/controller.py), Volcano v1.15.1's
unit cases re-expressed: pkg/controllers/cronjob/cronjob_controller_test.go TestSyncCronJob
(every case, by its name), cronjob_controller_handler_test.go TestGetJobsByCronJob and
TestUpdateCronJob.

As in Volcano's tests, syncCronJob runs on a CronJob and the Jobs "in the lister" given to it,
with fakes for the API server's Jobs (a Job "in the client" is what a read returns, whatever
its name; creating one gives it UID test-uid-123) and an event recorder that counts; the
clock is Volcano's: 2025-03-11T10:00:00Z ("ten") and minutes after it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

import pytest

from controller_helpers import Harness
from volcanic.controllers.cronjob import CronJobController
from volcanic.controllers.cronjob.jobs import job_from_template, reference
from volcanic.controllers.cronjob.timing import NEXT_SCHEDULE_DELTA
from volcanic.kube.clock import rfc3339, seconds_of
from volcanic.kube.errors import AlreadyExists, NotFound, StoreError
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import clone

CRON_API = KINDS["CronJob"].api_version
TEN = datetime(2025, 3, 11, 10, tzinfo=timezone.utc).timestamp()  # justTen()
EXISTS = AlreadyExists("Job", "volcano", "", "jobs \"\" already exists")
TERMINATING = StoreError("Job", "volcano", "", "jobs is forbidden: unable to create new content in namespace "
                                               "volcano because it is being terminated")


def at(minutes: float) -> float:
    return TEN + minutes * 60


class Events:
    """record.FakeRecorder: the events recorded."""

    def __init__(self):
        self.seen = []

    def event(self, obj, type_, reason, message):
        self.seen.append((type_, reason, message))


class FakeJobs:
    """fakeJobClient: `job` is what every read returns; creates and deletes are recorded."""

    def __init__(self, create_err=None, err=None):
        self.job, self.created, self.deleted = None, [], []
        self.create_err, self.err = create_err, err

    def create(self, job):
        if self.create_err is not None:
            raise self.create_err
        job = clone(job)
        job["metadata"]["uid"] = "test-uid-123"
        self.created.append(job)
        return job

    def get(self, namespace, name):
        if self.err is not None:
            raise self.err
        if self.job is None:
            raise NotFound("Job", namespace, name, f'jobs "{name}" not found')
        return self.job

    def delete(self, namespace, name):
        if self.err is not None:
            raise self.err
        self.deleted.append(name)


class FakeCronJobs:
    """fakeCronjobClient: the one CronJob."""

    def __init__(self, cron):
        self.cron = cron

    def get(self, namespace, name):
        meta = self.cron["metadata"]
        if (namespace, name) != (meta["namespace"], meta["name"]):
            raise NotFound("CronJob", namespace, name, f'cronjobs "{name}" not found')
        return self.cron


@dataclass
class J:
    """jobSpec: a Job of the activation `minutes` after ten, finished a minute later."""

    status: str
    minutes: float
    lister: bool = False  # among the Jobs given to syncCronJob
    client: bool = False  # what the fake API server returns (the first Job only)
    active: bool = False  # in the CronJob's status.active
    owned: bool = True    # False: no owner references


@dataclass
class E:
    """testExpect; requeue in seconds before the 100 ms delta, times in minutes after ten."""

    requeue: float | None = None
    update: bool = False
    error: bool = False
    last: float | None = None
    active: int = 0
    events: int = 0
    success: float | None = None
    created: int = 0
    deleted: int = 0


@dataclass
class C:
    """A TestSyncCronJob case."""

    name: str
    now: float = 0
    schedule: str | None = None
    tz: str | None = None
    policy: str | None = None
    suspend: bool = False
    deadline: int | None = None
    success_limit: int | None = None
    create_err: Exception | None = None
    get_err: bool = False
    last: float | None = None
    jobs: list = field(default_factory=list)
    expect: E = field(default_factory=E)


def cronjob(c: C) -> dict:
    """createTestCronJob: "vccronjob" in "volcano", created at ten, every five minutes."""
    spec = {"schedule": c.schedule or "*/5 * * * *", "suspend": c.suspend, "concurrencyPolicy": c.policy or "Allow",
            "jobTemplate": {"metadata": {"labels": {"volcano": "yes"}, "annotations": {"cronjob": "yes"}}}}
    if c.tz:
        spec["timeZone"] = c.tz
    if c.deadline is not None:
        spec["startingDeadlineSeconds"] = c.deadline
    if c.success_limit is not None:
        spec["successfulJobsHistoryLimit"] = c.success_limit
    return {"apiVersion": CRON_API, "kind": "CronJob",
            "metadata": {"name": "vccronjob", "namespace": "volcano", "uid": "test-uid-123",
                         "creationTimestamp": rfc3339(TEN)},
            "spec": spec}


def test_job(cron: dict, j: J) -> dict:
    """createTestJob: the activation's Job, created then, with a UID of its time."""
    scheduled = at(j.minutes)
    job = job_from_template(cron, scheduled)
    job["metadata"]["creationTimestamp"] = rfc3339(scheduled)
    job["metadata"]["uid"] = "test-uid-" + datetime.fromtimestamp(scheduled, timezone.utc).strftime("%Y%m%d%H%M%S")
    job["status"] = {"state": {"phase": j.status, "lastTransitionTime": rfc3339(scheduled + 60)}}
    return job


test_job.__test__ = False  # a builder, not a test


def controller(now: float = TEN) -> tuple[CronJobController, Events]:
    """setupTestController: the controller with a counting recorder and its clock at `now`."""
    c = Harness(CronJobController).controllers[0]
    c.recorder = Events()
    c.now = lambda: now
    return c, c.recorder


CASES = [
    C('Abnormal situation, error schedule', schedule='wrong shcedlue', expect=E(error=True)),
    C('Abnormal situation, error TimeZone', tz='error TZ', expect=E(error=True, events=1)),
    C('Abnormal situation, suspend', suspend=True, expect=E()),
    C('First run, is not time, Allow', now=3, policy='Allow', expect=E(requeue=120)),
    C('First run, is not time, Forbid', now=3, policy='Forbid', expect=E(requeue=120)),
    C('First run, is not time, Replace', now=3, policy='Replace', expect=E(requeue=120)),
    C('First run, is not time in TZ', now=0, schedule='0 10 * * *', tz='Pacific/Honolulu', policy='Allow',
      expect=E(requeue=36000)),
    C('First run, is time, Allow', now=5, policy='Allow',
      expect=E(requeue=300, update=True, last=5, active=1, events=1, created=1)),
    C('First run, is time, Forbid', now=5, policy='Forbid',
      expect=E(requeue=300, update=True, last=5, active=1, events=1, created=1)),
    C('First run, is time, Replace', now=5, policy='Forbid',
      expect=E(requeue=300, update=True, last=5, active=1, events=1, created=1)),
    C('First run, is time, has startingDeadlineSeconds, Allow', now=5, policy='Allow', deadline=60,
      expect=E(requeue=300, update=True, last=5, active=1, events=1, created=1)),
    C('First run, is time in TZ, Allow', now=600, schedule='0 10 * * *', tz='Pacific/Honolulu', policy='Allow',
      expect=E(requeue=86400, update=True, last=600, active=1, events=1, created=1)),
    C("First run, is time, uses schedule's TZ despite conflict with TimeZone setting", now=600,
      schedule='TZ=UTC 0 20 * * *', tz='Pacific/Honolulu',
      expect=E(requeue=86400, update=True, last=600, active=1, events=2, created=1)),
    C('First run, miss Time, no startingDeadlineSeconds, Allow', now=7, policy='Allow',
      expect=E(requeue=180, update=True, last=5, active=1, events=1, created=1)),
    C('First run, miss Time, no miss deadline, Allow', now=7, policy='Allow', deadline=180,
      expect=E(requeue=180, update=True, last=5, active=1, events=1, created=1)),
    C('First run, miss deadline, Allow', now=7, policy='Allow', deadline=60, expect=E(requeue=180)),
    C('First run, manymiss, no startingDeadlineSeconds, Allow', now=600, policy='Allow',
      expect=E(requeue=300, update=True, last=600, active=1, events=2, created=1)),
    C('First run, manymiss, has startingDeadlineSeconds, Allow', now=1440, schedule='* * * * *', policy='Allow',
      deadline=60060, expect=E(requeue=60, update=True, last=1440, active=1, events=2, created=1)),
    C('First run, is time, job exist and done, Allow', now=5, policy='Allow', create_err=EXISTS,
      jobs=[J('Completed', 5, client=True)], expect=E(requeue=300)),
    C('First run, is time, job exist but not owned by this CronJob, Allow', now=5, policy='Allow', create_err=EXISTS,
      jobs=[J('Running', 5, client=True, owned=False)], expect=E(requeue=300, events=1)),
    C('First run, is time, job in active but not in lister, Allow', now=5, policy='Allow',
      jobs=[J('Completed', 5, active=True)],
      expect=E(requeue=300, update=True, last=5, active=1, events=2, created=1)),
    C('First run, is time, nameSpace is terminating', now=5, policy='Allow', create_err=TERMINATING,
      expect=E(error=True, events=1)),
    C('First run, @every schedule, not time, Allow', now=5, schedule='@every 1h', policy='Allow',
      expect=E(requeue=3300)),
    C('First run, @every schedule, is time, Allow', now=60, schedule='@every 1h', policy='Allow',
      expect=E(requeue=3600, update=True, last=60, active=1, events=1, created=1)),
    C('First run, @every schedule, is time, miss deadline, Allow', now=90, schedule='@every 1h', policy='Allow',
      deadline=60, expect=E(requeue=1800)),
    C('First run, @every schedule, is time, no miss deadline, Allow', now=90, schedule='@every 1h', policy='Allow',
      deadline=60060, expect=E(requeue=1800, update=True, last=60, active=1, events=1, created=1)),
    C('not first run, @every schedule, pre all done, is not time, Allow', now=30, schedule='@every 1h',
      policy='Allow', deadline=60060, jobs=[J('Completed', 0, lister=True)],
      expect=E(requeue=1800, update=True, success=1)),
    C('not first run, @every schedule, pre all done, is time, Allow', now=60, schedule='@every 1h', policy='Allow',
      deadline=60060, jobs=[J('Completed', 0, lister=True)],
      expect=E(requeue=3600, update=True, last=60, active=1, events=1, success=1, created=1)),
    C('not first run, @every schedule, pre active, is not time, Allow', now=30, schedule='@every 1h',
      policy='Allow', deadline=60060, jobs=[J('Running', 0, lister=True, client=True, active=True)],
      expect=E(requeue=1800, active=1)),
    C('not first run, @every schedule, pre activee all done, is time, Allow', now=60, schedule='@every 1h',
      policy='Allow', deadline=60060, jobs=[J('Running', 0, lister=True, client=True, active=True)],
      expect=E(requeue=3600, update=True, last=60, active=2, events=1, created=1)),
    C('noy first run, successfulJobHistoryLimit is 0', now=7, policy='Allow', success_limit=0, last=5,
      jobs=[J('Completed', 5, lister=True)],
      expect=E(requeue=180, update=True, last=5, events=1, success=6, deleted=1)),
    C('noy first run, successfulJobHistoryLimit is 5', now=22, policy='Allow', success_limit=5, last=20,
      jobs=[J('Completed', 5, lister=True), J('Completed', 10, lister=True), J('Completed', 15, lister=True),
            J('Completed', 20, lister=True)],
      expect=E(requeue=180, update=True, last=20, success=21)),
    C('not first run, pre all done, is not time, Allow', now=3, policy='Allow', deadline=60060,
      jobs=[J('Completed', 0, lister=True)], expect=E(requeue=120, update=True, success=1)),
    C('not first run, pre all done, is not time, Forbid', now=3, policy='Forbid', deadline=60060,
      jobs=[J('Completed', 0, lister=True)], expect=E(requeue=120, update=True, success=1)),
    C('not first run, pre all done, is not time, Replace', now=3, policy='Replace', deadline=60060,
      jobs=[J('Completed', 0, lister=True)], expect=E(requeue=120, update=True, success=1)),
    C('not first run, pre all done, is not time, Replace (its second case, a Failed Job)', now=3, policy='Replace',
      deadline=60060, jobs=[J('Failed', 0, lister=True)], expect=E(requeue=120)),
    C('not first run, pre all done, one suc and one fail, is not time, Allow', now=7, policy='Allow', last=5,
      jobs=[J('Completed', 0, lister=True), J('Failed', 5, lister=True)],
      expect=E(requeue=180, update=True, last=5, success=1)),
    C('not first run, pre all done but in active, is not time, Allow', now=3, policy='Allow',
      jobs=[J('Completed', 0, lister=True, active=True)], expect=E(requeue=120, update=True, events=1, success=1)),
    C('not first run, pre all done but in active, is not time, Forbid', now=3, policy='Forbid',
      jobs=[J('Completed', 0, lister=True, active=True)], expect=E(requeue=120, update=True, events=1, success=1)),
    C('not first run, pre all done but in active, is not time, Replace', now=3, policy='Replace',
      jobs=[J('Completed', 0, lister=True, active=True)], expect=E(requeue=120, update=True, events=1, success=1)),
    C('not first run, pre all done, is time, Allow', now=5, policy='Allow', jobs=[J('Completed', 0, lister=True)],
      expect=E(requeue=300, update=True, last=5, active=1, events=1, success=1, created=1)),
    C('not first run, pre all done, is time, Forbid', now=5, policy='Forbid', jobs=[J('Completed', 0, lister=True)],
      expect=E(requeue=300, update=True, last=5, active=1, events=1, success=1, created=1)),
    C('not first run, pre all done, is time, Replace', now=5, policy='Replace', jobs=[J('Completed', 0, lister=True)],
      expect=E(requeue=300, update=True, last=5, active=1, events=1, success=1, created=1)),
    C('not first run, pre all done, is time, suspend', now=5, policy='Allow', suspend=True,
      jobs=[J('Completed', 0, lister=True)], expect=E(update=True, success=1)),
    C('not first run, pre all done fail, is time, Allow', now=5, policy='Allow', jobs=[J('Failed', 0, lister=True)],
      expect=E(requeue=300, update=True, last=5, active=1, events=1, created=1)),
    C('not first run, pre all done, one suc and one fail, is time, Allow', now=15, policy='Allow',
      jobs=[J('Completed', 0, lister=True), J('Failed', 5, lister=True)],
      expect=E(requeue=300, update=True, last=15, active=1, events=1, success=1, created=1)),
    C('not first run, pre all done but in active, is time, Allow', now=5, policy='Allow',
      jobs=[J('Completed', 0, lister=True, active=True)],
      expect=E(requeue=300, update=True, last=5, active=1, events=2, success=1, created=1)),
    C('not first run, pre all done but in active, is time, Forbid', now=5, policy='Forbid',
      jobs=[J('Completed', 0, lister=True, active=True)],
      expect=E(requeue=300, update=True, last=5, active=1, events=2, success=1, created=1)),
    C('not first run, pre all done but in active, is time, Replace', now=5, policy='Replace',
      jobs=[J('Completed', 0, lister=True, active=True)],
      expect=E(requeue=300, update=True, last=5, active=1, events=2, success=1, created=1)),
    C('not first run, pre all done, job exist and in active, is time, Allow', now=5, policy='Allow',
      create_err=EXISTS,
      jobs=[J('Running', 5, lister=True, client=True, active=True), J('Completed', 0, lister=True)],
      expect=E(requeue=300, update=True, active=1, success=1)),
    C('not first run, pre all done, miss deadline, Allow', now=7, policy='Allow', deadline=60,
      jobs=[J('Completed', 0, lister=True)], expect=E(requeue=180, update=True, success=1)),
    C('not first run, pre all done, no miss deadline, Allow', now=7, policy='Allow', deadline=180,
      jobs=[J('Completed', 0, lister=True)],
      expect=E(requeue=180, update=True, last=5, active=1, events=1, success=1, created=1)),
    C('not first run, pre active, not time, Allow', now=7, policy='Allow', last=5,
      jobs=[J('Running', 5, lister=True, active=True)], expect=E(requeue=180, last=5, active=1)),
    C('not first run, pre active, not time, Forbid', now=7, policy='Forbid', last=5,
      jobs=[J('Running', 5, lister=True, active=True)], expect=E(requeue=180, last=5, active=1)),
    C('not first run, pre active, not time, Replace', now=7, policy='Replace', last=5,
      jobs=[J('Running', 5, lister=True, active=True)], expect=E(requeue=180, last=5, active=1)),
    C('not first run, pre active, not time, suspend', now=7, policy='Allow', last=5,
      jobs=[J('Running', 5, lister=True, active=True)], expect=E(requeue=180, last=5, active=1)),
    C('not first run, pre active, is time, Allow', now=10, policy='Allow', last=5,
      jobs=[J('Running', 5, lister=True, client=True, active=True)],
      expect=E(requeue=300, update=True, last=10, active=2, events=1, created=1)),
    C('not first run, pre active, is time, Forbid', now=10, policy='Forbid', last=5,
      jobs=[J('Running', 5, lister=True, client=True, active=True)], expect=E(requeue=300, last=5, active=1, events=1)),
    C('not first run, pre active, is time, Replace', now=10, policy='Replace', last=5,
      jobs=[J('Running', 5, lister=True, client=True, active=True)],
      expect=E(requeue=300, update=True, last=10, active=1, events=3, created=1, deleted=1)),
    C('not first run, pre active, is time, suspend', now=10, policy='Allow', suspend=True, last=5,
      jobs=[J('Running', 5, lister=True, client=True, active=True)], expect=E(last=5, active=1)),
    C('not first run, pre active, is time, Replace, get job failed', now=10, policy='Replace', get_err=True, last=5,
      jobs=[J('Running', 5, lister=True, client=True, active=True)], expect=E(error=True, last=5, active=1, events=2)),
    C('not first run, pre active, is time, miss deadline', now=12, policy='Allow', deadline=60, last=5,
      jobs=[J('Running', 5, lister=True, client=True, active=True)], expect=E(requeue=180, last=5, active=1)),
    C('not first run, pre active, is time, no miss deadline', now=12, policy='Allow', deadline=180, last=5,
      jobs=[J('Running', 5, lister=True, client=True, active=True)],
      expect=E(requeue=180, update=True, last=10, active=2, events=1, created=1)),
    C('not first run, pre all done, manymiss, Allow', now=600, policy='Allow', jobs=[J('Completed', 5, lister=True)],
      expect=E(requeue=300, update=True, last=600, active=1, events=2, success=6, created=1)),
    C('not first run, pre all done, manymiss, has startingDeadlineSeconds, Allow', now=1440, schedule='* * * * *',
      policy='Allow', deadline=60060, jobs=[J('Completed', 5, lister=True)],
      expect=E(requeue=60, update=True, last=1440, active=1, events=2, success=6, created=1)),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_sync_cronjob(case: C):
    """cronjob_controller_test.go TestSyncCronJob, the case of the same name."""
    cron = cronjob(case)
    c, events = controller(at(case.now))
    jobs = FakeJobs(case.create_err, StoreError("Job", "volcano", "", "get job error") if case.get_err else None)
    c.jobs, c.cronjobs = jobs, FakeCronJobs(cron)
    listed = []
    for i, spec in enumerate(case.jobs):  # prepareTestJobs
        job = test_job(cron, spec)
        if not spec.owned:
            job["metadata"]["ownerReferences"] = []
        if i == 0 and spec.client:
            jobs.job = job
        if spec.lister:
            listed.append(job)
    if case.last is not None:  # setupCronJobStatus
        cron.setdefault("status", {})["lastScheduleTime"] = rfc3339(at(case.last))
    for spec in case.jobs:
        if spec.active:
            cron.setdefault("status", {}).setdefault("active", []).append(reference(test_job(cron, spec)))

    result = c.sync_cronjob(cron, listed)

    expect = case.expect
    assert (result.error is not None) == expect.error, result.error
    if expect.requeue is None:
        assert result.requeue_after is None
    else:
        assert result.requeue_after == pytest.approx(expect.requeue + NEXT_SCHEDULE_DELTA, abs=1e-6)
    assert result.update_status == expect.update
    status = cron.get("status") or {}
    for field_, minutes in (("lastScheduleTime", expect.last), ("lastSuccessfulTime", expect.success)):
        assert seconds_of(status.get(field_)) == (None if minutes is None else at(minutes)), field_
    assert len(status.get("active") or []) == expect.active
    assert len(events.seen) == expect.events, events.seen
    assert len(jobs.created) == expect.created
    for job in jobs.created:  # validateControllerRef
        owner, = job["metadata"]["ownerReferences"]
        assert owner == {"apiVersion": CRON_API, "kind": "CronJob", "name": "vccronjob", "uid": "test-uid-123",
                         "controller": True, "blockOwnerDeletion": True}
    assert len(jobs.deleted) == expect.deleted


def test_events_name_what_happened():
    """The reasons and messages of TestSyncCronJob's "not first run, pre active, is time, Replace",
    "First run, manymiss, ..." and "uses schedule's TZ ..." cases, as Volcano words them."""
    case = next(c for c in CASES if c.name == "not first run, pre active, is time, Replace")
    c, events = controller(at(10))
    cron = cronjob(case)
    job = test_job(cron, case.jobs[0])
    cron["status"] = {"lastScheduleTime": rfc3339(at(5)), "active": [reference(job)]}
    c.jobs, c.cronjobs = FakeJobs(), FakeCronJobs(cron)
    c.jobs.job = job
    c.sync_cronjob(cron, [job])
    name = job["metadata"]["name"]
    assert events.seen == [
        ("Warning", "ReplaceConcurrent", "Replacing active job for CronJob"),
        ("Normal", "SuccessfulDelete", f'Deleted job "{name}"'),
        ("Normal", "SuccessfulCreate", f"Created job vccronjob-{int(at(10)) // 60} for CronJob volcano/vccronjob")]

    c, events = controller(at(600))
    c.jobs = FakeJobs()
    c.sync_cronjob(cronjob(C("many", schedule="TZ=UTC */5 * * * *")), [])
    assert [e[1] for e in events.seen] == ["UnsupportedSchedule", "TooManyMissedTimes", "SuccessfulCreate"]
    assert events.seen[0][2] == ('CRON_TZ or TZ in the schedule "TZ=UTC */5 * * * *" is not officially supported. '
                                 'If set, the TimeZone field will be ignored during execution.')
    assert events.seen[1][2] == ("too many missed start times. Set or decrease .spec.startingDeadlineSeconds or "
                                 "check clock skew")


def owned_job(name, uid="test-uid-123", kind="CronJob", namespace="default", controller_=True):
    ref = {"apiVersion": "batch/v1", "kind": kind, "name": "test-cronjob", "uid": uid}
    if controller_:
        ref["controller"] = True
    return {"apiVersion": KINDS["Job"].api_version, "kind": "Job",
            "metadata": {"name": name, "namespace": namespace, "ownerReferences": [ref]}, "spec": {}}


@pytest.mark.parametrize("jobs, expected", [
    ([owned_job("job1"), owned_job("job2")], 2),           # matching controller
    ([owned_job("job3", kind="Deployment")], 0),            # non-matching controller kind
    ([owned_job("job4", namespace="other-namespace")], 0),  # different namespace job
    ([owned_job("job5", controller_=False)], 0),            # job without controller reference
    ([owned_job("job6", uid="different-uid")], 0),          # jobs with mismatched UIDs
    ([], 0),                                                # empty job list
], ids=["matching controller", "non-matching controller kind", "different namespace job",
        "job without controller reference", "jobs with mismatched UIDs", "empty job list"])
def test_jobs_of_a_cronjob(jobs, expected):
    """cronjob_controller_handler_test.go TestGetJobsByCronJob: Jobs whose controller reference
    names the CronJob (kind, name, UID), in its namespace."""
    h = Harness(CronJobController)
    for job in jobs:
        h.store.create(job)
    h.settle()
    cron = {"apiVersion": CRON_API, "kind": "CronJob",
            "metadata": {"name": "test-cronjob", "namespace": "default", "uid": "test-uid-123"}}
    assert len(h.controllers[0].jobs_of(cron)) == expected


def updated(schedule="", tz=None, labels=None, last=None, rv="1"):
    spec = {"schedule": schedule, "jobTemplate": {"metadata": {"labels": labels or {"a": "b"}}}}
    if tz is not None:
        spec["timeZone"] = tz
    cron = {"apiVersion": CRON_API, "kind": "CronJob",
            "metadata": {"name": "cj", "namespace": "default", "resourceVersion": rv}, "spec": spec}
    if last is not None:
        cron["status"] = {"lastScheduleTime": rfc3339(last)}
    return cron


@pytest.mark.parametrize("old, new, delay", [
    (updated(labels={"volcano": "yes"}), updated(labels={"a": "b"}, rv="2"), 0),
    (updated("0 * * * *", last=TEN), updated("*/1 * * * *", last=TEN, rv="2"), 60 + NEXT_SCHEDULE_DELTA),
    (updated("@every 1m", last=TEN), updated("@every 3m", labels={"a": "foo"}, last=TEN, rv="2"),
     180 + NEXT_SCHEDULE_DELTA),
    (updated("@every 3m", last=TEN), updated("@every 1m", labels={"a": "foo"}, last=TEN, rv="2"),
     60 + NEXT_SCHEDULE_DELTA),
    (updated(tz="Pacific/Honolulu"), updated(tz="Pacific/Honolulu", labels={"a": "foo"}, rv="2"), 0),
    (updated(), updated(tz="Pacific/Honolulu", labels={"a": "foo"}, rv="2"), 0),
], ids=["spec.template changed", "spec.schedule changed", "spec.schedule with @every changed - cadence decrease",
        "spec.schedule with @every changed - cadence increase", "spec.timeZone not changed",
        "spec.timeZone changed"])
def test_update_cronjob_requeues_at_the_next_activation(old, new, delay):
    """cronjob_controller_handler_test.go TestUpdateCronJob: a new schedule or time zone is
    synced at its next activation, anything else at once; a schedule that does not parse
    ("spec.timeZone changed", with no schedule) is not synced, with a Warning."""
    c, events = controller(TEN)
    delays = []
    c.enqueue = lambda key, d=0.0: delays.append(d)
    c.update_cronjob(old, new)
    assert (delays[-1] if delays else 0) == pytest.approx(delay)
    if not delays:
        assert events.seen == [("Warning", "UnParseableCronJobSchedule", "unparseable schedule for cronjob: ")]


def test_an_unchanged_version_is_not_synced():
    """updateCronJob: the same resourceVersion (a re-list) is no update."""
    c, _ = controller(TEN)
    delays = []
    c.enqueue = lambda key, d=0.0: delays.append(d)
    c.update_cronjob(updated("* * * * *"), updated("*/5 * * * *"))
    assert delays == []
