"""The job controller's failures through volcanic.Cluster: refused pods, bad plugins and
policies, unknown commands, malformed jobs; nothing fails the controller, each is a Warning or
a terminated job as in Volcano. How the tests drive and observe the cluster: job_helpers.py."""

from __future__ import annotations

from typing import Any

import pytest

from job_helpers import (
    FINAL,
    NS,
    cluster,
    command,
    command_obj,
    events,
    failing_job,
    job,
    node,
    phase,
    pod_phases,
    podgroup,
    pods,
    policy,
    started,
    started_without_job_validation,
    status,
    task,
    wait,
)
import volcanic
from volcanic.admission.chain import AdmissionChain

MAX_REQUEUE = 15  # --max-requeue-num
COMMAND_ACTIONS = ("AbortJob", "RestartJob", "RestartTask", "RestartPod", "RestartPartition",
                   "TerminateJob", "CompleteJob", "ResumeJob")


def all_events(c: volcanic.Cluster, reason: str | None = None) -> list[dict]:
    return [e for e in c.list("Event", NS) if reason is None or e["reason"] == reason]


@pytest.mark.parametrize("spec,refusal", [
    # The built-in priority admission denies a pod naming an unknown PriorityClass.
    ({"priorityClassName": "nope"}, "no PriorityClass with name nope was found"),
    # The API server's validation refuses a pod whose annotation is not a string.
    ({"template_annotations": {"x": 1}}, "must be a string"),
])
def test_refused_pods_are_failed_create_then_retry_limit_terminates(spec: dict, refusal: str) -> None:
    """reference §2.3 SyncJob step 5 / §2.2 "Error handling": a pod the API server refuses is
    a Warning Event FailedCreate "Error creating pods: [...]" and a failed SyncJob, requeued
    with back-off; after --max-requeue-num (15) failures the job is terminated ("Job failed on
    action SyncJob for retry limit reached.") and ends Terminated. No controller error."""
    t = task("t", 1)
    if "template_annotations" in spec:
        t["template"]["metadata"]["annotations"] = spec["template_annotations"]
        j = job("j", t)
        c = started_without_job_validation(j)  # Volcano's CRD schema would refuse the job itself
    else:
        j = job("j", t, **spec)
        c = started(j)
    failed = events(c, "FailedCreate")
    assert len(failed) == 1
    assert failed[0].startswith("Error creating pods: [failed to create pod j-t-0, err: ") and refusal in failed[0]
    assert phase(c) == "Pending" and pods(c) == {}
    assert wait(c, lambda: phase(c) == "Terminated", 400)
    assert MAX_REQUEUE < len(events(c, "FailedCreate")) <= 2 * (MAX_REQUEUE + 1)
    assert events(c, "SyncJob") == ["Job failed on action SyncJob for retry limit reached."]
    assert podgroup(c) is None and pods(c) == {}
    assert c.errors == []


def test_unknown_plugin_job_is_killed_without_plugins_and_events_stay_bounded() -> None:
    """reference §2.4 / §2.2 "Error handling": a plugin list that cannot be parsed fails
    SyncJob (a PluginError Warning Event per attempt) until the retry limit terminates the
    job; KillJob then runs without plugins, so the job reaches Terminated and the Events stop
    (no endless TerminateJob retries)."""
    c = started_without_job_validation(job("j", plugins={"foo": []}))  # admission refuses it (§3.1)
    plugin_errors = events(c, "PluginError")
    assert len(plugin_errors) == 1 and 'unknown plugin "foo"' in plugin_errors[0]
    assert wait(c, lambda: phase(c) == "Terminated", 400)
    c.run(10)
    settled = len(all_events(c))
    assert len(events(c, "PluginError")) <= MAX_REQUEUE + 1 + 5
    assert settled <= MAX_REQUEUE + 1 + 10
    c.run(5000)
    assert len(all_events(c)) == settled
    assert phase(c) == "Terminated"
    assert c.errors == []


@pytest.mark.parametrize("timeout", ["abc", "-5s"])
@pytest.mark.parametrize("level", ["job", "task"])
def test_bad_policy_timeout_warns_and_runs_the_action_at_once(timeout: str, level: str) -> None:
    """reference §2.2 step 4: a policy's timeout delays its action. A timeout that is not a
    duration must not drop the request: a Warning Event PolicyError names the job and the
    field (spec.policies[i].timeout or spec.tasks[j].policies[i].timeout) and the action runs
    at once, as without a timeout."""
    if level == "job":
        j = failing_job(timeout)
        field = "spec.policies[0].timeout"
    else:
        j = job("j", task("b", 1), task("a", 1, duration="2s", exit_code=1,
                                         policies=[policy("RestartJob", "PodFailed", timeout=timeout)]))
        field = "spec.tasks[1].policies[0].timeout"
    # Admission refuses a timeout that is not a duration ("abc"); Go durations may be negative.
    c = started_without_job_validation(j) if timeout == "abc" else started(j)
    c.run(3)  # a-0 fails at t=3
    assert status(c).get("retryCount") == 1
    warnings = events(c, "PolicyError")
    assert warnings and all(w.startswith(f"job default/j: {field}: invalid duration") for w in warnings)
    assert "Start to execute action RestartJob " in events(c, "ExecuteAction")
    assert all(e["type"] == "Warning" for e in all_events(c, "PolicyError"))
    assert c.errors == []


