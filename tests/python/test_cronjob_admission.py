"""CronJob admission (volcanic/admission/cronjobs.py): Volcano v1.15.1's webhook,
pkg/webhooks/admission/cronjobs/validate/admit_cronjob.go, with its unit cases
(admit_cronjob_test.go TestValidateCronjobSpec, TestValidateCronJobName, by name) through the
chain, then the embedded cluster (the CRD's schema first,
config/crd/volcano/bases/batch.volcano.sh_cronjobs.yaml) and the /cronjobs/validate path."""

from __future__ import annotations

import pytest

from review_helpers import review
import volcanic
from volcanic.admission import validate, volcano_chain
from volcanic.admission.chain import EMPTY_LISTER
from volcanic.kube.kinds import KINDS
from volcanic.webhook import PATHS

CHAIN = volcano_chain()
CRON_API = KINDS["CronJob"].api_version


def job_template() -> dict:
    """getJobTemplate."""
    return {"minAvailable": 1, "queue": "default",
            "tasks": [{"name": "task-1", "replicas": 1,
                       "template": {"metadata": {"labels": {"name": "test"}},
                                    "spec": {"containers": [{"name": "fake-name", "image": "busybox:1.24"}]}}}],
            "policies": [{"event": "PodEvicted", "action": "RestartTask"}]}


def cronjob(schedule="* * * * *", tz=None, name="cronvcjob", ns="default", **spec) -> dict:
    body = {"schedule": schedule, "concurrencyPolicy": "Allow", "jobTemplate": {"spec": job_template()}, **spec}
    if tz is not None:
        body["timeZone"] = tz
    return {"apiVersion": CRON_API, "kind": "CronJob", "metadata": {"name": name, "namespace": ns}, "spec": body}


def denial(obj, operation="CREATE"):
    """The chain's message for `obj`, None when admitted."""
    try:
        CHAIN.validate(operation, obj, obj if operation == "UPDATE" else None, EMPTY_LISTER)
    except volcanic.AdmissionError as e:
        assert (e.kind, e.name, e.namespace) == ("CronJob", obj["metadata"]["name"], obj["metadata"]["namespace"])
        return str(e)
    return None


@pytest.mark.parametrize("operation", ["CREATE", "UPDATE"])
@pytest.mark.parametrize("obj, expected", [
    (cronjob("* * * * *"), None),
    (cronjob("@every 1m"), None),
    (cronjob("*/5 * * * *", tz="Pacific/Honolulu"), None),
    (cronjob("TZ=UTC 0 20 * * *", tz="Pacific/Honolulu"),
     "spec.schedule: schedule should not contain TZ or CRON_TZ, TZ should only be set in the timeZone field"),
    (cronjob("error schedule", tz="Pacific/Honolulu"),
     "spec.schedule: schedule is not a valid cron expression: expected exactly 5 fields, found 2: [error schedule]"),
    (cronjob("", tz="Pacific/Honolulu"), "spec.schedule: schedule is required, but got empty"),
    # Go opens "Asia/./Shanghai" as a path and finds the zone; Python's tz database does not.
    (cronjob("*/5 * * * *", tz="Asia/./Shanghai"), "spec.timeZone: unknown timeZone; spec.timeZone: invalid timeZone"),
    (cronjob("*/5 * * * *", tz="America/-NewYork"), "spec.timeZone: unknown timeZone; spec.timeZone: invalid timeZone"),
    (cronjob("*/5 * * * *", tz="New York"), "spec.timeZone: unknown timeZone; spec.timeZone: invalid timeZone"),
    (cronjob("*/5 * * * *", tz="UTC!"), "spec.timeZone: unknown timeZone; spec.timeZone: invalid timeZone"),
    (cronjob("*/5 * * * *", tz="Local"),
     "spec.timeZone: timeZone can't be Local, and must be defined in https://www.iana.org/time-zones"),
    (cronjob("", tz=""), "spec.schedule: schedule is required, but got empty; "
                         "spec.timeZone: timeZone must be nil or non-empty string, got empty string"),
    (cronjob("", tz="Amerrica/New_York"),
     "spec.schedule: schedule is required, but got empty; spec.timeZone: invalid timeZone"),
], ids=["validate valid-cronjob", "validate non-standard scheduled", "validate correct timeZone",
        "validate contain TZ schedule", "validate error schedule", "validate empty schedule",
        "validate unknown . timezone", "validate unknown _ timezone", "validate unknown space timezone",
        "validate unknown ! timezone", "validate Local timezone", "validate empty timezone",
        "validate error timezone"])
