"""Scenario tests of the job controller through volcanic.Cluster (reference §2.1-§2.3).

Every test drives an embedded cluster (virtual clock, scheduler, simulated kubelets) only
through the public API: c.apply of Nodes, Jobs and bus Commands, c.evict, c.delete,
c.set_node_ready, c.run; it observes Jobs, Pods, PodGroups and Events with c.get / c.list and
the store's watch (c.api.watch), which records every committed change in order.

Timing in the embedded cluster: the scheduler runs a session every second from t=0, so a job
applied at t=0 gets its PodGroup Inqueue at t=0, its pods at t=0, bound at t=1 and Running at
t=1 (+ the node's volcanic/sim-start-delay); a pod with volcanic/sim-duration D exits at
start + D with volcanic/sim-exit-code.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import volcanic
from volcanic.admission.chain import AdmissionChain

NS = "default"
FINAL = ("Completed", "Failed", "Terminated", "Aborted")
OUT_OF_SYNC = "volcano.sh/controller-out-of-sync"


# Builders.
def node(name: str, cpu: str = "4", memory: str = "8Gi", start_delay: str | None = None,
         labels: dict | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}}
    if start_delay is not None:
        meta["annotations"] = {"volcanic/sim-start-delay": start_delay}
    alloc = {"cpu": cpu, "memory": memory, "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta,
            "status": {"allocatable": alloc, "capacity": dict(alloc)}}


def _given(fields: dict[str, Any]) -> dict[str, Any]:
    """The fields whose value is not None."""
    return {k: v for k, v in fields.items() if v is not None}


def task(name: str = "t", replicas: int = 1, *, cpu: str = "1", duration: str | None = None,
         exit_code: int | None = None, restart: str = "Never", min_available: int | None = None,
         max_retry: int | None = None, policies: list | None = None, depends_on: dict | None = None,
         selector: dict | None = None, **extra: Any) -> dict[str, Any]:
    """A task whose pods run `duration` (forever when None) and exit with `exit_code`."""
    annotations = _given({"volcanic/sim-duration": duration,
                          "volcanic/sim-exit-code": None if exit_code is None else str(exit_code)})
    spec: dict[str, Any] = {"restartPolicy": restart,
                            "containers": [{"name": "main", "image": "busybox",
                                            "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}}}]}
    if selector:
        spec["nodeSelector"] = selector
    return {"name": name, "replicas": replicas,
            "template": {"metadata": {"annotations": annotations}, "spec": spec}, **extra,
            **_given({"minAvailable": min_available, "maxRetry": max_retry, "policies": policies,
                      "dependsOn": depends_on})}


def job(name: str = "j", *tasks: dict, min_available: int | None = None, policies: list | None = None,
        max_retry: int | None = None, min_success: int | None = None, **spec: Any) -> dict[str, Any]:
    s: dict[str, Any] = {"tasks": list(tasks) or [task()], **spec,
                         **_given({"minAvailable": min_available, "policies": policies, "maxRetry": max_retry,
                                   "minSuccess": min_success})}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS}, "spec": s}


def policy(action: str, event: str | None = None, **extra: Any) -> dict[str, Any]:
    p = {"action": action, **extra}
    if event is not None:
        p["event"] = event
    return p


# Observers.
class Watch:
    """Every committed change of Jobs, Pods and PodGroups, in commit order, from now on."""

    def __init__(self, c: volcanic.Cluster) -> None:
        self._w = c.api.watch(("Job", "Pod", "PodGroup"))
        self._w.drain()  # what exists now, replayed as ADDED
        self.events: list[tuple[str, dict]] = []
        self._initial = {j["metadata"]["name"]: ((j.get("status") or {}).get("state") or {}).get("phase")
                         for j in c.list("Job", NS)}

    def poll(self) -> list[tuple[str, dict]]:
        self.events.extend(self._w.drain())
        return self.events

    def phases(self, name: str = "j") -> list[str]:
        """The phases the job moved to since the watch started, in order."""
        out: list[str] = []
        last = self._initial.get(name)
        for _, obj in self.poll():
            if obj["kind"] == "Job" and obj["metadata"]["name"] == name:
                p = ((obj.get("status") or {}).get("state") or {}).get("phase")
                if p and p != last:
                    out.append(p)
                    last = p
        return out

    def deleted_pods(self) -> list[dict]:
        """Each deleted pod as last seen before it went."""
        return [obj for ev, obj in self.poll() if ev == "DELETED" and obj["kind"] == "Pod"]


def status(c: volcanic.Cluster, name: str = "j") -> dict:
    return (c.get("Job", name) or {}).get("status") or {}


def phase(c: volcanic.Cluster, name: str = "j") -> str | None:
    return (status(c, name).get("state") or {}).get("phase")


def pods(c: volcanic.Cluster, name: str = "j") -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in c.list("Pod", NS)
            if (p["metadata"].get("labels") or {}).get("volcano.sh/job-name") == name}


def pod_phases(c: volcanic.Cluster, name: str = "j") -> dict[str, str]:
    return {n: (p.get("status") or {}).get("phase") for n, p in pods(c, name).items()}


def uids(c: volcanic.Cluster, name: str = "j") -> dict[str, str]:
    return {n: p["metadata"]["uid"] for n, p in pods(c, name).items()}


def podgroup(c: volcanic.Cluster, name: str = "j") -> dict | None:
    j = c.get("Job", name)
    return c.get("PodGroup", f"{name}-{j['metadata']['uid']}") if j else None


def events(c: volcanic.Cluster, reason: str, name: str = "j") -> list[str]:
    return [e["message"] for e in c.list("Event", NS)
            if e["reason"] == reason and e["involvedObject"].get("kind") == "Job"
            and e["involvedObject"].get("name") == name]


def command(c: volcanic.Cluster, action: str, name: str = "j", cmd: str | None = None) -> str:
    """Issues a bus Command (as vcctl does) and returns its name."""
    j = c.get("Job", name)
    cmd = cmd or f"{name}-{action.lower()}"
    c.apply(command_obj(j, action, cmd))
    return cmd


def command_obj(j: dict, action: str, cmd: str) -> dict:
    return {"apiVersion": "bus.volcano.sh/v1alpha1", "kind": "Command",
            "metadata": {"name": cmd, "namespace": NS}, "action": action,
            "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                       "name": j["metadata"]["name"], "uid": j["metadata"]["uid"]}}


def wait(c: volcanic.Cluster, cond: Callable[[], bool], limit: float = 120.0) -> bool:
    """Runs one virtual second at a time until cond() holds; False after `limit` seconds."""
    return c.run_until(lambda _: cond(), limit=limit, step=1.0)


def cluster(*nodes: dict) -> volcanic.Cluster:
    c = volcanic.Cluster()
    c.apply(list(nodes) or [node("n1")])
    return c


def started(*objs: dict, nodes: tuple = ()) -> volcanic.Cluster:
    c = cluster(*nodes)
    c.apply(list(objs))
    c.run(0)
    return c


def started_without_job_validation(*objs: dict) -> volcanic.Cluster:
    """started(), with Volcano's Job validation (reference §3.1) left out of admission: for
    jobs the webhook refuses, to see how the controller copes with one that got through."""
    from volcanic.admission import AdmissionConf, volcano_chain
    chain = volcano_chain(AdmissionConf())
    chain.validators.pop("Job")
    c = volcanic.Cluster(admission=chain)
    c.apply([node("n1"), *objs])
    c.run(0)
    return c


def a_running_job(**spec: Any) -> volcanic.Cluster:
    """Job j: task a (1 pod, 3 s, exit 0) and task b (2 pods, forever), minAvailable 3;
    Running at t=1, a-0 Succeeded at t=4; returned at t=6."""
    c = started(job("j", task("a", 1, duration="3s"), task("b", 2), **spec))
    c.run(6)
    assert phase(c) == "Running"
    assert pod_phases(c) == {"j-a-0": "Succeeded", "j-b-0": "Running", "j-b-1": "Running"}
    return c


def a_pending_job() -> volcanic.Cluster:
    """Job j (2 pods, forever) on a node whose kubelet takes 1000 s to start pods: the
    pods are created and bound but stay Pending, and so does the job."""
    c = started(job("j", task("t", 2)), nodes=(node("n1", start_delay="1000s"),))
    c.run(3)
    assert phase(c) == "Pending"
    assert pod_phases(c) == {"j-t-0": "Pending", "j-t-1": "Pending"}
    assert all(p["spec"].get("nodeName") == "n1" for p in pods(c).values())
    return c


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


def _failing_job(timeout: str, action: str = "RestartJob", **kw: Any) -> dict:
    """Task a fails at t=3 (exit 1, Never); task b runs on; PodFailed -> action after timeout."""
    return job("j", task("a", 1, duration="2s", exit_code=1), task("b", 1),
               policies=[policy(action, "PodFailed", timeout=timeout)], **kw)


def test_timeout_delays_the_action() -> None:
    """reference §2.2: with a timeout the action is delayed by that duration: nothing happens
    before, it happens after."""
    c = started(_failing_job("20s"))
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
    c = started(_failing_job("100s"))
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
    c = started(_failing_job("30s", action="TerminateJob", max_retry=5))
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
    c = started(_failing_job("20s"))
    c.run(5)
    assert events(c, "ExecuteAction") == ["Execute action RestartJob after 20s"]
    c.delete("Job", "j")
    c.run(30)
    assert c.get("Job", "j") is None and pods(c) == {} and c.list("PodGroup", NS) == []
    assert c.errors == []


# SyncJob details.
def test_pods_are_created_only_once_the_podgroup_is_inqueue() -> None:
    """reference §2.3 SyncJob step 4: pods are created only when the PodGroup is Inqueue (or
    later); a cluster too small for minResources leaves the job Pending without pods."""
    c = started(job("j", task("t", 3)), nodes=(node("n1", cpu="2"),))
    c.run(5)
    assert phase(c) == "Pending"
    assert pods(c) == {}
    assert podgroup(c)["status"]["phase"] == "Pending"
    c.apply(node("n2", cpu="2"))
    assert wait(c, lambda: phase(c) == "Running", 5)
    assert len(pods(c)) == 3
    assert c.errors == []


def test_podgroup_pending_event_for_an_unschedulable_gang() -> None:
    """reference §2.3 SyncJob / e2e "Checking Unschedulable Event Generation for job": an
    Unschedulable PodGroup condition is reported as a PodGroupPending event on the job."""
    c = started(job("j", task("t", 3, selector={"kubernetes.io/hostname": "n1"})),
                nodes=(node("n1", cpu="2"), node("n2", cpu="2")))
    c.run(3)
    assert podgroup(c)["status"]["phase"] == "Inqueue"
    assert len(pods(c)) == 3 and phase(c) == "Pending"
    msgs = events(c, "PodGroupPending")
    assert msgs and all(m.startswith("PodGroup default:j unschedule,reason: ") for m in msgs)
    assert c.errors == []


def test_pod_construction() -> None:
    """reference §2.3 "Pod construction": name <job>-<task>-<index>, ownerRef, schedulerName and
    priorityClassName fallback, annotations and labels."""
    c = cluster()
    c.apply({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
             "value": 1000})
    worker = task("worker", 2, topologyPolicy="best-effort")
    # A topologyPolicy needs a Guaranteed pod with whole CPUs (reference §3.1).
    worker["template"]["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "1", "memory": "128Mi"}
    j = job("j", worker, priorityClassName="high")
    j["metadata"]["annotations"] = {"volcano.sh/preemptable": "false", "other": "x"}
    j["metadata"]["labels"] = {"volcano.sh/preemptable": "false", "team": "a"}
    c.apply(j)
    c.run(0)
    uid = c.get("Job", "j")["metadata"]["uid"]
    assert sorted(pods(c)) == ["j-worker-0", "j-worker-1"]
    p = pods(c)["j-worker-1"]
    assert p["metadata"]["ownerReferences"] == [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                                                 "name": "j", "uid": uid, "controller": True,
                                                 "blockOwnerDeletion": True}]
    assert p["spec"]["schedulerName"] == "volcano"
    assert p["spec"]["priorityClassName"] == "high"
    ann = p["metadata"]["annotations"]
    assert {k: ann.get(k) for k in ("volcano.sh/task-spec", "volcano.sh/task-index", "scheduling.k8s.io/group-name",
                                    "volcano.sh/job-name", "volcano.sh/queue-name", "volcano.sh/job-version",
                                    "volcano.sh/template-uid", "volcano.sh/job-retry-count",
                                    "volcano.sh/numa-topology-policy", "volcano.sh/preemptable")} == {
        "volcano.sh/task-spec": "worker", "volcano.sh/task-index": "1", "scheduling.k8s.io/group-name": f"j-{uid}",
        "volcano.sh/job-name": "j", "volcano.sh/queue-name": "default", "volcano.sh/job-version": "0",
        "volcano.sh/template-uid": "j-worker", "volcano.sh/job-retry-count": "0",
        "volcano.sh/numa-topology-policy": "best-effort", "volcano.sh/preemptable": "false"}
    assert "other" not in ann
    labels = p["metadata"]["labels"]
    assert {k: labels.get(k) for k in ("volcano.sh/task-index", "volcano.sh/job-name", "volcano.sh/task-spec",
                                       "volcano.sh/job-namespace", "volcano.sh/queue-name",
                                       "volcano.sh/preemptable")} == {
        "volcano.sh/task-index": "1", "volcano.sh/job-name": "j", "volcano.sh/task-spec": "worker",
        "volcano.sh/job-namespace": NS, "volcano.sh/queue-name": "default", "volcano.sh/preemptable": "false"}
    assert "team" not in labels
    assert c.errors == []


@pytest.mark.parametrize("min_available,low_min,high_min,cpu", [
    # 4 >= sum of task minimums (2): one pod of each task (1 + 2 cpu), topped up highest
    # priority first: the other high pod (2), then one more low pod (1) = 6 cpu.
    (4, 1, 1, "6"),
    # 3 < sum of task minimums (5): the first 3 pods by priority: both high (4) + one low (1).
    (3, 3, 2, "5"),
])
def test_podgroup_construction(min_available: int, low_min: int, high_min: int, cpu: str) -> None:
    """reference §2.3 "PodGroup built by the job controller": name <job>-<uid>, ownerRef,
    annotations and labels copied, minMember, minTaskMember, queue, priorityClassName,
    minResources (calcPGMinResources: tasks by their template's priority, highest first)."""
    c = cluster(node("n1", cpu="16"))
    c.apply([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
              "value": 1000},
             {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q1"},
              "spec": {"weight": 1}}])
    c.run(0)  # the queue controller opens q1; a job is admitted to an Open queue only (§3.1)
    low = task("low", 3, cpu="1", min_available=low_min)
    high = task("high", 2, cpu="2", min_available=high_min)
    high["template"]["spec"]["priorityClassName"] = "high"
    j = job("j", low, high, min_available=min_available, queue="q1", priorityClassName="high")
    j["metadata"]["annotations"] = {"a": "1"}
    j["metadata"]["labels"] = {"l": "2"}
    c.apply(j)
    c.run(0)
    uid = c.get("Job", "j")["metadata"]["uid"]
    pg = c.get("PodGroup", f"j-{uid}")
    assert pg is not None
    assert pg["metadata"]["ownerReferences"][0]["uid"] == uid
    # All of the job's annotations (Cluster.apply may add kubectl's last-applied one).
    assert pg["metadata"]["annotations"] == c.get("Job", "j")["metadata"]["annotations"]
    assert pg["metadata"]["annotations"]["a"] == "1" and pg["metadata"]["labels"] == {"l": "2"}
    spec = pg["spec"]
    assert spec["minMember"] == min_available
    assert spec["minTaskMember"] == {"low": low_min, "high": high_min}
    assert spec["queue"] == "q1"
    assert spec["priorityClassName"] == "high"
    assert spec["minResources"]["cpu"] == cpu
    assert c.errors == []


