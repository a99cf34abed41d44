"""The queues every Volcano installation has, as Volcano's scheduler creates them when missing
(pkg/scheduler/cache/cache.go newDefaultAndRootQueue, v1.15.1): `root`, not reclaimable, and
`default`, reclaimable, both of weight 1 and without a parent. `volcanic install` applies them
and the embedded cluster creates them; both from here."""

from __future__ import annotations

from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj

DEFAULT_QUEUE_SPECS: dict[str, dict] = {"root": {"weight": 1, "reclaimable": False},
                                        "default": {"weight": 1, "reclaimable": True}}


def default_queues(default: str = "default") -> list[Obj]:
    """`root` and the default queue, named `default` unless the scheduler's --default-queue
    names another."""
    return [{"apiVersion": KINDS["Queue"].api_version, "kind": "Queue",
             "metadata": {"name": default if name == "default" else name}, "spec": dict(spec)}
            for name, spec in DEFAULT_QUEUE_SPECS.items()]
