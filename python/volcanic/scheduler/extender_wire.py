"""The extender's wire format (docs/extender.md, "Payloads"): the requests, Volcano's Go structs
under their Go field names as far as volcanic's views go, and the answers, decoded as Go's
encoding/json decodes them into extender.go's response structs."""

from __future__ import annotations

import json
from typing import Any, Mapping

from volcanic.scheduler.plugins import JobView, NodeView, QueueView, ResourceView, SessionView, TaskView

# Volcano's TaskStatus values (pkg/scheduler/api/types.go: 1 << iota from Pending).
TASK_STATUS = {name: 1 << i for i, name in enumerate(
    ("Pending", "Allocated", "Pipelined", "Binding", "Bound", "Running", "Releasing", "Succeeded", "Failed",
     "Unknown"))}
REVOCABLE_ZONE = "volcano.sh/revocable-zone"


# Answers, decoded as Go's encoding/json decodes into extender.go's response structs: the
# first JSON value of the body (what follows it is not read); `null` leaves every field at its
# zero value; keys match fields exactly, else ignoring case; a value of the wrong type is an
# error; unknown keys are ignored.

class _GoFloat(float):
    """A JSON number with a fraction or an exponent: never a Go int."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"invalid character in JSON: {name}")


_DECODER = json.JSONDecoder(parse_float=_GoFloat, parse_constant=_no_constant)
INT64 = 1 << 63


def decode(body: bytes, fields: Mapping[str, str]) -> tuple[dict[str, Any], str | None]:
    """The fields decoded (field -> value, for those present), and the first error or None.
    `fields`: JSON name -> "string", "int", "bool", "scores" (name -> number) or "victims"."""
    text = body.decode("utf-8", errors="replace").lstrip(" \t\r\n")
    try:
        value, _ = _DECODER.raw_decode(text)
    except (ValueError, RecursionError) as e:
        return {}, f"decoding the answer: {e}" if text else "decoding the answer: EOF"
    if value is None:
        return {}, None
    if not isinstance(value, dict):
        return {}, f"decoding the answer: a JSON {_json_type(value)} is not an object"
    out: dict[str, Any] = {}
    error = None
    for key, v in value.items():
        field = key if key in fields else next((f for f in fields if f.lower() == key.lower()), None)
        if field is None or v is None:
            continue
        decoded = _field(fields[field], v)
        if decoded is _WRONG:
            error = error or f"decoding the answer: cannot read JSON {_json_type(v)} as field {field}"
        elif isinstance(out.get(field), dict):
            out[field].update(decoded)  # Go decodes a map again into the one it has
        else:
            out[field] = decoded
    return out, error


_WRONG = object()


def _field(kind: str, v: Any) -> Any:
    if kind == "string":
        return v if isinstance(v, str) else _WRONG
    if kind == "bool":
        return v if isinstance(v, bool) else _WRONG
    if kind == "int":
        ok = isinstance(v, int) and not isinstance(v, bool) and -INT64 <= v < INT64
        return v if ok else _WRONG
    if kind == "scores":
        if not isinstance(v, dict):
            return _WRONG
        scores = {}
        for name, s in v.items():
            if s is None:
                s = 0.0
            if isinstance(s, bool) or not isinstance(s, (int, float)):
                return _WRONG
            try:
                scores[name] = float(s)
            except OverflowError:  # an integer too large for Go's float64
                return _WRONG
            if abs(scores[name]) == float("inf"):
                return _WRONG
        return scores
    # victims: a list of TaskInfo objects, of which the UID is read
    if not isinstance(v, list):
        return _WRONG
    uids = []
    for t in v:
        if t is None:
            continue
        if not isinstance(t, dict):
            return _WRONG
        uid = ""
        for k, u in t.items():  # in order: the last key matching UID, in any case, wins
            if k.lower() != "uid" or u is None:
                continue
            if not isinstance(u, str):
                return _WRONG
            uid = u
        uids.append(uid)
    return uids


def _json_type(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


# Payloads: Volcano's structs under their Go field names, as far as the views go.

def payload_resource(r: ResourceView, max_tasks: int = 0) -> dict[str, Any]:
    """api.Resource: MilliCPU (millicores), Memory (bytes), ScalarResources (pods a count,
    ephemeral-storage and hugepages-* milli-bytes, others milli-units), MaxTaskNum."""
    scalars: dict[str, int | float] = {}
    for name, amount in sorted(r.items()):
        if name in ("cpu", "memory"):
            continue
        if name == "pods":
            amount = amount / 1000
        elif name == "ephemeral-storage" or name.startswith("hugepages-"):
            amount = amount * 1000
        scalars[name] = _number(amount)
    return {"MilliCPU": _number(r.cpu), "Memory": _number(r.memory), "ScalarResources": scalars,
            "MaxTaskNum": max_tasks}


def _number(x: int | float) -> int | float:
    return int(x) if float(x).is_integer() else x


def payload_task(t: TaskView) -> dict[str, Any]:
    """api.TaskInfo, and its Pod's metadata."""
    job = t.job
    resreq = t.resreq
    metadata: dict[str, Any] = {"name": t.name, "namespace": t.namespace, "uid": t.uid}
    if t.labels:
        metadata["labels"] = dict(t.labels)
    if t.annotations:
        metadata["annotations"] = dict(t.annotations)
    return {"UID": t.uid, "Job": job.key if job is not None else "", "Name": t.name, "Namespace": t.namespace,
            "TaskRole": t.role, "Resreq": payload_resource(resreq), "NodeName": t.node_name or "",
            "Status": TASK_STATUS.get(t.status, TASK_STATUS["Unknown"]), "Priority": t.priority,
            "Preemptable": t.preemptable, "BestEffort": _best_effort(resreq), "Pod": {"metadata": metadata}}


