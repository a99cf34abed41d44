"""The embedded cluster's node metrics: what its simulated kubelets measure, standing in for the
monitoring system a scheduler configuration's `metrics:` section names (docs/cluster.md,
"Node load").

A node's load is what its Running pods use plus the node's own background use, in percent of
the node's capacity (its allocatable when it gives none): a pod uses what its annotations
`volcanic/sim-cpu-usage` and `volcanic/sim-memory-usage` say (quantities), else what it
requests; a node's own use is the same annotations on the Node. The load is the instant's,
where Prometheus averages ten minutes: a simulation changes only when its pods do.
"""

from __future__ import annotations

from fractions import Fraction
import logging

from volcanic.kube.clock import Clock
from volcanic.kube.informers import Informers
from volcanic.kube.objects import annotation, spec_of, status_of
from volcanic.kube.quantity import parse_quantity, pod_requests
from volcanic.scheduler.node_metrics import NodeLoad

CPU_USAGE = "volcanic/sim-cpu-usage"
MEMORY_USAGE = "volcanic/sim-memory-usage"
_ANNOTATIONS = {"cpu": CPU_USAGE, "memory": MEMORY_USAGE}
log = logging.getLogger(__name__)


def _use(obj: dict, requests: dict[str, Fraction]) -> dict[str, Fraction]:
    """What an object uses of cpu and memory: its annotation, else `requests` (a malformed
    annotation is logged and read as absent)."""
    use = {}
    for resource, key in _ANNOTATIONS.items():
        use[resource] = requests.get(resource, Fraction(0))
        value = annotation(obj, key)
        if value is not None:
            try:
                use[resource] = parse_quantity(value, f"{obj['kind']} {obj['metadata']['name']}: annotation {key}")[0]
            except ValueError as e:
                log.warning("%s", e)
    return use


class SimulatedNodeMetrics:
    remote = False

    def __init__(self, informers: Informers, clock: Clock) -> None:
        self.informers, self.clock = informers, clock

    def collect(self, nodes: list[str]) -> dict[str, NodeLoad]:
        wanted = set(nodes)
        measured = {n["metadata"]["name"]: n for n in self.informers.list("Node") if n["metadata"]["name"] in wanted}
        used = {name: _use(node, {}) for name, node in measured.items()}
        for pod in self.informers.list("Pod"):
            on = used.get(spec_of(pod).get("nodeName") or "")
            if on is None or status_of(pod).get("phase") != "Running":
                continue
            requests = {name: q[0] for name, q in pod_requests(spec_of(pod)).items()}
            for resource, amount in _use(pod, requests).items():
                on[resource] += amount
        now = self.clock.now()
        loads = {}
        for name, node in measured.items():
            size = _capacity(node)
            loads[name] = NodeLoad(_percent(used[name]["cpu"], size["cpu"]),
                                   _percent(used[name]["memory"], size["memory"]), now)
        return loads


def _capacity(node: dict) -> dict[str, Fraction]:
    status = status_of(node)
    listed = status.get("capacity") or status.get("allocatable") or {}
    return {r: parse_quantity(listed[r], f"Node {node['metadata']['name']}: status.capacity.{r}")[0]
            if r in listed else Fraction(0) for r in _ANNOTATIONS}


def _percent(used: Fraction, size: Fraction) -> float:
    return float(used * 100 / size) if size else 0.0
