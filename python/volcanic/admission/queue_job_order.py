"""volcanic's own per-queue job order (docs/queues.md, "A job order per queue"): the Queue
annotations the scheduler reads (src/volcanic/api/job_order.h) are checked at admission as it
parses them, so a Queue it could not read is never admitted. Runs after Volcano's queue rules
(volcanic.admission.queues)."""

from __future__ import annotations

from volcanic import _core
from volcanic.admission.chain import AdmissionRequest
from volcanic.admission.common import invalid
from volcanic.kube.objects import annotations_of

JOB_ORDER = "scheduling.volcanic.dev/job-order"
SJF_MAX_WAIT = "scheduling.volcanic.dev/sjf-max-wait"
JOB_ORDERS = ("fifo", "priority", "fair", "sjf", "tiers")


def queue_job_order_valid(request: AdmissionRequest) -> str | None:
    """volcanic's per-queue job order: the annotation names a known order and sjf-max-wait is a
    Go duration of a millisecond or more, as the scheduler reads them (a Queue it could not
    read is never admitted)."""
    if request.operation not in ("CREATE", "UPDATE") or not isinstance(request.obj, dict):
        return None
    annotations = annotations_of(request.obj)
    order = annotations.get(JOB_ORDER)
    if order is not None and order not in JOB_ORDERS:
        return invalid(f"metadata.annotations[{JOB_ORDER}]", order, f"must be one of {', '.join(JOB_ORDERS)}")
    wait = annotations.get(SJF_MAX_WAIT)
    if wait is None:
        return None
    try:
        long_enough = _core.parse_go_duration(wait) >= 1_000_000
    except (ValueError, TypeError):
        long_enough = False
    return None if long_enough else invalid(f"metadata.annotations[{SJF_MAX_WAIT}]", wait,
                                            "must be a duration of a millisecond or more (e.g. 30m)")
