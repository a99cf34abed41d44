"""volcanic.Cluster: the embedded control plane on a virtual clock.

One object store (with admission in front), Volcano's controllers, the scheduler loop and
simulated kubelets, all driven by run(): time jumps from one piece of due work to the next
(a scheduling cycle, a pod's exit, a delayed policy action, a TTL), and after each one the
controllers run until nothing is left to do. Same inputs, same history.
"""

from __future__ import annotations

import io
import json
import math
import os
from typing import Any, Iterable

import yaml

from volcanic.admission import AdmissionConf, volcano_chain
from volcanic.admission.chain import AdmissionChain
from volcanic.cluster.api import EmbeddedApi
from volcanic.cluster.clock import VirtualClock
from volcanic.cluster.kubelet import Kubelets
from volcanic.cluster.node_load import SimulatedNodeMetrics
from volcanic.cluster.store import MemoryStore
from volcanic.controllers.runtime import INDEXES, Context, Runner
from volcanic.kube.clock import rfc3339
from volcanic.kube.errors import InvalidObject, NotFound, StoreError
from volcanic.kube.informers import Informers
from volcanic.kube.kinds import KINDS, kind_named
from volcanic.kube.objects import Obj, annotations_of, clone, describe, status_of
from volcanic.kube.patch import LAST_APPLIED, create_merge_patch, merge_patch
from volcanic.scheduler.loop import SchedulerLoop

SCHEDULER_NAME = "volcano"


def documents(source: Any) -> list[Obj]:
    """Objects from a dict, a list of dicts, or YAML text (several documents allowed; a
    document may also be a list or a `kind: List`)."""
    if isinstance(source, str):
        try:
            docs = [d for d in yaml.safe_load_all(io.StringIO(source)) if d is not None]
        except yaml.YAMLError as e:
            raise InvalidObject(f"YAML: {e}") from None
        for i, d in enumerate(docs):
            if not isinstance(d, (dict, list)):
                raise InvalidObject(f"YAML document {i + 1}: must be a map or a list, got {type(d).__name__} "
                                    f"(apply takes YAML text, not a file name)")
        return documents(docs)
    if isinstance(source, dict):
        if source.get("kind") == "List" and isinstance(source.get("items"), list):
            return documents(source["items"])
        return [source]
    if isinstance(source, (list, tuple)):
        objs = []
        for item in source:
            if not isinstance(item, (dict, list, tuple)):
                raise InvalidObject(f"object: must be a map, got {type(item).__name__}")
            objs.extend(documents(item))
        return objs
    raise InvalidObject(f"object: must be a map, a list or YAML text, got {type(source).__name__}")


