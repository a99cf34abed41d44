"""Volcano's admission rules (mutation and validation) as plain functions, one module per
resource; the embedded cluster runs them on every write, a webhook can host them too."""

from __future__ import annotations

from volcanic.cluster.admission import AdmissionChain


def volcano_chain(scheduler_name: str = "volcano") -> AdmissionChain:
    """The admission chain of a Volcano installation."""
    from volcanic.admission import jobs
    chain = AdmissionChain()
    chain.add_mutator("Job", jobs.mutator(scheduler_name))
    return chain
