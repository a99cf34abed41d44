"""Scenario tests of the job controller through volcanic.Cluster: the job state machine (reference
§2.3: the Pending, Running, Restarting, Aborting, Aborted and terminal rows, the Running
default branch) and bus Commands. How the tests drive and observe the cluster, and its timing:
job_helpers.py."""

from __future__ import annotations

import pytest

from job_helpers import (
    FINAL,
    NS,
    OUT_OF_SYNC,
    Watch,
    a_pending_job,
    a_running_job,
    cluster,
    command,
    command_obj,
    events,
    job,
    node,
    phase,
    pod_phases,
    podgroup,
    pods,
    policy,
    started,
    status,
    task,
    uids,
    wait,
)


# §2.3 Pending row.
def test_pending_restart_job_command_kills_all_and_restarts() -> None:
    """reference §2.3 Pending + RestartJob: KillJob(none); retryCount++ -> Restarting; then
    Restarting SyncJob -> Pending once the killed pods are gone (restartingUpdateStatus on the
    pods there are: the embedded cluster deletes at once); §1.2 a Command is deleted and runs
    once; §2.1 CommandIssued and ExecuteAction events."""
    c = a_pending_job()
    w = Watch(c)
    before = uids(c)
    cmd = command(c, "RestartJob")
    c.run(0)
    assert c.get("Command", cmd) is None
    s = status(c)
    assert s["retryCount"] == 1 and s["version"] == 1
    assert w.phases() == ["Restarting", "Pending"]
    assert pods(c) == {}
    assert wait(c, lambda: len(pods(c)) == 2 and phase(c) == "Pending", 5)
    assert w.phases() == ["Restarting", "Pending"]
    assert not set(uids(c).values()) & set(before.values())
    for p in pods(c).values():
        assert p["metadata"]["annotations"]["volcano.sh/job-version"] == "1"
        assert p["metadata"]["annotations"]["volcano.sh/job-retry-count"] == "1"
    c.run(20)
    assert status(c)["retryCount"] == 1  # the command ran once
    assert events(c, "CommandIssued") == [
        "Start to execute command RestartJob, and clean it up to make sure executed not more than once."]
    assert events(c, "ExecuteAction") == ["Start to execute action RestartJob "]
    assert c.errors == []


def _split_cluster() -> tuple[dict, dict]:
    """A node that starts pods at once and one that never does (within a test)."""
    return (node("fast", cpu="1", labels={"tier": "a"}),
            node("slow", cpu="1", start_delay="1000s", labels={"tier": "a"}))


def test_pending_restart_task_policy_kills_only_that_task() -> None:
    """reference §2.3 Pending + RestartTask: KillTarget(task); retryCount++ -> Restarting
    (no version bump, PodGroup kept); §2.2 task-level PodFailed policy; §2.3 Restarting:
    retryCount >= maxRetry -> Failed."""
    c = started(job("j", task("a", 1, duration="2s", exit_code=1, selector={"role": "fast"},
                              policies=[policy("RestartTask", "PodFailed")]),
                    task("b", 2, selector={"role": "slow"}), max_retry=2),
                nodes=(node("fast", labels={"role": "fast"}),
                       node("slow", start_delay="1000s", labels={"role": "slow"})))
    w = Watch(c)
    c.run(2)
    assert phase(c) == "Pending" and pod_phases(c)["j-a-0"] == "Running"
    pg_uid, a_uid = podgroup(c)["metadata"]["uid"], uids(c)["j-a-0"]
    b_uids = {n: u for n, u in uids(c).items() if "-b-" in n}
    assert wait(c, lambda: status(c).get("retryCount") == 1, 5)
    assert status(c).get("version", 0) == 0
    assert podgroup(c)["metadata"]["uid"] == pg_uid
    assert {n: u for n, u in uids(c).items() if "-b-" in n} == b_uids
    assert uids(c)["j-a-0"] != a_uid
    assert phase(c) == "Pending"
    # The recreated a-0 fails again: the second restart reaches maxRetry 2.
    assert wait(c, lambda: phase(c) == "Failed", 10)
    assert status(c)["retryCount"] == 2
    assert w.phases() == ["Restarting", "Pending", "Restarting", "Failed"]
    assert not any(p in ("Pending", "Running") for p in pod_phases(c).values())
    assert c.errors == []


