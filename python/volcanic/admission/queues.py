"""Volcano's Queue admission (reference §3 intro, §3.5; webhook-manager paths /queues/mutate and
/queues/validate, `pkg/webhooks/admission/queues/{mutate,validate}`).

Mutation (CREATE): the hierarchy annotations get the "root" prefix, reclaimable defaults to
true, weight 0 to 1.

Validation, in Volcano's order. On CREATE and UPDATE: the quantities, guarantee <= deserved
<= capability, status.state, the hierarchy annotations; on CREATE or a parent change, the
parent (not itself, depth, exists, not a leaf with allocated pods); the root queue's
resources (--enable-root-queue-protection); and on CREATE or a change of parent, capability,
deserved or guarantee (never for root), the hierarchical resource checks against ancestors,
siblings and descendants. On DELETE: root and default are protected, a queue with allocated
pods (--enable-queue-allocated-pods-check) or with child queues cannot be deleted.

Cluster state comes from `request.lister` (stored queues). "Allocated pods" is the queue's
status.allocated["pods"], which the scheduler writes at session close, as Volcano reads it.

Resource arithmetic of the hierarchical checks follows Volcano's scheduler Resource (see
queue_readers.py). A resource the parent does not list counts as 0 for the
guarantee/deserved sums (LessPartly with the Zero default).

Each rule takes an AdmissionRequest and returns the object to store (mutators) or None / a
denial message (validators); none raises on malformed input. Where Volcano aggregates several
field errors into one message, each rule here reports its own ("[e1, e2]" within one rule,
as Kubernetes' aggregate error prints them); a queue failing two rules gets the first rule's
message only.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, Callable, Iterable

from volcanic.admission.chain import AdmissionRequest
from volcanic.admission.common import (
    MapOf,
    check_shape,
    deny,
    expect,
    invalid,
    qualified_name_errors,
    quantity,
)
from volcanic.admission.queue_job_order import queue_job_order_valid
from volcanic.admission.queue_readers import (
    add_resource,
    aggregate,
    all_queues,
    capability_of,
    children_of,
    deserved_of,
    format_single,
    get_queue,
    guarantee_of,
    less_partly,
    not_found,
    parent_of,
    parsed,
    queue_name,
    resource_string,
    same_resources,
    to_resource,
)
from volcanic.kube.objects import Obj, annotations_of, as_map, meta_of, spec_of, status_of
from volcanic.kube.quantity import format_quantity

ROOT, DEFAULT = "root", "default"
HIERARCHY = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS = "volcano.sh/hierarchy-weights"
VALID_STATES = ("Open", "Closed")
_INT32 = (-2 ** 31, 2 ** 31 - 1)


# --- Mutation (reference §3.5 "mutate (CREATE)") --------------------------------------------

def queue_hierarchy_root_prefix(request: AdmissionRequest) -> Obj:
    """§3.5 mutate: if the hierarchy and hierarchy-weights annotations are both set and the
    hierarchy does not start with "root", prefix "root/" and "1/" (CREATE only)."""
    obj = request.obj
    if request.operation != "CREATE" or not isinstance(obj, dict):
        return obj
    annotations = annotations_of(obj)
    hierarchy, weights = annotations.get(HIERARCHY), annotations.get(HIERARCHY_WEIGHTS)
    if not (isinstance(hierarchy, str) and isinstance(weights, str) and hierarchy and weights):
        return obj
    if hierarchy.startswith(ROOT):
        return obj
    meta = obj["metadata"]
    annotations = dict(annotations, **{HIERARCHY: f"root/{hierarchy}", HIERARCHY_WEIGHTS: f"1/{weights}"})
    return dict(obj, metadata=dict(meta, annotations=annotations))


def _with_spec_default(request: AdmissionRequest, field: str, value: Any, missing: Callable[[Any], bool]) -> Obj:
    obj = request.obj
    if request.operation != "CREATE" or not isinstance(obj, dict):
        return obj
    spec = obj.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict) or not missing(spec.get(field)):
        return obj
    return dict(obj, spec=dict(spec, **{field: value}))


def queue_reclaimable_default(request: AdmissionRequest) -> Obj:
    """§3.5 mutate: spec.reclaimable nil -> true (CREATE only)."""
    return _with_spec_default(request, "reclaimable", True, lambda v: v is None)


def queue_weight_default(request: AdmissionRequest) -> Obj:
    """§3.5 mutate: spec.weight 0 (or unset) -> 1 (CREATE only)."""
    return _with_spec_default(request, "weight", 1,
                              lambda v: v is None or (type(v) in (int, float) and v == 0))


# --- Validation on CREATE and UPDATE (reference §3.5 "validate (CREATE, UPDATE)") ------------

def _int32(value: Any, field: str) -> str | None:
    message = expect(value, "integer", field)
    if message:
        return message
    if not _INT32[0] <= value <= _INT32[1]:
        return invalid(field, value, "must fit in a 32-bit integer")
    return None


_RESOURCES = MapOf("quantity")
_SHAPE = {
    "spec": {"weight": _int32, "priority": _int32, "capability": _RESOURCES, "deserved": _RESOURCES,
             "guarantee": {"resource": _RESOURCES}, "parent": "string", "reclaimable": "boolean",
             "type": "string"},
    "status": {"state": "string", "allocated": _RESOURCES},
}


def _create_or_update(request: AdmissionRequest) -> bool:
    return request.operation in ("CREATE", "UPDATE") and isinstance(request.obj, dict)


def _api_server_refuses(obj: Obj) -> bool:
    """What the API server's own validation refuses, naming the field, whatever admission
    says: a spec or status that is not an object, annotations that are not strings."""
    meta = meta_of(obj)
    annotations = meta.get("annotations")
    if annotations is not None and (not isinstance(annotations, dict)
                                    or not all(isinstance(v, str) for v in annotations.values())):
        return True
    return any(obj.get(f) is not None and not isinstance(obj[f], dict) for f in ("spec", "status"))


def queue_well_formed(request: AdmissionRequest) -> str | None:
    """§3 intro (the CRD schema the API server decodes with): the fields the queue rules read
    have their types (resource lists of quantities, weight and priority int32, parent a
    string, reclaimable a boolean, status.state a string); a Queue that Volcano could not
    decode is denied naming the field. A spec or status that is not an object, or
    annotations that are not strings, are left to the API server, which refuses them."""
    if request.operation not in ("CREATE", "UPDATE"):
        return None
    if not isinstance(request.obj, dict):
        return deny("object", "must be an object")
    if _api_server_refuses(request.obj):
        return None
    return check_shape(request.obj, _SHAPE, "")


def _integer_resource(name: str) -> bool:
    """helper.IsIntegerResourceName: pods, and extended resources (a domain-prefixed name
    outside kubernetes.io that is a qualified name as "requests.<name>")."""
    if name == "pods":
        return True
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


def _quantity_errors(rl: dict, path: str) -> list[str]:
    """ValidateResourceQuantityValue for each quantity of a resource list."""
    errors = []
    for name in sorted(k for k in rl if isinstance(k, str)):
        q = parsed(rl[name])
        if q is None:
            continue  # queue_well_formed reports it
        field = f"{path}.{name}"
        if q[0] < 0:
            errors.append(invalid(field, format_quantity(q), "must be greater than or equal to 0"))
        if _integer_resource(name) and (q[0] * 1000) % 1000 != 0:
            errors.append(invalid(field, format_quantity(q), "must be an integer"))
    return errors


def queue_quantities_valid(request: AdmissionRequest) -> str | None:
    """§3.5: all capability, deserved and guarantee quantities are valid (not negative; whole
    numbers for pods and extended resources), validateResourceQuantityOfQueue."""
    if not _create_or_update(request):
        return None
    q = request.obj
    errors = (_quantity_errors(capability_of(q), "requestBody.spec.capability")
              + _quantity_errors(deserved_of(q), "requestBody.spec.deserved")
              + _quantity_errors(guarantee_of(q), "requestBody.spec.guarantee.resource"))
    return aggregate(errors)


def queue_guarantee_within_deserved(request: AdmissionRequest) -> str | None:
    """§3.5: for every guarantee resource, deserved[r] must exist and be >= guarantee[r]."""
    if not _create_or_update(request):
        return None
    guarantee, deserved = guarantee_of(request.obj), deserved_of(request.obj)
    errors = []
    for name in sorted(k for k in guarantee if isinstance(k, str)):
        g = parsed(guarantee[name])
        if g is None:
            continue
        field = f"requestBody.spec.deserved.{name}"
        if name not in deserved:
            errors.append(invalid(field, "<nil>",
                                  f"deserved[{name}] must be >= guarantee[{name}]={format_quantity(g)}"))
            continue
        d = parsed(deserved[name])
        if d is not None and d[0] < g[0]:
            errors.append(invalid(field, format_quantity(d), f"deserved[{name}]={format_quantity(d)} must be >= "
                                                             f"guarantee[{name}]={format_quantity(g)}"))
    return aggregate(errors)


def queue_deserved_within_capability(request: AdmissionRequest) -> str | None:
    """§3.5: for resources present in both, deserved[r] <= capability[r] (a resource without
    a capability is unlimited)."""
    if not _create_or_update(request):
        return None
    deserved, capability = deserved_of(request.obj), capability_of(request.obj)
    errors = []
    for name in sorted(k for k in deserved if isinstance(k, str) and k in capability):
        d, c = parsed(deserved[name]), parsed(capability[name])
        if d is not None and c is not None and d[0] > c[0]:
            errors.append(invalid(f"requestBody.spec.deserved.{name}", format_quantity(d),
                                  f"deserved[{name}]={format_quantity(d)} must be <= "
                                  f"capability[{name}]={format_quantity(c)}"))
    return aggregate(errors)


def queue_state_valid(request: AdmissionRequest) -> str | None:
    """§3.5: status.state, if set, is Open or Closed (validateStateOfQueue). Volcano checks it
    on every UPDATE too, so while the queue controller has a queue Closing (or Unknown) every
    update of it is denied for a state the user never sent (volcano#3517); volcanic checks an
    UPDATE's state only when it differs from the stored one."""
    if not _create_or_update(request):
        return None
    state = status_of(request.obj).get("state")
    if not isinstance(state, str) or not state or state in VALID_STATES:
        return None
    if request.operation == "UPDATE" and state == status_of(request.old).get("state"):
        return None
    return invalid("requestBody.spec.state", state, f"queue state must be in [{' '.join(VALID_STATES)}]")


_GO_FLOAT = re.compile(r"[+-]?((\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|inf|infinity|nan)", re.IGNORECASE)


def _go_parse_float(text: str) -> tuple[float | None, str]:
    """strconv.ParseFloat(text, 64) for decimal text: (value, "") or (None, error)."""
    if not _GO_FLOAT.fullmatch(text):
        return None, f'strconv.ParseFloat: parsing "{text}": invalid syntax'
    value = float(text)
    if math.isinf(value) and "inf" not in text.lower():
        return None, f'strconv.ParseFloat: parsing "{text}": value out of range'
    return value, ""


def queue_hierarchy_annotations_valid(request: AdmissionRequest) -> str | None:
    """§3.5 hierarchy annotations (validateHierarchicalAttributes): the same number of
    segments in volcano.sh/hierarchy and volcano.sh/hierarchy-weights, every weight a number
    > 0, and the path not a prefix of another queue's path (root/sci vs root/sci/dev)."""
    if not _create_or_update(request):
        return None
    annotations = annotations_of(request.obj)
    hierarchy, weights = annotations.get(HIERARCHY) or "", annotations.get(HIERARCHY_WEIGHTS) or ""
    if not isinstance(hierarchy, str) or not isinstance(weights, str) or not (hierarchy or weights):
        return None
    field = "requestBody.metadata.annotations"
    if len(hierarchy.split("/")) != len(weights.split("/")):
        return invalid(field, hierarchy, f"{HIERARCHY} must have the same length with {HIERARCHY_WEIGHTS}")
    for weight in weights.split("/"):
        value, error = _go_parse_float(weight)
        if value is None:
            return invalid(field, weights, f"{weight} in the {weights} is invalid number: {error}")
        if value <= 0:
            return invalid(field, weights, f"{weight} in the {weights} must be larger than 0")
    name = queue_name(request.obj)
    for other in all_queues(request):
        path = annotations_of(other).get(HIERARCHY)
        if isinstance(path, str) and path and queue_name(other) != name and path.startswith(hierarchy + "/"):
            return invalid(field, hierarchy,
                           f"{hierarchy} is not allowed to be in the sub path of {path} of queue {queue_name(other)}")
    return None


# On CREATE, or an UPDATE that changes spec.parent (validateHierarchicalQueue).

def _new_parent(request: AdmissionRequest) -> str | None:
    """The parent to check: CREATE, or an UPDATE that changes it, to a queue other than root."""
    if not _create_or_update(request):
        return None
    parent = parent_of(request.obj)
    if request.operation == "UPDATE" and parent == parent_of(request.old):
        return None
    return parent if parent not in ("", ROOT) else None


def queue_parent_not_self(request: AdmissionRequest) -> str | None:
    """§3.5 (CREATE or parent change): parent != self."""
    parent = _new_parent(request)
    name = queue_name(request.obj)
    if parent is not None and parent == name:
        return f"queue {name} cannot use itself as parent"
    return None


def queue_depth_within_limit(request: AdmissionRequest, max_depth: int = 5) -> str | None:
    """§3.5 (CREATE or parent change): depth <= --max-queue-depth, a child of root being at
    depth 1; every ancestor on the way up must exist (validateQueueDepth)."""
    parent = _new_parent(request)
    if parent is None:
        return None
    name, depth, seen = queue_name(request.obj), 1, set()
    while parent not in ("", ROOT):
        depth += 1
        if depth > max_depth or parent in seen:
            return f"queue {name} exceeds the maximum allowed depth of {max_depth}"
        seen.add(parent)
        stored = get_queue(request, parent)
        if stored is None:
            return f"failed to get parent queue {parent} of queue {name}: {not_found(parent)}"
        parent = parent_of(stored)
    return None


def queue_parent_exists(request: AdmissionRequest) -> str | None:
    """§3.5 (CREATE or parent change): the parent exists."""
    parent = _new_parent(request)
    if parent is not None and get_queue(request, parent) is None:
        return f"failed to get parent queue of queue {queue_name(request.obj)}: {not_found(parent)}"
    return None


def _allocated_pods(q: Obj) -> int:
    """status.allocated["pods"] as Quantity.Value() (rounded up); 0 if absent."""
    value = quantity(as_map(status_of(q).get("allocated")).get("pods"))
    return math.ceil(value) if value is not None else 0


def queue_parent_has_no_allocated_pods(request: AdmissionRequest) -> str | None:
    """§3.5 (CREATE or parent change): a parent that has no child queues yet (a leaf, which
    may run pods) must have no allocated pods (status.allocated["pods"])."""
    parent = _new_parent(request)
    if parent is None:
        return None
    stored = get_queue(request, parent)
    if stored is None or children_of(request, parent):
        return None
    pods = _allocated_pods(stored)
    if pods:
        return (f"queue {parent} cannot be the parent queue of queue {queue_name(request.obj)} "
                f"because it has allocated Pods: {pods}")
    return None


def queue_root_resources_unchanged(request: AdmissionRequest) -> str | None:
    """§3.5 root protection (--enable-root-queue-protection; UPDATE of root): capability,
    deserved and guarantee cannot change."""
    if request.operation != "UPDATE" or not isinstance(request.obj, dict) or queue_name(request.obj) != ROOT:
        return None
    if not isinstance(request.old, dict):
        return None
    new, old = request.obj, request.old
    if (same_resources(capability_of(new), capability_of(old)) and same_resources(deserved_of(new), deserved_of(old))
            and same_resources(guarantee_of(new), guarantee_of(old))):
        return None
    return "root queue's resource attributes (capability, deserved, guarantee) cannot be modified"


# Hierarchical resource checks: CREATE, or an UPDATE changing parent, capability, deserved or
# guarantee; never for root (needsValidateHierarchicalQueue, validateHierarchicalQueueResources).

def _resources_checked(request: AdmissionRequest) -> bool:
    if not _create_or_update(request) or queue_name(request.obj) == ROOT:
        return False
    if request.operation == "CREATE":
        return True
    new, old = request.obj, request.old
    return (parent_of(new) != parent_of(old) or not same_resources(capability_of(new), capability_of(old))
            or not same_resources(deserved_of(new), deserved_of(old))
            or not same_resources(guarantee_of(new), guarantee_of(old)))


def _nearest_ancestor_capability(request: AdmissionRequest, q: Obj, name: str) -> int | None:
    """findNearestAncestorCapability: the first ancestor below root with a capability > 0."""
    parent, seen = parent_of(q), set()
    while parent not in ("", ROOT) and parent not in seen:
        seen.add(parent)
        stored = get_queue(request, parent)
        if stored is None:
            return None
        value = to_resource(capability_of(stored)).get(name, 0)
        if value > 0:
            return value
        parent = parent_of(stored)
    return None


def queue_capability_within_ancestors(request: AdmissionRequest) -> str | None:
    """§3.5 hierarchical: a child's capability[r] <= its nearest ancestor's capability[r]
    (the nearest ancestor below root that sets r); the parent must exist."""
    if not _resources_checked(request) or parent_of(request.obj) in ("", ROOT):
        return None
    q, parent = request.obj, parent_of(request.obj)
    if get_queue(request, parent) is None:
        return f"parent queue {parent} not found: {not_found(parent)}"
    mine = to_resource(capability_of(q))
    for name in _names(mine):
        limit = _nearest_ancestor_capability(request, q, name)
        if limit is not None and mine[name] > limit:
            return (f"queue {queue_name(q)} capability[{name}]={format_single(name, mine[name])} exceeds its "
                    f"ancestor's capability={format_single(name, limit)}")
    return None


def _names(r: dict[str, int]) -> list[str]:
    """Resource.ResourceNames(): cpu, memory, then scalars, those set (> 0)."""
    scalars = sorted(n for n in r if n not in ("cpu", "memory"))
    return [n for n in ["cpu", "memory", *scalars] if r.get(n, 0) > 0]


def _sum_exceeds(parent: dict[str, int], items: Iterable[dict[str, int]]) -> dict[str, int] | None:
    """The running total at the first item that takes it past `parent`, else None."""
    total: dict[str, int] = {}
    for item in items:
        add_resource(total, item)
        if less_partly(parent, total):
            return total
    return None


def queue_siblings_within_parent(request: AdmissionRequest) -> str | None:
    """§3.5 hierarchical: the sum of the guarantees of a parent's children (this queue
    included, as sent) <= the parent's guarantee, and likewise for deserved."""
    if not _resources_checked(request) or parent_of(request.obj) in ("", ROOT):
        return None
    q, parent_name = request.obj, parent_of(request.obj)
    parent = get_queue(request, parent_name)
    if parent is None:
        return None  # queue_capability_within_ancestors reports it
    siblings = [s for s in children_of(request, parent_name) if queue_name(s) != queue_name(q)]
    limits = {"guarantee": to_resource(guarantee_of(parent)), "deserved": to_resource(deserved_of(parent))}
    totals: dict[str, dict[str, int]] = {"guarantee": {}, "deserved": {}}
    for member in [*siblings, q]:
        for kind, read in (("guarantee", guarantee_of), ("deserved", deserved_of)):
            add_resource(totals[kind], to_resource(read(member)))
            if less_partly(limits[kind], totals[kind]):
                return (f"parent queue {parent_name} validation failed: sum of children's {kind} "
                        f"({resource_string(totals[kind])}) exceeds parent's {kind} limit "
                        f"({resource_string(limits[kind])})")
    return None


def _subtree_max_capability(request: AdmissionRequest, q: Obj, name: str, seen: set[str]) -> int:
    """findSubtreeMaxCapability: the queue's own capability[r] if set, else its children's max."""
    own = to_resource(capability_of(q)).get(name, 0)
    if own > 0:
        return own
    seen = seen | {queue_name(q)}
    return max((_subtree_max_capability(request, c, name, seen)
                for c in children_of(request, queue_name(q)) if queue_name(c) not in seen), default=0)


def queue_capability_covers_descendants(request: AdmissionRequest) -> str | None:
    """§3.5 hierarchical: a parent's capability[r] >= the largest capability[r] in its
    subtree (each child's own, or the largest below a child that sets none)."""
    if not _resources_checked(request):
        return None
    q = request.obj
    children = children_of(request, queue_name(q))
    if not children or spec_of(q).get("capability") is None:
        return None
    mine = to_resource(capability_of(q))
    for name in _names(mine):
        largest = max(_subtree_max_capability(request, c, name, {queue_name(q)}) for c in children)
        if mine[name] < largest:
            return (f"queue {queue_name(q)} capability[{name}]={format_single(name, mine[name])} is smaller than "
                    f"its descendants' max capability={format_single(name, largest)}")
    return None


def queue_children_within_parent(request: AdmissionRequest) -> str | None:
    """§3.5 hierarchical: the sum of this queue's children's guarantees <= its guarantee, and
    likewise for deserved (a parent whose guarantee or deserved shrinks below its children's)."""
    if not _resources_checked(request):
        return None
    q = request.obj
    children = children_of(request, queue_name(q))
    limits = {"guarantee": to_resource(guarantee_of(q)), "deserved": to_resource(deserved_of(q))}
    totals: dict[str, dict[str, int]] = {"guarantee": {}, "deserved": {}}
    for child in children:
        for kind, read in (("guarantee", guarantee_of), ("deserved", deserved_of)):
            add_resource(totals[kind], to_resource(read(child)))
            if less_partly(limits[kind], totals[kind]):
                return (f"queue {queue_name(q)} validation failed: sum of children's {kind} "
                        f"({resource_string(totals[kind])}) exceeds parent's {kind} limit "
                        f"({resource_string(limits[kind])})")
    return None


# --- Validation on DELETE (reference §3.5 "validate (DELETE)") ------------------------------

def _deleted(request: AdmissionRequest) -> Obj | None:
    return request.old if request.operation == "DELETE" and isinstance(request.old, dict) else None


def queue_delete_protected(request: AdmissionRequest) -> str | None:
    """§3.5 DELETE: the `default` and `root` queues cannot be deleted."""
    old = _deleted(request)
    if old is not None and queue_name(old) in (DEFAULT, ROOT):
        return f"`{queue_name(old)}` queue can not be deleted"
    return None


def queue_delete_without_allocated_pods(request: AdmissionRequest) -> str | None:
    """§3.5 DELETE (--enable-queue-allocated-pods-check): a queue with allocated pods > 0
    (status.allocated["pods"]) cannot be deleted."""
    old = _deleted(request)
    if old is None:
        return None
    pods = _allocated_pods(old)
    if pods:
        return f"queue {queue_name(old)} cannot be deleted because it has allocated Pods: {pods}"
    return None


def queue_delete_without_children(request: AdmissionRequest) -> str | None:
    """§3.5 DELETE: a queue with child queues cannot be deleted."""
    old = _deleted(request)
    if old is None:
        return None
    children = sorted(queue_name(c) for c in children_of(request, queue_name(old)))
    if children:
        return (f"queue {queue_name(old)} can not be deleted because it has {len(children)} child queues: "
                f"{', '.join(children)}")
    return None


# --- The chain ------------------------------------------------------------------------------

def _bind(rule: Callable, **kwargs: Any) -> Callable:
    """`rule` with its flag arguments bound, keeping its name for logs."""
    return functools.update_wrapper(functools.partial(rule, **kwargs), rule)


def mutators(conf: Any) -> list:
    """Volcano's /queues/mutate (CREATE), in its order."""
    return [queue_hierarchy_root_prefix, queue_reclaimable_default, queue_weight_default]


def validators(conf: Any) -> list:
    """Volcano's /queues/validate (CREATE, UPDATE, DELETE), in its order."""
    rules: list = [
        queue_well_formed,
        queue_quantities_valid, queue_guarantee_within_deserved, queue_deserved_within_capability,
        queue_state_valid, queue_hierarchy_annotations_valid,
        queue_parent_not_self, _bind(queue_depth_within_limit, max_depth=int(getattr(conf, "max_queue_depth", 5))),
        queue_parent_exists, queue_parent_has_no_allocated_pods,
    ]
    if getattr(conf, "root_queue_protection", True):
        rules.append(queue_root_resources_unchanged)
    rules += [queue_capability_within_ancestors, queue_siblings_within_parent,
              queue_capability_covers_descendants, queue_children_within_parent,
              queue_delete_protected]
    if getattr(conf, "queue_allocated_pods_check", False):
        rules.append(queue_delete_without_allocated_pods)
    rules.append(queue_delete_without_children)
    return rules + [queue_job_order_valid]  # volcanic's own, after Volcano's
