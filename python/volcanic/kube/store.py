"""The Store protocol: what controllers and the scheduler need from an API server.

The embedded cluster's MemoryStore and the real cluster's KubeStore both provide it; nothing
above them knows which one it runs on.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future
import threading
import time
from typing import Any, Callable, Iterable, Protocol

from volcanic.kube.objects import Obj


class Watch:
    """A stream of (type, object) events, type ADDED, MODIFIED or DELETED; objects are
    read-only. It starts with an ADDED event for every object that exists when it is opened,
    then has every change in commit order (a list and a watch in one, as client-go's
    reflector makes them). Filled by the store (from any thread); read by one reader with
    drain() and wait()."""

    def __init__(self, kinds: Iterable[str] | None) -> None:
        self.kinds = set(kinds) if kinds is not None else None
        # The events not drained yet: readers may test it for emptiness (cheaper than a call).
        self.events: deque[tuple[str, Obj]] = deque()
        self._ready = threading.Event()
        # The reader inside wait(): only it needs the event set (setting it takes a lock, a
        # cost per event for the embedded cluster, whose reader never waits). The waiter
        # counts itself before it looks for events or a wake, and an offer or a wake leaves
        # its mark before it looks for the waiter, so one of the two always sees the other.
        self._waiters = 0
        self._woken = False
        self.synced = threading.Event()  # set once every object that existed at open was offered

    def offer(self, event: str, obj: Obj) -> None:
        if self.kinds is None or obj["kind"] in self.kinds:
            self.events.append((event, obj))
            if self._waiters and not self._ready.is_set():
                self._ready.set()

    def drain(self) -> list[tuple[str, Obj]]:
        """Every event offered so far, oldest first (safe against offers from other threads)."""
        if self._ready.is_set():
            self._ready.clear()
        events = []
        while self.events:
            events.append(self.events.popleft())
        return events

    def wait(self, timeout: float | None = None, linger: float = 0.0) -> bool:
        """Blocks until an event is there, wake() is called or `timeout` seconds passed; True
        if an event is there. With `linger`, an event that ends the wait is given company:
        the reader sleeps that long more, so a burst is taken in one pass (waking a thread
        costs more than handling the event that woke it)."""
        self._waiters += 1
        try:
            if self.events:
                return True
            if not self._woken and self._ready.wait(timeout) and linger:
                time.sleep(linger)
        finally:
            self._waiters -= 1
        self._woken = False
        if not self.events:  # woken without events: the next wait blocks again
            self._ready.clear()
        return bool(self.events)

    def wake(self) -> None:
        """Ends a wait() without an event (a background write the reader waits for is done),
        or the next one if the reader is not waiting."""
        self._woken = True
        if self._waiters:
            self._ready.set()


class Store(Protocol):
    """Reads, writes and a watch, with the API server's semantics (optimistic concurrency on
    resourceVersion, status written only through update_status for kinds with a status
    subresource). Errors are volcanic.kube.errors.StoreError subclasses; a write that
    admission denies raises AdmissionError."""

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None: ...
    def list(self, kind: str, namespace: str | None = None) -> list[Obj]: ...
    def create(self, obj: Obj) -> Obj: ...
    def update(self, obj: Obj) -> Obj: ...
    # Writes obj's status: through the status subresource, or for a kind without one
    # (PodGroup) as an update of the whole object, as Volcano's clients write it.
    def update_status(self, obj: Obj) -> Obj: ...
    # bind: pods/binding; `annotations` (the Binding's) are merged into the pod's.
    def bind(self, namespace: str, name: str, node: str, annotations: dict[str, str] | None = None) -> Obj: ...
    def delete(self, kind: str, name: str, namespace: str | None = None,
               uid: str | None = None) -> None: ...
    def watch(self, kinds: Iterable[str] | None = None) -> Watch: ...
    # Writes the caller need not wait for (a job's pods, the scheduler's binds, status writes):
    # a real API server's store sends them concurrently in the background; the embedded store
    # at once, returning them done.
    def create_async(self, obj: Obj) -> Future[Obj]: ...
    def bind_async(self, namespace: str, name: str, node: str,
                   annotations: dict[str, str] | None = None) -> Future[Obj]: ...
    def update_status_async(self, obj: Obj) -> Future[Obj]: ...


def attempt(fn: Callable[..., Obj], item: Any) -> Obj | Exception:
    """fn(*item) for a tuple, else fn(item): its result, or the exception it raised (one item
    of a batch: its failure is the caller's to handle, item by item)."""
    try:
        return fn(*item) if isinstance(item, tuple) else fn(item)
    except Exception as e:  # noqa: BLE001 - handed to the caller, per item
        return e


class Finished:
    """A Future that finished when it was made: what the embedded store's background writes
    return. The part of concurrent.futures.Future its callers use, without the lock and
    condition a Future makes (a write's worth of time in a replay)."""

    __slots__ = ("_result", "_error")
    _result: Obj | None  # exactly one of the two is None
    _error: Exception | None

    def __init__(self, result: Obj | Exception) -> None:
        self._result, self._error = (None, result) if isinstance(result, Exception) else (result, None)

    def done(self) -> bool:
        return True

    def cancelled(self) -> bool:
        return False

    def result(self, timeout: float | None = None) -> Obj:
        if self._error is not None:
            raise self._error
        assert self._result is not None  # no error: a result (see _result)
        return self._result

    def exception(self, timeout: float | None = None) -> Exception | None:
        return self._error

    def add_done_callback(self, fn: Callable[[Any], None]) -> None:
        fn(self)


def done(fn: Callable[..., Obj], item: Any) -> Future[Obj]:
    """fn(item) run now, as a finished Future (the embedded store's background writes)."""
    return Finished(attempt(fn, item))  # type: ignore[return-value]  # Future's interface, duck-typed


def all_done(futures: list[Future]) -> Future[None]:
    """A Future done (with None) once every one of `futures` is, whatever their outcome."""
    together: Future[None] = Future()
    left = [len(futures)]
    lock = threading.Lock()

    def one_done(_: Future) -> None:
        with lock:
            left[0] -= 1
            last = left[0] == 0
        if last:
            together.set_result(None)
    if not futures:
        together.set_result(None)
    for future in futures:
        future.add_done_callback(one_done)
    return together