def test_scale_up_and_down() -> None:
    """reference §2.3 SyncJob step 5: pods <job>-<task>-<i> for i < replicas are created; pods
    with index >= replicas are deleted (scale down); the PodGroup follows minAvailable."""
    c = started(job("j", task("t", 2, min_available=1), min_available=1))
    c.run(2)
    assert sorted(pods(c)) == ["j-t-0", "j-t-1"]
    j = c.get("Job", "j")
    j["spec"]["tasks"][0]["replicas"] = 4
    c.apply(j)
    c.run(2)
    assert pod_phases(c) == {f"j-t-{i}": "Running" for i in range(4)}
    assert status(c)["running"] == 4
    j = c.get("Job", "j")
    j["spec"]["tasks"][0]["replicas"] = 1
    j["spec"]["minAvailable"] = 1
    c.apply(j)
    c.run(1)
    assert pod_phases(c) == {"j-t-0": "Running"}
    assert status(c)["running"] == 1 and phase(c) == "Running"
    j = c.get("Job", "j")
    j["spec"]["tasks"][0]["replicas"] = 3
    j["spec"]["tasks"][0]["minAvailable"] = 3
    j["spec"]["minAvailable"] = 3
    c.apply(j)
    c.run(2)
    assert podgroup(c)["spec"]["minMember"] == 3
    assert podgroup(c)["spec"]["minTaskMember"] == {"t": 3}
    assert len(pods(c)) == 3 and status(c)["minAvailable"] == 3
    assert c.errors == []


