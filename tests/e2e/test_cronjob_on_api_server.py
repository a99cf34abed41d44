"""CronJobs on a real API server with `volcanic up` (docs/workflows.md): the CRD `volcanic
install` applies (Volcano's config/crd/volcano/bases/batch.volcano.sh_cronjobs.yaml), Volcano's
example/cronjob/cronjob.yaml admitted as written, the cronjob-controller making, replacing and
cleaning up Jobs on the wall clock (Volcano's e2e, test/e2e/cronjob/cronjob_basic.go, on kwok
nodes), and the /cronjobs/validate webhook refusing what Volcano's refuses. A schedule's
activations come on the minute, so these tests wait up to a few minutes; CronJobs that run
side by side share the waits."""

from __future__ import annotations

from datetime import datetime
import pathlib

import pytest
import yaml

from test_vcctl_on_api_server import ok
from test_volcano_jobs import on_kwok
import volcanic
from volcanic.kube.kinds import KINDS
from volcanic.real.devcluster.cluster import KubectlError

CRON_API = KINDS["CronJob"].api_version
SCHEDULED_TIMESTAMP = "volcano.sh/cronjob-scheduled-timestamp"
# Volcano's example/cronjob/cronjob.yaml, as written.
EXAMPLE = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "cronjob.yaml").read_text()


