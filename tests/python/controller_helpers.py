"""A harness for the controller tests (test_controllers_basic.py, test_controllers_queue.py):
a MemoryStore, informers and controllers run on a virtual clock, with builders of the
objects they act on."""

from __future__ import annotations

from volcanic.cluster.clock import VirtualClock
from volcanic.cluster.store import MemoryStore
from volcanic.controllers.queue import CLOSED_BY_PARENT, ensure_default_queues
from volcanic.controllers.runtime import INDEXES, Context, Runner
from volcanic.kube.informers import Informers
from volcanic.kube.kinds import KINDS


class Harness:
    """A store, informers, the given controllers and a runner on a virtual clock."""

    def __init__(self, *controllers, scheduler_names=("volcano",), store_class=MemoryStore):
        self.clock = VirtualClock()
        self.store = store_class(clock=self.clock.now)
        ensure_default_queues(self.store)
        self.informers = Informers(self.store, list(KINDS), INDEXES)
        self.ctx = Context(store=self.store, lister=self.informers, clock=self.clock,
                           scheduler_names=scheduler_names)
        self.controllers = [c(self.ctx) for c in controllers]
        self.runner = Runner(self.informers, self.controllers, self.clock)
        self.settle()

    def settle(self):
        self.runner.settle()

    def run(self, seconds):
        """Advances the clock by `seconds`, running timers and controllers."""
        until = self.clock.now() + seconds
        self.settle()
        while self.clock.fire_next(until):
            self.settle()
        self.clock.advance_to(until)
        self.settle()

    # Objects.
    def queue(self, name, **spec):
        return self.store.create({"kind": "Queue", "metadata": {"name": name}, "spec": {"weight": 1, **spec}})

    def set_queue_state(self, name, state):
        q = self.store.get("Queue", name)
        self.store.update_status(dict(q, status=dict(q.get("status") or {}, state=state)))

    def podgroup(self, name, queue="default", phase="Pending", ns="ns"):
        pg = self.store.create({"kind": "PodGroup", "metadata": {"name": name, "namespace": ns},
                                "spec": {"minMember": 1, "queue": queue}})
        return self.store.update_status(dict(pg, status={"phase": phase}))

    def command(self, action, queue, name=None):
        target = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "name": queue,
                  "uid": self.store.get("Queue", queue)["metadata"]["uid"]}
        meta = {"name": name or f"{queue}-{action.lower()}", "namespace": "default"}
        return self.store.create({"kind": "Command", "metadata": meta, "action": action, "target": target})

    def state(self, name):
        return (self.store.get("Queue", name).get("status") or {}).get("state")

    def annotation(self, name, key=CLOSED_BY_PARENT):
        return (self.store.get("Queue", name)["metadata"].get("annotations") or {}).get(key)

    def events(self, reason=None, name=None, ns="default"):
        return [e for e in self.store.list("Event", ns)
                if (reason is None or e["reason"] == reason)
                and (name is None or e["involvedObject"]["name"] == name)]
