"""QueueBinding: volcanic's own API (scheduling.volcanic.dev/v1alpha1, not Volcano's), binding a
queue to namespaces. With at least one QueueBinding for a queue, only the namespaces they bind
(listed in spec.namespaces, or whose labels match spec.namespaceSelector) may submit Jobs and
PodGroups to it; without any, anyone may, as in Volcano. The rules here check a QueueBinding's
shape and deny a Job or PodGroup from an unbound namespace; the status controller
(volcanic.controllers.queuebinding) reads the same bindings."""

from __future__ import annotations

from typing import Any

from volcanic.admission.chain import AdmissionRequest
from volcanic.controllers.queuebinding import binding_name, bindings_of, binds, listed_namespaces
from volcanic.controllers.volume_rules import label_selector
from volcanic.kube.errors import InvalidObject
from volcanic.kube.objects import Obj, as_map, meta_of, spec_of

LIMITS = ("maxRunningPods", "maxPendingJobs")


def namespace_labels(lister: Any, namespace: str) -> dict:
    try:
        ns = lister.get("Namespace", namespace)
    except Exception:
        ns = None
    labels = meta_of(ns).get("labels") if isinstance(ns, dict) else None
    return labels if isinstance(labels, dict) else {}


def _describe(binding: Obj) -> str:
    """'namespaces [a b]', 'namespaces labelled team=a' or both, for the denial message."""
    parts = []
    listed = listed_namespaces(binding)
    if listed:
        parts.append(f"namespaces [{' '.join(sorted(listed))}]")
    selector = as_map(spec_of(binding).get("namespaceSelector"))
    terms = [f"{k}={v}" for k, v in sorted(as_map(selector.get("matchLabels")).items())]
    for e in selector.get("matchExpressions") or ():
        if isinstance(e, dict):
            values = ",".join(str(v) for v in e.get("values") or ())
            terms.append(f"{e.get('key')} {e.get('operator')}" + (f" ({values})" if values else ""))
    if terms:
        parts.append(f"namespaces labelled {','.join(terms)}")
    return " and ".join(parts) or "no namespace"


def denial(lister: Any, queue: Any, namespace: Any) -> str | None:
    """Why `namespace` may not submit to `queue`, or None when it may (no binding of the queue,
    or one that binds the namespace)."""
    if not isinstance(queue, str) or not queue or not isinstance(namespace, str):
        return None
    bindings = bindings_of(lister, queue)
    if not bindings:
        return None
    labels = namespace_labels(lister, namespace)
    if any(binds(b, namespace, labels) for b in bindings):
        return None
    bound = "; ".join(f"{_describe(b)} (QueueBinding {binding_name(b)})" for b in bindings)
    return f"queue {queue} is bound to {bound}: namespace {namespace} may not submit to it"


def submission_bound(request: AdmissionRequest) -> str | None:
    """A Job or PodGroup created in a namespace its queue is not bound to is denied."""
    if request.operation != "CREATE" or not isinstance(request.obj, dict):
        return None
    return denial(request.lister, spec_of(request.obj).get("queue"), meta_of(request.obj).get("namespace"))


def queuebinding_well_formed(request: AdmissionRequest) -> str | None:
    """A QueueBinding names its queue, binds something, and its selector parses."""
    binding = request.obj
    if request.operation not in ("CREATE", "UPDATE") or not isinstance(binding, dict):
        return None
    spec = spec_of(binding)
    queue = spec.get("queue")
    if not isinstance(queue, str) or not queue:
        return f"QueueBinding {binding_name(binding)}: spec.queue: required"
    names = spec.get("namespaces")
    if names is not None and (not isinstance(names, list) or not all(isinstance(n, str) and n for n in names)):
        return f"QueueBinding {binding_name(binding)}: spec.namespaces: must be a list of namespace names"
    try:
        label_selector(binding, "spec.namespaceSelector")
    except InvalidObject as e:
        return str(e)
    if not listed_namespaces(binding) and spec.get("namespaceSelector") is None:
        return f"QueueBinding {binding_name(binding)}: spec: namespaces or namespaceSelector is required"
    for limit in LIMITS:
        value = as_map(spec.get("limits")).get(limit)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            return f"QueueBinding {binding_name(binding)}: spec.limits.{limit}: must be a non-negative integer"
    return None


def mutators(conf: Any) -> list:
    return []


def validators(conf: Any) -> list:
    """/queuebindings/validate (CREATE, UPDATE): volcanic's own."""
    return [queuebinding_well_formed]
