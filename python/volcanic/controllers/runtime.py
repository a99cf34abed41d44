"""What controllers run on: work queues with client-go's rate-limited retries, the
controller base class, the runner that settles them, and the indexes they read by.

Controllers read through a `Lister` (volcanic.kube.informers) and write through a `Store`;
the same code runs on the embedded cluster and on a real API server.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Hashable, Iterable

from volcanic.kube import keys
from volcanic.kube.clock import Clock, Timer
from volcanic.kube.errors import StoreError
from volcanic.kube.informers import Handler, Indexes, Informers, Lister
from volcanic.kube.objects import Obj, annotation, label, spec_of, status_of
from volcanic.kube.store import Store


def _job_of_pod(pod: Obj) -> list[str]:
    job = label(pod, keys.JOB_NAME)
    return [f"{pod['metadata']['namespace']}/{job}"] if job else []


def _restarted_task_of_pod(pod: Obj) -> list[str]:
    """"ns/job/task" for a Pending or Running pod of a Volcano Job with a restarted container:
    the job controller sums their restarts on every pod update (its TaskFailed check), and most
    tasks have none, so the sum is over this index and not over all the task's pods."""
    status = status_of(pod)
    if status.get("phase") not in ("Pending", "Running") or not _restarted(status):
        return []
    task = annotation(pod, keys.TASK_SPEC)
    return [f"{job}/{task}" for job in _job_of_pod(pod)] if isinstance(task, str) else []


def _restarted(status: Obj) -> bool:
    for statuses in ("initContainerStatuses", "containerStatuses"):
        for c in status.get(statuses) or ():
            restarts = c.get("restartCount")
            if isinstance(restarts, int) and restarts > 0:
                return True
    return False


def _parent_of_queue(q: Obj) -> list[str]:
    if q["metadata"]["name"] == "root":
        return []
    parent = spec_of(q).get("parent") or "root"
    return [parent] if isinstance(parent, str) else []


def _node_of_pod(pod: Obj) -> list[str]:
    node = spec_of(pod).get("nodeName")
    return [node] if node and isinstance(node, str) else []


# Indexes the controllers read by: (kind, index name) -> values an object is filed under.
INDEXES: Indexes = {
    ("Pod", "job"): _job_of_pod,          # "ns/job" of a Volcano Job's pods
    ("Pod", "node"): _node_of_pod,
    ("Pod", "restarted-task"): _restarted_task_of_pod,  # "ns/job/task" of pods with restarts
    ("Queue", "parent"): _parent_of_queue,
}


def backoff_seconds(failures: int, cap: float = 1000.0) -> float:
    """client-go's per-item exponential back-off: 5 ms doubling with each failure (the
    first failure waits 5 ms), at most `cap`."""
    return min(0.005 * 2.0 ** min(max(failures - 1, 0), 40), cap)


RETRY_QPS, RETRY_BURST = 10.0, 100  # client-go's DefaultControllerRateLimiter's overall bucket


class RetryBucket:
    """The overall half of client-go's DefaultControllerRateLimiter (workqueue's
    TypedBucketRateLimiter over rate.NewLimiter(10, 100)): each retry reserves a token, and
    waits until it is due. 100 retries go at their own back-off; past that, a queue's
    retries go out at 10 a second however many fail at once (a busy API server refusing
    every sync), so a storm of failures does not become a storm of requests. On the
    controllers' clock (virtual in the embedded cluster)."""

    def __init__(self, clock: Clock, qps: float = RETRY_QPS, burst: int = RETRY_BURST) -> None:
        self.clock, self.qps, self.burst = clock, qps, burst
        self._tokens, self._at = float(burst), clock.now()

    def reserve(self) -> float:
        """Takes a token (going into debt when there is none); seconds until it is due."""
        now = self.clock.now()
        self._tokens = min(self.burst, self._tokens + max(0.0, now - self._at) * self.qps) - 1
        self._at = now
        return max(0.0, -self._tokens / self.qps)


class WorkQueue:
    """Requests in arrival order; a request already waiting is not added twice."""

    def __init__(self) -> None:
        self._items: deque[Hashable] = deque()
        self._waiting: set[Hashable] = set()

    def add(self, request: Hashable) -> None:
        if request not in self._waiting:
            self._waiting.add(request)
            self._items.append(request)

    def pop(self) -> Hashable | None:
        if not self._items:
            return None
        request = self._items.popleft()
        self._waiting.discard(request)
        return request

    def __len__(self) -> int:
        return len(self._items)