def cronjob(name: str, policy: str = "Allow", duration: str | None = "3s", schedule: str = "* * * * *",
            **spec) -> dict:
    """createTestCronjob of Volcano's e2e, its one task made to run `duration` on kwok nodes
    (None: until deleted)."""
    template = {"spec": {"restartPolicy": "Never",
                         "containers": [{"name": "test-container", "image": "busybox", "imagePullPolicy": "IfNotPresent",
                                         "command": ["sh", "-c", "echo 'CronJob executed at' $(date)"]}]}}
    job = on_kwok({"spec": {"minAvailable": 1, "tasks": [{"name": "test-task", "replicas": 1, "template": template}]}},
                  duration)
    return {"apiVersion": CRON_API, "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "concurrencyPolicy": policy, **spec, "jobTemplate": job}}


def jobs_of(env, name: str, namespace: str) -> list[dict]:
    cron = env.store.get("CronJob", name, namespace)
    uid = (cron or {}).get("metadata", {}).get("uid")
    return [j for j in env.store.list("Job", namespace)
            if any(r.get("uid") == uid and r.get("controller") for r in j["metadata"].get("ownerReferences") or ())]


def status(env, name: str, namespace: str) -> dict:
    return (env.store.get("CronJob", name, namespace) or {}).get("status") or {}


def phase(job: dict) -> str:
    return ((job.get("status") or {}).get("state") or {}).get("phase", "")


def reasons(env, name: str, namespace: str) -> list[str]:
    return [e["reason"] for e in env.store.list("Event", namespace)
            if e["involvedObject"].get("kind") == "CronJob" and e["involvedObject"].get("name") == name]


def refusal(env, obj: dict, namespace: str) -> str:
    try:
        env.apply(obj, namespace=namespace)
    except KubectlError as e:
        return str(e)
    raise AssertionError(f"{obj['metadata']['name']} was admitted")


def test_volcanos_example_is_admitted_as_written(env, up, namespace):
    """example/cronjob/cronjob.yaml: admitted, with the CRD's defaults; kubectl knows its short
    names; the controller reads its schedule without a Warning."""
    env.apply(yaml.safe_load(EXAMPLE), namespace=namespace)
    stored = env.store.get("CronJob", "volcano-cronjob-example", namespace)
    assert stored["spec"]["suspend"] is False and stored["spec"]["concurrencyPolicy"] == "Forbid"
    assert stored["spec"]["jobTemplate"]["spec"]["queue"] == "default"
    table = env.kubectl("get", "cronvj", "-n", namespace).stdout.split()
    assert table[:2] == ["NAME", "AGE"] and table[2] == "volcano-cronjob-example"
    assert env.kubectl("get", "cronvcjob", "volcano-cronjob-example", "-n", namespace).returncode == 0
    assert not env.wait(lambda: [r for r in reasons(env, "volcano-cronjob-example", namespace)
                                 if r in ("InvalidSchedule", "InvalidTimeZone", "UnParseableCronJobSchedule")],
                        timeout=5)
    env.kubectl("delete", "cronvj", "volcano-cronjob-example", "-n", namespace)


def test_jobs_come_every_minute_allow_forbid_and_limits(env, up, namespace):
    """cronjob_basic.go "Create and schedule basic cronjob", "CronJob with forbid concurrency",
    "remove finished job from cronjob active" and "delete finished and suc jobs with limit", side
    by side: Allow with Jobs of 3 s and successfulJobsHistoryLimit 1 keeps one Completed Job,
    named after its minute, controlled and annotated, and out of status.active; Forbid with a
    Job that never ends keeps that one Job and skips the next activation."""
    env.apply(cronjob("allow", successfulJobsHistoryLimit=1), cronjob("forbid", "Forbid", duration=None),
              namespace=namespace)
    done = env.wait(lambda: "ForbidConcurrent" in reasons(env, "forbid", namespace)
                    and status(env, "allow", namespace).get("lastSuccessfulTime")
                    and not status(env, "allow", namespace).get("active"), timeout=200, step=1)
    assert done, (status(env, "allow", namespace), status(env, "forbid", namespace),
                  up.proc.log_path.read_text(errors="replace")[-4000:])
    made = jobs_of(env, "allow", namespace)
    for job in made:
        name = job["metadata"]["name"]
        scheduled = datetime.fromisoformat(job["metadata"]["annotations"][SCHEDULED_TIMESTAMP].replace("Z", "+00:00"))
        assert name == f"allow-{int(scheduled.timestamp()) // 60}" and scheduled.second == 0
    assert env.wait(lambda: sum(phase(j) == "Completed" for j in jobs_of(env, "allow", namespace)) <= 1, timeout=30)
    forbidden = jobs_of(env, "forbid", namespace)
    assert len(forbidden) == 1 and phase(forbidden[0]) in ("Pending", "Running")
    assert [a["name"] for a in status(env, "forbid", namespace)["active"]] == [forbidden[0]["metadata"]["name"]]
    env.kubectl("delete", "cronvj", "forbid", "-n", namespace)
    gone = env.wait(lambda: jobs_of(env, "forbid", namespace) == [] and not [
        j for j in env.store.list("Job", namespace) if j["metadata"]["name"].startswith("forbid-")], timeout=60)
    assert gone, env.store.list("Job", namespace)  # deleted with its CronJob (ownerReference)


def test_replace_and_suspend(env, up, namespace):
    """cronjob_basic.go "CronJob with replace concurrency" and "CronJob with suspend
    functionality": Replace deletes the running Job for the next one (one active at a time);
    a suspended CronJob makes none. Then vcctl cronjob lists, gets, suspends and deletes them."""
    env.apply(cronjob("replace", "Replace", duration=None), cronjob("suspended", suspend=True), namespace=namespace)
    first = env.wait(lambda: jobs_of(env, "replace", namespace), timeout=90, step=1)
    assert first, up.proc.log_path.read_text(errors="replace")[-4000:]
    first_name = first[0]["metadata"]["name"]
    replaced = env.wait(lambda: [j for j in jobs_of(env, "replace", namespace) if j["metadata"]["name"] != first_name],
                        timeout=90, step=1)
    assert replaced, status(env, "replace", namespace)
    assert env.wait(lambda: [j["metadata"]["name"] for j in jobs_of(env, "replace", namespace)]
                    == [replaced[0]["metadata"]["name"]], timeout=30)
    assert len(status(env, "replace", namespace)["active"]) == 1
    assert "ReplaceConcurrent" in reasons(env, "replace", namespace)
    assert jobs_of(env, "suspended", namespace) == [] and "lastScheduleTime" not in status(env, "suspended", namespace)
    # vcctl cronjob (docs/vcctl.md), against the API server: kubectl's columns, the Jobs made, suspend, delete
    rows = [line.split() for line in ok(env, "cronjob", "list", "-n", namespace).splitlines()]
    assert rows[0] == ["Name", "Schedule", "Timezone", "Suspend", "Active", "Last", "Schedule", "Age"]
    assert [r[0] for r in rows[1:]] == ["replace", "suspended"]
    assert rows[1][6:9] == ["<none>", "False", "1"] and rows[2][6:10] == ["<none>", "True", "0", "<none>"]
    made = ok(env, "cronjob", "get", "-N", "replace", "-n", namespace).split("\n\n")[1]
    assert replaced[0]["metadata"]["name"] in made
    assert ok(env, "cronjob", "suspend", "-N", "replace", "-n", namespace) == "suspend cronjob replace successfully\n"
    assert env.store.get("CronJob", "replace", namespace)["spec"]["suspend"] is True
    assert ok(env, "cronjob", "delete", "-N", "suspended", "-n", namespace) == "delete cronjob suspended successfully\n"
    assert env.wait(lambda: env.store.get("CronJob", "suspended", namespace) is None, timeout=10)


def test_the_webhook_refuses_what_volcano_refuses(env, up, namespace):
    """/cronjobs/validate (pkg/webhooks/admission/cronjobs): the messages reach kubectl; the CRD's
    enum and minimums come first."""
    assert "schedule should not contain TZ or CRON_TZ" in refusal(env, cronjob("tz", schedule="TZ=UTC 0 20 * * *"),
                                                                  namespace)
    assert "schedule is not a valid cron expression" in refusal(env, cronjob("bad", schedule="0 0 * * 7"), namespace)
    assert "timeZone can't be Local" in refusal(env, cronjob("local", timeZone="Local"), namespace)
    assert "invalid timeZone" in refusal(env, cronjob("mars", timeZone="Mars/Olympus"), namespace)
    assert "must be no more than 52 characters" in refusal(env, cronjob("x" * 53), namespace)
    assert "Unsupported value" in refusal(env, cronjob("policy", "Sometimes"), namespace)
    assert env.store.list("CronJob", namespace) == []
    env.apply(cronjob("tokyo", schedule="0 9 * * *", timeZone="Asia/Tokyo", suspend=True), namespace=namespace)
    stored = env.store.get("CronJob", "tokyo", namespace)
    stored["spec"]["schedule"] = "@every 1m30s"
    env.store.update(stored)  # an update goes through the webhook too, and @every is Volcano's
    stored = env.store.get("CronJob", "tokyo", namespace)
    stored["spec"]["schedule"] = "0 0 L * *"
    with pytest.raises(volcanic.AdmissionError, match="schedule is not a valid cron expression"):
        env.store.update(stored)