def test_depends_on_waits_for_the_dependency() -> None:
    """reference §2.3 SyncJob step 5: a task with dependsOn creates its pods only once the
    dependency has minAvailable Running (containers ready) pods."""
    c = started(job("j", task("master", 1), task("worker", 2, min_available=0, depends_on={"name": ["master"]}),
                    min_available=1),
                nodes=(node("n1", start_delay="5s"),))
    c.run(4)
    assert sorted(pods(c)) == ["j-master-0"]
    assert pod_phases(c) == {"j-master-0": "Pending"}
    assert wait(c, lambda: pod_phases(c).get("j-master-0") == "Running", 5)
    c.run(0)
    assert sorted(pods(c)) == ["j-master-0", "j-worker-0", "j-worker-1"]
    assert c.errors == []


@pytest.mark.parametrize("iteration,created", [("any", True), ("all", False), (None, False)])
def test_depends_on_iteration(iteration: str | None, created: bool) -> None:
    """reference §2.3 SyncJob step 5: iteration=any with several dependencies: one ready
    dependency is enough; otherwise all must be ready."""
    depends = {"name": ["a", "b"]}
    if iteration:
        depends["iteration"] = iteration
    c = started(job("j", task("a", 1, selector={"role": "fast"}), task("b", 1, selector={"role": "slow"}),
                    task("c", 1, min_available=0, depends_on=depends), min_available=1),
                nodes=(node("fast", labels={"role": "fast"}),
                       node("slow", start_delay="1000s", labels={"role": "slow"})))
    c.run(5)
    assert pod_phases(c)["j-a-0"] == "Running" and pod_phases(c)["j-b-0"] == "Pending"
    assert ("j-c-0" in pods(c)) == created
    assert c.errors == []


