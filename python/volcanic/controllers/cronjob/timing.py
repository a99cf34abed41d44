"""When a CronJob's Jobs are due (pkg/controllers/cronjob/cronjob_controller_util.go:
formatSchedule, mostRecentScheduleTime, nextScheduleTime, nextScheduleTimeDuration), in Unix
seconds on the controllers' clock.

The earliest time a CronJob may still run at is its status.lastScheduleTime, else its
creationTimestamp; with startingDeadlineSeconds, no earlier than that long before now. Of the
activations after it, the most recent one not after now is due. Past 100 missed activations
the controller records TooManyMissedTimes but still runs only the most recent one.
"""

from __future__ import annotations

from typing import Any

from volcanic.controllers.cronjob.jobs import seconds
from volcanic.controllers.cronjob.schedule import Schedule, ScheduleError, location, parse_standard
from volcanic.kube.objects import Obj, meta_of, spec_of, status_of

NEXT_SCHEDULE_DELTA = 0.1  # nextScheduleDelta: the requeue lands 100 ms after the activation
NONE_MISSED, FEW_MISSED, MANY_MISSED = "none", "few", "many"
TOO_MANY_MISSED = 100


def format_schedule(cron: Obj, recorder: Any = None) -> str:
    """formatSchedule: the schedule with `TZ=<timeZone> ` in front when timeZone names a zone;
    a schedule with its own TZ keeps it (and, with a recorder, gets a Warning
    UnsupportedSchedule)."""
    spec = spec_of(cron)
    schedule = spec.get("schedule") or ""
    if "TZ" in schedule:
        if recorder is not None:
            recorder.event(cron, "Warning", "UnsupportedSchedule",
                           f"CRON_TZ or TZ in the schedule {_quote(schedule)} is not officially supported. "
                           f"If set, the TimeZone field will be ignored during execution.")
        return schedule
    zone = spec.get("timeZone")
    if zone is not None:
        try:
            location(zone)
        except ScheduleError:
            return schedule
        return f"TZ={zone} {schedule}"
    return schedule


def most_recent_schedule_time(cron: Obj, now: float, schedule: Schedule,
                              include_deadline: bool) -> tuple[float, float | None, str]:
    """mostRecentScheduleTime: (the earliest time considered, the most recent activation not
    after now or None, NONE_MISSED / FEW_MISSED / MANY_MISSED). ScheduleError for a schedule
    whose activations are under a second apart or never come (31 February)."""
    earliest = seconds(meta_of(cron).get("creationTimestamp")) or 0.0
    last = seconds(status_of(cron).get("lastScheduleTime"))
    if last is not None:
        earliest = last
    deadline = spec_of(cron).get("startingDeadlineSeconds")
    if include_deadline and deadline is not None:
        earliest = max(earliest, now - float(deadline))
    t1 = schedule.next(earliest)
    t2 = schedule.next(t1) if t1 is not None else None
    if t1 is not None and now < t1:
        return earliest, None, NONE_MISSED
    if t2 is not None and now < t2:
        return earliest, t1, NONE_MISSED
    if t1 is None or t2 is None or round(t2 - t1) < 1:
        raise ScheduleError("time difference between two schedules is less than 1 second")
    between = round(t2 - t1)
    missed = int(now - t1) // between + 1
    # Count back from a rough estimate (missed activations of the first interval) and let the
    # schedule find the exact ones: irregular schedules (30 6-16/4 * * 1-5) and @every alike.
    recent = None
    t: float | None = schedule.next(t1 + (missed - 2) * between)
    while t is not None and t <= now:
        recent, t = t, schedule.next(t)
    kind = MANY_MISSED if missed > TOO_MANY_MISSED else FEW_MISSED
    return earliest, recent, kind


def next_schedule_time_duration(cron: Obj, now: float, schedule: Schedule) -> float:
    """nextScheduleTimeDuration: seconds from now to NEXT_SCHEDULE_DELTA after the next
    activation (the requeue of a CronJob). A schedule that never comes again is asked about
    at once (Go's zero time lies in the past)."""
    try:
        earliest, recent, missed = most_recent_schedule_time(cron, now, schedule, False)
    except ScheduleError:
        recent = now
    else:
        if recent is None:
            recent = earliest if missed == NONE_MISSED else now
    following = schedule.next(recent)
    if following is None:
        return 0.0
    return following + NEXT_SCHEDULE_DELTA - now


def next_schedule_time(cron: Obj, now: float, schedule: Schedule, recorder: Any) -> float | None:
    """nextScheduleTime: the activation due now (the most recent unmet one), or None; records
    TooManyMissedTimes past 100 missed. ScheduleError as most_recent_schedule_time."""
    _, recent, missed = most_recent_schedule_time(cron, now, schedule, True)
    if recent is None or recent > now:
        return None
    if missed == MANY_MISSED:
        recorder.event(cron, "Warning", "TooManyMissedTimes",
                       "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
    return recent


def tz_and_schedule(cron: Obj, recorder: Any) -> Schedule:
    """validateTZandSchedule: the CronJob's schedule in its time zone; a time zone Go does not
    know is a Warning InvalidTimeZone and a ScheduleError, as is a schedule robfig refuses."""
    zone = spec_of(cron).get("timeZone")
    if zone is not None:
        try:
            location(zone)
        except ScheduleError as e:
            recorder.event(cron, "Warning", "InvalidTimeZone", f"Invalid time zone {_quote(zone)}: {e}")
            raise
    return parse_standard(format_schedule(cron, recorder))


def _quote(text: str) -> str:
    """Go's %q of a plain string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
