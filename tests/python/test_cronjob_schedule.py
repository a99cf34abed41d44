"""When a CronJob's Jobs are due and what they are called (volcanic/controllers/cronjob/
schedule.py, timing.py, jobs.py): Volcano v1.15.1's pkg/controllers/cronjob/
cronjob_controller_util_test.go (TestGetJobFromTemplate, TestNextScheduleTime,
TestByJobCreationTimestamp, TestMostRecentScheduleTime, TestNextScheduleTimeDuration), each case
by name, and robfig/cron v3's ParseStandard grammar, which Volcano parses schedules with, over
croniter."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from volcanic.controllers.cronjob.jobs import SCHEDULED_TIMESTAMP, by_creation, job_from_template, job_name
from volcanic.controllers.cronjob.schedule import ScheduleError, location, parse_standard
from volcanic.controllers.cronjob.timing import (
    FEW_MISSED,
    MANY_MISSED,
    NEXT_SCHEDULE_DELTA,
    NONE_MISSED,
    most_recent_schedule_time,
    next_schedule_time,
    next_schedule_time_duration,
)
from volcanic.kube.clock import rfc3339
from volcanic.kube.kinds import KINDS

TOP = datetime(2025, 3, 11, 10, tzinfo=timezone.utc).timestamp()  # topOfTheHour(), a Tuesday
MINUTE, HOUR, DAY = 60, 3600, 86400


def utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


class Events:
    def __init__(self):
        self.seen = []

    def event(self, obj, type_, reason, message):
        self.seen.append(reason)


def cron(schedule="0 * * * *", created=TOP, last=None, deadline=None, tz=None, name="mycronjob"):
    spec = {"schedule": schedule, "concurrencyPolicy": "Allow", "jobTemplate": {}}
    if deadline is not None:
        spec["startingDeadlineSeconds"] = deadline
    if tz is not None:
        spec["timeZone"] = tz
    obj = {"apiVersion": KINDS["CronJob"].api_version, "kind": "CronJob",
           "metadata": {"name": name, "namespace": "default", "uid": "1a2b3c", "creationTimestamp": rfc3339(created)},
           "spec": spec}
    if last is not None:
        obj["status"] = {"lastScheduleTime": rfc3339(last)}
    return obj


# robfig/cron's ParseStandard, the grammar Volcano's controller and webhook accept.

@pytest.mark.parametrize("spec, after, expected", [
    ("*/5 * * * *", TOP + 1, TOP + 5 * MINUTE),
    ("0 * * * ?", TOP, TOP + HOUR),                       # ? is *
    ("@hourly", TOP, TOP + HOUR),
    ("@daily", TOP, utc("2025-03-12T00:00:00")),
    ("@midnight", TOP, utc("2025-03-12T00:00:00")),
    ("@weekly", TOP, utc("2025-03-16T00:00:00")),         # Sunday
    ("@monthly", TOP, utc("2025-04-01T00:00:00")),
    ("@yearly", TOP, utc("2026-01-01T00:00:00")),
    ("@annually", TOP, utc("2026-01-01T00:00:00")),
    ("@every 1h", TOP + 0.5, TOP + HOUR),                  # from the whole second asked about
    ("@every 90m", TOP, TOP + 90 * MINUTE),
    ("@every 300ms", TOP, TOP + 1),                        # at least a second
    ("30 6-16/4 * * 1-5", TOP, TOP + 30 * MINUTE),
    ("0 0 * JAN-mar mon", TOP, utc("2025-03-17T00:00:00")),
    ("TZ=Pacific/Honolulu 0 10 * * *", TOP, TOP + 10 * HOUR),
    ("CRON_TZ=Asia/Tokyo 0 9 * * *", TOP, utc("2025-03-12T00:00:00")),
    ("0 0 13 * 5", TOP, utc("2025-03-13T00:00:00")),      # either day: the 13th, or a Friday
    ("0 0 13 * 5", utc("2025-03-13T00:00:00"), utc("2025-03-14T00:00:00")),
    ("0 0 */2 * 5", TOP, utc("2025-03-13T00:00:00")),     # */2 is no star: either (the odd 13th)
    ("0 0 * * 5", TOP, utc("2025-03-14T00:00:00")),       # * in day-of-month: both
    ("0 0 ? * 5", TOP, utc("2025-03-14T00:00:00")),
    ("59 23 31 2 *", TOP, None),                           # no 31 February within five years
])
def test_parse_standard_and_next(spec, after, expected):
    assert parse_standard(spec).next(after) == expected


@pytest.mark.parametrize("spec, why", [
    ("", "empty spec string"),
    ("wrong shcedlue", "expected exactly 5 fields, found 2"),
    ("*/5 * * * * *", "expected exactly 5 fields, found 6"),  # croniter reads a sixth as seconds
    ("0 0 1 1 * 2025", "expected exactly 5 fields, found 6"),
    ("60 * * * *", "out of range"),
    ("0 24 * * *", "out of range"),
    ("0 0 0 * *", "out of range"),
    ("0 0 * 13 *", "out of range"),
    ("0 0 * * 7", "end of range (7) above maximum (6)"),      # croniter takes 7 for Sunday
    ("5-3 * * * *", "beginning of range (5) beyond end of range (3)"),  # croniter wraps around
    ("0 0 * * fri-mon", "beginning of range (5) beyond end of range (1)"),
    ("*/0 * * * *", "step of range should be a positive number"),
    ("0 0 L * *", "invalid day-of-month field"),              # croniter's last day of the month
    ("0 0 * * 5L", "invalid day-of-week field"),
    ("0 0 * * 5#2", "invalid day-of-week field"),
    ("H * * * *", "invalid minute field"),
    ("@reboot", "unrecognized descriptor: @reboot"),
    ("@every x", "failed to parse duration @every x"),
    ("TZ=Nowhere/Else 0 * * * *", "provided bad location Nowhere/Else"),
])
def test_parse_standard_refuses_what_robfig_refuses(spec, why):
    with pytest.raises(ScheduleError, match=why.replace("(", r"\(").replace(")", r"\)")):
        parse_standard(spec)


def test_time_zones_as_go_loads_them():
    assert location("") == location("UTC") == location("Local") == timezone.utc
    assert datetime(2025, 7, 1, tzinfo=location("Europe/Rome")).utcoffset().total_seconds() == 2 * HOUR
    for bad in ("Amerrica/New_York", "../etc/passwd", "/etc/localtime", "error TZ"):
        with pytest.raises(ScheduleError):
            location(bad)


def test_a_schedule_in_a_zone_follows_its_clock_change():
    """9:00 in Europe/Rome is 8:00 UTC in winter and 7:00 UTC in summer (30 March 2025)."""
    s = parse_standard("TZ=Europe/Rome 0 9 * * *")
    assert s.next(utc("2025-03-29T12:00:00")) == utc("2025-03-30T07:00:00")
    assert s.next(utc("2025-03-28T12:00:00")) == utc("2025-03-29T08:00:00")


# cronjob_controller_util_test.go

@pytest.mark.parametrize("tz, annotations, expected_time", [
    ("UTC", {"x": "y"}, "2025-03-11T10:00:00Z"),
    (None, {"x": "y"}, "2025-03-11T10:00:00Z"),
    ("Europe/Rome", {"x": "y", "z": "x"}, "2025-03-11T11:00:00+01:00"),
], ids=["UTC timezone and one annotation", "nil timezone and one annotation",
        "correct timezone and multiple annotation"])
def test_job_from_template(tz, annotations, expected_time):
    """TestGetJobFromTemplate: the template's labels and annotations, the scheduled time in the
    CronJob's zone, the name, and the CronJob as controller."""
    c = cron("*/5 * * * *", tz=tz, name="mycronjob-")
    c["spec"]["jobTemplate"] = {"metadata": {"labels": {"a": "b"}, "annotations": annotations},
                                "spec": {"schedulerName": "volcano", "minAvailable": 1,
                                         "tasks": [{"name": "task-1", "replicas": 1}]}}
    job = job_from_template(c, TOP)
    assert job["metadata"]["name"] == f"mycronjob--{int(TOP) // 60}" and job["metadata"]["namespace"] == "default"
    assert job["metadata"]["labels"] == {"a": "b"}
    assert len(job["metadata"]["annotations"]) == len(annotations) + 1
    assert job["metadata"]["annotations"][SCHEDULED_TIMESTAMP] == expected_time
    assert job["spec"] == c["spec"]["jobTemplate"]["spec"] and job["spec"] is not c["spec"]["jobTemplate"]["spec"]
    assert job["metadata"]["ownerReferences"] == [{"apiVersion": KINDS["CronJob"].api_version, "kind": "CronJob",
                                                   "name": "mycronjob-", "uid": "1a2b3c", "controller": True,
                                                   "blockOwnerDeletion": True}]


