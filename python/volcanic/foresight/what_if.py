"""What if the policy changed? The same state forecast under two scheduler configurations, job
by job, and the waits side by side: a shadow A/B test before a rollout (docs/foresight.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from volcanic.foresight.forecast import HORIZON, Forecast, forecast
from volcanic.kube.clock import seconds_of
from volcanic.kube.objects import Obj

PERCENTILES = (50, 90, 99)


@dataclass(frozen=True)
class JobChange:
    job: str  # "ns/name" of the PodGroup
    queue: str
    current: float | None  # estimated start under the current configuration (Unix seconds)
    proposed: float | None  # ... and under the proposed one

    @property
    def change(self) -> str:
        """"earlier", "later", "same", "starts" (only under the proposed), "never" (only under
        the current)."""
        if self.current is None and self.proposed is None:
            return "same"
        if self.current is None:
            return "starts"
        if self.proposed is None:
            return "never"
        return "earlier" if self.proposed < self.current else "later" if self.proposed > self.current else "same"


@dataclass(frozen=True)
class WhatIf:
    now: float
    jobs: list[JobChange]  # every waiting job, by key
    # Waits (estimated start - the PodGroup's creation, seconds) at each of PERCENTILES, over
    # the jobs that start under that configuration; None when none does.
    current_waits: dict[int, float | None]
    proposed_waits: dict[int, float | None]
    current: Forecast
    proposed: Forecast

    def count(self, change: str) -> int:
        return sum(1 for j in self.jobs if j.change == change)

    def to_dict(self) -> dict[str, Any]:
        """As JSON: each job's starts and change, the wait percentiles and both bases."""
        return {"now": self.now, "jobs": [{"job": j.job, "queue": j.queue, "current": j.current,
                                           "proposed": j.proposed, "change": j.change} for j in self.jobs],
                "current_waits": self.current_waits, "proposed_waits": self.proposed_waits,
                "current_basis": self.current.basis, "proposed_basis": self.proposed.basis}


def what_if(objects: Iterable[Obj], current_conf: Any, proposed_conf: Any, now: float,
            horizon: float = HORIZON) -> WhatIf:
    """Forecasts the state `objects` (taken at `now`) under both configurations."""
    objects = list(objects)
    current = forecast(objects, current_conf, now, horizon)
    proposed = forecast(objects, proposed_conf, now, horizon)
    created = {f"{o['metadata'].get('namespace') or 'default'}/{o['metadata']['name']}":
               seconds_of(o["metadata"].get("creationTimestamp")) for o in objects if o.get("kind") == "PodGroup"}
    jobs = [JobChange(key, f.queue, f.estimated_start, proposed.jobs[key].estimated_start)
            for key, f in sorted(current.jobs.items())]
    return WhatIf(now, jobs, _waits(current, created, now), _waits(proposed, created, now), current, proposed)


def _waits(f: Forecast, created: dict[str, float | None], now: float) -> dict[int, float | None]:
    waits = sorted(j.estimated_start - (created.get(key) or now)
                   for key, j in f.jobs.items() if j.estimated_start is not None)
    return {p: _percentile(waits, p) for p in PERCENTILES}


def _percentile(sorted_values: list[float], p: int) -> float | None:
    """The nearest-rank percentile (the smallest value with at least p% of values at or below)."""
    if not sorted_values:
        return None
    rank = max(1, -(-p * len(sorted_values) // 100))
    return sorted_values[rank - 1]
