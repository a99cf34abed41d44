"""A run's records as rows, and as pandas DataFrames for notebooks (`pip install
volcanic[notebook]`; the core needs no pandas): pods (pod_rows, with the records), jobs, and
the allocation timeline."""

from __future__ import annotations

import csv
import json
import os
from typing import Any

from volcanic.cluster.report import require_pandas
from volcanic.sim.metrics import GPU_COLUMNS, capacity, gpu_timeline
from volcanic.sim.records import POD_COLUMNS, PodRecord, Replay, pod_rows

JOB_COLUMNS = ("job", "queue", "arrival", "start", "end", "pods", "wait", "evicted")
TIMELINE_COLUMNS = ("time", "queue", "resource", "allocated", "share")


def pods_frame(run: Replay) -> Any:
    """pod_rows as a pandas DataFrame indexed by pod (= run.frame())."""
    return run.frame()


def job_rows(run: Replay) -> list[dict[str, Any]]:
    """One row per job (a pod's owner Job, or a bare pod alone), by arrival: its queue, its
    arrival, start (its first pod's first start, evicted runs included), end (its last pod's
    end; None until every pod has ended), pods, wait = start - arrival, and evicted (runs cut
    short by eviction). A Job that never made a pod has no row."""
    jobs: dict[str, list[PodRecord]] = {}
    for record in run.pods.values():
        jobs.setdefault(record.job or record.name, []).append(record)
    rows = [_job_row(job, pods) for job, pods in jobs.items()]
    return sorted(rows, key=lambda row: (row["arrival"], row["job"]))


def _job_row(job: str, pods: list[PodRecord]) -> dict[str, Any]:
    arrival = min(p.arrival for p in pods)
    start = min((begin for p in pods for begin, _ in pod_runs(p)), default=None)
    ends = [p.end for p in pods]
    return {"job": job, "queue": pods[0].queue, "arrival": arrival, "start": start,
            "end": None if None in ends else max(ends), "pods": len(pods),
            "wait": None if start is None else start - arrival,
            "evicted": sum(len(p.interrupted) for p in pods)}


def pod_runs(record: PodRecord) -> list[tuple[float, float | None]]:
    """Every (start, end) the pod ran: its interrupted runs, then its latest (end None while
    Running). Until a replacement runs, the record's start is still the last interrupted
    run's, which is not counted twice."""
    runs: list[tuple[float, float | None]] = [(begin, end) for begin, end, _ in record.interrupted]
    if record.start is not None and not (record.interrupted and record.start == record.interrupted[-1][0]):
        runs.append((record.start, record.end))
    return runs


def timeline_rows(run: Replay) -> list[dict[str, Any]]:
    """The allocation timeline, long ("tidy") for plotting: at every time a pod starts or
    ends (and at the run's end), one row per queue and requested resource: `allocated`, the
    requests of its Running pods from then until the next time, and `share`, that over the
    nodes' allocatable sum (None for a resource no node has). Every queue and resource has
    a row at every time, so a pivot on (time, queue) has no holes; plot it as steps ("post").
    """
    queues = sorted({r.queue for r in run.pods.values()})
    resources = sorted({name for r in run.pods.values() for name in r.requests})
    total = capacity(run)
    held = {(q, res): 0.0 for q in queues for res in resources}
    rows: list[dict[str, Any]] = []
    for time, changes in _allocation_changes(run):
        for key, amount in changes:
            held[key] += amount
        rows += [_timeline_row(time, q, res, held[q, res], total.get(res)) for q, res in held]
    return rows


def _timeline_row(time: float, queue: str, resource: str, allocated: float, total: float | None) -> dict[str, Any]:
    allocated = round(allocated, 9)  # sums of floats that came and went leave dust, not a pod
    return {"time": time, "queue": queue, "resource": resource, "allocated": allocated,
            "share": allocated / total if total else None}


def _allocation_changes(run: Replay) -> list[tuple[float, list[tuple[tuple[str, str], float]]]]:
    """(time, [((queue, resource), +/- amount), ...]) in time order: what each time's starts
    and ends change, ends and starts at one instant together (docs/cluster.md, Time); the
    run's end closes the last step when it comes after the last change."""
    by_time: dict[float, list[tuple[tuple[str, str], float]]] = {}
    for record in run.pods.values():
        for begin, end in pod_runs(record):
            for name, amount in record.requests.items():
                by_time.setdefault(begin, []).append(((record.queue, name), amount))
                if end is not None:
                    by_time.setdefault(end, []).append(((record.queue, name), -amount))
    if by_time and run.cluster.now > max(by_time):
        by_time[run.cluster.now] = []
    return sorted(by_time.items())


def jobs_frame(run: Replay) -> Any:
    """job_rows as a pandas DataFrame indexed by job."""
    return require_pandas().DataFrame(job_rows(run), columns=list(JOB_COLUMNS)).set_index("job")


def timeline_frame(run: Replay) -> Any:
    """timeline_rows as a pandas DataFrame (columns time, queue, resource, allocated, share).
    One resource's shares per queue over time:
    `frame[frame.resource == "cpu"].pivot(index="time", columns="queue", values="share")`."""
    return require_pandas().DataFrame(timeline_rows(run), columns=list(TIMELINE_COLUMNS))


def write_run(run: Replay, summary: dict[str, Any], directory: str) -> None:
    """DIR/pods.csv (pod_rows), DIR/summary.json and, on a cluster with vGPU cards,
    DIR/gpu.csv (metrics.gpu_timeline)."""
    rows = pod_rows(run)
    write_table(directory, "pods.csv", rows, list(rows[0]) if rows else list(POD_COLUMNS), summary)
    gpu = gpu_timeline(run)
    if gpu:
        write_table(directory, "gpu.csv", gpu, list(GPU_COLUMNS), summary)


def write_table(directory: str, name: str, rows: list[dict[str, Any]], columns: list[str],
                summary: dict[str, Any]) -> None:
    """DIR/NAME, the rows as CSV, and DIR/summary.json; DIR is made if missing."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    with open(os.path.join(directory, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