def test_status_counters_task_status_count_and_conditions() -> None:
    """reference §1.1 JobStatus / §2.3: pending, running, succeeded, failed, terminating,
    taskStatusCount and minAvailable follow the pods; each phase appears once among the
    conditions, the newest last; KillJob sets runningDuration."""
    c = started(job("j", task("a", 2, duration="3s"), task("b", 1, duration="5s", exit_code=1), task("c", 1),
                    min_available=3))
    s = status(c)
    assert s["pending"] == 4 and s["minAvailable"] == 3
    assert s["taskStatusCount"] == {"a": {"phase": {"Pending": 2}}, "b": {"phase": {"Pending": 1}},
                                    "c": {"phase": {"Pending": 1}}}
    c.run(1)
    s = status(c)
    assert s["running"] == 4 and not s.get("pending")
    c.run(5)  # t=6: a done at 4, b failed at 6
    s = status(c)
    assert (s.get("succeeded"), s.get("failed"), s.get("running")) == (2, 1, 1)
    assert s["taskStatusCount"] == {"a": {"phase": {"Succeeded": 2}}, "b": {"phase": {"Failed": 1}},
                                    "c": {"phase": {"Running": 1}}}
    assert [x["status"] for x in s["conditions"]] == ["Pending", "Running"]
    assert s["conditions"][0]["lastTransitionTime"] == "2024-01-01T00:00:00Z"
    assert s["conditions"][1]["lastTransitionTime"] == "2024-01-01T00:00:01Z"
    command(c, "RestartJob")
    c.run(0)
    s = status(c)
    assert not s.get("terminating") and not s.get("running")  # the killed pods are gone at once
    assert s["runningDuration"] == "6s"  # KillJob: last transition (t=6) - creation (t=0)
    assert [x["status"] for x in s["conditions"]] == ["Running", "Restarting", "Pending"]
    assert wait(c, lambda: phase(c) == "Running", 10)
    s = status(c)
    assert [x["status"] for x in s["conditions"]] == ["Restarting", "Pending", "Running"]
    assert c.errors == []