def _best_effort(resreq: ResourceView) -> bool:
    """Volcano's Resource.IsEmpty on the request, its pod slot left out."""
    return all(amount <= 0 for name, amount in resreq.items() if name != "pods")


def payload_node(n: NodeView) -> dict[str, Any]:
    """api.NodeInfo, and its Node's metadata and taints."""
    metadata: dict[str, Any] = {"name": n.name}
    if n.labels:
        metadata["labels"] = dict(n.labels)
    if n.annotations:
        metadata["annotations"] = dict(n.annotations)
    node: dict[str, Any] = {"metadata": metadata, "spec": {}}
    taints = n.taints
    if taints:
        node["spec"]["taints"] = [{k: v for k, v in taint.items() if v} for taint in taints]
    allocatable = n.allocatable
    pods = int(allocatable["pods"] // 1000)
    return {"Name": n.name, "Node": node, "Releasing": payload_resource(n.releasing),
            "Pipelined": payload_resource(n.pipelined), "Idle": payload_resource(n.idle, pods),
            "Used": payload_resource(n.used), "Allocatable": payload_resource(allocatable, pods)}


def payload_job(j: JobView) -> dict[str, Any]:
    """api.JobInfo: UID is Volcano's JobID, "namespace/podgroup"; PgUID the PodGroup's UID."""
    return {"UID": j.key, "PgUID": j.uid, "Name": j.name, "Namespace": j.namespace, "Queue": j.queue,
            "Priority": j.priority, "MinAvailable": j.min_available}


def payload_queue(q: QueueView) -> dict[str, Any]:
    """api.QueueInfo: UID is Volcano's QueueID, the queue's name."""
    return {"UID": q.name, "Name": q.name, "Weight": q.weight}


def payload_session(s: SessionView) -> dict[str, Any]:
    """OnSessionOpenRequest (Go maps are written with their keys sorted)."""
    nodes = {n.name: payload_node(n) for n in sorted(s.nodes, key=lambda n: n.name)}
    revocable = {name: p for name, p in nodes.items()
                 if (p["Node"]["metadata"].get("labels") or {}).get(REVOCABLE_ZONE)}
    return {"Jobs": {j.key: payload_job(j) for j in sorted(s.jobs, key=lambda j: j.key)}, "Nodes": nodes,
            "Queues": {q.name: payload_queue(q) for q in sorted(s.queues, key=lambda q: q.name)},
            "NamespaceInfo": {}, "RevocableNodes": revocable, "NodeList": None}