def test_pending_restart_pod_policy_kills_only_that_pod() -> None:
    """reference §2.3 Pending + RestartPod: KillTarget(pod); retryCount++ -> Restarting;
    the task's other pod (still waiting on the slow node) is left alone (same UID)."""
    c = started(job("j", task("a", 2, duration="2s", exit_code=1, policies=[policy("RestartPod", "PodFailed")]),
                    max_retry=10),
                nodes=_split_cluster())
    c.run(2)
    assert phase(c) == "Pending"
    by_node = {p["spec"]["nodeName"]: n for n, p in pods(c).items()}
    failing, waiting = by_node["fast"], by_node["slow"]
    before = uids(c)
    w = Watch(c)
    assert wait(c, lambda: status(c).get("retryCount") == 1, 5)
    assert uids(c)[waiting] == before[waiting]
    assert uids(c)[failing] != before[failing]
    assert status(c).get("version", 0) == 0
    assert w.phases() == ["Restarting", "Pending"]
    assert c.errors == []


def test_pending_restart_partition_policy_kills_only_that_partition() -> None:
    """reference §2.3 Pending + RestartPartition: KillTarget(partition): the pods of the failed
    pod's partition (label volcano.sh/partition-id = index / partitionSize) only; retryCount++
    -> Restarting; no version bump, the PodGroup is kept."""
    t = task("t", 4, duration="2s", exit_code=1, policies=[policy("RestartPartition", "PodFailed")],
             partitionPolicy={"totalPartitions": 2, "partitionSize": 2})
    c = started(job("j", t, max_retry=10),
                nodes=(node("n1", cpu="1"), node("n2", cpu="1"),
                       node("n3", cpu="1", start_delay="1000s"), node("n4", cpu="1", start_delay="1000s")))
    c.run(2)
    labels = {n: p["metadata"]["labels"]["volcano.sh/partition-id"] for n, p in pods(c).items()}
    assert labels == {"j-t-0": "0", "j-t-1": "0", "j-t-2": "1", "j-t-3": "1"}
    # Precondition (placement): partition 0 runs, partition 1 waits on the slow nodes.
    assert pod_phases(c) == {"j-t-0": "Running", "j-t-1": "Running", "j-t-2": "Pending", "j-t-3": "Pending"}
    before, pg_uid = uids(c), podgroup(c)["metadata"]["uid"]
    w = Watch(c)
    c.run(2)  # t-0 and t-1 fail at t=3: the first failure restarts partition 0
    now = uids(c)
    assert now["j-t-0"] != before["j-t-0"] and now["j-t-1"] != before["j-t-1"]
    assert now["j-t-2"] == before["j-t-2"] and now["j-t-3"] == before["j-t-3"]
    assert status(c)["retryCount"] == 1 and status(c).get("version", 0) == 0
    assert podgroup(c)["metadata"]["uid"] == pg_uid
    assert w.phases() == ["Restarting", "Pending"]
    assert c.errors == []


@pytest.mark.parametrize("action,draining,final", [("AbortJob", "Aborting", "Aborted"),
                                                   ("CompleteJob", "Completing", "Completed"),
                                                   ("TerminateJob", "Terminating", "Terminated")])
def test_pending_finishing_commands(action: str, draining: str, final: str) -> None:
    """reference §2.3 Pending + AbortJob/CompleteJob/TerminateJob: KillJob(soft) -> Aborting/
    Completing/Terminating; then -> Aborted/Completed/Terminated when no pod is alive; the
    PodGroup is deleted (full kill); Pending pods are not retained."""
    c = a_pending_job()
    w = Watch(c)
    pg_name = podgroup(c)["metadata"]["name"]
    command(c, action)
    c.run(0)
    assert w.phases() == [draining, final]
    assert pods(c) == {}
    assert c.get("PodGroup", pg_name) is None
    s = status(c)
    assert s.get("retryCount", 0) == 0 and s["version"] >= 1
    assert not (s.get("pending") or s.get("running") or s.get("terminating"))
    c.run(10)
    assert phase(c) == final and pods(c) == {}
    assert [x["status"] for x in s["conditions"]] == ["Pending", draining, final]
    assert c.errors == []


