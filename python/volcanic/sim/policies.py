"""Named scheduler configurations for `volcanic simulate --policy NAME`."""

from __future__ import annotations

from volcanic.errors import ConfigError
from volcanic.sim.trace import GPU_SHARE

_TIER1 = "- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n"
_TIER2 = "- plugins:\n  - name: overcommit\n  - name: drf\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n"

POLICIES: dict[str, str | None] = {
    # Volcano's default configuration.
    "volcano": None,
    # Best fit: nodeorder's spreading turned off, binpack weighting the GPU share first.
    "binpack": ("actions: enqueue, allocate, backfill\ntiers:\n" + _TIER1 + _TIER2
                + "    arguments: {leastrequested.weight: 0, balancedresource.weight: 0}\n"
                + f"  - name: binpack\n    arguments: {{binpack.weight: 10, binpack.resources: {GPU_SHARE}, "
                + f"binpack.resources.{GPU_SHARE}: 2}}\n"),
}


def policy_conf(name: str) -> str | None:
    if name not in POLICIES:
        raise ConfigError(f"policy {name!r}: unknown; known policies: {', '.join(sorted(POLICIES))}")
    return POLICIES[name]
