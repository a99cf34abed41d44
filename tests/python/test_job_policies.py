"""Scenario tests of the job controller through volcanic.Cluster: lifecycle policies (reference
§2.2: events, actions, exit codes, timeouts and their cancellation). How the tests drive and
observe the cluster, and its timing: job_helpers.py."""

from __future__ import annotations

import pytest

from job_helpers import (
    FINAL,
    NS,
    Watch,
    a_running_job,
    command,
    events,
    failing_job,
    job,
    node,
    phase,
    pod_phases,
    pods,
    policy,
    started,
    status,
    task,
    wait,
)


# §2.2 policies.
def test_task_policy_wins_over_job_policy() -> None:
    """reference §2.2: task-level policies are checked before job-level ones."""
    c = started(job("j", task("a", 1, duration="2s", exit_code=1, policies=[policy("AbortJob", "PodFailed")]),
                    task("b", 1), policies=[policy("RestartJob", "PodFailed")]))
    assert wait(c, lambda: phase(c) == "Aborted", 10)
    assert status(c).get("retryCount", 0) == 0
    assert c.errors == []


def test_job_policy_when_no_task_policy_matches() -> None:
    """reference §2.2: without a matching task-level policy the job-level one applies."""
    c = started(job("j", task("a", 1, duration="2s", exit_code=1, policies=[policy("AbortJob", "PodEvicted")]),
                    task("b", 1), policies=[policy("TerminateJob", "PodFailed")]))
    assert wait(c, lambda: phase(c) == "Terminated", 10)
    assert c.errors == []


def test_policy_events_list() -> None:
    """reference §2.2: a policy matches if its `events` (or `event`) contains the event."""
    c = started(job("j", task("a", 1, duration="2s", exit_code=1), task("b", 1),
                    policies=[{"events": ["PodEvicted", "PodFailed"], "action": "TerminateJob"}]))
    assert wait(c, lambda: phase(c) == "Terminated", 10)
    assert pod_phases(c) == {"j-a-0": "Failed"}
    assert c.errors == []


def test_any_event_policy() -> None:
    """reference §2.2: "*" matches any event (but PodPending only with a timeout, and never
    the internal ones), so the job runs until a pod is evicted."""
    c = started(job("j", task("t", 2), policies=[policy("AbortJob", "*")]))
    c.run(5)
    assert phase(c) == "Running"
    c.evict("j-t-0")
    c.run(0)
    assert phase(c) == "Aborted"
    assert c.errors == []


@pytest.mark.parametrize("code,expected", [(3, "Aborted"), (4, "Terminated"), (5, "Failed")])
def test_exit_code_policy(code: int, expected: str) -> None:
    """reference §2.2: an exitCode policy matches policy.exitCode == the container's exit code
    (sim-exit-code); no match -> SyncJob (here all pods finish failed -> Failed)."""
    c = started(job("j", task("t", 1, duration="2s", exit_code=code),
                    policies=[{"exitCode": 3, "action": "AbortJob"}, {"exitCode": 4, "action": "TerminateJob"}]))
    assert wait(c, lambda: phase(c) in FINAL, 10)
    assert phase(c) == expected
    assert c.errors == []


def test_pod_pending_policy_without_timeout_never_matches() -> None:
    """reference §2.2: the PodPending event only matches a policy that has a timeout."""
    c = started(job("j", task("t", 2), policies=[policy("AbortJob", "PodPending")]))
    c.run(5)
    assert phase(c) == "Running"
    assert events(c, "ExecuteAction") == []
    assert c.errors == []


def test_pod_pending_timeout_fires_for_a_stuck_pod() -> None:
    """reference §2.2: PodPending + timeout: the action runs after the timeout if the pod is
    still pending (the scheduler marking it unschedulable is no phase event)."""
    c = started(job("j", task("t", 1, selector={"no": "such-node"}),
                    policies=[policy("AbortJob", "PodPending", timeout="30s")]))
    assert pod_phases(c) == {"j-t-0": "Pending"}
    assert events(c, "ExecuteAction") == ["Execute action AbortJob after 30s"]
    c.run(29)
    assert phase(c) == "Pending"
    c.run(2)
    assert phase(c) == "Aborted"
    assert pods(c) == {}
    assert c.errors == []