def test_pending_default_branch_syncs_only() -> None:
    """reference §2.3 Pending default (SyncJob, ResumeJob, ...): SyncJob, no kill, no retry;
    ExecuteAction is recorded for any action but SyncJob."""
    c = a_pending_job()
    before = uids(c)
    command(c, "ResumeJob")
    c.run(5)
    assert phase(c) == "Pending"
    s = status(c)
    assert s.get("retryCount", 0) == 0 and s.get("version", 0) == 0
    assert uids(c) == before
    assert events(c, "ExecuteAction") == ["Start to execute action ResumeJob "]
    assert c.errors == []


@pytest.mark.parametrize("min_available,expected", [(1, "Running"), (2, "Pending")])
def test_pending_to_running_when_min_available_is_met(min_available: int, expected: str) -> None:
    """reference §2.3 Pending default: -> Running if spec.minAvailable <= running+succeeded+failed."""
    c = started(job("j", task("t", 2), min_available=min_available), nodes=_split_cluster())
    c.run(5)
    assert sorted(pod_phases(c).values()) == ["Pending", "Running"]
    assert phase(c) == expected
    assert status(c).get("running") == 1 and status(c).get("pending") == 1
    assert c.errors == []


# §2.3 Running row.
def test_running_restart_job_command() -> None:
    """reference §2.3 Running + RestartJob: KillJob(none) (Succeeded pods too); retryCount++ ->
    Restarting -> Pending -> Running; KillJob: version++, pods marked out-of-sync before they
    are deleted, the PodGroup deleted and recreated; new pods carry the new job-version."""
    c = a_running_job()
    w = Watch(c)
    before = uids(c)
    pg_uid = podgroup(c)["metadata"]["uid"]
    command(c, "RestartJob")
    c.run(0)
    s = status(c)
    assert s["retryCount"] == 1 and s["version"] == 1
    assert phase(c) == "Pending"  # Restarting until the killed pods were gone
    assert pods(c) == {}
    deleted = w.deleted_pods()
    assert sorted(p["metadata"]["name"] for p in deleted) == ["j-a-0", "j-b-0", "j-b-1"]
    assert all(p["metadata"]["annotations"].get(OUT_OF_SYNC) for p in deleted)
    pg_events = [(ev, o["metadata"]["uid"]) for ev, o in w.poll() if o["kind"] == "PodGroup" and ev != "MODIFIED"]
    assert pg_events[0] == ("DELETED", pg_uid)
    assert wait(c, lambda: phase(c) == "Running", 10)
    assert w.phases() == ["Restarting", "Pending", "Running"]
    assert podgroup(c)["metadata"]["uid"] != pg_uid
    assert not set(uids(c).values()) & set(before.values())
    assert {p["metadata"]["annotations"]["volcano.sh/job-version"] for p in pods(c).values()} == {"1"}
    # Each phase once, the newest last.
    assert [x["status"] for x in status(c)["conditions"]] == ["Restarting", "Pending", "Running"]
    assert c.errors == []


def test_running_restart_task_policy() -> None:
    """reference §2.3 Running + RestartTask: KillTarget(task); retryCount++ -> Restarting ->
    Pending -> Running; the other task's pods, the PodGroup and the version are untouched."""
    c = started(job("j", task("a", 1, duration="3s", exit_code=1, policies=[policy("RestartTask", "PodFailed")]),
                    task("b", 2), max_retry=10))
    c.run(2)
    assert phase(c) == "Running"
    before, pg_uid = uids(c), podgroup(c)["metadata"]["uid"]
    w = Watch(c)
    assert wait(c, lambda: status(c).get("retryCount") == 1 and phase(c) == "Running", 10)
    assert w.phases() == ["Restarting", "Pending", "Running"]
    now = uids(c)
    assert now["j-b-0"] == before["j-b-0"] and now["j-b-1"] == before["j-b-1"]
    assert now["j-a-0"] != before["j-a-0"]
    assert podgroup(c)["metadata"]["uid"] == pg_uid
    assert status(c).get("version", 0) == 0
    assert c.errors == []


