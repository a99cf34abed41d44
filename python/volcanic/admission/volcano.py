"""The admission chain of a Volcano installation: the webhook manager's flags that rules read,
the operations each admission path is registered for, and the chain of every kind's rules."""

from __future__ import annotations

from dataclasses import dataclass, field
import importlib
from typing import Any

import yaml

from volcanic.admission.chain import AdmissionChain
from volcanic.admission.queuebindings import submission_bound
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


# volcanic's own rules on Volcano's kinds, run after Volcano's: a queue bound by QueueBindings
# takes Jobs and PodGroups from its namespaces only (volcanic.admission.queuebindings).
VOLCANIC_VALIDATORS = (("Job", submission_bound), ("PodGroup", submission_bound))


def volcano_chain(conf: AdmissionConf | None = None) -> AdmissionChain:
    """The admission chain of a Volcano installation."""
    conf = conf or AdmissionConf()
    chain = AdmissionChain(operations=dict(OPERATIONS))
    for kind in ADMITTED:  # one module per resource, named after it
        module = importlib.import_module(f"volcanic.admission.{kind.plural}")
        for fn in module.mutators(conf):
            chain.add_mutator(kind.name, fn)
        for fn in module.validators(conf):
            chain.add_validator(kind.name, fn)
    for kind_name, fn in VOLCANIC_VALIDATORS:
        chain.add_validator(kind_name, fn)
    return chain


def read_resource_groups(path: str) -> tuple[dict[str, Any], ...]:
    """Volcano's admission configuration file (--admission-conf): its resourceGroups, none for
    a file without them (the chart's default is all comments). ValueError says what is wrong."""
    try:
        with open(path, encoding="utf-8") as f:
            conf = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        raise ValueError(f"{path}: {e}") from None
    groups = conf.get("resourceGroups") if isinstance(conf, dict) else None
    if groups is None:
        return ()
    if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
        raise ValueError(f"{path}: resourceGroups: must be a list of objects")
    return tuple(groups)
