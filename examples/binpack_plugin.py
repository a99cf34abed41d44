"""binpack as a Python scheduler plugin: Volcano's binpack score through batch_node_order.

It gives exactly the scores of the built-in `binpack` (src/volcanic/plugins/binpack.cc) with
the same arguments, so a configuration can swap one for the other and get the same
decisions; `volcanic bench --plugin examples/binpack_plugin.py` compares their speed.

    import runpy, volcanic
    runpy.run_path("examples/binpack_plugin.py")        # registers "py-binpack"
    conf = {"actions": "enqueue, allocate, backfill",
            "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}]},
                      {"plugins": [{"name": "predicates"}, {"name": "proportion"},
                                   {"name": "py-binpack", "arguments": {"binpack.cpu": 2}}]}]}
    volcanic.schedule(objects, conf)

The score of a node for a task, over the weighted resources the task requests:
Σ (used + request) / allocatable × weight, divided by Σ weight, × 100 × binpack.weight; 0 when
any of those resources would overflow the node. Arguments, as Volcano's binpack reads them:
binpack.weight (1), binpack.cpu (1), binpack.memory (1), binpack.resources ("a,b": more
resources, each weighted by binpack.resources.<name>, default 1); a negative resource weight
counts as 1. Quantities are engine units (cpu millicores, memory bytes, others milli-units),
and only their ratios matter here.

node_local holds: the score reads only the task's requests (part of its class) and the
node's own allocatable and used resources, and a node's score ignores the rest of the batch.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import volcanic
from volcanic.scheduler.plugins import NodeView, TaskView

KNOWN_ARGUMENTS = ("binpack.weight", "binpack.cpu", "binpack.memory", "binpack.resources")


def _number(arguments: Mapping[str, Any], key: str, default: float) -> float:
    """A float argument; numbers written as strings count, as in Volcano's configuration."""
    value = arguments.get(key, default)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"argument {key} must be a finite number, got {value!r}") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(f"argument {key} must be a finite number, got {value!r}")
    return number


class BinpackPlugin(volcanic.Plugin):
    """Prefers the nodes a task fills most (Volcano's binpack)."""

    name = "py-binpack"
    node_local = True

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        super().__init__(arguments)
        for key in arguments:
            if key not in KNOWN_ARGUMENTS and not key.startswith("binpack.resources."):
                raise ValueError(f'unknown argument "{key}"; known arguments: {", ".join(KNOWN_ARGUMENTS)}, '
                                 "binpack.resources.<name>")
        self.weight = _number(arguments, "binpack.weight", 1)
        weights = [("cpu", _number(arguments, "binpack.cpu", 1)), ("memory", _number(arguments, "binpack.memory", 1))]
        extra = arguments.get("binpack.resources", "")
        if not isinstance(extra, (str, int, float)) or isinstance(extra, bool):
            raise ValueError(f"argument binpack.resources must be a string, got {extra!r}")
        for name in (n.strip() for n in str(extra).split(",")):
            if name:
                weights.append((name, _number(arguments, f"binpack.resources.{name}", 1)))
        # Volcano resets a negative weight to 1.
        self.weights = [(name, 1.0 if w < 0 else w) for name, w in weights]

    def batch_node_order(self, task: TaskView, nodes: Sequence[NodeView]) -> list[float]:
        if self.weight == 0:
            return [0.0] * len(nodes)
        request = task.resreq
        # The weighted resources this task asks for, the same for every node (a plain loop:
        # this runs once per call, and most calls score one or two nodes).
        wanted = []
        weight_sum = 0.0
        for name, w in self.weights:
            amount = request[name]
            if amount > 0:
                wanted.append((name, amount, w))
                weight_sum += w
        scores = []
        for node in nodes:
            allocatable, used = node.allocatable, node.used
            score = 0.0
            for name, amount, w in wanted:
                alloc = allocatable[name]
                after = used[name] + amount
                if after > alloc:
                    score = -1.0  # would overflow: the node scores 0
                    break
                if alloc > 0 and w != 0:
                    score += after * w / alloc
            if score < 0:
                scores.append(0.0)
                continue
            if weight_sum > 0:
                score /= weight_sum
            scores.append(score * 100 * self.weight)
        return scores


volcanic.register_plugin(BinpackPlugin)