def test_running_restart_pod_policy() -> None:
    """reference §2.3 Running + RestartPod: KillTarget(pod); retryCount++ -> Restarting ->
    Pending -> Running; the failed pod only is recreated."""
    c = started(job("j", task("a", 2, duration="3s", exit_code=1, selector={"tier": "a"},
                              policies=[policy("RestartPod", "PodFailed")]),
                    task("b", 1, selector={"tier": "b"}), min_available=2, max_retry=10),
                nodes=(*_split_cluster(), node("other", cpu="1", labels={"tier": "b"})))
    c.run(2)
    assert phase(c) == "Running"
    by_node = {p["spec"]["nodeName"]: n for n, p in pods(c).items()}
    before = uids(c)
    w = Watch(c)
    assert wait(c, lambda: status(c).get("retryCount") == 1 and phase(c) == "Running", 10)
    assert w.phases() == ["Restarting", "Pending", "Running"]
    now = uids(c)
    assert now[by_node["fast"]] != before[by_node["fast"]]
    assert now[by_node["slow"]] == before[by_node["slow"]]
    assert now["j-b-0"] == before["j-b-0"]
    assert c.errors == []


def test_running_abort_then_resume() -> None:
    """reference §2.3 Running + AbortJob: KillJob(soft) -> Aborting -> Aborted (Succeeded pods
    retained); Aborted + ResumeJob: KillJob(soft); retryCount++ -> Restarting -> ... Running."""
    c = a_running_job()
    w = Watch(c)
    a_uid = uids(c)["j-a-0"]
    command(c, "AbortJob")
    c.run(0)
    assert w.phases() == ["Aborting", "Aborted"]
    assert pod_phases(c) == {"j-a-0": "Succeeded"}
    assert status(c).get("retryCount", 0) == 0
    assert podgroup(c) is None
    c.run(10)
    assert phase(c) == "Aborted" and list(pods(c)) == ["j-a-0"]
    command(c, "ResumeJob")
    assert wait(c, lambda: phase(c) == "Running", 10)
    assert w.phases() == ["Aborting", "Aborted", "Restarting", "Pending", "Running"]
    s = status(c)
    assert s["retryCount"] == 1
    assert uids(c)["j-a-0"] == a_uid  # retained, not recreated
    assert pod_phases(c) == {"j-a-0": "Succeeded", "j-b-0": "Running", "j-b-1": "Running"}
    assert s["running"] == 2 and s["succeeded"] == 1
    assert [x["status"] for x in s["conditions"]] == ["Aborting", "Aborted", "Restarting", "Pending", "Running"]
    assert c.errors == []


@pytest.mark.parametrize("action,draining,final", [("CompleteJob", "Completing", "Completed"),
                                                   ("TerminateJob", "Terminating", "Terminated")])
def test_running_complete_and_terminate(action: str, draining: str, final: str) -> None:
    """reference §2.3 Running + CompleteJob/TerminateJob: KillJob(soft) -> Completing/Terminating
    -> Completed/Terminated when no pod is alive; finished pods are retained."""
    c = a_running_job()
    w = Watch(c)
    command(c, action)
    c.run(0)
    assert w.phases() == [draining, final]
    assert pod_phases(c) == {"j-a-0": "Succeeded"}
    s = status(c)
    assert s.get("succeeded") == 1 and not s.get("running") and not s.get("terminating")
    assert [x["status"] for x in s["conditions"]] == ["Pending", "Running", draining, final]
    assert c.errors == []


# §2.3 Running default branch.
def test_running_min_success_completes_and_kills_the_rest() -> None:
    """reference §2.3 Running default: minSuccess set and succeeded >= minSuccess -> Completed
    (then the Completed state's KillJob(soft) removes the pods still running)."""
    c = started(job("j", task("short", 2, duration="3s"), task("long", 1), min_success=2))
    assert wait(c, lambda: phase(c) == "Completed", 10)
    assert c.now <= 5
    assert pod_phases(c) == {"j-short-0": "Succeeded", "j-short-1": "Succeeded"}
    assert c.errors == []


