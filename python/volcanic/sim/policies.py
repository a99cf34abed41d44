"""Named scheduler configurations for `volcanic simulate --policy NAME`.

Every one turns on deviceshare's vGPU accounting, so pods sharing a GPU fit inside one card:
- volcano: Volcano's default configuration.
- binpack: best fit: nodeorder's spreading off, binpack weighting GPU cores first, and cards
  packed (deviceshare's binpack order).
- random: random fit: the random plugin alone orders the nodes (seeded).
- fgd: Fragmentation Gradient Descent, with the trace's pod shapes as its workload.
"""

from __future__ import annotations

from typing import Any

from volcanic.errors import ConfigError
from volcanic.sim.fragmentation import fgd_argument, pod_shape, typical_shapes
from volcanic.sim.trace import VGPU_CORES, Trace

POLICIES = ("volcano", "binpack", "random", "fgd")
_TIER1 = {"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]}


def _deviceshare(card_order: str = "") -> dict[str, Any]:
    return {"name": "deviceshare", "arguments": {"deviceshare.VGPUEnable": True,
                                                 "deviceshare.SchedulePolicy": card_order}}


def _conf(*scorers: dict[str, Any], card_order: str = "", spread_off: bool = False) -> dict[str, Any]:
    nodeorder: dict[str, Any] = {"name": "nodeorder"}
    if spread_off:
        nodeorder["arguments"] = {"leastrequested.weight": 0, "balancedresource.weight": 0}
    plugins = [{"name": "overcommit"}, {"name": "drf"}, {"name": "predicates"}, {"name": "proportion"},
               _deviceshare(card_order)]
    plugins += [nodeorder] if not scorers or spread_off else []
    return {"actions": "enqueue, allocate, backfill", "tiers": [_TIER1, {"plugins": plugins + list(scorers)}]}


def policy_conf(name: str, trace: Trace | None = None, seed: int = 0) -> dict[str, Any]:
    """The configuration named `name`; fgd takes its workload from `trace`'s pods."""
    if name == "volcano":
        return _conf()
    if name == "binpack":
        return _conf({"name": "binpack", "arguments": {"binpack.weight": 10, "binpack.resources": VGPU_CORES,
                                                       f"binpack.resources.{VGPU_CORES}": 2}},
                     card_order="binpack", spread_off=True)
    if name == "random":
        return _conf({"name": "random", "arguments": {"random.seed": seed}})
    if name == "fgd":
        pods = [o for a in (trace.arrivals if trace else ()) for o in a.objects if o.get("kind") == "Pod"]
        args = {"fgd.shapes": fgd_argument(typical_shapes(map(pod_shape, pods)))} if pods else {}
        return _conf({"name": "fgd", "arguments": args}, card_order="binpack")
    raise ConfigError(f"policy {name!r}: unknown; known policies: {', '.join(POLICIES)}")
