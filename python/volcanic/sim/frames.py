"""A run's records as rows, and as pandas DataFrames for notebooks (`pip install
volcanic[notebook]`; the core needs no pandas)."""

from __future__ import annotations

import csv
import json
import os
from typing import Any

from volcanic.cluster.report import require_pandas
from volcanic.sim.replay import Replay

POD_COLUMNS = ("pod", "arrival", "start", "end", "wait", "node", "phase")


def pod_rows(run: Replay) -> list[dict[str, Any]]:
    """One row per pod: times in virtual seconds from the start (None when not reached),
    wait = start - arrival, and its requests as `req_<resource>` columns."""
    names = sorted({name for r in run.pods.values() for name in r.requests})
    rows = []
    for r in run.pods.values():
        row = {"pod": r.name, "arrival": r.arrival, "start": r.start, "end": r.end,
               "wait": None if r.start is None else r.start - r.arrival, "node": r.node, "phase": r.phase}
        row.update({f"req_{name}": r.requests.get(name, 0.0) for name in names})
        rows.append(row)
    return rows


def pods_frame(run: Replay) -> Any:
    """pod_rows as a pandas DataFrame indexed by pod."""
    return require_pandas().DataFrame(pod_rows(run)).set_index("pod")


def write_run(run: Replay, summary: dict[str, Any], directory: str) -> None:
    """DIR/pods.csv (pod_rows) and DIR/summary.json; DIR is made if missing."""
    os.makedirs(directory, exist_ok=True)
    rows = pod_rows(run)
    with open(os.path.join(directory, "pods.csv"), "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else list(POD_COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    with open(os.path.join(directory, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
