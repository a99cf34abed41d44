"""Kubernetes resource quantities in Python: exact parsing and summing (for PodGroup
minResources and pod requests), with a plain canonical form on output."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Iterable

_SUFFIX = {"": 1, "m": Fraction(1, 1000), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
           "P": 10**15, "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
           "Pi": 2**50, "Ei": 2**60}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?)$")

Resources = dict[str, Fraction]


def parse_quantity(value: Any, field: str) -> Fraction:
    """The exact value of a quantity ("100m", "1Gi", "2", 1.5); ValueError naming `field`."""
    if isinstance(value, bool):
        raise ValueError(f"{field}: invalid quantity {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(str(value))
    m = _QUANTITY.match(value.strip()) if isinstance(value, str) else None
    if not m:
        raise ValueError(f"{field}: invalid quantity {value!r}")
    number = Fraction(m.group(1))
    if m.group(2):
        return number * Fraction(10) ** int(m.group(2)[1:])
    return number * _SUFFIX[m.group(3) or ""]


def format_quantity(value: Fraction) -> str:
    """Canonical enough for Kubernetes: whole values as integers (binary suffix when exact
    and at least 1Ki), others in milli-units rounded up, as the API server rounds."""
    if value.denominator == 1:
        n = value.numerator
        for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
            if n and n % _SUFFIX[suffix] == 0 and abs(n) >= 1024:
                return f"{n // _SUFFIX[suffix]}{suffix}"
        return str(n)
    milli = -((-value * 1000).__floor__())
    return f"{milli}m"


def add(into: Resources, other: Resources, times: int = 1) -> Resources:
    for name, q in other.items():
        into[name] = into.get(name, Fraction(0)) + q * times
    return into


def resource_list(raw: Any, field: str) -> Resources:
    if not raw:
        return {}
    if not isinstance(raw, dict):
        raise ValueError(f"{field}: must be a map of resource quantities")
    return {str(k): parse_quantity(v, f"{field}.{k}") for k, v in raw.items()}


def pod_requests(spec: dict, field: str = "spec") -> Resources:
    """What a pod asks for, as Kubernetes computes it: the sum over containers (requests,
    else limits), at least the largest init container, plus overhead."""
    def requests_of(c: dict, where: str) -> Resources:
        res = c.get("resources") or {}
        out = resource_list(res.get("limits"), f"{where}.resources.limits")
        out.update(resource_list(res.get("requests"), f"{where}.resources.requests"))
        return out

    total: Resources = {}
    for i, c in enumerate(spec.get("containers") or []):
        add(total, requests_of(c, f"{field}.containers[{i}]"))
    for i, c in enumerate(spec.get("initContainers") or []):
        for name, q in requests_of(c, f"{field}.initContainers[{i}]").items():
            total[name] = max(total.get(name, Fraction(0)), q)
    return add(total, resource_list(spec.get("overhead"), f"{field}.overhead"))


def to_strings(resources: Resources) -> dict[str, str]:
    return {name: format_quantity(q) for name, q in sorted(resources.items())}


def total(items: Iterable[Resources]) -> Resources:
    out: Resources = {}
    for r in items:
        add(out, r)
    return out
