"""CronJobs in the embedded cluster (volcanic.Cluster, virtual time) with every controller, the
scheduler and the kubelets: Volcano v1.15.1's example/cronjob/cronjob.yaml as written; a day of
a `*/5 * * * *` CronJob on the virtual clock; Volcano's e2e scenarios
(test/e2e/cronjob/cronjob_basic.go, each by its name); time zones, deletion, refused Jobs; and
the kind's CRD, RBAC, webhook registration and watches (volcanic.kube.kinds)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
import pathlib
import time

import pytest

import volcanic
from volcanic.cli.volcano import VOLCANIC_CONTROLLERS
from volcanic.controllers.cronjob import CronJobController
from volcanic.controllers.cronjob.jobs import SCHEDULED_TIMESTAMP
from volcanic.kube.clock import EPOCH, rfc3339, seconds_of
from volcanic.kube.kinds import KINDS
from volcanic.real.manifests.accounts import RULES
from volcanic.real.manifests.definitions import crds
from volcanic.real.manifests.webhooks import DEFAULT_ADMISSIONS, WEBHOOKS
from volcanic.real.operator import CRON_KINDS
from volcanic.real.webhook import UNRULED
from volcanic.webhook import PATHS

CRON_API = KINDS["CronJob"].api_version
MINUTE, HOUR, DAY = 60, 3600, 86400
# Volcano's example/cronjob/cronjob.yaml, as written.
EXAMPLE = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "cronjob.yaml").read_text()
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
                   "capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def cluster() -> volcanic.Cluster:
    c = volcanic.Cluster()
    c.apply(NODE)
    return c


def cronjob(name="cj", schedule="* * * * *", policy="Allow", duration="30s", exit_code=0, **spec) -> dict:
    """createTestCronjob of Volcano's e2e: one busybox task, restartPolicy Never; its container
    runs `duration` (volcanic/sim-duration: the embedded kubelets run no command) and exits
    with `exit_code`."""
    annotations = {"volcanic/sim-duration": duration, "volcanic/sim-exit-code": str(exit_code)}
    template = {"metadata": {"annotations": annotations},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "test-container", "image": "busybox"}]}}
    return {"apiVersion": CRON_API, "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "concurrencyPolicy": policy, **spec,
                     "jobTemplate": {"spec": {"minAvailable": 1,
                                              "tasks": [{"name": "test-task", "replicas": 1, "template": template}]}}}}


def jobs(c, name="cj") -> list[dict]:
    """getJobList: the CronJob's Jobs, oldest first."""
    uid = c.get("CronJob", name)["metadata"]["uid"]
    return [j for j in c.list("Job", "default")
            if any(r.get("uid") == uid for r in j["metadata"].get("ownerReferences") or ())]


def phase(job) -> str:
    return ((job.get("status") or {}).get("state") or {}).get("phase", "")


def unfinished(c, name="cj") -> int:
    """getJobActiveNum."""
    return sum(phase(j) not in ("Completed", "Failed", "Terminated") for j in jobs(c, name))


def active(c, name="cj") -> list[dict]:
    """getActiveNum's list: status.active."""
    return (c.get("CronJob", name).get("status") or {}).get("active") or []


def reasons(c, name="cj") -> Counter:
    return Counter(e["reason"] for e in c.list("Event", "default")
                   if e["involvedObject"]["kind"] == "CronJob" and e["involvedObject"]["name"] == name)


def at(minutes: float) -> float:
    """Minutes after the cluster's start (2024-01-01T00:00:00Z, a Monday) in Unix seconds."""
    return EPOCH + minutes * MINUTE


