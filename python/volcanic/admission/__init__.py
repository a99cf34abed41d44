"""Volcano's admission rules (reference §3) as plain functions, one module per resource:
jobs, pods, podgroups, queues, commands, hypernodes. Each module has `mutators(conf)` and
`validators(conf)` returning its rules in the order Volcano applies them; a rule is a
function of an AdmissionRequest (cluster/admission.py) that returns the object to store
(a mutator) or None / a denial message (a validator). The embedded cluster runs them on
every write; `volcanic.admission.review` hosts them over AdmissionReview for a webhook.
"""

from __future__ import annotations

from volcanic.admission.review import mutate, validate
from volcanic.admission.volcano import OPERATIONS, AdmissionConf, volcano_chain

__all__ = ["OPERATIONS", "AdmissionConf", "mutate", "validate", "volcano_chain"]
