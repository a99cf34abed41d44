"""Volcano's CronJob admission (webhook-manager path /cronjobs/validate,
`pkg/webhooks/admission/cronjobs/validate/admit_cronjob.go`, CREATE and UPDATE alike):

- spec.schedule is set, has no TZ= or CRON_TZ= of its own (the zone belongs in spec.timeZone),
  and is a cron expression robfig/cron's ParseStandard accepts (five fields or a descriptor such
  as @hourly or @every 1h; volcanic.controllers.cronjob.schedule);
- spec.timeZone, when given, is not empty, each '/'-separated part of it is 1 to 14 of
  [A-Za-z0-9._+-] (not "." or "..", not starting with '-'), it is not "Local", and the tz
  database knows it;
- metadata.name is at most 52 characters (63 less the 11 of a Job's `-<minutes>` suffix) and a
  qualified name.

Every failed check is reported, each naming its field with Volcano's wording after it, joined
with "; " (a schedule refused by the parser also says why). As in Volcano, the Job template is
not checked here: the CRD schema types it as a Job's spec, and each Job made from it goes
through the Job rules when the cronjob-controller creates it (a refusal is a Warning
FailedCreate Event on the CronJob). A template naming a queue that does not exist yet is thus
admitted, as Volcano admits it.
"""

from __future__ import annotations

import re
from typing import Any

from volcanic.admission.chain import AdmissionRequest
from volcanic.admission.common import check_shape, deny, qualified_name_errors
from volcanic.controllers.cronjob.schedule import ScheduleError, location, parse_standard
from volcanic.kube.objects import meta_of, spec_of

MAX_NAME = 63 - 11  # a Job's name is the CronJob's and "-<Unix minutes>"
_ZONE_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")
_SHAPE = {"metadata": {"name": "string"}, "spec": {"schedule": "string", "timeZone": "string"}}


def schedule_problems(spec: dict) -> list[str]:
    """validateCronjobSpec's schedule checks."""
    schedule = spec.get("schedule") or ""
    if not schedule:
        return [deny("spec.schedule", "schedule is required, but got empty")]
    if "TZ" in schedule:
        return [deny("spec.schedule", "schedule should not contain TZ or CRON_TZ, "
                                      "TZ should only be set in the timeZone field")]
    try:
        parse_standard(schedule)
    except ScheduleError as e:
        return [deny("spec.schedule", f"schedule is not a valid cron expression: {e}")]
    return []


def time_zone_problems(spec: dict) -> list[str]:
    """validateCronjobSpec's time zone checks."""
    zone = spec.get("timeZone")
    if zone is None:
        return []
    if zone == "":
        return [deny("spec.timeZone", "timeZone must be nil or non-empty string, got empty string")]
    problems = []
    if any(part in (".", "..") or part.startswith("-") or not _ZONE_PART.fullmatch(part) for part in zone.split("/")):
        problems.append(deny("spec.timeZone", "unknown timeZone"))
    if zone.lower() == "local":
        problems.append(deny("spec.timeZone", "timeZone can't be Local, and must be defined in "
                                              "https://www.iana.org/time-zones"))
    else:
        try:
            location(zone)
        except ScheduleError:
            problems.append(deny("spec.timeZone", "invalid timeZone"))
    return problems


def name_problems(name: str) -> list[str]:
    """validateCronJobName."""
    if len(name) > MAX_NAME:
        return [deny("metadata.name", f"cronJob name must be no more than {MAX_NAME} characters to accommodate "
                                      f"job name suffix (max 63 total)")]
    errors = qualified_name_errors(name)
    if errors:
        return [deny("metadata.name", f'invalid cronJob name "{name}": {"; ".join(errors)}')]
    return []


def cronjob_well_formed(request: AdmissionRequest) -> str | None:
    """The types the CRD gives (what Volcano's decoder needs) of the fields checked here."""
    if not isinstance(request.obj, dict):
        return "object: must be an object"
    return check_shape(request.obj, _SHAPE, "")


def validate_cronjob(request: AdmissionRequest) -> str | None:
    """validateCronJobCreate / validateCronJobUpdate: every problem, or None."""
    spec = spec_of(request.obj)
    problems = (schedule_problems(spec) + time_zone_problems(spec)
                + name_problems(meta_of(request.obj).get("name") or ""))
    return "; ".join(problems) or None


def mutators(conf: Any) -> list:
    """Volcano registers no /cronjobs/mutate."""
    return []


def validators(conf: Any) -> list:
    """/cronjobs/validate (CREATE, UPDATE)."""
    return [cronjob_well_formed, validate_cronjob]