def test_pod_pending_timeout_cancelled_when_pod_runs() -> None:
    """reference §2.2: a PodPending delay is cancelled when the same pod emits another pod
    event (here PodRunning)."""
    c = started(job("j", task("t", 1), policies=[policy("AbortJob", "PodPending", timeout="20s")]),
                nodes=(node("n1", start_delay="10s"),))
    c.run(15)
    assert phase(c) == "Running"
    c.run(30)
    assert phase(c) == "Running"
    assert events(c, "ExecuteAction") == ["Execute action AbortJob after 20s"]
    assert c.errors == []


def test_timeout_delays_the_action() -> None:
    """reference §2.2: with a timeout the action is delayed by that duration: nothing happens
    before, it happens after."""
    c = started(failing_job("20s"))
    c.run(4)
    assert pod_phases(c)["j-a-0"] == "Failed"
    assert events(c, "ExecuteAction") == ["Execute action RestartJob after 20s"]
    c.run(18)  # t=22: the pod failed at t=3
    assert phase(c) == "Running" and status(c).get("retryCount", 0) == 0
    c.run(2)
    assert status(c).get("retryCount") == 1
    assert events(c, "ExecuteAction")[-1] == "Start to execute action RestartJob "
    assert c.errors == []


def test_pod_failed_delay_cancelled_when_replacement_runs() -> None:
    """reference §2.2: a PodFailed delay is cancelled when the pod (a replacement of the same
    name) becomes Running."""
    c = started(failing_job("100s"))
    c.run(10)
    assert pod_phases(c)["j-a-0"] == "Failed"  # since t=3: the delay would fire at t=103
    c.delete("Pod", "j-a-0")  # PodEvicted has no policy: SyncJob recreates the pod
    c.run(2)
    assert pod_phases(c)["j-a-0"] == "Running"  # t=11; it fails again at t=13 -> t=113
    c.run(96)  # t=108
    assert status(c).get("retryCount", 0) == 0
    c.run(6)  # t=114: the replacement's own failure delay fired
    assert status(c).get("retryCount") == 1
    assert events(c, "ExecuteAction") == ["Execute action RestartJob after 1m40s"] * 2 + [
        "Start to execute action RestartJob "]
    assert c.errors == []


def test_pod_evicted_delay_cancelled_when_replacement_runs() -> None:
    """reference §2.2: a PodEvicted delay is cancelled when the pod (its replacement of the
    same name) becomes Running."""
    c = started(job("j", task("a", 1, policies=[policy("RestartJob", "PodEvicted", timeout="60s")]), task("b", 1)))
    c.run(3)
    c.evict("j-a-0")  # its status update (OutOfSync) already finds it gone: SyncJob recreates it
    c.run(0)
    assert events(c, "ExecuteAction") == ["Execute action RestartJob after 1m0s"]
    assert wait(c, lambda: pod_phases(c) == {"j-a-0": "Running", "j-b-0": "Running"}, 5)
    c.run(70)
    assert status(c).get("retryCount", 0) == 0
    assert events(c, "ExecuteAction") == ["Execute action RestartJob after 1m0s"]
    assert c.errors == []


def test_action_cancels_delayed_actions_of_the_same_type() -> None:
    """reference §2.2: after a non-internal action runs, the delayed actions of the same type
    are cancelled: all job-level ones (here a RestartJob command cancels a TerminateJob)."""
    c = started(failing_job("30s", action="TerminateJob", max_retry=5))
    c.run(5)  # a-0 failed at t=3: TerminateJob due at t=33
    assert events(c, "ExecuteAction") == ["Execute action TerminateJob after 30s"]
    command(c, "RestartJob")
    c.run(30)  # t=35; the new a-0 runs from t=7, fails at t=9: TerminateJob due at t=39
    assert phase(c) == "Running" and status(c)["retryCount"] == 1
    c.run(4)
    assert phase(c) == "Terminated"
    assert c.errors == []


