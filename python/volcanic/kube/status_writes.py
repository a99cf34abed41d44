"""Status writes sent in the background, one at a time per object, the latest winning.

A writer that does not wait for its answers (the scheduler after each session, as Volcano's
binds and job updater do not hold up the next session) would otherwise write an object again
before the watch has brought back its last write, with the resourceVersion it had before
(409 Conflict), or have two writes of one object out at once. So a status for an object whose
write is out waits for that answer, replacing any older status still waiting for the same
object, and goes out with the resourceVersion of the writer's own last answer when that is
newer than the one of the object it was given.

On the embedded store every write is done when sent, so collect() right after write() sees it.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Callable

from volcanic.kube.objects import Key, Obj, key_of, resource_version
from volcanic.kube.store import Store

ANSWERS_KEPT = 4096  # resourceVersions of own answers remembered (oldest dropped first)


@dataclass
class StatusWrite:
    obj: Obj                    # the object with the status to write
    warning: str | None = None  # for the caller: a Warning Event to record once written


class StatusWrites:
    def __init__(self, store: Store, wake: Callable[[], None] = lambda: None) -> None:
        self._store, self._wake = store, wake
        self._out: dict[tuple[str, Key], StatusWrite] = {}
        self._answered: deque[tuple[tuple[str, Key], Future[Obj]]] = deque()
        self._waiting: dict[tuple[str, Key], StatusWrite] = {}
        self._answers: dict[tuple[str, Key], int] = {}  # own last answer's resourceVersion

    def write(self, write: StatusWrite) -> None:
        key = (write.obj["kind"], key_of(write.obj))
        if key in self._out:
            self._waiting[key] = write
        else:
            self._send(key, write)

    def wrote(self, obj: Obj) -> bool:
        """Whether obj, as the watch brings it, is this writer's last answered write of it."""
        answered = self._answers.get((obj["kind"], key_of(obj)))
        return answered is not None and answered == resource_version(obj)

    def collect(self) -> list[tuple[StatusWrite, Obj | BaseException]]:
        """The writes answered since the last call, each with the written object or the
        error; sends what waited for them."""
        results: list[tuple[StatusWrite, Obj | BaseException]] = []
        while self._answered:
            key, future = self._answered.popleft()
            write = self._out.pop(key)
            error = future.exception()
            if error is None:
                answer = future.result()
                self._remember(key, answer)
                results.append((write, answer))
            else:
                results.append((write, error))
            waiting = self._waiting.pop(key, None)
            if waiting is not None:
                self._send(key, waiting)
        return results

    def _send(self, key: tuple[str, Key], write: StatusWrite) -> None:
        answered = self._answers.pop(key, None)
        if answered is not None and answered > (resource_version(write.obj) or 0):
            self._answers[key] = answered  # the cache is still behind: write over own answer
            obj = write.obj
            write = StatusWrite(dict(obj, metadata=dict(obj["metadata"], resourceVersion=str(answered))),
                                write.warning)
        self._out[key] = write
        answer = self._store.update_status_async(write.obj)
        if answer.done():  # answered at once (the embedded store): the next collect() takes it
            self._answered.append((key, answer))
        else:
            answer.add_done_callback(lambda answer: self._answer(key, answer))

    def _answer(self, key: tuple[str, Key], answer: Future[Obj]) -> None:
        """From the thread that got the answer: queue it for collect(), wake the reader."""
        self._answered.append((key, answer))
        self._wake()

    def _remember(self, key: tuple[str, Key], answer: Obj) -> None:
        self._answers.pop(key, None)
        version = resource_version(answer)
        if version is not None:
            self._answers[key] = version
        if len(self._answers) > ANSWERS_KEPT:
            del self._answers[next(iter(self._answers))]
