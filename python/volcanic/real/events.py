"""Events sent in the background, as client-go's event broadcaster sends them: recording one
never waits for the API server, and when QUEUE events are already waiting a new one is
dropped (and counted) rather than slowing scheduling or the controllers down."""

from __future__ import annotations

import logging
import queue
import threading

from volcanic.kube.errors import StoreError
from volcanic.kube.objects import Obj
from volcanic.real.store import KubeStore

log = logging.getLogger(__name__)

QUEUE = 1000
SENDERS = 4


class BackgroundEvents:
    """A sink with the Store's `create`, for volcanic.kube.events.Recorder."""

    def __init__(self, store: KubeStore) -> None:
        self.store = store
        self.dropped = 0
        self._queue: queue.Queue[Obj] = queue.Queue(QUEUE)
        for i in range(SENDERS):
            threading.Thread(target=self._send, name=f"events-{i}", daemon=True).start()

    def create(self, event: Obj) -> Obj:
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            self.dropped += 1
        return event

    def _send(self) -> None:
        while True:
            event = self._queue.get()
            try:
                self.store.create(event)
            except StoreError as e:
                log.debug("event %s not recorded: %s", event["metadata"].get("name"), e)
