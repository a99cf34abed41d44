"""Reading stored Queues without trusting their shape, and the resource arithmetic of
Volcano's scheduler that the hierarchical queue checks use (api.NewResource: cpu and scalar
resources in milli-units, memory in bytes; "pods", "ephemeral-storage" and other plain names
take no part). Shared by the queue admission rules (queues.py)."""

from __future__ import annotations

from fractions import Fraction
import math
from typing import Any

from volcanic.admission.chain import AdmissionRequest
from volcanic.admission.common import quantity
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj, as_map, meta_of, spec_of
from volcanic.kube.quantity import format_quantity, parse_quantity

# --- Reading objects without trusting their shape ------------------------------------------

def queue_name(q: Any) -> str:
    name = meta_of(q).get("name")
    return name if isinstance(name, str) else ""


def parent_of(q: Any) -> str:
    parent = spec_of(q).get("parent")
    return parent if isinstance(parent, str) else ""


def capability_of(q: Any) -> dict:
    return as_map(spec_of(q).get("capability"))


def deserved_of(q: Any) -> dict:
    return as_map(spec_of(q).get("deserved"))


def guarantee_of(q: Any) -> dict:
    return as_map(as_map(spec_of(q).get("guarantee")).get("resource"))


def get_queue(request: AdmissionRequest, name: str) -> Obj | None:
    try:
        q = request.lister.get("Queue", name)
    except Exception:  # a lister that cannot answer is a missing queue
        return None
    return q if isinstance(q, dict) else None


def all_queues(request: AdmissionRequest) -> list[Obj]:
    try:
        return [q for q in request.lister.list("Queue") or () if isinstance(q, dict)]
    except Exception:
        return []


def children_of(request: AdmissionRequest, name: str) -> list[Obj]:
    """Stored queues whose spec.parent is `name` (listQueueChild / GetQueuesByParent)."""
    return [q for q in all_queues(request) if parent_of(q) == name]


def not_found(name: str) -> str:
    """The lister's NotFound error for a queue."""
    return KINDS["Queue"].not_found(name, plural=False)


def aggregate(errors: list[str]) -> str | None:
    """Kubernetes' aggregate error: one message, or "[m1, m2]" for several."""
    if not errors:
        return None
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def parsed(value: Any) -> tuple[Fraction, str] | None:
    try:
        return parse_quantity(value)
    except (ValueError, TypeError, ArithmeticError):
        return None


def qstr(value: Any) -> str:
    """Quantity.String() of a stored quantity (its canonical form)."""
    q = parsed(value)
    return format_quantity(q) if q is not None else str(value)


def same_resources(a: dict, b: dict) -> bool:
    """equality.Semantic.DeepEqual of two ResourceLists: same names, equal quantities (an
    absent list and an empty one are equal)."""
    if set(a) != set(b):
        return False

    def value(v: Any) -> Any:
        q = quantity(v)
        return q if q is not None else v
    return all(value(a[k]) == value(b[k]) for k in a)


# --- Volcano's scheduler Resource, for the hierarchical checks ------------------------------

def is_scalar(name: str) -> bool:
    """v1helper.IsScalarResourceName: extended, prefixed-native, hugepages, attachable volumes."""
    return "/" in name or name.startswith("hugepages-") or name.startswith("attachable-volumes-")


def to_resource(rl: dict) -> dict[str, int]:
    """api.NewResource: cpu and scalars in milli-units, memory in bytes (rounded up)."""
    out: dict[str, int] = {}
    for name, value in rl.items():
        q = quantity(value)
        if q is None or not isinstance(name, str):
            continue
        if name == "cpu":
            out["cpu"] = out.get("cpu", 0) + math.ceil(q * 1000)
        elif name == "memory":
            out["memory"] = out.get("memory", 0) + math.ceil(q)
        elif is_scalar(name):
            out[name] = out.get(name, 0) + math.ceil(q * 1000)
    return out


def add_resource(total: dict[str, int], more: dict[str, int]) -> None:
    for name, value in more.items():
        total[name] = total.get(name, 0) + value


def less_partly(left: dict[str, int], right: dict[str, int]) -> bool:
    """Resource.LessPartly(right, Zero): some resource of `left` (absent = 0) is below `right`."""
    names = {"cpu", "memory"} | set(left) | set(right)
    return any(left.get(n, 0) < right.get(n, 0) for n in names)


def resource_string(r: dict[str, int]) -> str:
    """Resource.String(): "cpu 2000.00, memory 0.00, nvidia.com/gpu 1000.00"."""
    text = f"cpu {r.get('cpu', 0):.2f}, memory {r.get('memory', 0):.2f}"
    for name in sorted(n for n in r if n not in ("cpu", "memory")):
        text += f", {name} {r[name]:.2f}"
    return text


def format_single(name: str, value: int) -> str:
    """formatResourceWithType: cpu as a milli quantity, memory as bytes, others "%.2f"."""
    if name == "cpu":
        return format_quantity((Fraction(int(value), 1000), "DecimalSI"))
    if name == "memory":
        return format_quantity((Fraction(int(value)), "BinarySI"))
    return f"{value:.2f}"