def test_job_names_are_the_activation_in_minutes():
    """getJobName: one activation, one name."""
    assert job_name("cj", TOP) == job_name("cj", TOP + 59) == "cj-29028120"  # 1741687200 / 60
    assert job_name("cj", TOP + 60) == "cj-29028121"


def test_next_schedule_time():
    """TestNextScheduleTime, cases 1 to 8, hourly on the hour ("0 * * * ?")."""
    events = Events()
    t1, t2 = TOP, TOP + HOUR
    nxt = lambda c, now, spec="0 * * * ?": next_schedule_time(c, now, parse_standard(spec), events)
    # 1: no known start times, and none needed yet.
    assert nxt(cron("0 * * * ?", created=t1 - 10 * MINUTE), t1 - 7 * MINUTE) is None
    # 2: no known start times, and one needed.
    assert nxt(cron("0 * * * ?", created=t1 - 10 * MINUTE), t1 + 2) == t1
    # 3: known LastScheduleTime, no start needed.
    assert nxt(cron("0 * * * ?", created=t1 - 10 * MINUTE, last=t1), t1 + 2 * MINUTE) is None
    # 4: known LastScheduleTime, a start needed.
    assert nxt(cron("0 * * * ?", created=t1 - 10 * MINUTE, last=t1), t2 + 5 * MINUTE) == t2
    # 5: known LastScheduleTime, two starts needed: the most recent.
    assert nxt(cron("0 * * * ?", created=t1 - 2 * HOUR, last=t1 - HOUR), t2 + 5 * MINUTE) == t2
    # 6: now is way ahead of the last start time, and there is no deadline.
    assert nxt(cron("0 * * * ?", created=t1 - 2 * HOUR, last=t1 - HOUR), t2 + 10 * DAY) is not None
    assert events.seen == ["TooManyMissedTimes"]
    # 7: ... and a short deadline.
    assert nxt(cron("0 * * * ?", created=t1 - 2 * HOUR, last=t1 - HOUR, deadline=2 * HOUR), t2 + 10 * DAY) is not None
    # 8: the error of a schedule without activations comes up.
    with pytest.raises(ScheduleError, match="less than 1 second"):
        nxt(cron("0 * * * ?", created=t1 + 10), t2, "59 23 31 2 *")


