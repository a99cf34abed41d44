"""What `volcanic scheduler`'s engine is shown of the cluster, by Volcano's scheduler flags
(cmd/scheduler/app/options/options.go; their effects in pkg/scheduler/cache):

- `--scheduler-name` (repeatable): the pods whose spec.schedulerName is any of the names are
  the scheduler's. The engine serves one name, `volcano` (src/volcanic/api/parse.h), so a pod
  of another given name is shown to it as `volcano`'s, and a `volcano` pod, when `volcano` is
  not among the names, as another scheduler's (it then only uses its node's resources, if
  bound). Only the engine's copy is renamed: the object written back is the cluster's.
- `--node-selector key:value` (repeatable, comma-separated): only nodes with at least one of
  those labels are in the cache (cache.go updateNodeSelectors, event_handlers.go
  nodeCanAddCache); an entry without `:` or with nothing after it is skipped, as Volcano
  skips it. A node that stops matching leaves the engine.
- `--default-queue`: a PodGroup with no spec.queue is in this queue (setPodGroup), and the
  queue is created at start when missing, with `root` (newDefaultAndRootQueue).
- `--priority-class=false` (or the PriorityClass feature gate off): PriorityClasses are not
  read, so every job has priority 0.
"""

from __future__ import annotations

from dataclasses import dataclass
import logging
from typing import Any

from volcanic.kube.errors import StoreError
from volcanic.kube.objects import labels_of, spec_of
from volcanic.kube.queues import default_queues
from volcanic.kube.store import Store

log = logging.getLogger("volcanic.scheduler")

ENGINE_NAME = "volcano"         # the schedulerName the engine serves
NOT_OURS = "default-scheduler"  # what the API server fills in for a pod that names none


def node_selector(entries: list[str]) -> frozenset[str]:
    """`--node-selector` values as Volcano keeps them: "key:value", spaces around each trimmed;
    entries without a key-value separator or with nothing after it are dropped."""
    selected = set()
    for entry in entries:
        index = entry.find(":")
        if index < 0 or index >= len(entry) - 1:
            continue
        selected.add(f"{entry[:index].strip()}:{entry[index + 1:].strip()}")
    return frozenset(selected)


def component_name(scheduler_names: tuple[str, ...]) -> str:
    """The scheduler's Event source (pkg/util GenerateComponentName): its name when it has
    one, else `volcano`."""
    return scheduler_names[0] if len(scheduler_names) == 1 else ENGINE_NAME


@dataclass(frozen=True)
class EngineView:
    scheduler_names: tuple[str, ...] = (ENGINE_NAME,)
    node_selector: frozenset[str] = frozenset()
    default_queue: str = "default"
    priority_classes: bool = True

    def __call__(self, obj: dict) -> dict | None:
        kind = obj.get("kind")
        if kind == "Pod":
            return self._pod(obj)
        if kind == "Node" and self.node_selector:
            labels = labels_of(obj)
            return obj if any(f"{k}:{v}" in self.node_selector for k, v in labels.items()) else None
        if kind == "PodGroup" and self.default_queue != "default" and not spec_of(obj).get("queue"):
            return _with_spec(obj, "queue", self.default_queue)
        if kind == "PriorityClass" and not self.priority_classes:
            return None
        return obj

    def _pod(self, pod: dict) -> dict:
        name = spec_of(pod).get("schedulerName") or NOT_OURS
        ours = name in self.scheduler_names
        if ours == (name == ENGINE_NAME):
            return pod
        return _with_spec(pod, "schedulerName", ENGINE_NAME if ours else NOT_OURS)


def _with_spec(obj: dict, field: str, value: Any) -> dict:
    """A shallow copy with spec[field] = value (the cached original is shared: never changed)."""
    return {**obj, "spec": {**spec_of(obj), field: value}}


def ensure_queues(store: Store, default_queue: str) -> None:
    """Creates `root` and the default queue when missing, as Volcano's scheduler does at start
    (a Forbidden create, as under volcanic's own RBAC, where install creates them, is logged)."""
    for queue in default_queues(default_queue):
        name = queue["metadata"]["name"]
        try:
            if store.get("Queue", name) is None:
                store.create(queue)
                log.info("scheduler: created queue %s", name)
        except StoreError as e:
            log.error("scheduler: queue %s missing and not created: %s", name, e)