# Failures: refused pods, bad plugins and policies, unknown commands, malformed jobs.
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
        j = _failing_job(timeout)
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
    c = started(_failing_job("20s"))
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


@pytest.mark.parametrize("tasks_field", ["abc", [{"name": "t", "replicas": "2", "template": {"spec": {
    "containers": [{"name": "main", "image": "busybox"}]}}}]])
def test_malformed_job_is_a_warning_not_a_controller_error(tasks_field: Any) -> None:
    """A job the controller cannot read (tasks a string, replicas a string: admission would
    refuse both, here it is empty) is a Warning Event JobSpecError on the job, recorded once,
    and the request is dropped: nothing raises out of run(), nothing is retried forever, and
    no controller error is recorded."""
    c = volcanic.Cluster(admission=AdmissionChain())
    c.apply(node("n1"))
    c.apply({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": NS},
             "spec": {"minAvailable": 1, "queue": "default", "tasks": tasks_field}})
    c.run(600)
    warnings = all_events(c, "JobSpecError")
    assert len(warnings) == 1 and warnings[0]["type"] == "Warning"
    assert warnings[0]["involvedObject"]["name"] == "j"
    assert warnings[0]["message"].startswith("job default/j: action SyncJob failed on the job's spec (")
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


# Property: gangs and jobs across random small workloads.
ACTIONS = ("RestartJob", "AbortJob", "CompleteJob", "TerminateJob")
EVENTS = ("PodFailed", "TaskCompleted")


