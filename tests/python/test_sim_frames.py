"""A replay's jobs and allocation timeline as rows and DataFrames (volcanic/sim/frames.py):
exact values on hand-made records, then the records a real replay fills in (each pod's job
and queue, and the runs a reclaim cut short)."""

from __future__ import annotations

import pytest

from builders import node
import volcanic
from volcanic.sim.frames import job_rows, jobs_frame, pod_runs, timeline_frame, timeline_rows
from volcanic.sim.records import PodRecord, Replay
from volcanic.sim.replay import replay, snapshot
from volcanic.sim.trace import Arrival, Trace

GPU = "nvidia.com/gpu"
GI = 1024.0 ** 3


def hand_made_run() -> Replay:
    """Two nodes (8 cpu, 16Gi, 2 GPUs in all) and, on a clock at 200 s:
    - Job ns/train in research: w0 ran 10-110; w1 ran 4-9, was evicted, and ran again 30-60;
    - bare pod ns/gone in research: ran 2-9, evicted, never replaced;
    - bare pod ns/solo in prod: running since 9, asking for a resource no node has;
    - Job ns/late in prod: l0 never ran; l1 ran 60-70."""
    cluster = volcanic.Cluster()
    cluster.apply([node("n1", cpu="4", memory="8Gi"), node("n2", cpu="4", memory="8Gi", **{GPU: "2"})])
    cluster.run(200)
    train = {"cpu": 2.0, GPU: 1.0}
    records = [
        PodRecord("ns/train-w0", 0, 10, 110, "n2", "Succeeded", dict(train), job="ns/train", queue="research"),
        PodRecord("ns/train-w1", 0, 30, 60, "n2", "Succeeded", dict(train), job="ns/train", queue="research",
                  interrupted=[(4, 9, "n2")]),
        PodRecord("ns/gone", 0, 2, None, "n1", "Running", {"cpu": 1.0}, job="ns/gone", queue="research",
                  interrupted=[(2, 9, "n1")]),
        PodRecord("ns/solo", 5, 9, None, "n1", "Running", {"cpu": 1.0, "memory": GI, "example.com/foo": 1.0},
                  job="ns/solo", queue="prod"),
        PodRecord("ns/late-l0", 50, requests={"cpu": 1.0}, job="ns/late", queue="prod"),
        PodRecord("ns/late-l1", 50, 60, 70, "n1", "Succeeded", {"cpu": 1.0}, job="ns/late", queue="prod"),
    ]
    return Replay("hand-made", snapshot(cluster), pods={r.name: r for r in records})


def test_pod_runs_count_an_interrupted_run_once_and_the_replacement_after_it():
    pods = hand_made_run().pods
    assert pod_runs(pods["ns/train-w1"]) == [(4, 9), (30, 60)]
    assert pod_runs(pods["ns/gone"]) == [(2, 9)]  # its record still holds the evicted run's start
    assert pod_runs(pods["ns/solo"]) == [(9, None)]
    assert pod_runs(pods["ns/late-l0"]) == []


def test_job_rows_start_at_the_first_run_and_end_with_the_last_pod():
    rows = {r["job"]: r for r in job_rows(hand_made_run())}
    assert [r["job"] for r in job_rows(hand_made_run())] == ["ns/gone", "ns/train", "ns/solo", "ns/late"]
    # train's first run is w1's evicted one at 4, before w0's start at 10; it ends with w0.
    assert rows["ns/train"] == {"job": "ns/train", "queue": "research", "arrival": 0, "start": 4, "end": 110,
                                "pods": 2, "wait": 4, "evicted": 1}
    assert rows["ns/gone"] == {"job": "ns/gone", "queue": "research", "arrival": 0, "start": 2, "end": None,
                               "pods": 1, "wait": 2, "evicted": 1}
    assert (rows["ns/solo"]["start"], rows["ns/solo"]["end"], rows["ns/solo"]["wait"]) == (9, None, 4)
    # late has not ended while one of its pods has not: l1's end is not the job's.
    assert rows["ns/late"] == {"job": "ns/late", "queue": "prod", "arrival": 50, "start": 60, "end": None,
                               "pods": 2, "wait": 10, "evicted": 0}


def test_timeline_steps_per_queue_and_resource_with_shares_of_the_nodes():
    rows = timeline_rows(hand_made_run())
    times = sorted({r["time"] for r in rows})
    assert times == [2, 4, 9, 10, 30, 60, 70, 110, 200]  # every start and end, then the clock's 200
    resources = ["cpu", "example.com/foo", GPU, "memory"]
    assert len(rows) == len(times) * 2 * len(resources)  # every queue x resource at every time
    at = {(r["time"], r["queue"], r["resource"]): r for r in rows}

    def allocated(queue, resource):
        return [at[t, queue, resource]["allocated"] for t in times]
    # research: gone (1 cpu) 2-9; w1 (2) 4-9 and 30-60; w0 (2) 10-110. Ends and starts at 9 net.
    assert allocated("research", "cpu") == [1, 3, 0, 2, 4, 2, 2, 0, 0]
    assert allocated("research", GPU) == [0, 1, 0, 1, 2, 1, 1, 0, 0]
    assert allocated("prod", "cpu") == [0, 0, 1, 1, 1, 2, 1, 1, 1]  # solo from 9 to the end, l1 60-70
    assert allocated("prod", "memory") == [0, 0, GI, GI, GI, GI, GI, GI, GI]
    assert at[30, "research", "cpu"]["share"] == 4 / 8 and at[30, "research", GPU]["share"] == 2 / 2
    assert at[9, "prod", "memory"]["share"] == GI / (16 * GI)
    assert at[9, "prod", "example.com/foo"] == {"time": 9, "queue": "prod", "resource": "example.com/foo",
                                                "allocated": 1, "share": None}  # no node has it