def test_unknown_command_action_is_dropped_with_a_warning() -> None:
    """reference §2.1 (a Command targeting a Job is deleted first) / §1.2 actions: a Command
    whose action is not a job action is consumed with a Warning Event naming the action and
    the known ones, and does nothing else: no CommandIssued, no action run, and the job's
    delayed actions stay (Volcano would run it as a SyncJob that drops them)."""
    c = started(failing_job("20s"))
    c.run(5)
    assert events(c, "ExecuteAction") == ["Execute action RestartJob after 20s"]
    # Admission refuses an unknown action (commands.py), so it is written past it, as a
    # cluster without that check would store it.
    cmd = "j-foojob"
    c.api.store.create(command_obj(c.get("Job", "j"), "FooJob", cmd))
    c.run(0)
    assert c.get("Command", cmd) is None
    warnings = all_events(c, "UnknownAction")
    assert len(warnings) == 1 and warnings[0]["type"] == "Warning"
    assert warnings[0]["involvedObject"]["name"] == "j"
    assert "'FooJob'" in warnings[0]["message"] and ", ".join(COMMAND_ACTIONS) in warnings[0]["message"]
    assert events(c, "CommandIssued") == [] and events(c, "ExecuteAction") == ["Execute action RestartJob after 20s"]
    c.run(20)  # t=25: the delayed RestartJob (failure at t=3 + 20 s) ran
    assert status(c).get("retryCount") == 1
    assert c.errors == []


@pytest.mark.parametrize(("tasks_field", "message"), [
    ("abc", 'Job.batch.volcano.sh "j" is invalid: spec.tasks: Invalid value: "string": '
            'spec.tasks in body must be of type array: "string"'),
    ([{"name": "t", "replicas": "2", "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}}],
     'Job.batch.volcano.sh "j" is invalid: spec.tasks[0].replicas: Invalid value: "string": '
     'spec.tasks[0].replicas in body must be of type integer: "string"'),
    # The CRD schema leaves pod templates open: what the controller cannot read there.
    ([{"name": "t", "replicas": 2, "template": {"spec": {"containers": "abc"}}}],
     "job default/j: action SyncJob failed on the job's spec (")])
def test_malformed_job_is_a_warning_not_a_controller_error(tasks_field: Any, message: str) -> None:
    """A job the controller cannot read (tasks a string, replicas a string: admission would
    refuse both, here it is empty) is a Warning Event JobSpecError on the job, recorded once,
    and the request is dropped: nothing raises out of run(), nothing is retried forever, and
    no controller error is recorded. What the CRD schema refuses has the API server's message
    (see test_malformed_objects.py); a malformed pod template, the controller's own."""
    c = volcanic.Cluster(admission=AdmissionChain())
    c.api.check_schemas = False  # past the CRD schema too, which refuses the first two
    c.apply(node("n1"))
    c.apply({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": NS},
             "spec": {"minAvailable": 1, "queue": "default", "tasks": tasks_field}})
    c.run(600)
    warnings = all_events(c, "JobSpecError")
    assert len(warnings) == 1 and warnings[0]["type"] == "Warning"
    assert warnings[0]["involvedObject"]["name"] == "j"
    assert warnings[0]["message"].startswith(message)
    assert pods(c) == {}
    assert c.errors == []


def test_min_resources_follow_a_changed_priority_class() -> None:
    """reference §2.3 "PodGroup built by the job controller": minResources takes pods by their
    template's PriorityClass value, highest first; a PriorityClass recreated with another
    value reorders them at the next sync although the job did not change."""
    c = cluster(node("n1", cpu="16"))
    c.apply({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
             "value": 1000})
    high = task("high", 2, cpu="2", min_available=2)
    high["template"]["spec"]["priorityClassName"] = "high"
    c.apply(job("j", task("low", 3, cpu="1", min_available=3), high, min_available=3))
    assert wait(c, lambda: phase(c) == "Running", 10)
    assert podgroup(c)["spec"]["minResources"]["cpu"] == "5"  # high, high, low
    c.delete("PriorityClass", "high")
    c.apply({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
             "value": -1})
    c.evict("j-low-0")  # any event of the job: a SyncJob
    c.run(0)
    assert podgroup(c)["spec"]["minResources"]["cpu"] == "3"  # low, low, low
    assert c.errors == []


def test_job_controller_shares_the_controller_manager_recorder_and_forgets_deleted_jobs() -> None:
    """One Recorder for vc-controller-manager (its Event names never collide); the job
    controller keeps nothing about a deleted job (its PodGroupPending note goes with it)."""
    c = started(job("j", task("t", 3, selector={"kubernetes.io/hostname": "n1"})),
                nodes=(node("n1", cpu="2"), node("n2", cpu="2")))
    c.run(3)
    jc = c.controllers["job-controller"]
    assert jc.recorder is c.controllers["queue-controller"]._recorder
    assert events(c, "PodGroupPending") and jc.actions._pending_notes
    c.delete("Job", "j")
    c.run(1)
    assert jc.actions._pending_notes == {}
    assert c.errors == []
