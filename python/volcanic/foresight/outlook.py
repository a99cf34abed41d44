"""The foresight answers for one cluster, as vcctl, the Python API and the scheduler's HTTP
endpoint give them (docs/foresight.md): for each pending job, why it waits and where it
stands (the last session's Decisions.why), when it will start (a forecast), and for one job
the single changes that would start it now (remedies).

Foresight reads a cluster through four callables, so that the embedded Cluster (its store and
its scheduler loop) and `volcanic scheduler` on a real API server (its informer cache and its
loop) answer alike, and the real one without a request to the API server.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable

from volcanic.foresight.forecast import FORKED_KINDS, Forecast, forecast
from volcanic.foresight.remedies import remedies
from volcanic.foresight.what_if import WhatIf, what_if
from volcanic.kube.objects import Obj, meta_of, spec_of, status_of

WAITING = ("Pending", "Inqueue")  # a PodGroup's phases before its gang runs


@dataclass(frozen=True)
class Outlook:
    """One pending job: `job` is "ns/name" of its Volcano Job (of its PodGroup when no Job
    owns it); `reasons` most binding first; `position` in its queue and `queue_position` among
    the queues (1-based; None when the last session did not count it as waiting);
    `estimated_start` in Unix seconds (None: not within the forecast's horizon)."""

    job: str
    queue: str
    reasons: list[str]
    position: int | None
    queue_position: int | None
    estimated_start: float | None
    basis: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Explanation(Outlook):
    """An Outlook and the single changes that would start the job now, each verified on a
    fork (remedies.py)."""

    remedies: list[str] = field(default_factory=list)


class Foresight:
    """objects: the cluster's state (at least FORKED_KINDS); conf: the scheduler's
    configuration; now: the cluster's clock (Unix seconds); why: the last session's
    Decisions.why (an empty dict before the first)."""

    def __init__(self, objects: Callable[[], Iterable[Obj]], conf: Callable[[], Any], now: Callable[[], float],
                 why: Callable[[], dict[str, dict]]) -> None:
        self._objects, self._conf, self._now, self._why = objects, conf, now, why

    def state(self) -> list[Obj]:
        return [o for o in self._objects() if o.get("kind") in FORKED_KINDS]

    def outlook(self, namespace: str | None = None, queue: str | None = None) -> list[Outlook]:
        """Every pending job (its PodGroup Pending or Inqueue), in the namespace and queue
        if given, ordered by queue position, then position, then name."""
        objects = self.state()
        f = forecast(objects, self._conf(), self._now())
        owners = _owners(objects)
        rows = [self._row(key, f, owners, objects) for key in f.jobs]
        rows = [r for r in rows if (namespace is None or r.job.split("/")[0] == namespace)
                and (queue is None or r.queue == queue)]
        return sorted(rows, key=lambda r: (r.queue_position or 1 << 30, r.queue, r.position or 1 << 30, r.job))

    def explain(self, name: str, namespace: str = "default") -> Explanation:
        """The job `namespace/name` (a Volcano Job, else a PodGroup): KeyError if neither."""
        objects = self.state()
        group = _group_of_job(objects, name, namespace)
        key = f"{namespace}/{meta_of(group)['name']}"
        conf, now = self._conf(), self._now()
        waiting = status_of(group).get("phase", "Pending") in WAITING
        f = forecast(objects, conf, now, watch=[key]) if waiting else Forecast(now=now, basis="its gang is running")
        row = self._row(key, f, {key: f"{namespace}/{name}"}, objects)
        found = remedies(objects, conf, now, key, row.reasons) if waiting else []
        return Explanation(**asdict(row), remedies=found)

    def what_if(self, proposed_conf: Any) -> WhatIf:
        """The current state forecast under the running configuration and under `proposed_conf`."""
        return what_if(self.state(), self._conf(), proposed_conf, self._now())

    def _row(self, key: str, f: Forecast, owners: dict[str, str], objects: list[Obj]) -> Outlook:
        why = self._why().get(key) or f.why.get(key) or {}
        job = f.jobs.get(key)
        queue = job.queue if job else why.get("queue") or _queue_of(objects, key)
        return Outlook(owners.get(key, key), queue, list(why.get("reasons") or []), why.get("position"),
                       why.get("queue_position"), job.estimated_start if job else None, job.basis if job else f.basis)


class Answers:
    """A Foresight's answers as JSON-ready dicts: what vcctl reads and the scheduler's HTTP
    routes send (volcanic.real.foresight_http's client answers alike)."""

    def __init__(self, foresight: Foresight) -> None:
        self.foresight = foresight

    def outlook(self, namespace: str | None = None, queue: str | None = None) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.foresight.outlook(namespace, queue)]

    def explain(self, name: str, namespace: str = "default") -> dict[str, Any]:
        return self.foresight.explain(name, namespace).to_dict()

    def what_if(self, proposed_conf: Any) -> dict[str, Any]:
        return self.foresight.what_if(proposed_conf).to_dict()


def _owners(objects: list[Obj]) -> dict[str, str]:
    """PodGroup key -> "ns/name" of the Volcano Job that owns it."""
    out = {}
    for pg in objects:
        if pg.get("kind") != "PodGroup":
            continue
        meta = meta_of(pg)
        for ref in meta.get("ownerReferences") or []:
            if ref.get("kind") == "Job" and str(ref.get("apiVersion", "")).startswith("batch.volcano.sh/"):
                ns = meta.get("namespace") or "default"
                out[f"{ns}/{meta['name']}"] = f"{ns}/{ref.get('name')}"
    return out


def _group_of_job(objects: list[Obj], name: str, namespace: str) -> Obj:
    """The PodGroup of the Volcano Job namespace/name, else the PodGroup of that name."""
    groups = [o for o in objects
              if o.get("kind") == "PodGroup" and (meta_of(o).get("namespace") or "default") == namespace]
    owned = [g for g in groups if f"{namespace}/{name}" in _owners([g]).values()]
    named = [g for g in groups if meta_of(g).get("name") == name]
    if owned or named:
        return (owned or named)[0]
    if any(o.get("kind") == "Job" and meta_of(o).get("name") == name
           and (meta_of(o).get("namespace") or "default") == namespace for o in objects):
        raise KeyError(f"job {namespace}/{name} has no PodGroup yet (its controller has not synced it)")
    raise KeyError(f"job {namespace}/{name} not found")


def _queue_of(objects: list[Obj], key: str) -> str:
    for o in objects:
        if o.get("kind") == "PodGroup" and f"{meta_of(o).get('namespace') or 'default'}/{meta_of(o)['name']}" == key:
            return spec_of(o).get("queue") or "default"
    return "default"