def test_stale_pod_event_gives_sync_job() -> None:
    """reference §2.2: a request from a pod of an older job version (job-version annotation <
    status.version) gives SyncJob instead of its policy."""
    c = a_running_job(policies=[policy("RestartJob", "PodEvicted")])
    command(c, "AbortJob")
    c.run(1)
    command(c, "ResumeJob")
    assert wait(c, lambda: phase(c) == "Running", 10)
    assert status(c)["retryCount"] == 1
    old = pods(c)["j-a-0"]
    assert int(old["metadata"]["annotations"]["volcano.sh/job-version"]) < status(c)["version"]
    c.delete("Pod", "j-a-0")
    c.run(0)
    assert status(c)["retryCount"] == 1  # no RestartJob
    new = pods(c)["j-a-0"]
    assert new["metadata"]["uid"] != old["metadata"]["uid"]
    assert new["metadata"]["annotations"]["volcano.sh/job-version"] == str(status(c)["version"])
    # The same eviction from a current pod does restart the job.
    c.evict("j-b-0")
    c.run(0)
    assert status(c)["retryCount"] == 2
    assert c.errors == []


def test_pod_evicted_restart_job() -> None:
    """reference §2.1 pod delete -> PodEvicted; §2.2 PodEvicted -> RestartJob (c.evict)."""
    c = started(job("j", task("t", 2), policies=[policy("RestartJob", "PodEvicted")]))
    c.run(3)
    w = Watch(c)
    c.evict("j-t-0")
    c.run(0)
    assert wait(c, lambda: phase(c) == "Running", 10)
    # The eviction's status update (OutOfSync) is processed once the pod is gone: SyncJob
    # recreates it (Running -> Pending), then PodEvicted restarts the job.
    assert w.phases() == ["Pending", "Restarting", "Pending", "Running"]
    assert status(c)["retryCount"] == 1
    assert c.errors == []


def test_task_completed_complete_job() -> None:
    """reference §2.1 TaskCompleted (every replica of the task Succeeded); §2.2 -> CompleteJob."""
    c = started(job("j", task("a", 2, duration="3s", policies=[policy("CompleteJob", "TaskCompleted")]),
                    task("b", 1)))
    w = Watch(c)
    assert wait(c, lambda: phase(c) in FINAL, 10)
    assert w.phases() == ["Running", "Completing", "Completed"]
    assert c.now <= 5
    assert pod_phases(c) == {"j-a-0": "Succeeded", "j-a-1": "Succeeded"}
    assert c.errors == []


def test_task_failed_after_max_retry_restarts() -> None:
    """reference §2.1 TaskFailed: restarts of the task's Running/Pending pods >= task.maxRetry
    (OnFailure pods with a non-zero exit restart and stay Running)."""
    c = started(job("j", task("a", 1, duration="2s", exit_code=1, restart="OnFailure", max_retry=2,
                              policies=[policy("TerminateJob", "TaskFailed")]),
                    task("b", 1)))
    # a-0 exits at t=3, restarts at t=13 (restartCount 1), exits at 15, restarts at 35 (2).
    c.run(33)
    assert phase(c) == "Running" and pod_phases(c)["j-a-0"] == "Running"
    assert pods(c)["j-a-0"]["status"]["containerStatuses"][0]["restartCount"] == 1
    c.run(3)
    assert phase(c) == "Terminated"
    assert c.errors == []


def test_node_not_ready_fails_pods_and_triggers_pod_failed_policy() -> None:
    """DESIGN "Simulated kubelets": a NotReady node fails its pods; reference §2.2 PodFailed ->
    RestartJob; the restarted pods land on the Ready node."""
    c = started(job("j", task("t", 2), policies=[policy("RestartJob", "PodFailed")]),
                nodes=(node("n1"), node("n2")))
    c.run(3)
    assert phase(c) == "Running"
    on = {p["spec"]["nodeName"] for p in pods(c).values()}
    lost = sorted(on)[0]
    c.set_node_ready(lost, False)
    assert wait(c, lambda: phase(c) == "Running" and status(c).get("retryCount") == 1, 10)
    assert {p["spec"]["nodeName"] for p in pods(c).values()} == {"n1", "n2"} - {lost}
    assert c.errors == []


def test_deleting_a_job_drops_its_delayed_actions() -> None:
    """reference §2.2 delayed actions are kept per job: deleting the job drops them (the pods
    and the PodGroup go with the job by ownerReference)."""
    c = started(failing_job("20s"))
    c.run(5)
    assert events(c, "ExecuteAction") == ["Execute action RestartJob after 20s"]
    c.delete("Job", "j")
    c.run(30)
    assert c.get("Job", "j") is None and pods(c) == {} and c.list("PodGroup", NS) == []
    assert c.errors == []
