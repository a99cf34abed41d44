"""Events sent in the background, as client-go's event broadcaster sends them: recording one
never waits for the API server; they are sent one at a time (the broadcaster's one goroutine
per sink), so a busy API server slows them down, and at most QPS a second (bursts of BURST),
the rate limit client-go's clients put on a component's requests, so a burst of thousands of
"Scheduled" events trails the binds instead of competing with them; and when QUEUE events
are already waiting a new one is dropped (and counted), as the broadcaster drops them."""

from __future__ import annotations

import logging
import queue
import threading
import time

from volcanic.kube.errors import StoreError
from volcanic.kube.objects import Obj
from volcanic.real.store import KubeStore

log = logging.getLogger(__name__)

QUEUE = 1000
QPS, BURST = 50.0, 100


class BackgroundEvents:
    """A sink with the Store's `create`, for volcanic.kube.events.Recorder."""

    def __init__(self, store: KubeStore) -> None:
        self.store = store
        self.dropped = 0
        self._queue: queue.Queue[Obj] = queue.Queue(QUEUE)
        self._tokens, self._refilled = float(BURST), time.monotonic()
        threading.Thread(target=self._send, name="events", daemon=True).start()

    def create(self, event: Obj) -> Obj:
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            self.dropped += 1
        return event

    def _take(self) -> None:
        """Waits for a token of the QPS/BURST bucket."""
        while True:
            now = time.monotonic()
            self._tokens = min(BURST, self._tokens + (now - self._refilled) * QPS)
            self._refilled = now
            if self._tokens >= 1:
                self._tokens -= 1
                return
            time.sleep((1 - self._tokens) / QPS)

    def _send(self) -> None:
        while True:
            event = self._queue.get()
            self._take()
            try:
                self.store.create(event)
            except StoreError as e:
                log.debug("event %s not recorded: %s", event["metadata"].get("name"), e)
