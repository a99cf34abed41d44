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
from volcanic.kube.kinds import ADMITTED


@dataclass(frozen=True)
class AdmissionConf:
    """The webhook manager's flags that rules read (cmd/webhook-manager options)."""

    scheduler_names: tuple[str, ...] = ("volcano",)   # --scheduler-name
    max_queue_depth: int = 5                          # --max-queue-depth
    root_queue_protection: bool = True                # --enable-root-queue-protection
    queue_allocated_pods_check: bool = False          # --enable-queue-allocated-pods-check
    resource_groups: tuple[dict[str, Any], ...] = field(default_factory=tuple)  # --admission-conf
    feature_gates: frozenset[str] = frozenset()       # --feature-gates that are on


# The operations each admission path is registered for (volcanic.kube.kinds.Admission).
OPERATIONS: dict[tuple[str, str], tuple[str, ...]] = {
    **{(k.name, "mutate"): k.admission.mutate for k in ADMITTED},
    **{(k.name, "validate"): k.admission.validate for k in ADMITTED},
}


def volcano_chain(conf: AdmissionConf | None = None) -> AdmissionChain:
    """The admission chain of a Volcano installation."""
    import importlib
    conf = conf or AdmissionConf()
    chain = AdmissionChain(operations=dict(OPERATIONS))
    for kind in ADMITTED:  # one module per resource, named after it
        module = importlib.import_module(f"volcanic.admission.{kind.plural}")
        for fn in module.mutators(conf):
            chain.add_mutator(kind.name, fn)
        for fn in module.validators(conf):
            chain.add_validator(kind.name, fn)
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
