"""How each Volcano Job went, and any kind's objects as a table, read back from the cluster
(for `volcanic run` and notebooks)."""

from __future__ import annotations

from typing import Any

from volcanic.kube.clock import seconds_of
from volcanic.kube.objects import dig, spec_of, status_of

FINAL_PHASES = ("Completed", "Failed", "Terminated", "Aborted")
FLOW_FINAL_PHASES = ("Succeed", "Failed")


def job_report(cluster: Any) -> list[dict[str, Any]]:
    """One row per Job: name, queue, phase, start and end (virtual seconds; None when not
    reached), restarts (status.retryCount), and the pod counts."""
    rows = []
    for job in cluster.list("Job"):
        status = status_of(job)
        phase = dig(status, "state", "phase") or "Pending"
        when = {c.get("status"): _since(cluster, c.get("lastTransitionTime")) for c in status.get("conditions") or []}
        meta = job["metadata"]
        rows.append({"job": f"{meta['namespace']}/{meta['name']}", "queue": spec_of(job).get("queue", "default"),
                     "phase": phase, "start": when.get("Running"),
                     "end": when.get(phase) if phase in FINAL_PHASES else None,
                     "restarts": status.get("retryCount", 0),
                     **{k: status.get(k, 0) for k in ("running", "succeeded", "failed")}})
    return rows


def _since(cluster: Any, timestamp: str | None) -> float | None:
    t = seconds_of(timestamp)
    return None if t is None else t - cluster.started


def all_finished(cluster: Any) -> bool:
    """Nothing more is to come: every Job is in a final phase, every JobFlow too (it makes its
    Jobs one after another), and every CronJob is suspended (one that is not makes Jobs for
    ever). Read from the cluster's read-only cache: no copies."""
    informers = cluster.informers
    return (all(dig(j, "status", "state", "phase") in FINAL_PHASES for j in informers.list("Job"))
            and all(dig(f, "status", "state", "phase") in FLOW_FINAL_PHASES for f in informers.list("JobFlow"))
            and all(dig(c, "spec", "suspend") for c in informers.list("CronJob")))


def objects_frame(objects: list[dict[str, Any]], started: float) -> Any:
    """Objects as a pandas DataFrame, fields flattened into columns (`metadata.name`,
    `status.phase`, `spec.nodeName`, ...), with `created`: virtual seconds since `started`."""
    pd = require_pandas()
    frame = pd.json_normalize(objects) if objects else pd.DataFrame()
    if "metadata.creationTimestamp" in frame:
        frame.insert(0, "created", [seconds_of(t) - started for t in frame["metadata.creationTimestamp"]])
    return frame


def require_pandas() -> Any:
    """pandas, or an ImportError saying how to get it (the core does not need it)."""
    try:
        import pandas
    except ImportError:
        raise ImportError("DataFrames need pandas: pip install 'volcanic[notebook]'") from None
    return pandas