@st.composite
def workloads(draw: st.DrawFn) -> tuple[list[dict], list[dict]]:
    nodes = [node(f"n{i}", cpu=str(draw(st.integers(2, 6)))) for i in range(draw(st.integers(1, 3)))]
    jobs = []
    for j in range(draw(st.integers(1, 4))):
        tasks = []
        for t in range(draw(st.integers(1, 2))):
            replicas = draw(st.integers(1, 3))
            pol = draw(st.lists(st.tuples(st.sampled_from(ACTIONS), st.sampled_from(EVENTS)), max_size=1))
            tasks.append(task(f"t{t}", replicas, cpu=str(draw(st.integers(1, 2))),
                              duration=f"{draw(st.integers(1, 15))}s", exit_code=draw(st.sampled_from([0, 0, 1, 2])),
                              min_available=draw(st.integers(1, replicas)),
                              policies=[policy(a, e) for a, e in pol]))
        total_min = sum(t["minAvailable"] for t in tasks)
        pol = draw(st.lists(st.tuples(st.sampled_from(ACTIONS), st.sampled_from(EVENTS)), max_size=2,
                            unique_by=lambda p: p[1]))  # an event in one policy only (§3.1)
        jobs.append(job(f"j{j}", *tasks, min_available=draw(st.integers(1, total_min)),
                        max_retry=draw(st.integers(1, 3)), policies=[policy(a, e) for a, e in pol]))
    return nodes, jobs


def _gang_checked_binds(watch: Any, mirror: dict[str, dict], groups: dict[str, dict]) -> list[str]:
    """Replays one step's Pod and PodGroup changes into `mirror` / `groups`; after the batch of
    binds of that step's scheduling cycle (consecutive Pod updates that set spec.nodeName),
    checks every job that got a bind: its pods bound and not Failed (Volcano's ready tasks:
    bound, running or succeeded) are at least the PodGroup's minMember. Returns violations."""
    bad: list[str] = []
    bound: set[str] = set()

    def check() -> None:
        for group in bound:
            pg = groups.get(group)
            if pg is None:
                bad.append(f"pod bound for a missing PodGroup {group}")
                continue
            ready = sum(1 for p in mirror.values()
                        if p["metadata"]["annotations"].get("scheduling.k8s.io/group-name") == group
                        and p["spec"].get("nodeName") and (p.get("status") or {}).get("phase") != "Failed")
            if ready < pg["spec"]["minMember"]:
                bad.append(f"{group}: {ready} ready pods < minMember {pg['spec']['minMember']}")
        bound.clear()

    for ev, obj in watch.drain():
        key = obj["metadata"]["name"]
        if obj["kind"] == "PodGroup":
            if ev == "DELETED":
                groups.pop(key, None)
            else:
                groups[key] = obj
            continue
        if obj["kind"] != "Pod":
            continue
        old = mirror.get(key)
        is_bind = (ev == "MODIFIED" and old is not None and not old["spec"].get("nodeName")
                   and obj["spec"].get("nodeName"))
        if not is_bind and bound:
            check()
        if ev == "DELETED":
            mirror.pop(key, None)
        else:
            mirror[key] = obj
        if is_bind:
            bound.add(obj["metadata"]["annotations"].get("scheduling.k8s.io/group-name", ""))
    if bound:
        check()
    return bad