def test_volcanos_example_runs_as_written():
    """example/cronjob/cronjob.yaml: its first Job comes at 00:05 (named after that minute,
    controlled by the CronJob, the activation annotated) and runs (its container has no end);
    Forbid then skips every later activation of the day. A day of it takes well under a second
    of wall time: the controller is asked about the CronJob once per activation (a timer on the
    virtual clock), never in between."""
    c = cluster()
    stored = c.apply(EXAMPLE)
    assert (stored["spec"]["concurrencyPolicy"], stored["spec"]["suspend"]) == ("Forbid", False)
    start = time.perf_counter()
    timers = c._clock.fired
    c.run(DAY)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, elapsed
    assert c._clock.fired - timers < 2 * 288  # about one timer an activation, the Job's few besides
    job, = c.list("Job", "default")
    name = f"volcano-cronjob-example-{int(at(5)) // 60}"
    assert job["metadata"]["name"] == name and phase(job) == "Running"
    assert job["metadata"]["annotations"] == {SCHEDULED_TIMESTAMP: "2024-01-01T00:05:00Z"}
    assert job["spec"]["policies"] == [{"event": "PodEvicted", "action": "RestartJob"}]
    cron = c.get("CronJob", "volcano-cronjob-example")
    owner, = job["metadata"]["ownerReferences"]
    assert owner == {"apiVersion": CRON_API, "kind": "CronJob", "name": "volcano-cronjob-example",
                     "uid": cron["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    assert [(r["kind"], r["name"], r["uid"]) for r in cron["status"]["active"]] == \
        [("Job", name, job["metadata"]["uid"])]
    assert cron["status"]["lastScheduleTime"] == "2024-01-01T00:05:00Z"
    assert reasons(c, "volcano-cronjob-example") == {"SuccessfulCreate": 1, "ForbidConcurrent": 286}
    pod, = c.list("Pod", "default")
    assert pod["status"]["phase"] == "Running" and c.errors == []


def test_a_day_of_a_five_minute_cronjob():
    """The same CronJob with Allow and Jobs of a minute: 287 Jobs in the day (00:05 to 23:55),
    each finished before the next, the oldest deleted past successfulJobsHistoryLimit."""
    c = cluster()
    cron = cronjob("five", "*/5 * * * *", duration="60s", successfulJobsHistoryLimit=5)
    c.apply(cron)
    c.run(DAY)
    kept = jobs(c, "five")
    assert [j["metadata"]["name"] for j in kept] == [f"five-{int(at(m)) // 60}" for m in range(1415, 1440, 5)]
    assert {phase(j) for j in kept} == {"Completed"}
    status = c.get("CronJob", "five")["status"]
    assert "active" not in status and status["lastScheduleTime"] == rfc3339(at(1435))
    assert at(1436) <= seconds_of(status["lastSuccessfulTime"]) <= at(1437)
    assert reasons(c, "five") == {"SuccessfulCreate": 287, "SawCompletedJob": 287, "SuccessfulDelete": 282}
    assert c.errors == []


def test_create_and_schedule_basic_cronjob():
    """cronjob_basic.go "Create and schedule basic cronjob": every minute; lastScheduleTime
    set, two Jobs within three minutes, the scheduled-timestamp annotation in RFC 3339."""
    c = cluster()
    c.apply(cronjob(duration="5s"))
    c.run(3 * MINUTE + 1)  # an activation is acted on 100 ms after it
    assert c.get("CronJob", "cj")["status"]["lastScheduleTime"] == rfc3339(at(3))
    made = jobs(c)
    assert len(made) >= 2
    assert datetime.fromisoformat(made[0]["metadata"]["annotations"][SCHEDULED_TIMESTAMP].replace("Z", "+00:00"))
    c.delete("CronJob", "cj")
    c.run(0)
    assert c.list("Job", "default") == [] and c.list("Pod", "default") == []  # owned: deleted with it


def test_cronjob_with_suspend_functionality():
    """"CronJob with suspend functionality": no Job while suspended; resumed, the next
    activation runs (the ones missed while suspended are not made up, as the deadline allows
    only the latest)."""
    c = cluster()
    c.apply(cronjob(suspend=True))
    c.run(3 * MINUTE)
    assert jobs(c) == [] and "status" not in c.get("CronJob", "cj")
    c.apply(cronjob())  # suspend: false
    c.run(0)
    made = jobs(c)
    assert [j["metadata"]["name"] for j in made] == [f"cj-{int(at(3)) // 60}"]  # the missed 00:03 at once
    c.run(MINUTE + 1)
    assert len(jobs(c)) == 2


def test_cronjob_with_allow_concurrency():
    """"CronJob with allow concurrency": Jobs of three minutes every minute run side by side."""
    c = cluster()
    c.apply(cronjob(duration="180s"))
    c.run(3 * MINUTE)
    assert len(active(c)) >= 2 and unfinished(c) >= 2


def test_cronjob_with_forbid_concurrency():
    """"CronJob with forbid concurrency": one Job at a time, the activations meanwhile skipped."""
    c = cluster()
    c.apply(cronjob(policy="Forbid", duration="180s"))
    c.run(MINUTE + 1)
    for _ in range(5):
        c.run(MINUTE)
        assert len(active(c)) == 1 and unfinished(c) == 1
    assert reasons(c)["ForbidConcurrent"] >= 2


def test_cronjob_with_replace_concurrency():
    """"CronJob with replace concurrency": each activation deletes the running Job and starts
    another; one active, one running."""
    c = cluster()
    c.apply(cronjob(policy="Replace", duration="180s"))
    c.run(MINUTE + 1)
    first, = jobs(c)
    c.run(MINUTE)
    second, = jobs(c)
    assert second["metadata"]["name"] != first["metadata"]["name"]
    for _ in range(5):
        c.run(MINUTE)
        assert len(active(c)) == 1 and unfinished(c) == 1
    assert reasons(c)["ReplaceConcurrent"] == reasons(c)["SuccessfulDelete"] == 6


def test_many_miss_schedule():
    """"many miss schedule": a CronJob created two hours ago (restored as another cluster had it)
    has missed 120 activations; only the latest runs, with a Warning TooManyMissedTimes."""
    c = cluster()
    c.run(3 * HOUR)
    cron = cronjob(duration="5s")
    cron["metadata"].update(namespace="default", uid="old-uid", creationTimestamp=rfc3339(c.started + HOUR))
    cron["spec"].update(suspend=False, successfulJobsHistoryLimit=3, failedJobsHistoryLimit=1)
    c.restore([cron])
    c.run(0)
    made, = jobs(c)
    assert made["metadata"]["name"] == f"cj-{int(at(180)) // 60}"
    assert c.get("CronJob", "cj")["status"]["lastScheduleTime"] == rfc3339(at(180))
    assert reasons(c)["TooManyMissedTimes"] == 1


def test_remove_finished_job_from_cronjob_active():
    """"remove finished job from cronjob active": a Job that finished leaves status.active
    (Normal SawCompletedJob) and is the last success."""
    c = cluster()
    c.apply(cronjob(duration="10s"))
    c.run(MINUTE + 30)
    first, = jobs(c)
    assert phase(first) == "Completed" and active(c) == []
    assert c.get("CronJob", "cj")["status"]["lastSuccessfulTime"] == first["status"]["state"]["lastTransitionTime"]
    assert reasons(c)["SawCompletedJob"] == 1


@pytest.mark.parametrize("exit_code, limit, finished", [(0, "successfulJobsHistoryLimit", "Completed"),
                                                        (1, "failedJobsHistoryLimit", "Failed")],
                         ids=["delete finished and suc jobs with limit", "delete finished and fail jobs with limit"])
def test_finished_jobs_beyond_the_history_limit_are_deleted(exit_code, limit, finished):
    """"delete finished and suc jobs with limit", "... fail jobs with limit": with a limit of 1,
    only the latest finished Job stays."""
    c = cluster()
    c.apply(cronjob(duration="10s", exit_code=exit_code, **{limit: 1}))
    c.run(MINUTE + 30)
    first, = jobs(c)
    assert phase(first) == finished
    c.run(MINUTE)
    second, = jobs(c)
    assert second["metadata"]["name"] != first["metadata"]["name"] and phase(second) == finished
    for _ in range(3):
        c.run(MINUTE)
        assert sum(phase(j) == finished for j in jobs(c)) == 1


def test_a_time_zone_moves_the_activations():
    """timeZone: 09:00 in Tokyo is 00:00 UTC; the annotation gives the activation in the zone."""
    c = cluster()
    c.apply(cronjob(schedule="0 9 * * *", timeZone="Asia/Tokyo", duration="5s"))
    c.run(DAY + MINUTE)
    made, = jobs(c)
    assert made["metadata"]["name"] == f"cj-{int(at(1440)) // 60}"
    assert made["metadata"]["annotations"][SCHEDULED_TIMESTAMP] == "2024-01-02T09:00:00+09:00"


@pytest.mark.parametrize("schedule, first", [("@hourly", 60), ("@every 90m", 90), ("30 6-16/4 * * 1-5", 6 * 60 + 30)])
def test_macros_and_ranges(schedule, first):
    """@hourly, @every and ranges with steps, from the start (a Monday)."""
    c = cluster()
    c.apply(cronjob(schedule=schedule, duration="5s"))
    c.run(first * MINUTE)
    assert jobs(c) == []
    c.run(1)
    made, = jobs(c)
    assert made["metadata"]["name"] == f"cj-{int(at(first)) // 60}"


def test_a_new_schedule_is_followed():
    """updateCronJob: the CronJob is asked about again at the new schedule's next activation."""
    c = cluster()
    c.apply(cronjob(schedule="0 * * * *", duration="5s"))
    c.run(10 * MINUTE)
    c.apply(cronjob(schedule="*/15 * * * *", duration="5s"))
    c.run(6 * MINUTE)
    assert [j["metadata"]["name"] for j in jobs(c)] == [f"cj-{int(at(15)) // 60}"]


def test_a_job_the_job_rules_refuse_is_a_warning_and_retried():
    """Each Job goes through the Job rules: a template whose queue does not exist makes a
    Warning FailedCreate with the Job webhook's message; once the queue exists, the retry (with
    back-off) creates it."""
    c = cluster()
    cron = cronjob(duration="5s")
    cron["spec"]["jobTemplate"]["spec"]["queue"] = "later"
    c.apply(cron)
    c.run(MINUTE + 1)
    assert jobs(c) == []
    failed = [e for e in c.list("Event", "default") if e["reason"] == "FailedCreate"]
    assert failed and failed[0]["type"] == "Warning" and "later" in failed[0]["message"]
    c.apply({"apiVersion": KINDS["Queue"].api_version, "kind": "Queue", "metadata": {"name": "later"},
             "spec": {"weight": 1}})
    c.run(MINUTE)
    assert len(jobs(c)) >= 1 and c.errors == []


def test_status_sent_on_create_is_ignored():
    c = volcanic.Cluster()
    obj = cronjob()
    obj["status"] = {"lastScheduleTime": "2024-01-01T00:00:00Z"}
    assert "status" not in c.apply(obj)


def test_kubectl_sees_the_kind():
    """The CRD volcanic installs: Volcano's names (cronvcjob, cronvj), a status subresource, no
    printer columns, its schema's defaults and required fields."""
    crd, = [d for d in crds() if d["spec"]["names"]["kind"] == "CronJob"]
    assert crd["metadata"]["name"] == "cronjobs.batch.volcano.sh" and crd["spec"]["scope"] == "Namespaced"
    assert crd["spec"]["names"]["shortNames"] == ["cronvcjob", "cronvj"]
    version, = crd["spec"]["versions"]
    assert version["name"] == "v1alpha1" and version["subresources"] == {"status": {}}
    assert "additionalPrinterColumns" not in version
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["required"] == ["jobTemplate", "schedule"]
    assert spec["properties"]["concurrencyPolicy"]["enum"] == ["Allow", "Forbid", "Replace"]
    assert [spec["properties"][f]["default"] for f in ("concurrencyPolicy", "suspend", "successfulJobsHistoryLimit",
                                                        "failedJobsHistoryLimit")] == ["Allow", False, 3, 1]
    template = spec["properties"]["jobTemplate"]["properties"]["spec"]
    assert template["properties"]["tasks"]["minItems"] == 1


def test_install_registers_and_grants_what_the_cronjob_controller_needs():
    """The controller-manager writes CronJobs' status (and Jobs); the webhook registers
    /cronjobs/validate for CREATE and UPDATE, in the chart's default list; the
    controller-manager watches CronJobs when the cronjob-controller runs."""
    def verbs(resource):
        return {v for r in RULES["controller-manager"] if resource in r["resources"] for v in r["verbs"]}
    assert {"get", "list", "watch", "create", "update", "delete"} <= verbs("cronjobs") & verbs("jobs")
    assert "update" in verbs("cronjobs/status")
    assert WEBHOOKS["/cronjobs/validate"] == ("validatecronjob.volcano.sh", "batch.volcano.sh", "v1alpha1", "cronjobs",
                                              ("CREATE", "UPDATE"))
    assert "/cronjobs/validate" in DEFAULT_ADMISSIONS and "/cronjobs/validate" not in UNRULED
    assert "/cronjobs/mutate" not in WEBHOOKS and PATHS["/cronjobs/validate"] == ("CronJob", False)
    assert CRON_KINDS == ("CronJob",) and CronJobController.name in VOLCANIC_CONTROLLERS