@pytest.mark.parametrize("jobs, expected", [
    ([("b", None), ("a", None)], ["a", "b"]),
    ([("a", None), ("b", 1)], ["b", "a"]),
    ([("a", 1), ("b", None)], ["a", "b"]),
    ([("b", 1), ("a", 1)], ["a", "b"]),
    ([("a", 2), ("b", 1), ("a", None)], ["b", "a", "a"]),
], ids=["both have nil creation times", "only the first has a nil creation time",
        "only the second has a nil creation time", "both have non-nil, equal creation time",
        "both have non-nil, different creation time"])
def test_by_job_creation_timestamp(jobs, expected):
    """TestByJobCreationTimestamp: oldest first, none last, ties by name."""
    objs = [{"metadata": dict({"name": n}, **({"creationTimestamp": rfc3339(TOP + DAY * t)} if t else {}))}
            for n, t in jobs]
    assert [o["metadata"]["name"] for o in sorted(objs, key=by_creation)] == expected


@pytest.mark.parametrize("c, include, now, earliest, recent, missed", [
    (cron("0 * * * *"), False, TOP + 30, TOP, None, NONE_MISSED),
    (cron("0 * * * *"), False, TOP + 61 * MINUTE, TOP, TOP + HOUR, NONE_MISSED),
    (cron("0 * * * *", created=TOP + 10), False, TOP + 301 * MINUTE, TOP + 10, TOP + 300 * MINUTE, FEW_MISSED),
    (cron("30 6-16/4 * * 1-5", last=TOP + 30 * MINUTE), False, TOP + DAY + 31 * MINUTE, TOP + 30 * MINUTE,
     TOP + DAY + 30 * MINUTE, FEW_MISSED),
    (cron("30 10,11,12 * * 1-5", last=TOP + 30 * MINUTE), False, TOP + 30 * HOUR + 30 * MINUTE, TOP + 30 * MINUTE,
     None, FEW_MISSED),
    (cron("30 6-16/4 * * 1-5", last=TOP + 30 * MINUTE), False, TOP + 96 * HOUR + 31 * MINUTE, TOP + 30 * MINUTE,
     TOP + 76 * HOUR + 30 * MINUTE, FEW_MISSED),
    (cron("30 6-16/4 * * 1-5"), False, TOP + DAY + 31 * MINUTE, TOP, TOP + DAY + 30 * MINUTE, FEW_MISSED),
    (cron("@every 1h", created=TOP - 59 * MINUTE, last=TOP + MINUTE, deadline=10), False, TOP + 7 * DAY,
     TOP + MINUTE, TOP + 6 * DAY + 23 * HOUR + MINUTE, MANY_MISSED),
    (cron("0 * * * *", last=TOP), False, TOP + 30, TOP, None, NONE_MISSED),
    (cron("*/5 * * * *", last=TOP + 30 * MINUTE), False, TOP + 31 * MINUTE, TOP + 30 * MINUTE, None, NONE_MISSED),
    (cron("*/5 * * * *", last=TOP + 30 * MINUTE, deadline=60), False, TOP + 31 * MINUTE, TOP + 30 * MINUTE, None,
     NONE_MISSED),
    (cron("*/5 * * * *", last=TOP + 30 * MINUTE, deadline=60), True, TOP + 32 * MINUTE, TOP + 31 * MINUTE, None,
     NONE_MISSED),
], ids=["now before next schedule", "now just after next schedule", "missed 5 schedules", "complex schedule",
        "another complex schedule", "complex schedule with longer diff between executions",
        "complex schedule with shorter diff between executions", "@every schedule",
        "earliestTime being CreationTimestamp and LastScheduleTime", "earliestTime being LastScheduleTime",
        "earliestTime being LastScheduleTime (within StartingDeadlineSeconds)",
        "earliestTime being LastScheduleTime (outside StartingDeadlineSeconds)"])