def _consistent(c: volcanic.Cluster, j: dict) -> list[str]:
    """What a job's phase implies at the end of a run, after everything settled."""
    name = j["metadata"]["name"]
    s = status(c, name)
    ph = phase(c, name)
    alive = [n for n, p in pod_phases(c, name).items() if p in ("Pending", "Running")]
    total = sum(t["replicas"] for t in j["spec"]["tasks"])
    min_available = c.get("Job", name)["spec"]["minAvailable"]
    problems = []
    if ph in FINAL:
        if alive:
            problems.append(f"{name} {ph} with alive pods {alive}")
    elif ph == "Running":
        if s.get("succeeded", 0) + s.get("failed", 0) == total:
            problems.append(f"{name} Running with every pod finished")
        if s.get("pending", 0) > total - min_available:
            problems.append(f"{name} Running with {s.get('pending')} pending pods")
    elif ph == "Pending":
        if min_available <= s.get("running", 0) + s.get("succeeded", 0) + s.get("failed", 0):
            problems.append(f"{name} Pending with minAvailable met")
    elif ph == "Restarting":
        pg = podgroup(c, name)
        if pg is not None and (pg.get("status") or {}).get("phase") not in ("", "Pending", None):
            problems.append(f"{name} Restarting with an admitted PodGroup")
    else:
        problems.append(f"{name} stuck in {ph}")
    return problems


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_property_gangs_bind_whole_and_no_job_is_lost(workload: tuple[list[dict], list[dict]]) -> None:
    """reference §2.3 / §4.6 gang, property: on random small clusters and jobs with random
    policies, (a) right after each scheduling cycle's binds, every job that got a pod bound
    has at least minMember ready (bound, not Failed) pods: a gang is bound all or nothing;
    (b) when the time runs out every job is in a final phase with no pod alive, or Running /
    Pending / Restarting consistently with its counters and PodGroup; (c) no controller error."""
    nodes, jobs = workload
    c = cluster(*nodes)
    watch = c.api.watch(("Pod", "PodGroup"))
    c.apply(jobs)
    c.run(0)
    mirror: dict[str, dict] = {}
    groups: dict[str, dict] = {}
    violations = _gang_checked_binds(watch, mirror, groups)
    for _ in range(90):
        c.run(1)  # exactly one scheduling cycle per step
        violations += _gang_checked_binds(watch, mirror, groups)
    assert violations == []
    problems = [p for j in jobs for p in _consistent(c, j)]
    assert problems == []
    assert all(c.get("Job", j["metadata"]["name"]) is not None for j in jobs)
    assert c.errors == []


def test_restarting_job_whose_queue_no_longer_admits_it_goes_pending_once_its_pods_are_gone() -> None:
    """Issue "Hardening", defect 5: RestartJob, then the queue's capability lowered below the
    job's minResources. Its pods are deleted, but its PodGroup stays Pending, so SyncJob does
    not create pods; Volcano's syncJob then writes the old counters back (terminating 3 with
    no pods) and the job stays Restarting until something else changes. volcanic counts the
    pods that are there, so the Restarting update (reference §2.3) sees them gone: Pending."""
    c = volcanic.Cluster()
    c.apply(node("n1", cpu="8"))
    c.apply({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"},
             "spec": {"weight": 1, "capability": {"cpu": "8"}}})
    c.run(0)
    c.apply(job("j", task("t", 3), min_available=3, queue="q"))
    assert wait(c, lambda: phase(c) == "Running", 10)
    q = c.get("Queue", "q")
    q["spec"]["capability"] = {"cpu": "1"}
    c.apply(q)
    command(c, "RestartJob")
    assert wait(c, lambda: phase(c) == "Pending", 10)
    s = status(c)
    assert pods(c) == {} and not s.get("terminating") and s["retryCount"] == 1
    assert (podgroup(c).get("status") or {}).get("phase") != "Inqueue"  # not admitted
