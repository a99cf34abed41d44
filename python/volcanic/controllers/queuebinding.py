"""volcanic's own queuebinding controller: writes each QueueBinding's usage per bound namespace
(status.namespaces: {namespace: {runningPods, pendingJobs}}), what its limits count (the
scheduler enforces them: src/volcanic/framework/queue_binding_limits.h): the pods of the queue's
PodGroups in the namespace that are bound to a node and not finished, and the queue's PodGroups
(jobs) there that are enqueued and not yet running (Inqueue). A bound namespace is one the
binding lists, or an existing Namespace whose labels match its selector; each has an entry, zero
or not."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Callable

from volcanic.controllers.runtime import Controller
from volcanic.controllers.volume_rules import label_selector
from volcanic.kube.errors import InvalidObject
from volcanic.kube.informers import Handler
from volcanic.kube.keys import GROUP_NAME
from volcanic.kube.objects import Obj, annotation, meta_of, spec_of, status_of

# --- Reading QueueBindings (also volcanic.admission.queuebindings') ---------------------------

def binding_name(o: Any) -> str:
    name = meta_of(o).get("name")
    return name if isinstance(name, str) else ""


def listed_namespaces(binding: Obj) -> list[str]:
    names = spec_of(binding).get("namespaces")
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def selector_of(binding: Obj) -> Callable[[dict], bool] | None:
    """The binding's namespaceSelector as a test of a Namespace's labels (None: no selector, or
    one that does not parse, which admission refused)."""
    try:
        return label_selector(binding, "spec.namespaceSelector")
    except InvalidObject:
        return None


def binds(binding: Obj, namespace: str, labels: dict) -> bool:
    """Whether `binding` binds the namespace named `namespace` carrying `labels`."""
    if namespace in listed_namespaces(binding):
        return True
    matches = selector_of(binding)
    return matches is not None and matches(labels)


def bindings_of(lister: Any, queue: str) -> list[Obj]:
    """The stored QueueBindings of `queue`, by name."""
    try:
        stored = lister.list("QueueBinding") or ()
    except Exception:  # a lister that does not serve QueueBindings: no binding
        return []
    found = [b for b in stored if isinstance(b, dict) and spec_of(b).get("queue") == queue]
    return sorted(found, key=binding_name)


def _holds_resources(pod: Obj) -> bool:
    """Bound to a node and not finished: what a binding's maxRunningPods counts."""
    return bool(spec_of(pod).get("nodeName")) and status_of(pod).get("phase") not in ("Succeeded", "Failed")


def queue_of(o: Obj) -> object:
    return spec_of(o).get("queue")


class QueueBindingController(Controller):
    name = "queuebinding-controller"

    def handlers(self) -> dict[str, Handler]:
        binding = Handler(on_add=self._binding_changed, on_update=lambda old, new: self._binding_changed(new))
        podgroup = Handler(on_add=self._podgroup_changed, on_update=lambda old, new: self._podgroup_changed(new),
                           on_delete=self._podgroup_changed)
        pod = Handler(on_add=self._pod_changed, on_update=self._pod_updated, on_delete=self._pod_changed)
        namespace = Handler(on_add=self._namespace_changed, on_update=lambda old, new: self._namespace_changed(new))
        return {"QueueBinding": binding, "PodGroup": podgroup, "Pod": pod, "Namespace": namespace}

    # --- Which bindings an event concerns ---------------------------------------------------

    def _bindings(self) -> list[Obj]:
        return [b for b in self.ctx.lister.list("QueueBinding") or () if isinstance(b, dict)]

    def _enqueue_queue(self, queue: object) -> None:
        for b in self._bindings():
            if queue_of(b) == queue:
                self.queue.add(meta_of(b)["name"])

    def _binding_changed(self, binding: Obj) -> None:
        self.queue.add(meta_of(binding)["name"])

    def _podgroup_changed(self, pg: Obj) -> None:
        self._enqueue_queue(queue_of(pg))

    def _pod_changed(self, pod: Obj) -> None:
        group = annotation(pod, GROUP_NAME)
        if group:
            pg = self.ctx.lister.get("PodGroup", group, meta_of(pod).get("namespace"))
            if pg is not None:
                self._enqueue_queue(queue_of(pg))

    def _pod_updated(self, old: Obj, new: Obj) -> None:
        if _holds_resources(old) != _holds_resources(new):
            self._pod_changed(new)

    def _namespace_changed(self, namespace: Obj) -> None:
        for b in self._bindings():  # a label change may bind or unbind it
            if spec_of(b).get("namespaceSelector") is not None:
                self.queue.add(meta_of(b)["name"])

    # --- The usage ---------------------------------------------------------------------------

    def bound_namespaces(self, binding: Obj) -> list[str]:
        names = set(listed_namespaces(binding))
        for ns in self.ctx.lister.list("Namespace") or ():
            name = meta_of(ns).get("name")
            if isinstance(name, str) and binds(binding, name, meta_of(ns).get("labels") or {}):
                names.add(name)
        return sorted(names)

    def usage(self, queue: object, namespace: str) -> dict[str, int]:
        groups = {meta_of(pg)["name"]: pg for pg in self.ctx.lister.list("PodGroup", namespace) or ()
                  if queue_of(pg) == queue}
        pending = sum(1 for pg in groups.values() if status_of(pg).get("phase") == "Inqueue")
        running = sum(1 for pod in self.ctx.lister.list("Pod", namespace) or ()
                      if annotation(pod, GROUP_NAME) in groups and _holds_resources(pod))
        return {"runningPods": running, "pendingJobs": pending}

    def process(self, request: Hashable) -> None:
        binding = self.ctx.lister.get("QueueBinding", str(request))
        if binding is None or meta_of(binding).get("deletionTimestamp"):
            return
        queue = queue_of(binding)
        namespaces = {ns: self.usage(queue, ns) for ns in self.bound_namespaces(binding)}
        if status_of(binding).get("namespaces") == namespaces:
            return
        self.ctx.store.update_status(dict(binding, status=dict(status_of(binding), namespaces=namespaces)))
