"""The job controller's expectations: per job, the work it sent and has not taken the
answer to, and the requests that wait for it (client-go's ControllerExpectations keep, per
controller key, the creates and deletes the watch has yet to bring; a key is synced only
once they are satisfied).

A job's actions run one after another, its pod creates and status writes included. SyncJob
sends them without waiting (on a real API server a wait of tens of milliseconds per sync
would hold up every other job's pods), so the controller files what a job's action sent
here and goes on with other jobs:

    expectations.expect(out)             # a job's action sent work (an Out)
    expectations.satisfied(key)          # nothing the job sent is unanswered
    expectations.park(request)           # a request for a job not satisfied waits aside
    out = expectations.observe(key)      # the answered work, taken (None while any is out)
    expectations.release(key)            # once satisfied: the parked requests, in order

The other half is the coalescing of SyncJob requests. Each watch event's request is
stamped with a count of events when queued (stamp); a job's successful SyncJob records the
count at its start (synced); a SyncJob request whose event such a sync has seen is done
already (synced_since): that sync read the job, its pods and PodGroup as they were after
the event, and any later change queued a request of its own.

The pods a sync created that the watch has not brought yet, client-go's expectations
proper, are counted by JobActions (sync.py), which knows the pods.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass

from volcanic.controllers.job.policy import Request
from volcanic.controllers.job.sync import CreatesOut, WriteOut
from volcanic.kube.objects import Obj


@dataclass(frozen=True)
class Answered:
    """A request to the job controller: the work out for job `job_key` was answered in the
    background (a real API server's answer); its answers are to be observed."""

    job_key: str


@dataclass(frozen=True)
class Out:
    """A job's work sent and not waited for, and the request whose action sent it: the pod
    creates that stopped a sync, or a sync's status write."""

    sent: CreatesOut | WriteOut
    req: Request
    job: Obj
    action: str

    @property
    def answered(self) -> Future:
        """Done once all of the work is answered."""
        return self.sent.answered


class JobExpectations:
    """What each job's actions sent and the requests waiting for it, by job key
    ("namespace/name"). `out` and `parked` are for reading (tests, debugging)."""

    def __init__(self) -> None:
        self.out: dict[str, Out] = {}               # job key -> its work not observed yet
        self.parked: dict[str, list[Request]] = {}  # job key -> requests waiting for it
        self._events = 0                            # watch events' requests stamped so far
        self._stamps: dict[Request, int] = {}       # queued request -> its event's count
        self._synced_at: dict[str, int] = {}        # job key -> count at its last good SyncJob

    # Work out.
    def expect(self, out: Out) -> None:
        """Files the work a job's action sent; the job is not satisfied until it is answered.
        A job has one action's work out at a time: its next action waits (park)."""
        self.out[out.req.job_key] = out

    def satisfied(self, key: str) -> bool:
        """True when nothing the job sent is still unanswered."""
        out = self.out.get(key)
        return out is None or out.answered.done()

    def observe(self, key: str) -> Out | None:
        """Takes the job's answered work, to act on the answers; None when there is none, or
        while some of it is still out."""
        if not self.satisfied(key):
            return None
        return self.out.pop(key, None)

    # Requests waiting for it.
    def park(self, req: Request) -> None:
        """Sets the request aside until its job is satisfied and its work observed."""
        self.parked.setdefault(req.job_key, []).append(req)

    def has_parked(self, key: str) -> bool:
        """True when requests of the job wait: a newer one waits behind them."""
        return key in self.parked

    def release(self, key: str) -> list[Request]:
        """The job's parked requests, in the order they came, once it is satisfied (they are
        then no longer parked); none while its work is out."""
        if not self.satisfied(key):
            return []
        return self.parked.pop(key, [])

    # Coalescing of SyncJob requests.
    def stamp(self, req: Request) -> None:
        """Stamps a watch event's request as it is queued with the event's count (again when
        it is already queued: the newer event is what it stands for)."""
        self._stamps[req] = self._events
        self._events += 1

    def take_stamp(self, req: Request) -> int | None:
        """The count the request was stamped with, as it is taken from the queue; None for a
        request no watch event queued (a Command's, a retry, a delayed action)."""
        return self._stamps.pop(req, None)

    def sync_starts(self) -> int:
        """The count at the start of a sync, for synced()."""
        return self._events

    def synced(self, key: str, started: int) -> None:
        """Records that a SyncJob of the job, started at count `started`, succeeded."""
        self._synced_at[key] = started

    def synced_since(self, key: str, stamp: int | None) -> bool:
        """True when a successful SyncJob of the job started after the event stamped `stamp`."""
        return stamp is not None and self._synced_at.get(key, -1) > stamp

    def forget(self, key: str) -> None:
        """Drops the syncs recorded for a deleted job (its work out is observed, or dropped
        when its answers come, by the controller)."""
        self._synced_at.pop(key, None)