def test_validate_cronjob_spec(obj, expected, operation):
    """admit_cronjob_test.go TestValidateCronjobSpec, the case of the id (Volcano's message
    after the field; on CREATE and UPDATE alike)."""
    assert denial(obj, operation) == expected


@pytest.mark.parametrize("name, expected", [
    ("my-cronjob", None),
    ("a" * 52, None),
    ("a" * 65, "metadata.name: cronJob name must be no more than 52 characters to accommodate job name suffix "
               "(max 63 total)"),
    ("-UPPERCASE", 'metadata.name: invalid cronJob name "-UPPERCASE": name part must consist of alphanumeric '
                   "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                   "'MyName', or 'my.name', or '123-abc', regex used for validation is "
                   "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
], ids=["valid name", "exactly max length", "too long name", "invalid chars"])
def test_validate_cronjob_name(name, expected):
    """admit_cronjob_test.go TestValidateCronJobName: 63 less the 11 of a Job's suffix."""
    assert denial(cronjob(name=name)) == expected


def test_every_problem_is_reported():
    assert denial(cronjob("0 0 * * 7", tz="Mars/Olympus", name="x" * 60)) == (
        "spec.schedule: schedule is not a valid cron expression: end of range (7) above maximum (6): 7; "
        "spec.timeZone: invalid timeZone; "
        "metadata.name: cronJob name must be no more than 52 characters to accommodate job name suffix (max 63 total)")


def test_the_job_template_is_not_checked_here():
    """As in Volcano: a template naming a queue that does not exist (yet) is admitted; the Jobs
    made from it go through the Job rules (test_cronjob_cluster.py)."""
    obj = cronjob()
    obj["spec"]["jobTemplate"]["spec"]["queue"] = "not-yet"
    obj["spec"]["jobTemplate"]["spec"]["minAvailable"] = 5
    assert denial(obj) is None


def test_the_embedded_cluster_checks_the_schema_then_the_rules():
    c = volcanic.Cluster()
    stored = c.apply(cronjob("*/5 * * * *"))
    # The CRD's defaults.
    assert {k: stored["spec"][k] for k in ("concurrencyPolicy", "suspend", "successfulJobsHistoryLimit",
                                           "failedJobsHistoryLimit")} == \
        {"concurrencyPolicy": "Allow", "suspend": False, "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1}
    assert stored["spec"]["jobTemplate"]["spec"]["queue"] == "default"
    with pytest.raises(volcanic.InvalidObject, match="Unsupported value: \"Sometimes\""):
        c.apply(cronjob("*/5 * * * *", name="p", concurrencyPolicy="Sometimes"))
    with pytest.raises(volcanic.InvalidObject, match="should be greater than or equal to 0"):
        c.apply(cronjob("*/5 * * * *", name="d", startingDeadlineSeconds=-1))
    with pytest.raises(volcanic.InvalidObject, match="spec.jobTemplate: Required value"):
        c.apply({"apiVersion": CRON_API, "kind": "CronJob", "metadata": {"name": "t"}, "spec": {"schedule": "@hourly"}})
    with pytest.raises(volcanic.AdmissionError, match="schedule is not a valid cron expression"):
        c.apply(cronjob("every day"))
    stored["spec"]["schedule"] = "0 0 L * *"  # an update is checked too
    with pytest.raises(volcanic.AdmissionError, match=r"invalid day-of-month field: 'L'"):
        c.apply(stored)
    assert [cj["metadata"]["name"] for cj in c.list("CronJob")] == ["cronvcjob"]


def test_the_webhook_path():
    """/cronjobs/validate answers AdmissionReview v1 (CREATE and UPDATE), as Volcano's
    webhook-manager registers it."""
    assert PATHS["/cronjobs/validate"] == ("CronJob", False)
    group = KINDS["CronJob"].group
    ok = validate(review(cronjob(), group=group), CHAIN, EMPTY_LISTER, kind="CronJob")
    assert ok["response"]["allowed"] is True
    bad = validate(review(cronjob("TZ=UTC * * * *"), "UPDATE", old=cronjob(), group=group), CHAIN, EMPTY_LISTER,
                   kind="CronJob")["response"]
    assert bad["allowed"] is False and bad["status"]["message"] == (
        "spec.schedule: schedule should not contain TZ or CRON_TZ, TZ should only be set in the timeZone field")
    job = {"apiVersion": KINDS["Job"].api_version, "kind": "Job", "metadata": {"name": "j", "namespace": "ns"}}
    other = validate(review(job, group=group), CHAIN, EMPTY_LISTER, kind="CronJob")["response"]
    assert other["status"]["message"] == "expect resource to be {batch.volcano.sh v1alpha1 cronjobs}"
