"""volcanic's own trace format: jobs, in CSV or JSON Lines (docs/simulation.md, "Bring your
own trace"). Each job becomes a Volcano Job arriving at `arrival` (seconds from the trace's
start) whose pods run `duration` seconds once started; the Job is deleted once finished
(ttlSecondsAfterFinished: 0). Nodes come from a CSV (`name,cpu,memory[,gpu][,labels]`) or
from YAML objects (Nodes, and the Queues and PriorityClasses the jobs name)."""

from __future__ import annotations

import csv
import json
import os
from typing import Any

from volcanic.cluster.cluster import documents
from volcanic.errors import InvalidObject
from volcanic.kube.keys import JOB_API_VERSION
from volcanic.kube.quantity import parse_quantity
from volcanic.sim.trace import Arrival, Obj, Trace, line_of

GPU = "nvidia.com/gpu"
JOB_FIELDS = ("name", "arrival", "duration", "tasks", "queue", "priority", "minAvailable", "namespace")
TASK_FIELDS = ("name", "replicas", "requests")
CSV_REQUESTS = {"cpu": "cpu", "memory": "memory", "gpu": GPU}  # CSV column -> resource


def read_jobs(nodes_path: str, jobs_path: str) -> Trace:
    nodes, setup = _setup(nodes_path)
    jobs = _csv_jobs(jobs_path) if jobs_path.endswith(".csv") else _jsonl_jobs(jobs_path)
    arrivals = sorted((_arrival(job, where) for where, job in jobs), key=lambda a: a.time)
    return Trace(os.path.basename(jobs_path), nodes, arrivals, setup)


# Jobs.
def _jsonl_jobs(path: str):
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, start=1):
            if not line.strip():
                continue
            where = line_of(path, i)
            try:
                job = json.loads(line)
            except json.JSONDecodeError as e:
                raise InvalidObject(f"{where}: not JSON: {e}") from None
            if not isinstance(job, dict):
                raise InvalidObject(f"{where}: must be a JSON object, got {type(job).__name__}")
            yield where, job


def _csv_jobs(path: str):
    """One single-task job per row: name, arrival, duration, replicas, cpu, memory, gpu,
    queue, priority, min_available (the last five may be empty or absent)."""
    with open(path, newline="", encoding="utf-8") as f:
        for i, row in enumerate(csv.DictReader(f), start=2):
            where = line_of(path, i)
            requests = {res: row[col] for col, res in CSV_REQUESTS.items() if (row.get(col) or "").strip()}
            job: dict[str, Any] = {"name": row.get("name"), "arrival": row.get("arrival"),
                                   "duration": row.get("duration"),
                                   "tasks": [{"replicas": row.get("replicas") or "1", "requests": requests}]}
            for col, field in (("queue", "queue"), ("priority", "priority"), ("min_available", "minAvailable")):
                if (row.get(col) or "").strip():
                    job[field] = row[col].strip()
            yield where, job


def _arrival(job: dict, where: str) -> Arrival:
    unknown = sorted(set(job) - set(JOB_FIELDS))
    if unknown:
        raise InvalidObject(f"{where}: unknown field {unknown[0]!r} (known: {', '.join(JOB_FIELDS)})")
    name = job.get("name")
    if not isinstance(name, str) or not name:
        raise InvalidObject(f"{where}: name: is required")
    where = f"{where} (job {name})"
    arrival, duration = _seconds(job, "arrival", where), _seconds(job, "duration", where)
    tasks = job.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise InvalidObject(f"{where}: tasks: must be a non-empty list")
    specs = [_task(t, f"{where}: tasks[{i}]", duration) for i, t in enumerate(tasks)]
    pods = sum(s["replicas"] for s in specs)
    spec: Obj = {"schedulerName": "volcano", "tasks": specs, "ttlSecondsAfterFinished": 0,
                 "minAvailable": _count(job.get("minAvailable", pods), f"{where}: minAvailable")}
    if job.get("queue"):
        spec["queue"] = str(job["queue"])
    if job.get("priority"):
        spec["priorityClassName"] = str(job["priority"])
    gpus = sum(s["replicas"] * float(parse_quantity(
        s["template"]["spec"]["containers"][0]["resources"]["requests"].get(GPU, 0))[0]) for s in specs)
    obj = {"apiVersion": JOB_API_VERSION, "kind": "Job",
           "metadata": {"name": name, "namespace": str(job.get("namespace") or "default")}, "spec": spec}
    return Arrival(arrival, (obj,), pods, gpus)


