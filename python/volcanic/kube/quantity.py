"""Kubernetes resource quantities (k8s.io/apimachinery resource.Quantity) in Python: exact
parsing, sums, and the canonical form Quantity.String() writes, for PodGroup minResources."""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

_QUANTITY = re.compile(r"^([+-]?)(\d+\.?\d*|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$")
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BINARY_SUFFIX = {v: k for k, v in _BINARY.items()}

Quantity = tuple[Fraction, str]  # value, format ("DecimalSI", "BinarySI" or "DecimalExponent")
Resources = dict[str, Quantity]


def parse_quantity(value: Any, where: str = "quantity") -> Quantity:
    text = str(value).strip() if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None
    m = _QUANTITY.match(text or "")
    if not m:
        raise ValueError(f"{where}: invalid quantity {value!r}")
    sign, number, suffix = m.group(1), m.group(2), m.group(3) or ""
    amount = Fraction(number)
    if suffix in _BINARY:
        amount, fmt = amount * 1024 ** _BINARY[suffix], "BinarySI"
    elif suffix in _DECIMAL:
        amount, fmt = amount * Fraction(10) ** _DECIMAL[suffix], "DecimalSI"
    else:
        amount, fmt = amount * Fraction(10) ** int(suffix[1:]), "DecimalExponent"
    amount = Fraction(math.ceil(amount * 10 ** 9), 10 ** 9)  # nano precision, rounded up
    return (-amount if sign == "-" else amount), fmt


def format_quantity(q: Quantity) -> str:
    """Quantity.String(): the canonical form in the quantity's format."""
    value, fmt = q
    if value == 0:
        return "0"
    sign, value = ("-" if value < 0 else ""), abs(value)
    if fmt == "BinarySI" and value >= 1024 and value.denominator == 1:
        n, k = value.numerator, 0
        while k < 6 and n % 1024 == 0:
            n, k = n // 1024, k + 1
        return f"{sign}{n}{_BINARY_SUFFIX.get(k, '')}"
    exponent = -9
    while exponent < 18 and (value / Fraction(10) ** (exponent + 3)).denominator == 1:
        exponent += 3
    mantissa = value / Fraction(10) ** exponent
    if fmt == "DecimalExponent":
        return f"{sign}{mantissa.numerator}" + (f"e{exponent}" if exponent else "")
    return f"{sign}{mantissa.numerator}{_DECIMAL_SUFFIX[exponent]}"


def add_one(total: Resources, name: str, q: Quantity) -> None:
    """Adds q to total[name]; the sum keeps the format of the first non-zero term."""
    if name in total and total[name][0] != 0:
        total[name] = (total[name][0] + q[0], total[name][1])
    else:
        total[name] = (total.get(name, (Fraction(0), q[1]))[0] + q[0], q[1])


def _container_requests(container: Obj, where: str) -> dict[str, Quantity]:
    """The container's requests, a missing one defaulted from its limit (API defaulting)."""
    res = container.get("resources") or {}
    out = {name: parse_quantity(v, f"{where}.resources.limits.{name}")
           for name, v in (res.get("limits") or {}).items()}
    out.update({name: parse_quantity(v, f"{where}.resources.requests.{name}")
                for name, v in (res.get("requests") or {}).items()})
    return out


def pod_requests(spec: dict, where: str = "spec") -> Resources:
    """resourcehelper.PodRequests: the sum of the containers and restartable init containers,
    at least each init container's needs, plus overhead; a missing request defaults to the
    limit, as API defaulting does."""
    reqs: dict[str, Quantity] = {}
    for i, c in enumerate(spec.get("containers") or []):
        for name, q in _container_requests(c, f"{where}.containers[{i}]").items():
            add_one(reqs, name, q)
    sidecars: dict[str, Quantity] = {}
    init_max: dict[str, Quantity] = {}
    for i, c in enumerate(spec.get("initContainers") or []):
        own = _container_requests(c, f"{where}.initContainers[{i}]")
        if c.get("restartPolicy") == "Always":
            for name, q in own.items():
                add_one(reqs, name, q)
                add_one(sidecars, name, q)
            need = dict(sidecars)
        else:
            need = dict(own)
            for name, q in sidecars.items():
                add_one(need, name, q)
        for name, q in need.items():
            if name not in init_max or q[0] > init_max[name][0]:
                init_max[name] = q
    for name, q in init_max.items():
        if name not in reqs or q[0] > reqs[name][0]:
            reqs[name] = q
    for name, v in (spec.get("overhead") or {}).items():
        add_one(reqs, name, parse_quantity(v, f"{where}.overhead.{name}"))
    return reqs




def add(into: Resources, other: Resources, times: int = 1) -> Resources:
    """into += other x times."""
    for name, (value, fmt) in other.items():
        add_one(into, name, (value * times, fmt))
    return into


def to_strings(resources: Resources) -> dict[str, str]:
    return {name: format_quantity(q) for name, q in sorted(resources.items())}
