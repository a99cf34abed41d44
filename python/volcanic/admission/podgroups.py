"""Volcano's PodGroup admission (reference §3 intro, §3.4; webhook-manager paths
/podgroups/mutate and /podgroups/validate, `pkg/webhooks/admission/podgroups/*`).

Mutation (CREATE): a PodGroup in the "default" queue moves to the queue its namespace names
in the annotation scheduling.volcano.sh/queue-name.

Validation (CREATE): the queue exists and is Open; networkTopology may not set both
highestTierAllowed and highestTierName, nor may any subGroupPolicy's networkTopology.

A spec.queue that is absent counts as "default", the CRD's default, which the API server
fills in before admission; an explicit "" is left alone, as Volcano leaves it. Volcano joins
the queue and topology messages into one; here each rule reports its own, the queue first.
Volcano's installer does not enable /podgroups/validate by default (reference §3 intro);
the embedded cluster runs it.
"""

from __future__ import annotations

from typing import Any

from volcanic.admission.chain import AdmissionRequest
from volcanic.admission.common import check_shape, expect, invalid
from volcanic.kube.keys import POD_QUEUE_NAME
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj, annotation, as_map, namespace_of, spec_of, status_of

DEFAULT_QUEUE = "default"
_INT32_MAX = 2 ** 31 - 1


def _queue_of(pg: Any) -> str | None:
    """spec.queue with the CRD default ("default" when absent); None if not a string."""
    queue = spec_of(pg).get("queue")
    if queue is None:
        return DEFAULT_QUEUE
    return queue if isinstance(queue, str) else None


def _get(request: AdmissionRequest, kind: str, name: str, namespace: str | None = None) -> Obj | None:
    try:
        obj = request.lister.get(kind, name, namespace) if namespace else request.lister.get(kind, name)
    except Exception:  # a lister that cannot answer is a missing object
        return None
    return obj if isinstance(obj, dict) else None


# --- Mutation (reference §3.4 "mutate (CREATE)") --------------------------------------------

def podgroup_queue_from_namespace(request: AdmissionRequest) -> Obj:
    """§3.4 mutate: if spec.queue is "default" and the namespace has the annotation
    scheduling.volcano.sh/queue-name, the queue is set to that value (CREATE only; a
    namespace that cannot be read changes nothing)."""
    obj = request.obj
    if request.operation != "CREATE" or not isinstance(obj, dict) or _queue_of(obj) != DEFAULT_QUEUE:
        return obj
    spec = obj.get("spec")
    if spec is not None and not isinstance(spec, dict):
        return obj
    namespace = _get(request, "Namespace", namespace_of(obj, "default"))
    queue = annotation(namespace, POD_QUEUE_NAME)
    if not isinstance(queue, str):
        return obj
    return dict(obj, spec=dict(spec or {}, queue=queue))


# --- Validation (reference §3.4 "validate (CREATE)") ----------------------------------------

def _int32(value: Any, field: str) -> str | None:
    """An integer that fits in 32 bits (minMember >= 0 is the CRD schema's, volcanic.kube.crds)."""
    message = expect(value, "integer", field)
    if message:
        return message
    if value > _INT32_MAX:
        return invalid(field, value, "must fit in a 32-bit integer")
    return None


_TOPOLOGY = {"mode": "string", "highestTierAllowed": "integer", "highestTierName": "string"}
_SHAPE = {
    "spec": {"queue": "string", "minMember": _int32, "networkTopology": _TOPOLOGY,
             "subGroupPolicy": [{"name": "string", "networkTopology": _TOPOLOGY}]},
}


def podgroup_well_formed(request: AdmissionRequest) -> str | None:
    """§3 intro (the CRD schema the API server decodes with): spec.queue a string, minMember
    an int32, networkTopology and each subGroupPolicy's an object whose
    highestTierAllowed is an integer and highestTierName a string (CREATE). A spec that is
    not an object is left to the API server, which refuses it."""
    if request.operation != "CREATE":
        return None
    if not isinstance(request.obj, dict):
        return "object: must be an object"
    if request.obj.get("spec") is not None and not isinstance(request.obj["spec"], dict):
        return None
    return check_shape(request.obj, _SHAPE, "")


def podgroup_queue_open(request: AdmissionRequest) -> str | None:
    """§3.4 validate: the queue must exist and be Open (checkQueueState; CREATE)."""
    if request.operation != "CREATE" or not isinstance(request.obj, dict):
        return None
    name = _queue_of(request.obj)
    if not name:
        return None
    queue = _get(request, "Queue", name)
    if queue is None:
        return f'unable to find queue: {KINDS["Queue"].not_found(name, plural=False)}'
    state = status_of(queue).get("state") or ""
    if state != "Open":
        return f"can only submit PodGroup to queue with state `Open`, queue `{name}` status is `{state}`."
    return None


def _both_tiers(topology: Any) -> bool:
    t = as_map(topology)
    return t.get("highestTierAllowed") is not None and bool(t.get("highestTierName"))


def podgroup_network_topology_exclusive(request: AdmissionRequest) -> str | None:
    """§3.4 validate: networkTopology may not set highestTierAllowed and highestTierName
    together, nor may a subGroupPolicy's networkTopology (the first such policy is named;
    CREATE)."""
    if request.operation != "CREATE" or not isinstance(request.obj, dict):
        return None
    spec = spec_of(request.obj)
    errors = []
    if _both_tiers(spec.get("networkTopology")):
        errors.append("must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously.")
    policies = spec.get("subGroupPolicy")
    for policy in policies if isinstance(policies, list) else ():
        if _both_tiers(as_map(policy).get("networkTopology")):
            errors.append(f"in subGroupPolicy '{as_map(policy).get('name', '')}': must not specify "
                          "'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously.")
            break
    return " ".join(errors) or None


def mutators(conf: Any) -> list:
    """Volcano's /podgroups/mutate (CREATE)."""
    return [podgroup_queue_from_namespace]


def validators(conf: Any) -> list:
    """Volcano's /podgroups/validate (CREATE), in its order."""
    return [podgroup_well_formed, podgroup_queue_open, podgroup_network_topology_exclusive]