@pytest.mark.parametrize("tasks,spec,expected", [
    # spec.minAvailable (2) >= sum(task.minAvailable) (2): task b has 0 succeeded < 1 -> Failed,
    # although succeeded (2) >= spec.minAvailable.
    ([task("a", 2, duration="2s", min_available=1), task("b", 2, duration="2s", exit_code=1, min_available=1)],
     {"min_available": 2}, "Failed"),
    # spec.minAvailable (2) < sum(task.minAvailable) (3): the task check is skipped; succeeded
    # (2) >= spec.minAvailable -> Completed, although task b has no success.
    ([task("a", 2, duration="2s"), task("b", 1, duration="2s", exit_code=1)], {"min_available": 2}, "Completed"),
    # Otherwise: succeeded (1) < spec.minAvailable (2) -> Failed.
    ([task("a", 2, duration="2s", exit_code=1), task("b", 1, duration="2s")], {"min_available": 2}, "Failed"),
    # minSuccess set and succeeded (2) < minSuccess (3) -> Failed, although succeeded >= minAvailable.
    ([task("a", 2, duration="2s"), task("b", 1, duration="4s", exit_code=1)],
     {"min_available": 1, "min_success": 3}, "Failed"),
    # Everything succeeded.
    ([task("a", 2, duration="2s"), task("b", 1, duration="4s")], {}, "Completed"),
])
def test_running_all_finished(tasks: list, spec: dict, expected: str) -> None:
    """reference §2.3 Running default, succeeded+failed == total replicas: a task below its
    minAvailable -> Failed (only when spec.minAvailable >= sum of task minAvailable); else
    minSuccess unmet -> Failed; else succeeded >= minAvailable -> Completed; otherwise Failed."""
    c = started(job("j", *tasks, **spec))
    w = Watch(c)
    assert wait(c, lambda: phase(c) in FINAL, 10)
    assert w.phases() == ["Running", expected]
    assert c.errors == []


@pytest.mark.parametrize("min_available,phases", [(3, ["Pending", "Running"]), (2, [])])
def test_running_falls_back_to_pending(min_available: int, phases: list) -> None:
    """reference §2.3 Running default: pending > total replicas - minAvailable -> Pending (3
    replicas: 1 pending > 3 - 3, but not > 3 - 2); an evicted pod (no policy: SyncJob) is
    recreated Pending; Pending -> Running once it runs."""
    c = started(job("j", task("t", 3), min_available=min_available))
    c.run(3)
    assert phase(c) == "Running"
    w = Watch(c)
    c.evict("j-t-1")
    c.run(0)
    assert pod_phases(c)["j-t-1"] == "Pending"
    assert phase(c) == ("Pending" if phases else "Running")
    # (The PodGroup goes Pending meanwhile, and SyncJob recounts once it is Running again.)
    assert wait(c, lambda: pod_phases(c)["j-t-1"] == "Running" and phase(c) == "Running", 5)
    assert w.phases() == phases
    assert c.errors == []


# §2.3 Restarting, Aborting, Aborted and terminal rows.
@pytest.mark.parametrize("max_retry", [1, 2])
def test_restart_until_max_retry_then_failed_keeping_finished_pods(max_retry: int) -> None:
    """reference §2.3 Restarting: retryCount >= maxRetry -> Failed; KillJob: on the last retry
    (retryCount >= maxRetry-1) Failed and Succeeded pods are kept (retain Soft)."""
    c = started(job("j", task("a", 1, duration="2s", exit_code=1), task("b", 1),
                    policies=[policy("RestartJob", "PodFailed")], max_retry=max_retry))
    w = Watch(c)
    c.run(1)
    first_a = uids(c)["j-a-0"]
    assert wait(c, lambda: phase(c) == "Failed", 30)
    s = status(c)
    assert s["retryCount"] == max_retry
    assert w.phases()[-2:] == ["Restarting", "Failed"]
    assert w.phases().count("Restarting") == max_retry
    # The failed pod of the last run is kept, the running one is gone.
    assert pod_phases(c) == {"j-a-0": "Failed"}
    a = pods(c)["j-a-0"]
    assert a["metadata"]["annotations"]["volcano.sh/job-version"] == str(max_retry - 1)
    assert (a["metadata"]["uid"] == first_a) == (max_retry == 1)
    assert c.errors == []