def _task(task: Any, where: str, duration: float) -> Obj:
    if not isinstance(task, dict):
        raise InvalidObject(f"{where}: must be a map")
    unknown = sorted(set(task) - set(TASK_FIELDS))
    if unknown:
        raise InvalidObject(f"{where}: unknown field {unknown[0]!r} (known: {', '.join(TASK_FIELDS)})")
    requests = task.get("requests") or {}
    if not isinstance(requests, dict):
        raise InvalidObject(f"{where}: requests: must be a map of resource to quantity")
    for resource, q in requests.items():
        try:
            parse_quantity(q, f"{where}: requests.{resource}")
        except ValueError as e:
            raise InvalidObject(str(e)) from None
    requests = {k: str(v) for k, v in requests.items()}
    return {"name": str(task.get("name") or "task"), "replicas": _count(task.get("replicas", 1), f"{where}: replicas"),
            "template": {"metadata": {"annotations": {"volcanic/sim-duration": f"{duration:g}"}},
                         "spec": {"restartPolicy": "Never", "containers": [
                             {"name": "main", "image": "trace",
                              "resources": {"requests": requests, "limits": dict(requests)}}]}}}


def _seconds(job: dict, field: str, where: str) -> float:
    try:
        value = float(job.get(field))
    except (TypeError, ValueError):
        raise InvalidObject(f"{where}: {field}: must be a number of seconds, got {job.get(field)!r}") from None
    if not 0 <= value < float("inf"):
        raise InvalidObject(f"{where}: {field}: must be >= 0 and finite, got {value!r}")
    return value


def _count(value: Any, where: str) -> int:
    try:
        n = int(str(value))
    except ValueError:
        raise InvalidObject(f"{where}: must be a whole number, got {value!r}") from None
    if n < 0:
        raise InvalidObject(f"{where}: must be >= 0, got {n}")
    return n


# Nodes and setup objects.
def _setup(path: str) -> tuple[list[Obj], list[Obj]]:
    if path.endswith((".yaml", ".yml")):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            objs = documents(text)
        except InvalidObject as e:
            raise InvalidObject(f"{os.path.basename(path)}: {e}") from None
        bad = next((o for o in objs if not isinstance(o.get("kind"), str)), None)
        if bad is not None:
            raise InvalidObject(f"{os.path.basename(path)}: every document must be an object with a kind")
        return [o for o in objs if o["kind"] == "Node"], [o for o in objs if o["kind"] != "Node"]
    with open(path, newline="", encoding="utf-8") as f:
        return [_csv_node(row, line_of(path, i))
                for i, row in enumerate(csv.DictReader(f), start=2)], []


def _csv_node(row: dict, where: str) -> Obj:
    name = (row.get("name") or "").strip()
    if not name:
        raise InvalidObject(f"{where}: name: is required")
    allocatable = {"pods": (row.get("pods") or "110").strip()}
    for col, res in CSV_REQUESTS.items():
        if (row.get(col) or "").strip():
            allocatable[res] = row[col].strip()
    for res, q in allocatable.items():
        try:
            parse_quantity(q, f"{where}: {res}")
        except ValueError as e:
            raise InvalidObject(str(e)) from None
    labels = dict(pair.split("=", 1) for pair in (row.get("labels") or "").split(";") if "=" in pair)
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": allocatable, "capacity": dict(allocatable)}}
