"""Scenario tests of the job controller through volcanic.Cluster: SyncJob's details (pods,
PodGroup, status counters, plugins, dependsOn, scaling) and a property over random workloads
(failures: test_job_sync_failures.py). How the tests drive and observe the cluster, and its
timing: job_helpers.py."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
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


def test_a_podgroup_named_after_its_job_without_an_owner_still_syncs_it() -> None:
    """Volcano's updatePodGroup (pkg/controllers/job/job_controller_handler.go) queues the job
    of the PodGroup's name when no Job owns it: a PodGroup made before its job (as older
    controllers named them) going Inqueue gets the job's pods created."""
    c = cluster(node("n1"))
    c.apply({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "j", "namespace": NS}, "spec": {"minMember": 1, "queue": "default"}})
    c.apply(job("j", task("t", 2)))
    assert pods(c) == {}  # the job's first sync found its PodGroup Pending
    assert wait(c, lambda: len(pods(c)) == 2, 5)
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


def test_a_burst_of_pod_events_is_one_sync_and_later_events_still_count(monkeypatch) -> None:
    """Volcano runs a full SyncJob (a pass over all the job's pods) per pod event; volcanic
    skips a SyncJob request whose event a later SyncJob of the same job has seen (the
    controller's _already_synced), so the 40 binds of one session cost one sync, not 40.
    Events after that sync (each pod starting on its own) still get theirs."""
    from volcanic.controllers.job.sync import JobActions
    syncs: list[str] = []
    real_sync = JobActions.sync_job
    monkeypatch.setattr(JobActions, "sync_job",
                        lambda self, job, update=None: (syncs.append(job["metadata"]["name"]),
                                                        real_sync(self, job, update))[1])
    c = started(job("j", task("t", 40, duration="5s")), nodes=(node("n1", cpu="64", start_delay="2s"),))
    assert len(pods(c)) == 40
    created = len(syncs)
    c.run(1)  # the session binds the 40 pods
    assert all(p["spec"].get("nodeName") == "n1" for p in pods(c).values())
    assert len(syncs) - created == 1
    c.run(2)  # each pod starts on its own
    assert status(c).get("running") == 40
    assert len(syncs) - created > 40
    c.run(5)
    assert status(c).get("succeeded") == 40 and phase(c) == "Completed"
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