def _plain(obj: Any, owner: str, path: str = "") -> Any:
    """JSON-shaped data only: YAML dates become strings; other types and non-finite
    numbers are refused, naming the object and the field."""
    if isinstance(obj, dict):
        return {str(k): _plain(v, owner, f"{path}.{k}" if path else str(k)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v, owner, f"{path}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, float) and not math.isfinite(obj):
        raise InvalidObject(f"{owner}: {path}: must be a finite number, got {obj!r}")
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    raise InvalidObject(f"{owner}: {path}: unsupported value of type {type(obj).__name__}")


def _load_conf(conf: Any) -> Any:
    if isinstance(conf, str) and "\n" not in conf and os.path.isfile(conf):
        with open(conf, encoding="utf-8") as f:
            return f.read()
    return conf


class Cluster:
    """An embedded Volcano cluster; see docs/cluster.md."""

    def __init__(self, conf: Any = None, schedule_period: float = 1.0,
                 admission: AdmissionChain | None = None, settle: float | None = None,
                 python_hook_budget: float | None = None, feature_gates: Iterable[str] = (),
                 metrics: bool = False, start: float | None = None) -> None:
        """feature_gates: the names of Volcano's feature gates that are on, as `--feature-gates`
        gives them to Volcano's webhook and scheduler: for Volcano's admission chain (unless
        `admission` replaces it) and for the scheduler (volcanic.Scheduler's feature_gates).
        metrics: collect Volcano's scheduler and controller metrics, read with metrics() (each
        session then reports them, which a long replay would rather not pay for).
        start: the Unix time the virtual clock starts at (default 2024-01-01T00:00:00Z), e.g.
        the `now` of a state to restore()."""
        from volcanic.controllers.manager import volcano_controllers
        from volcanic.controllers.queue import ensure_default_queues
        from volcanic.controllers.volumes import PersistentVolumeController, ensure_default_storage_class

        if not schedule_period > 0:
            raise ValueError(f"schedule_period: must be positive, got {schedule_period!r}")
        if settle is not None and not settle > 0:
            raise ValueError(f"settle: must be positive or None, got {settle!r}")
        self._clock = VirtualClock() if start is None else VirtualClock(start)
        self._store = MemoryStore(clock=self._clock.now)
        if isinstance(feature_gates, (str, bytes)):
            raise ValueError(f"feature_gates: must be a collection of gate names, got the string {feature_gates!r}")
        gates = frozenset(feature_gates)
        if admission is None:
            admission = volcano_chain(AdmissionConf(scheduler_names=(SCHEDULER_NAME,), feature_gates=gates))
        self.api = EmbeddedApi(self._store, admission)
        self.api.create({"kind": "Namespace", "metadata": {"name": "default"}, "status": {"phase": "Active"}})
        ensure_default_queues(self.api)
        ensure_default_storage_class(self.api)
        # Events are written, never read by a component: not watched (a replay writes one per pod).
        self.informers = Informers(self.api, [k for k in KINDS if k != "Event"], INDEXES)
        self._metrics: Any = None  # a prometheus_client CollectorRegistry, imported only then (60 ms)
        extra: dict[str, Any] = {}
        if metrics:
            from prometheus_client import CollectorRegistry

            from volcanic.controllers.metrics import controller_metrics
            self._metrics = CollectorRegistry()
            extra.update(controller_metrics(self._metrics))
        ctx = Context(store=self.api, lister=self.informers, clock=self._clock,
                      scheduler_names=(SCHEDULER_NAME,), extra=extra)
        self.scheduler = SchedulerLoop(self.api, self.informers, self._clock, _load_conf(conf), schedule_period,
                                       settle=settle, python_hook_budget=python_hook_budget, feature_gates=gates,
                                       node_metrics=lambda _: SimulatedNodeMetrics(self.informers, self._clock))
        if metrics:
            from volcanic.scheduler.metrics import SchedulerMetrics
            self.scheduler.on_session = SchedulerMetrics(self._metrics, self._clock.now).observe
        controllers = [*volcano_controllers(ctx), PersistentVolumeController(ctx), Kubelets(ctx)]
        self.controllers = {c.name: c for c in controllers}
        self._runner = Runner(self.informers, controllers, self._clock)

    def metrics(self) -> str:
        """Volcano's scheduler and controller metrics in Prometheus' text format, what `volcanic
        scheduler` and `controller-manager` serve at /metrics (a Cluster(metrics=True))."""
        if self._metrics is None:
            raise ValueError("metrics: this cluster collects none; make it with Cluster(metrics=True)")
        from prometheus_client import generate_latest
        return generate_latest(self._metrics).decode()

    @property
    def now(self) -> float:
        """Virtual seconds since the cluster started."""
        return self._clock.now() - self._clock.start

    @property
    def started(self) -> float:
        """The Unix time the cluster's virtual clock started at (timestamps in objects are
        Unix time: a timestamp minus `started` is virtual seconds since the start)."""
        return self._clock.start

    @property
    def errors(self) -> list[str]:
        """Requests controllers could not process (a bug or a malformed object), oldest first."""
        return self._runner.errors

    def apply(self, source: Any) -> Obj | list[Obj]:
        """Creates or replaces objects (a dict, a list, or YAML text) through admission.

        Returns the stored object, or a list for several. Every object is checked before any
        is stored; on an error nothing of this call is stored.
        """
        objs = [_plain(o, describe(o)) for o in documents(source)]
        for o in objs:
            kind_named(o.get("kind"))
            meta = o.get("metadata")
            if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
                raise InvalidObject(f"{o['kind']}: metadata.name: is required")
        stored, done = [], []
        namespaces = {n["metadata"]["name"] for n in self._store.list("Namespace")}
        try:
            for o in objs:
                stored.append(clone(self._apply_one(o, done)))
        except Exception:
            self._undo(done)
            for n in self._store.list("Namespace"):  # created on first use by this call
                if n["metadata"]["name"] not in namespaces:
                    self._store.delete("Namespace", n["metadata"]["name"])
            raise
        return stored[0] if isinstance(source, dict) or len(stored) == 1 else stored

    def restore(self, objects: Iterable[Obj]) -> None:
        """Puts `objects` in the cluster as another cluster had them, statuses, uids and
        creation times included, without admission (a fork of a state: what-if runs and
        forecasts). A pod Running there runs on here, and ends `volcanic/sim-duration` after
        its startTime. Raises InvalidObject for an object the store cannot hold; the objects
        before it stay."""
        for obj in objects:
            self._store.restore(obj)

    def get(self, kind: str, name: str, namespace: str = "default") -> Obj | None:
        return self.api.get(kind, name, namespace)

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        return self.api.list(kind, namespace)

    def frame(self, kind: str, namespace: str | None = None) -> Any:
        """The objects of `kind` as a pandas DataFrame: one row per object, its fields
        flattened into columns (`metadata.name`, `status.phase`, ...), and `created`, virtual
        seconds since the start. Needs pandas (`pip install 'volcanic[notebook]'`)."""
        from volcanic.cluster.report import objects_frame
        return objects_frame(self.list(kind, namespace), self.started)

    def delete(self, kind: str, name: str, namespace: str = "default") -> None:
        """Deletes through admission, with ownerReference cascading; KeyError if absent."""
        try:
            self.api.delete(kind, name, namespace)
        except NotFound:
            raise KeyError(f"{kind} {name!r} not found") from None

    def vcctl(self, *args: str) -> str:
        """Runs Volcano's command line on this cluster: `c.vcctl("job list -n team")` (one
        string, split as a shell would) or `c.vcctl("job", "view", "-N", "j")`; vsub, vjobs,
        vqueues, vcancel, vsuspend and vresume when the line starts with their name. Returns
        what it printed; volcanic.vcctl.VcctlError carries the one-line message of a failure
        (and Volcano's exit code). Writes go through admission; what controllers do with them
        (a suspend's Command, a new queue's opening) happens in the next run(). See
        docs/vcctl.md."""
        from volcanic.foresight import Answers
        from volcanic.vcctl import StoreApi, on_store
        return on_store(StoreApi(self.api, now=self._clock.now, foresight=Answers(self.foresight)), args)

    @property
    def foresight(self) -> Any:
        """The foresight answers on this cluster (volcanic.foresight.Foresight): its state,
        its scheduler's configuration and last session, at its clock. docs/foresight.md."""
        from volcanic.foresight import Foresight
        from volcanic.foresight.forecast import FORKED_KINDS
        return Foresight(lambda: (o for kind in FORKED_KINDS for o in self.api.list(kind)),
                         lambda: self.scheduler.conf, self._clock.now,
                         lambda: self.scheduler.last.why if self.scheduler.last else {})

    def explain(self, name: str, namespace: str = "default") -> Any:
        """Why the job `namespace/name` (a Volcano Job, else a PodGroup) waits, its place in
        line, when it will start, and the single changes that would start it now, each
        verified on a fork (volcanic.foresight.Explanation); KeyError if there is no such job."""
        return self.foresight.explain(name, namespace)

    def forecast(self, namespace: str | None = None, queue: str | None = None, frame: bool = False) -> Any:
        """One volcanic.foresight.Outlook per pending job (why, position, estimated start,
        basis), in queue order; a pandas DataFrame, a row each, with frame=True (needs
        `pip install 'volcanic[notebook]'`)."""
        rows = self.foresight.outlook(namespace, queue)
        if not frame:
            return rows
        import pandas as pd
        columns = ["job", "queue", "position", "queue_position", "reasons", "estimated_start", "basis"]
        return pd.DataFrame([r.to_dict() for r in rows], columns=columns)

    def what_if(self, conf: Any) -> Any:
        """This cluster's pending jobs forecast under its configuration and under `conf`, job
        by job, with the waits side by side (volcanic.foresight.WhatIf)."""
        return self.foresight.what_if(_load_conf(conf))

    def evict(self, name: str, namespace: str = "default") -> None:
        """Evicts a pod as the eviction API does: DisruptionTarget condition, then delete."""
        pod = self.api.get("Pod", name, namespace)
        if pod is None:
            raise KeyError(f"Pod {namespace}/{name} not found")
        status = status_of(pod)
        conds = [c for c in status.get("conditions") or [] if c.get("type") != "DisruptionTarget"]
        conds.append({"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
                      "message": "Eviction API: evicting", "lastTransitionTime": self._stamp()})
        self.api.update_status(dict(pod, status=dict(status, conditions=conds)))
        self.api.delete("Pod", name, namespace)

    def set_node_ready(self, name: str, ready: bool) -> None:
        """Sets a Node's Ready condition; a node that is not Ready fails its pods."""
        node = self.api.get("Node", name)
        if node is None:
            raise KeyError(f"Node {name!r} not found")
        status = node.setdefault("status", {})
        conds = [c for c in status.get("conditions") or [] if c.get("type") != "Ready"]
        conds.append({"type": "Ready", "status": "True" if ready else "False",
                      "reason": "KubeletReady" if ready else "NodeStatusUnknown",
                      "lastTransitionTime": self._stamp()})
        status["conditions"] = conds
        self.api.update(node)

    def run(self, seconds: float = 0.0) -> None:
        """Advances virtual time by `seconds`, doing all work due on the way, in time order."""
        if not 0 <= seconds < math.inf:
            raise ValueError(f"seconds: must be a finite number >= 0, got {seconds!r}")
        until = self._clock.now() + seconds
        self._runner.settle()
        while self._clock.fire_next(until):
            self._runner.settle()
        self._clock.advance_to(until)

    def run_until(self, done, limit: float = 86400.0, step: float = 1.0) -> bool:
        """Runs until done(cluster) is true or `limit` seconds have passed; returns
        done(cluster). done is checked every `step` seconds while work is due, and once at
        the next due work after an idle stretch, which costs nothing: nothing changes then."""
        if not 0 <= limit < math.inf or not 0 < step < math.inf:
            raise ValueError(f"run_until: limit must be finite and >= 0 and step > 0, got {limit!r}, {step!r}")
        end = self._clock.now() + limit
        self.run(0)
        while not done(self) and self._clock.now() < end:
            due = self._clock.next_due()
            until = end if due is None else min(end, max(due, self._clock.now() + step))
            self.run(until - self._clock.now())
        return bool(done(self))

    # Internals.
    def _stamp(self) -> str:
        return rfc3339(self._clock.now())

    def _apply_one(self, obj: Obj, done: list) -> Obj:
        """`kubectl apply`: creates, or patches the stored object with what changed since the
        last applied configuration (kept, as kubectl keeps it, in an annotation), so fields
        filled in by admission or controllers stay. A resourceVersion sent is a
        precondition: a stale one is a Conflict."""
        meta = obj["metadata"]
        if LAST_APPLIED in annotations_of(obj):  # an object read back and re-applied
            obj = merge_patch(obj, {"metadata": {"annotations": {LAST_APPLIED: None}}})
            meta = obj["metadata"]
        config = json.dumps(obj, sort_keys=True, separators=(",", ":"))
        old = self.api.get(obj["kind"], meta["name"], meta.get("namespace"))
        if old is None:
            new = self.api.create(merge_patch(obj, {"metadata": {"annotations": {LAST_APPLIED: config}}}))
            done.append(("created", new))
            return new
        annotations = annotations_of(old)
        last = json.loads(annotations[LAST_APPLIED]) if LAST_APPLIED in annotations else None
        patch = create_merge_patch(last, obj)
        patch_meta = patch.setdefault("metadata", {})
        if not isinstance(patch_meta.get("annotations"), dict):
            patch_meta["annotations"] = {}
        patch_meta["annotations"][LAST_APPLIED] = config
        update = merge_patch(old, patch)
        if "resourceVersion" not in meta:
            update["metadata"].pop("resourceVersion", None)
        new = self.api.update(update)
        done.append(("updated", old))
        return new

    def _undo(self, done: list) -> None:
        for what, obj in reversed(done):
            meta = obj["metadata"]
            try:
                if what == "created":
                    self._store.delete(obj["kind"], meta["name"], meta.get("namespace"))
                else:
                    restored = clone(obj)
                    restored["metadata"].pop("resourceVersion", None)
                    self._store.update(restored)
            except StoreError:
                pass