def test_restarting_default_branch_kills_again_without_aborting() -> None:
    """reference §2.3 Restarting default (e.g. AbortJob): KillJob(none) + restartingUpdateStatus;
    the job never goes Aborting, and the version is bumped by both kills."""
    c = a_running_job()
    j = c.get("Job", "j")
    w = Watch(c)
    c.apply([command_obj(j, "RestartJob", "c1"), command_obj(j, "AbortJob", "c2")])
    c.run(0)
    assert c.list("Command", NS) == []
    s = status(c)
    assert s["retryCount"] == 1 and s["version"] == 2
    assert "Aborting" not in w.phases()
    assert wait(c, lambda: phase(c) == "Running", 10)
    assert "Aborting" not in w.phases() and "Aborted" not in w.phases()
    assert c.errors == []


def test_aborting_resume_job_restarts() -> None:
    """reference §2.3 Aborting + ResumeJob: KillJob(soft); retryCount++ -> Restarting."""
    c = a_running_job()
    j = c.get("Job", "j")
    w = Watch(c)
    c.apply([command_obj(j, "AbortJob", "c1"), command_obj(j, "ResumeJob", "c2")])
    c.run(0)
    assert wait(c, lambda: phase(c) == "Running", 10)
    assert w.phases() == ["Aborting", "Restarting", "Pending", "Running"]
    assert status(c)["retryCount"] == 1
    assert c.errors == []


def test_aborted_ignores_other_actions() -> None:
    """reference §2.3 Aborted default: KillJob(soft), no phase change (only ResumeJob leaves)."""
    c = a_running_job()
    command(c, "AbortJob")
    c.run(1)
    version = status(c)["version"]
    command(c, "RestartJob")
    c.run(10)
    assert phase(c) == "Aborted"
    assert status(c).get("retryCount", 0) == 0
    assert status(c)["version"] > version
    assert pod_phases(c) == {"j-a-0": "Succeeded"}
    assert c.errors == []


@pytest.mark.parametrize("how", ["CompleteJob", "TerminateJob", "fail"])
@pytest.mark.parametrize("then", ["ResumeJob", "RestartJob", "AbortJob", "RestartTask"])
def test_terminal_states_stay_terminal(how: str, then: str) -> None:
    """reference §2.3 Completed / Terminated / Failed + any action: KillJob(soft), no change."""
    if how == "fail":
        c = started(job("j", task("a", 1, duration="3s"), task("b", 1, duration="3s", exit_code=1)))
        assert wait(c, lambda: phase(c) == "Failed", 10)
    else:
        c = a_running_job()
        command(c, how)
        c.run(1)
    final = phase(c)
    assert final in FINAL
    kept = uids(c)
    command(c, then)
    c.run(10)
    assert phase(c) == final
    assert status(c).get("retryCount", 0) == 0
    assert uids(c) == kept
    assert c.errors == []


# Commands.
def test_command_is_consumed_once() -> None:
    """reference §1.2 / §2.1: the controller deletes the Command first, then runs its action
    once (Event CommandIssued, then ExecuteAction)."""
    c = a_running_job()
    cmd = command(c, "RestartJob", cmd="restart-it")
    assert c.get("Command", cmd) is not None  # nothing acts before run()
    c.run(0)
    assert c.get("Command", cmd) is None
    assert wait(c, lambda: phase(c) == "Running", 10)
    c.run(30)
    assert status(c)["retryCount"] == 1
    assert len(events(c, "CommandIssued")) == 1
    assert events(c, "ExecuteAction") == ["Start to execute action RestartJob "]
    assert c.errors == []
