"""Queue builders and AdmissionRequest makers for the Queue admission tests
(test_admission_queues.py, test_admission_queue_hierarchy.py)."""

from __future__ import annotations

from typing import Any

from builders import StaticLister as Lister
from volcanic.admission.chain import AdmissionRequest

# --- Helpers --------------------------------------------------------------------------------

def queue(name: str, parent: str | None = None, state: str | None = "Open", capability: dict | None = None,
          deserved: dict | None = None, guarantee: dict | None = None, annotations: dict | None = None,
          allocated: dict | None = None, **spec: Any) -> dict:
    q: dict[str, Any] = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                         "metadata": {"name": name}, "spec": {"weight": 1, **spec}}
    if parent is not None:
        q["spec"]["parent"] = parent
    for field, value in (("capability", capability), ("deserved", deserved)):
        if value is not None:
            q["spec"][field] = value
    if guarantee is not None:
        q["spec"]["guarantee"] = {"resource": guarantee}
    if annotations is not None:
        q["metadata"]["annotations"] = annotations
    status = {}
    if state is not None:
        status["state"] = state
    if allocated is not None:
        status["allocated"] = allocated
    if status:
        q["status"] = status
    return q


ROOT = queue("root", reclaimable=False)
DEFAULT = queue("default", parent="root", reclaimable=True)


def create(obj: dict, *stored: dict) -> AdmissionRequest:
    return AdmissionRequest("CREATE", obj, None, Lister(ROOT, DEFAULT, *stored))


def update(obj: dict, old: dict, *stored: dict) -> AdmissionRequest:
    return AdmissionRequest("UPDATE", obj, old, Lister(ROOT, DEFAULT, old, *stored))


def delete(old: dict, *stored: dict) -> AdmissionRequest:
    return AdmissionRequest("DELETE", None, old, Lister(ROOT, DEFAULT, old, *stored))


def chain_of(depth: int) -> list[dict]:
    """Queues q1 (child of root) .. q<depth>, each the parent of the next."""
    return [queue(f"q{i}", parent="root" if i == 1 else f"q{i - 1}") for i in range(1, depth + 1)]
