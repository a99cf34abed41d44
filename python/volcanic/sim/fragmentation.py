"""GPU fragmentation as the FGD paper defines it (Weng et al., USENIX ATC'23): the share of
the cluster's GPU capacity that the workload's pods cannot use, given where the pods are.

The workload is a distribution of pod shapes (CPU, cards, percent of each card, GPU models),
the most popular covering 95% of the pods, renormalised. A node's fragmentation for a shape is
all its free GPU when the shape asks for no GPU or cannot fit there (CPU, model, or too few
cards with its share free), else the free shares of the cards too small for it; the node's
expected fragmentation weighs the shapes. The same definition scores nodes in the native `fgd`
plugin (src/volcanic/plugins/fgd.cc), which `fgd_argument` feeds with a trace's shapes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable

from volcanic.kube.objects import annotation, dig
from volcanic.kube.quantity import parse_quantity
from volcanic.sim.openb import MODEL_LABEL
from volcanic.sim.trace import VGPU_CORES, VGPU_NUMBER, VGPU_REGISTER, Obj, requests_of

COVERAGE = 0.95


@dataclass(frozen=True)
class Shape:
    cpu: int  # milli-CPU
    gpus: int  # cards
    cores: int  # percent of each card
    models: tuple[str, ...] = ()  # GPU models it may use; () for any
    weight: float = 1.0


def pod_shape(pod: Obj, requests: dict[str, float] | None = None) -> Shape:
    """A pod's shape: its CPU, its vGPU ask, and the models its node affinity allows;
    `requests`: its requests_of when the caller has them already."""
    req = requests_of(pod) if requests is None else requests
    gpus = int(req.get(VGPU_NUMBER, 0))
    return Shape(round(req.get("cpu", 0.0) * 1000), gpus, int(req.get(VGPU_CORES, 0)) if gpus else 0,
                 tuple(sorted(_models(pod))))


def _models(pod: Obj) -> list[str]:
    required = dig(pod, "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution") or {}
    return [v for term in required.get("nodeSelectorTerms") or () for e in term.get("matchExpressions") or ()
            if e.get("key") == MODEL_LABEL and e.get("operator") == "In" for v in e.get("values") or ()]


def typical_shapes(shapes: Iterable[Shape]) -> list[Shape]:
    """The most popular of the pods' shapes covering 95% of the pods, weights summing to 1."""
    counts = Counter(shapes)
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])  # stable: ties keep first-seen order
    total, kept, out = sum(counts.values()), 0, []
    for shape, n in ranked:
        if kept >= COVERAGE * total:
            break
        kept += n
        out.append(shape)
    return [Shape(s.cpu, s.gpus, s.cores, s.models, counts[s] / kept) for s in out]


def fgd_argument(shapes: list[Shape]) -> list[dict[str, Any]]:
    """The shapes as the fgd plugin's `fgd.shapes` argument."""
    return [{"cpu": f"{s.cpu}m", "gpus": s.gpus, "cores": s.cores, "models": list(s.models), "weight": s.weight}
            for s in shapes]


@dataclass
class GpuNode:
    model: str
    cpu_left: int  # milli
    uuids: list[str]
    free: list[int]  # percent of each card


def fragmentation(node: GpuNode, shapes: list[Shape]) -> float:
    """The node's expected fragmentation, in card percent."""
    total = 0.0
    left = sum(node.free)
    for s in shapes:
        hosts = sum(f >= s.cores for f in node.free)
        usable = (s.gpus > 0 and node.cpu_left >= s.cpu and hosts >= s.gpus
                  and (not s.models or node.model in s.models))
        total += s.weight * (sum(f for f in node.free if f < s.cores) if usable else left)
    return total


class Ledger:
    """The cluster's GPU nodes as pods come and go, with their fragmentation kept per node."""

    def __init__(self, nodes: Iterable[Obj], shapes: list[Shape]) -> None:
        self.shapes = shapes
        self.nodes: dict[str, GpuNode] = {}
        for n in nodes:
            cards = [c.split(",") for c in (annotation(n, VGPU_REGISTER) or "").split(":")
                     if c.count(",") >= 5]
            if cards:
                cpu = float(parse_quantity(n["status"]["allocatable"]["cpu"], f"Node {n['metadata']['name']}")[0])
                model = cards[0][3].removeprefix("NVIDIA-")
                self.nodes[n["metadata"]["name"]] = GpuNode(model, round(cpu * 1000), [c[0] for c in cards],
                                                            [100] * len(cards))
        self.capacity = 100.0 * sum(len(n.free) for n in self.nodes.values())  # card percent
        self.allocated = 0.0
        self._frag = {name: fragmentation(n, shapes) for name, n in self.nodes.items()}
        self.fragmented = sum(self._frag.values())

    def place(self, node: str, cpu: int, cards: str, sign: int = 1) -> None:
        """Accounts a pod on `node` (sign -1: gone): its milli-CPU, and the cards its
        volcano.sh/vgpu-ids-new annotation names ("UUID,type,memory,cores:" per card)."""
        n = self.nodes.get(node)
        if n is None:
            return
        n.cpu_left -= sign * cpu
        for card in cards.replace(";", ":").split(":"):
            fields = card.split(",")
            if len(fields) >= 4 and fields[0] in n.uuids:
                n.free[n.uuids.index(fields[0])] -= sign * int(fields[3])
                self.allocated += sign * int(fields[3])
        self.fragmented -= self._frag[node]
        self._frag[node] = fragmentation(n, self.shapes)
        self.fragmented += self._frag[node]

    def shares(self) -> tuple[float, float]:
        """(allocated, fragmented) as shares of the GPU capacity."""
        if not self.capacity:
            return 0.0, 0.0
        return self.allocated / self.capacity, self.fragmented / self.capacity
