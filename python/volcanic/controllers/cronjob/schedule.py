"""Cron schedules as Volcano's cronjob controller and webhook read them: robfig/cron v3's
`cron.ParseStandard`, evaluated by croniter (a maintained cron library; volcanic evaluates no
cron expression itself).

    schedule = parse_standard("*/5 * * * *")      ScheduleError for what robfig refuses
    schedule.next(t)                             the first activation strictly after Unix time t
                                                 (None if there is none within five years)
    location("Pacific/Honolulu")                 a time zone as Go's time.LoadLocation finds it

The grammar is robfig's, which is narrower than croniter's, so what croniter alone would also
accept is refused here as Volcano refuses it:
- exactly five fields (minute hour day-of-month month day-of-week), or a descriptor: @yearly,
  @annually, @monthly, @weekly, @daily, @midnight, @hourly, or `@every <Go duration>` (at least
  one second, whole seconds, counted from the time it is asked about, in no time zone);
- an optional `TZ=<zone> ` or `CRON_TZ=<zone> ` prefix;
- each field a comma list of `*` or `?`, a value, or `low-high`, each with an optional `/step`;
  values are numbers, and in the month and day-of-week fields also their three-letter names;
  day-of-week is 0-6 (no 7 for Sunday) and a range may not run backwards (no wrap-around);
  croniter's own extensions (L, W, #, H, a sixth field for seconds or years) are refused.
- robfig's day rule: when the day-of-month or the day-of-week field has a `*` or `?` part (with
  no step above 1), a day must match both; otherwise either. croniter is asked for each half of
  an "either" and the earlier answer wins, so its own heuristic for that rule plays no part.

A schedule without a zone runs in UTC (Go's time.Local of Volcano's controller, whose image has
no zone of its own; volcanic takes "Local" the same way).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone, tzinfo
import functools
import math
import re
import threading
from typing import Callable
from zoneinfo import ZoneInfo

from croniter import CroniterBadDateError, CroniterError, croniter

from volcanic import _core

SEARCH_YEARS = 5  # robfig gives up (returns the zero time) after five years without a match
DESCRIPTORS = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
EVERY = "@every "
FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week")
MONTH, DOW = 3, 4
_NUMBER = r"[0-9]+"
_NAME = r"[0-9]+|[A-Za-z]{3}"  # the month and day-of-week fields also take names
_PARTS = [re.compile(rf"^(?:(?P<star>[*?])|(?P<low>{value})(?:-(?P<high>{value}))?)(?:/(?P<step>[0-9]+))?$")
          for value in (_NUMBER, _NUMBER, _NUMBER, _NAME, _NAME)]


class ScheduleError(ValueError):
    """A schedule or time zone robfig/cron (or Go's time.LoadLocation) refuses."""


def location(name: str) -> tzinfo:
    """time.LoadLocation: "" and "UTC" are UTC, "Local" the controller's zone (UTC, see the
    module docstring), anything else a name in the tz database."""
    if name in ("", "UTC", "Local"):
        return timezone.utc
    if ".." in name or name.startswith(("/", "\\")):
        raise ScheduleError(f"time: invalid location name {name!r}")
    try:
        return ZoneInfo(name)
    except (ValueError, LookupError, OSError):  # ZoneInfoNotFoundError is a KeyError
        raise ScheduleError(f"unknown time zone {name}") from None


def go_rfc3339(seconds: float, zone: tzinfo) -> str:
    """Go's time.Format(time.RFC3339) of Unix time `seconds` in `zone`: "Z" for a zero offset,
    "+hh:mm" otherwise."""
    t = datetime.fromtimestamp(math.floor(seconds), zone)
    offset = int(t.utcoffset().total_seconds()) if t.utcoffset() is not None else 0
    if offset == 0:
        suffix = "Z"
    else:
        sign, offset = ("-", -offset) if offset < 0 else ("+", offset)
        suffix = f"{sign}{offset // 3600:02d}:{offset % 3600 // 60:02d}"
    return t.strftime("%Y-%m-%dT%H:%M:%S") + suffix


@dataclass(eq=False)
class Schedule:
    """A parsed schedule. `expressions`: croniter expressions whose earliest next activation is
    the schedule's (two for robfig's "either day" rule, else one); `delay`: the seconds of an
    @every schedule instead. Answers are memoised: the controller asks about the same few
    instants (the last schedule time, the next one) again and again. A parsed schedule is
    shared (parse_standard), so its croniter iterators are used under a lock."""

    expressions: tuple[str, ...] = ()
    zone: tzinfo = timezone.utc
    delay: int = 0
    _iters: list[croniter] = field(default_factory=list, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        start = datetime.fromtimestamp(0, self.zone)
        self._iters = [croniter(e, start, day_or=False, max_years_between_matches=SEARCH_YEARS)
                       for e in self.expressions]
        self.next: Callable[[float], float | None] = functools.lru_cache(maxsize=64)(self._next)

    def _next(self, t: float) -> float | None:
        """The first activation strictly after `t` (robfig starts at the next whole second),
        None when robfig would find none (within five years)."""
        whole = math.floor(t)
        if self.delay:
            return float(whole + self.delay)
        start = datetime.fromtimestamp(whole, self.zone)
        found = []
        with self._lock:
            for it in self._iters:
                it.set_current(start, force=True)
                try:
                    found.append(it.get_next(float))
                except CroniterBadDateError:
                    continue
        return min(found) if found else None


def parse_standard(spec: str) -> Schedule:
    """robfig/cron v3's ParseStandard (see the module docstring); ScheduleError says why not.
    The same spec gives the same Schedule object (parsed once)."""
    if not isinstance(spec, str):
        raise ScheduleError(f"schedule must be a string, got {type(spec).__name__}")
    return _parse(spec)


@functools.lru_cache(maxsize=256)
def _parse(spec: str) -> Schedule:
    if not spec:
        raise ScheduleError("empty spec string")
    zone: tzinfo = timezone.utc
    if spec.startswith(("TZ=", "CRON_TZ=")):
        space = spec.find(" ")
        name = spec[spec.find("=") + 1:space] if space >= 0 else spec[spec.find("=") + 1:]
        try:
            zone = location(name)
        except ScheduleError as e:
            raise ScheduleError(f"provided bad location {name}: {e}") from None
        spec = spec[space:].strip() if space >= 0 else ""
    if spec.startswith("@"):
        return _descriptor(spec, zone)
    fields = spec.split()
    if len(fields) != len(FIELDS):
        raise ScheduleError(f"expected exactly {len(FIELDS)} fields, found {len(fields)}: [{' '.join(fields)}]")
    stars = [_check_field(i, f) for i, f in enumerate(fields)]
    if stars[2] or stars[DOW]:  # robfig: a day must match both fields
        expressions = [" ".join(fields)]
    else:  # either field: croniter answers each half, the earlier wins
        expressions = [" ".join(fields[:DOW] + ["*"]), " ".join(fields[:2] + ["*"] + fields[MONTH:])]
    try:
        return Schedule(tuple(expressions), zone)
    except CroniterError as e:
        raise ScheduleError(str(e)) from None


def _descriptor(spec: str, zone: tzinfo) -> Schedule:
    """parseDescriptor: the named schedules (croniter expands them) and @every."""
    if spec in DESCRIPTORS:
        return Schedule((spec,), zone)
    if spec.startswith(EVERY):
        try:
            nanoseconds = _core.parse_go_duration(spec[len(EVERY):])
        except ValueError as e:
            raise ScheduleError(f"failed to parse duration {spec}: {e}") from None
        return Schedule(delay=max(1, int(nanoseconds // 1_000_000_000)))  # Every: >= 1 s, whole seconds
    raise ScheduleError(f"unrecognized descriptor: {spec}")


def _check_field(index: int, text: str) -> bool:
    """What robfig's getField refuses and croniter would take; True if the field has a `*` or
    `?` part without a step above 1 (robfig's star bit, for the day rule)."""
    star = False
    for part in text.split(","):
        m = _PARTS[index].match(part)
        if m is None:
            raise ScheduleError(f"invalid {FIELDS[index]} field: {part!r}")
        step = int(m["step"]) if m["step"] is not None else 1
        if step == 0:
            raise ScheduleError(f"step of range should be a positive number: {part}")
        if m["star"]:
            star = star or step == 1
            continue
        low = _value(index, m["low"])
        high = _value(index, m["high"]) if m["high"] is not None else low
        if index == DOW and max(low, high) > 6:
            raise ScheduleError(f"end of range ({max(low, high)}) above maximum (6): {part}")
        if low > high:
            raise ScheduleError(f"beginning of range ({low}) beyond end of range ({high}): {part}")
    return star


def _value(index: int, text: str) -> int:
    """A field value: a number, or a month or day name (unknown names are croniter's to refuse,
    taken as 0 here)."""
    if text.isdigit():
        return int(text)
    names = croniter.ALPHACONV[index]
    return int(names.get(text.lower(), 0)) if isinstance(names, dict) else 0