def test_most_recent_schedule_time(c, include, now, earliest, recent, missed):
    """TestMostRecentScheduleTime."""
    schedule = parse_standard(c["spec"]["schedule"])
    assert most_recent_schedule_time(c, now, schedule, include) == (earliest, recent, missed)


def test_most_recent_schedule_time_of_a_rogue_cronjob():
    """TestMostRecentScheduleTime "rogue cronjob": 31 February never comes."""
    with pytest.raises(ScheduleError):
        most_recent_schedule_time(cron("59 23 31 2 *", created=TOP + 10), TOP + HOUR, parse_standard("59 23 31 2 *"),
                                  False)


@pytest.mark.parametrize("c, now, expected", [
    (cron("30 6-16/4 * * 1-5", last=TOP + 30 * MINUTE), TOP + DAY + 31 * MINUTE, 3 * HOUR + 59 * MINUTE),
    (cron("30 10,11,12 * * 1-5", last=TOP + 30 * MINUTE), TOP + 30 * HOUR + 30 * MINUTE, 18 * HOUR),
    (cron("0 12 * * 2", last=TOP + 2 * HOUR), TOP + 19 * DAY + HOUR + 30 * MINUTE, 48 * HOUR + 30 * MINUTE),
    (cron("0 12 * * 3"), TOP + 6 * HOUR, 20 * HOUR),
], ids=["complex schedule skipping weekend", "another complex schedule skipping weekend",
        "once a week cronjob, missed two runs", "no previous run of a cronjob"])
def test_next_schedule_time_duration(c, now, expected):
    """TestNextScheduleTimeDuration: 100 ms after the next activation."""
    got = next_schedule_time_duration(c, now, parse_standard(c["spec"]["schedule"]))
    assert got == pytest.approx(expected + NEXT_SCHEDULE_DELTA, abs=1e-6)
