"""Kubernetes resource quantities (k8s.io/apimachinery resource.Quantity) in Python: parsing
and the pod-request rule are the engine's (one implementation for the scheduler and the
controllers); exact sums and the canonical form Quantity.String() writes stay here, for
PodGroup minResources."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from volcanic import _core

_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BINARY_SUFFIX = {v: k for k, v in _BINARY.items()}
_NANO = 10 ** 9

Quantity = tuple[Fraction, str]  # value, format ("DecimalSI", "BinarySI" or "DecimalExponent")
Resources = dict[str, Quantity]


def parse_quantity(value: Any, where: str = "quantity") -> Quantity:
    """The exact value (nano precision, rounded up) and format of a quantity given as a string
    or a number; ValueError naming `where` for anything else. The engine's parser: the same
    grammar and range (|value| < 2^63) as the scheduler reads."""
    try:
        nanos, fmt = _core.parse_quantity(value)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    return Fraction(nanos, 10 ** 9), fmt


def format_quantity(q: Quantity) -> str:
    """Quantity.String(): the canonical form in the quantity's format."""
    value, fmt = q
    if _NANO % value.denominator:  # finer than nanos (parse_quantity never gives one): as is
        return _decimal("-" if value < 0 else "", (abs(value) * _NANO).numerator, -9, fmt)
    return format_nanos(value.numerator * (_NANO // value.denominator), fmt)


def format_nanos(nanos: int, fmt: str) -> str:
    """format_quantity of nanos / 10^9, in integers only (no Fraction: the controllers format
    a pod's requests for every PodGroup they make)."""
    if nanos == 0:
        return "0"
    sign, nanos = ("-" if nanos < 0 else ""), abs(nanos)
    if fmt == "BinarySI" and nanos >= 1024 * _NANO and nanos % _NANO == 0:
        n, k = nanos // _NANO, 0
        while k < 6 and n % 1024 == 0:
            n, k = n // 1024, k + 1
        return f"{sign}{n}{_BINARY_SUFFIX.get(k, '')}"
    # The largest exponent (a multiple of 3, -9..18) with a whole mantissa.
    exponent = -9
    while exponent < 18 and nanos % 1000 == 0:
        nanos, exponent = nanos // 1000, exponent + 3
    return _decimal(sign, nanos, exponent, fmt)


def _decimal(sign: str, mantissa: int, exponent: int, fmt: str) -> str:
    if fmt == "DecimalExponent":
        return f"{sign}{mantissa}" + (f"e{exponent}" if exponent else "")
    return f"{sign}{mantissa}{_DECIMAL_SUFFIX[exponent]}"


def add_one(total: Resources, name: str, q: Quantity) -> None:
    """Adds q to total[name]; the sum keeps the format of the first non-zero term."""
    if name in total and total[name][0] != 0:
        total[name] = (total[name][0] + q[0], total[name][1])
    else:
        total[name] = (total.get(name, (Fraction(0), q[1]))[0] + q[0], q[1])


def pod_requests(spec: dict, where: str = "spec") -> Resources:
    """A pod spec's requests by the engine's rule (src/volcanic/api/pod_requests.h: Kubernetes'
    PodRequests, sidecar init containers included, plus overhead; a missing request defaults to
    the limit), at the engine's precision (milli-units, whole bytes). ValueError names the field
    under `where` for a bad quantity."""
    return {name: (Fraction(milli, 1000), fmt) for name, (milli, fmt) in pod_requests_milli(spec, where).items()}


_REQUEST_FIELDS = ("containers", "initContainers", "overhead")  # all the rule reads of a spec


def pod_requests_milli(spec: dict, where: str = "spec") -> dict[str, tuple[int, str]]:
    """pod_requests in integer milli-units: resource -> (milli, format)."""
    if isinstance(spec, dict):  # the engine converts what it is given: not the affinity, volumes, ...
        spec = {k: spec[k] for k in _REQUEST_FIELDS if k in spec}
    return _core.pod_requests(spec, where)


def add(into: Resources, other: Resources, times: int = 1) -> Resources:
    """into += other x times."""
    for name, (value, fmt) in other.items():
        add_one(into, name, (value * times, fmt))
    return into


def to_strings(resources: Resources) -> dict[str, str]:
    return {name: format_quantity(q) for name, q in sorted(resources.items())}
