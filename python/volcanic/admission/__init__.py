"""Volcano's admission rules (reference §3) as plain functions, one module per resource:
jobs, pods, podgroups, queues, commands. Each module has `mutators(conf)` and
`validators(conf)` returning its rules in the order Volcano applies them; a rule is a
function of an AdmissionRequest (cluster/admission.py) that returns the object to store
(a mutator) or None / a denial message (a validator). The embedded cluster runs them on
every write; `volcanic.admission.review` hosts them over AdmissionReview for a webhook.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from volcanic.admission.chain import AdmissionChain


@dataclass(frozen=True)
class AdmissionConf:
    """The webhook manager's flags that rules read (cmd/webhook-manager options)."""

    scheduler_names: tuple[str, ...] = ("volcano",)   # --scheduler-name
    max_queue_depth: int = 5                          # --max-queue-depth
    root_queue_protection: bool = True                # --enable-root-queue-protection
    queue_allocated_pods_check: bool = False          # --enable-queue-allocated-pods-check
    resource_groups: tuple[dict[str, Any], ...] = field(default_factory=tuple)  # --admission-conf
    feature_gates: frozenset[str] = frozenset()       # --feature-gates that are on


KINDS = {"Job": "jobs", "Pod": "pods", "PodGroup": "podgroups", "Queue": "queues", "Command": "commands"}
# The operations each admission path is registered for, as Volcano's chart registers its
# webhooks (installer/helm/chart/volcano/templates/webhooks.yaml): the API server calls a
# rule only for those, and so does the embedded cluster. Commands have no Volcano webhook;
# volcanic checks them on CREATE.
OPERATIONS: dict[tuple[str, str], tuple[str, ...]] = {
    ("Job", "mutate"): ("CREATE",), ("Job", "validate"): ("CREATE", "UPDATE"),
    ("Pod", "mutate"): ("CREATE",), ("Pod", "validate"): ("CREATE",),
    ("PodGroup", "mutate"): ("CREATE",), ("PodGroup", "validate"): ("CREATE",),
    ("Queue", "mutate"): ("CREATE",), ("Queue", "validate"): ("CREATE", "UPDATE", "DELETE"),
    ("Command", "mutate"): ("CREATE",), ("Command", "validate"): ("CREATE",),
}


def volcano_chain(conf: AdmissionConf | None = None) -> AdmissionChain:
    """The admission chain of a Volcano installation."""
    import importlib
    conf = conf or AdmissionConf()
    chain = AdmissionChain(operations=dict(OPERATIONS))
    for kind, module_name in KINDS.items():
        module = importlib.import_module(f"volcanic.admission.{module_name}")
        for fn in module.mutators(conf):
            chain.add_mutator(kind, fn)
        for fn in module.validators(conf):
            chain.add_validator(kind, fn)
    return chain


def mutate(review: Any, **kwargs: Any) -> Any:
    """AdmissionReview v1 in, AdmissionReview out, for Volcano's mutating rules (see
    volcanic.admission.review.mutate for the keyword arguments)."""
    from volcanic.admission import review as codec
    return codec.mutate(review, **kwargs)


def validate(review: Any, **kwargs: Any) -> Any:
    """AdmissionReview v1 in, AdmissionReview out, for Volcano's validating rules (see
    volcanic.admission.review.validate)."""
    from volcanic.admission import review as codec
    return codec.validate(review, **kwargs)