def test_timeline_sums_fractions_without_dust():
    """0.1 + 0.2 - 0.1 - 0.2 is 5.6e-17 in floats: an empty queue must read 0, not a crumb."""
    run = Replay("fractions", snapshot(volcanic.Cluster()))
    run.pods = {r.name: r for r in (PodRecord("ns/a", 0, 0, 10, requests={"cpu": 0.1}, job="ns/a"),
                                     PodRecord("ns/b", 0, 1, 20, requests={"cpu": 0.2}, job="ns/b"))}
    assert [r["allocated"] for r in timeline_rows(run)] == [0.1, 0.3, 0.2, 0]


def test_frames_index_jobs_and_pivot_the_timeline():
    run = hand_made_run()
    jobs = jobs_frame(run)
    assert list(jobs.columns) == ["queue", "arrival", "start", "end", "pods", "wait", "evicted"]
    assert jobs.loc["ns/train", "evicted"] == 1 and jobs.loc["ns/train", "end"] == 110
    timeline = timeline_frame(run)
    cpu = timeline[timeline.resource == "cpu"].pivot(index="time", columns="queue", values="share")
    assert list(cpu.columns) == ["prod", "research"]
    assert cpu.loc[30].tolist() == [1 / 8, 4 / 8]


def test_an_empty_run_has_no_rows_but_its_frames_have_the_columns():
    empty = Replay("empty", snapshot(volcanic.Cluster()))
    assert job_rows(empty) == [] and timeline_rows(empty) == []
    assert list(timeline_frame(empty).columns) == ["time", "queue", "resource", "allocated", "share"]
    assert jobs_frame(empty).empty


# A real replay: what the records get from the cluster.
RECLAIM_CONF = """
actions: "enqueue, allocate, backfill, reclaim"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: overcommit}, {name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""


def vc_job(name: str, replicas: int, queue: str, duration: float) -> dict:
    """A Volcano Job of single-CPU pods; minAvailable 1, so reclaim may take all but one."""
    template = {"metadata": {"annotations": {"volcanic/sim-duration": str(duration)}},
                "spec": {"restartPolicy": "Never", "containers": [
                    {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]}}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulerName": "volcano", "minAvailable": 1, "queue": queue, "ttlSecondsAfterFinished": 0,
                     "tasks": [{"name": "worker", "replicas": replicas, "template": template}]}}


def bare_pod(name: str, queue: str | None, duration: float) -> dict:
    annotations = {"volcanic/sim-duration": str(duration)}
    if queue:
        annotations["scheduling.volcano.sh/queue-name"] = queue
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                            "annotations": annotations},
            "spec": {"schedulerName": "volcano", "restartPolicy": "Never",
                     "containers": [{"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1"}}}]}}


def weighted_queue(name: str, weight: int) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"weight": weight, "reclaimable": True}}


def reclaim_trace() -> Trace:
    """8 CPUs; light (weight 1) fills them with one Job of 8 pods at 0; at 10, six one-pod Jobs
    of heavy (weight 3) come, deserving 6 of the 8: reclaim evicts six of light's pods."""
    arrivals = [Arrival(0, (vc_job("a", 8, "light", 100),), 8)]
    arrivals += [Arrival(10, (vc_job(f"b{i}", 1, "heavy", 50),), 1) for i in range(6)]
    return Trace("reclaim", [node("n1", cpu="4"), node("n2", cpu="4")], arrivals,
                 [weighted_queue("light", 1), weighted_queue("heavy", 3)])


def test_replay_records_each_pods_job_and_queue():
    trace = Trace("bare", [node("n1", cpu="4")], [Arrival(0, (bare_pod("p", "team", 10),), 1),
                                                  Arrival(0, (bare_pod("q", None, 10),), 1),
                                                  Arrival(0, (vc_job("j", 1, "team", 10),), 1)],
                  [weighted_queue("team", 1)])
    run = replay(trace)
    assert {k: (r.job, r.queue) for k, r in run.pods.items()} == {
        "default/p": ("default/p", "team"), "default/q": ("default/q", "default"),
        "default/j-worker-0": ("default/j", "team")}
    assert not run.cluster.errors


def test_a_reclaim_is_in_the_records_jobs_and_timeline():
    run = replay(reclaim_trace(), conf=RECLAIM_CONF)
    assert not run.cluster.errors and all(r.phase == "Succeeded" for r in run.pods.values())
    evicted = [r for r in run.pods.values() if r.interrupted]
    assert len(evicted) == 6 and all(r.queue == "light" and r.start >= r.interrupted[0][1] for r in evicted)
    jobs = {r["job"]: r for r in job_rows(run)}
    assert jobs["default/a"]["evicted"] == 6 and jobs["default/a"]["pods"] == 8
    assert jobs["default/a"]["start"] < 10 < jobs["default/b0"]["start"]
    cpu = timeline_frame(run).query("resource == 'cpu'").pivot(index="time", columns="queue", values="allocated")
    assert cpu.sum(axis=1).max() == 8  # never more than the nodes hold, evicted runs counted
    assert cpu.loc[cpu["light"] == 8].index.min() < 10  # light had the cluster to itself
    # Once heavy's six run, the split is 1:3 of 8 CPUs: what proportion says each deserves.
    assert cpu.loc[cpu["heavy"] == 6, "light"].tolist()[0] == 2
    assert cpu.iloc[-1].tolist() == [0, 0]