@dataclass
class Context:
    """What a controller is given: where to write, where to read, and the time."""

    store: Store
    lister: Lister
    clock: Clock
    scheduler_names: tuple[str, ...] = ("volcano",)
    extra: dict[str, Any] = field(default_factory=dict)


class Controller:
    """Base of the controllers: handlers fill `queue`; the runner calls process() for each
    request. A StoreError (conflict, not found) makes the runner retry the request later."""

    name = "controller"

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.queue = WorkQueue()
        self._failures: dict[Hashable, int] = {}
        self.retry_bucket = RetryBucket(ctx.clock)  # shared by every retry of this queue
        self._delayed: dict[Hashable, Timer] = {}  # add_after's pending timers, by request

    def handlers(self) -> dict[str, Handler]:
        return {}

    def retry_later(self, request: Hashable, limit: int | None = None, cap: float = 1000.0) -> int | None:
        """client-go's AddRateLimited with DefaultControllerRateLimiter: requeues `request`
        after the longer of its own back-off (by its failure count) and the queue's
        RetryBucket, and returns that count; past `limit` failures it forgets the request
        instead and returns None (the caller gives up)."""
        n = self._failures.get(request, 0) + 1
        if limit is not None and n > limit:
            self.forget(request)
            return None
        self._failures[request] = n
        delay = max(backoff_seconds(n, cap=cap), self.retry_bucket.reserve())
        self.ctx.clock.after(delay, lambda: self.queue.add(request))
        return n

    def add_after(self, request: Hashable, delay: float) -> None:
        """client-go's workqueue AddAfter: `request` is added after `delay` seconds; of several
        pending times for a request, the earliest wins."""
        due = self.ctx.clock.now() + delay
        timer = self._delayed.get(request)
        if timer is not None and not timer.cancelled and timer.due <= due:
            return
        if timer is not None:
            timer.cancel()

        def fire() -> None:
            self._delayed.pop(request, None)
            self.queue.add(request)
        self._delayed[request] = self.ctx.clock.after(delay, fire)

    def forget(self, request: Hashable) -> None:
        """client-go's Forget: the request succeeded (or was dropped); its back-off restarts."""
        self._failures.pop(request, None)

    def process(self, request: Hashable) -> None:
        raise NotImplementedError


class Runner:
    """Delivers watch events and processes controllers' requests until nothing is left.

    A request that fails with a StoreError (a conflict, an object gone, a busy API server)
    is retried after a back-off, as client-go's rate-limited queue does: its own, doubling
    from 5 ms up to a minute, and no sooner than its controller's RetryBucket allows. Any other exception is a bug or a
    malformed object: it is recorded in `errors` with the controller and request, and the
    request is dropped, so one bad object never stops the cluster.
    """

    MAX_STEPS = 1_000_000  # requests in one settle; more means controllers feed each other

    def __init__(self, informers: Informers, controllers: Iterable[Controller], clock: Clock) -> None:
        self.informers = informers
        self.controllers = list(controllers)
        self.clock = clock
        self.errors = informers.errors  # one list: handler and request failures, in order
        self._retries: dict[tuple[str, Hashable], int] = {}
        # Each controller with its queue's requests, tested for emptiness at every step.
        self._waiting = [(c, c.queue._items) for c in self.controllers]
        for c in self.controllers:
            for kind, handler in c.handlers().items():
                informers.add_handler(kind, handler)

    def settle(self) -> int:
        """Runs until no event or request is pending; returns how many requests ran."""
        steps = 0
        pump = self.informers.pump
        pump()
        while True:
            ran = False
            for c, waiting in self._waiting:
                if not waiting:  # most controllers have nothing at most steps
                    continue
                request = c.queue.pop()
                ran = True
                steps += 1
                try:
                    c.process(request)
                    if self._retries:
                        self._retries.pop((c.name, request), None)
                except StoreError:
                    self._retry(c, request)
                except Exception as e:  # noqa: BLE001 - see the class docstring
                    self.errors.append(f"{c.name}: {request!r}: {type(e).__name__}: {e}")
                pump()
            if not ran and not pump():  # a handler's own writes are delivered too
                return steps
            if steps > self.MAX_STEPS:
                raise RuntimeError(f"controllers did not settle after {steps} requests")

    def _retry(self, c: Controller, request: Hashable) -> None:
        """Its own back-off, and no sooner than the controller queue's RetryBucket allows."""
        n = self._retries.get((c.name, request), 0) + 1
        self._retries[(c.name, request)] = n
        delay = max(backoff_seconds(n, cap=60.0), c.retry_bucket.reserve())
        self.clock.after(delay, lambda: c.queue.add(request))
