"""volcanic.Scheduler, volcanic.schedule and volcanic.Decisions over the native engine."""

from __future__ import annotations

from dataclasses import dataclass, field
import gc
import math
import time
from typing import Any, Iterable, Mapping

from volcanic import _core
from volcanic.scheduler.conf import load_conf
from volcanic.scheduler.plugins import load_entry_point_plugins, plugin_names_in, registered_plugins

# The kinds the engine reads; others are skipped by schedule().
SCHEDULER_KINDS = frozenset({"Node", "Pod", "PodGroup", "Queue", "PriorityClass", "Namespace", "PersistentVolume",
                             "PersistentVolumeClaim", "StorageClass", "HyperNode", "PodDisruptionBudget",
                             "ResourceQuota", "Numatopology", "QueueBinding"})
# Volcano's feature gate (pkg/features/volcano_features.go) behind Decisions.ungate, and the
# scheduling gate (and opt-in annotation) it lifts.
QUEUE_ALLOCATION_FEATURE = "SchedulingGatesQueueAdmission"


@dataclass
class Decisions:
    """What one scheduling session decided.

    binds: "ns/pod" -> node, pods bound by this session.
    bind_annotations: "ns/pod" -> annotations its binding carries (the vGPU cards the
        deviceshare plugin chose: volcano.sh/vgpu-ids-new, ...), for pods that have some.
    volume_binds: "ns/pod" -> {"ns/claim": the PersistentVolume to bind it to, or None to
        provision it on the pod's node}, for bound pods with claims not bound yet (kube's
        VolumeBinding, which Volcano's predicates wrap). Before binding the pod, set each PV's
        spec.claimRef to its claim, or annotate the claim volume.kubernetes.io/selected-node,
        and wait until the PV controller has bound every claim (spec.volumeName and the
        pv.kubernetes.io/bind-completed annotation), at most volume_bind_timeout seconds.
    volume_bind_timeout: the predicates plugin's volumebinding.bindTimeoutSeconds (600 by
        default) when volume_binds is not empty, else 0.
    evictions: "ns/pod" in eviction order.
    ungate: "ns/pod" whose scheduling gate scheduling.volcano.sh/queue-allocation-gate is to be
        removed, in the order decided: with the SchedulingGatesQueueAdmission feature gate, a
        pod annotated scheduling.volcano.sh/queue-allocation-gate: "true" whose only gate is
        that one, once its queue has room for it (Volcano's allocate action). The pod is placed
        by a later session, once it comes back without the gate.
    pipelined: "ns/pod" -> node, pods waiting for resources being released.
    podgroups: "ns/name" -> PodGroup status as the session writes it
        ({"phase", "conditions", "running", "succeeded", "failed"}).
    queues: name -> {"allocated": {resource: quantity}}, plus "deserved" for queues whose
        deserved share a queue plugin (proportion) computed this session.
    unschedulable: "ns/pod" -> why a pending pod was not placed.
    podgroup_events: "ns/podgroup" -> (type, reason, message) of the Event its PodGroup gets,
        as Volcano records it every session (Warning Unschedulable "P/T tasks in gang
        unschedulable: ..." while Pending, Inqueue or Unknown; Normal Scheduled "pod group is
        ready" when its status changes otherwise), reported only when it differs from the
        last one reported for that PodGroup.
    why: "ns/podgroup" -> why a job still waits after this session (docs/foresight.md):
        {"queue", "reasons": [most binding first: what kept it from being enqueued (a closed
        queue, a quota with the numbers), its gang's Unschedulable message, its first unplaced
        pod's node reasons], "position": its place among its queue's waiting jobs in the job
        order, "queue_position": its queue's place among the queues with waiting jobs in the
        queue order} (1-based), for every job not yet enqueued, enqueued but not started, or
        with pods left unplaced.
    deferred: pod conditions were held back for the next session (a gang whose pods are
        still being created); the next session must run though nothing else changed.
    pending: some job waits to be enqueued, or has a pod waiting for a node, after this
        session; with `podgroups` changed, the next session may decide otherwise though
        nothing else changed (enqueue counts the jobs' phases).
    wake_at: the earliest time (Unix seconds) after this session at which a decision could
        change with time alone (sla's waiting time running out, a Python plugin's
        session.wake_at), or None; a loop that skips idle periods runs a session then.
    action_seconds: action -> wall seconds it took (diagnostics).
    plugin_timings: plugin -> extension point ("predicate", "job_order", "on_session_open",
        ...) -> {"seconds": wall seconds its callbacks took (sampled, scaled to all calls),
        "calls": how many calls}, for the points the plugin's callbacks were called on
        (diagnostics).
    metrics: with run_once(metrics=True), what the plugins and actions measured for
        Volcano's scheduler metrics (volcanic.scheduler.metrics exports them): "queues"
        (name -> {"allocated", "request", "deserved", "capability", "real_capability",
        "inqueue": {resource: amount in Volcano's units}, "share", "weight", "overused"},
        each as a queue plugin reported it), "queue_podgroups" and "queue_tasks" (queue ->
        phase or task status -> count as the session opened), "scheduled" ("ns/podgroup" ->
        (queue, creation time, pods bound this session)), "job_shares" (drf),
        "unschedulable_tasks" and "unschedulable_jobs" (gang), "preemption_attempts" and
        "preemption_victims" (preempt), "plugin_session_seconds" (plugin -> (open, close)
        seconds) and "open_seconds"; else empty.
    """

    binds: dict[str, str] = field(default_factory=dict)
    bind_annotations: dict[str, dict[str, str]] = field(default_factory=dict)
    volume_binds: dict[str, dict[str, str | None]] = field(default_factory=dict)
    volume_bind_timeout: float = 0.0
    evictions: list[str] = field(default_factory=list)
    ungate: list[str] = field(default_factory=list)
    pipelined: dict[str, str] = field(default_factory=dict)
    podgroups: dict[str, dict[str, Any]] = field(default_factory=dict)
    queues: dict[str, dict[str, Any]] = field(default_factory=dict)
    unschedulable: dict[str, str] = field(default_factory=dict)
    podgroup_events: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    why: dict[str, dict[str, Any]] = field(default_factory=dict)
    deferred: bool = False
    pending: bool = False
    wake_at: float | None = None
    action_seconds: dict[str, float] = field(default_factory=dict)
    plugin_timings: dict[str, dict[str, dict[str, float | int]]] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)

    def outcome(self) -> dict[str, Any]:
        """The fields above without the timings and metrics, which differ from run to run."""
        return {k: v for k, v in vars(self).items() if k not in ("action_seconds", "plugin_timings", "metrics")}


def _gate_names(feature_gates: Iterable[str]) -> frozenset[str]:
    """feature_gates as a set of names; a bare string (one name's letters) or a non-string is refused."""
    if isinstance(feature_gates, (str, bytes)):
        raise ValueError(f"feature_gates: must be a collection of gate names, got the string {feature_gates!r}")
    names = frozenset(feature_gates)
    for name in names:
        if not isinstance(name, str):
            raise ValueError(f"feature_gates: gate names must be strings, got {name!r}")
    return names


def _now_ms(now: float | None) -> int:
    """Unix milliseconds, as the engine's clock takes them (a signed 64-bit count)."""
    seconds = time.time() if now is None else now
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not abs(seconds) < 9e15:
        raise ValueError(f"now: must be Unix seconds (a finite number below 9e15), got {now!r}")
    return int(seconds * 1000)


class Scheduler:
    """A long-lived scheduler with an incremental cache.

    Decisions a session makes (binds, evictions, PodGroup phases) are assumed in
    the cache until an upsert of the object confirms them or forget() drops them.

    The Scheduler takes the Python plugins registered when it is made (register_plugin).
    python_hook_budget: the wall seconds all Python plugin hooks of one session may take
    together (None: no limit). The hook call that goes over fails the session with
    volcanic.PluginError naming the plugin and hook, and the session is rolled back; a hook
    running Python code is interrupted when the budget runs out, a hook blocked in C code
    (time.sleep, I/O) fails when it returns (docs/plugins-python.md).
    bare_pods_as_groups: a pod of the scheduler without the group annotation
        (scheduling.k8s.io/group-name) is its own group of one, in the default queue, at once.
        Without it (the default, as in Volcano) such a pod waits until the PodGroup controller
        has made its PodGroup and annotated it.
    feature_gates: the names of Volcano's feature gates that are on (the scheduler's
        --feature-gates; Volcano's defaults otherwise). The scheduler reads one,
        SchedulingGatesQueueAdmission (Alpha, off by default): pods that opted in to the
        queue-allocation gate are let through it once their queue has room (Decisions.ungate),
        and the capacity plugin keeps that room for them until they are placed. Other names are
        accepted and change nothing here, as in Volcano's scheduler.
    """

    def __init__(self, conf: str | dict[str, Any] | None = None, python_hook_budget: float | None = None,
                 bare_pods_as_groups: bool = False, feature_gates: Iterable[str] = ()) -> None:
        conf_json = load_conf(conf)
        load_entry_point_plugins(plugin_names_in(conf_json))
        if python_hook_budget is not None and (isinstance(python_hook_budget, bool)
                                               or not isinstance(python_hook_budget, (int, float))):
            raise ValueError(f"python_hook_budget: must be a positive number of seconds or None, "
                             f"got {python_hook_budget!r}")
        gates = _gate_names(feature_gates)
        self._core = _core.Scheduler(conf_json, registered_plugins(), python_hook_budget, bool(bare_pods_as_groups),
                                     QUEUE_ALLOCATION_FEATURE in gates)

    def upsert(self, obj: dict[str, Any] | str | bytes) -> bool:
        """Adds or replaces an object (a dict, or JSON text) by kind and key; returns whether
        what the scheduler reads changed (False for a kind it does not read, a status field it
        ignores, or the echo of a status run_once(changed_only=True) reported)."""
        return self._core.upsert(obj)

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        """Removes an object; removing one that is not there is not an error."""
        self._core.delete(kind, name, namespace)

    def forget(self, key: str) -> None:
        """Drops what the scheduler assumed about pod "ns/name" (a failed bind)."""
        self._core.forget(key)

    def forget_status(self, kind: str, key: str) -> None:
        """A status write of a session's decision failed ("PodGroup" "ns/name" or "Queue"
        "name"): the next session decides it again."""
        self._core.forget_status(kind, key)

    def set_node_usage(self, node: str, cpu: float, memory: float, at: float) -> bool:
        """Records a node's load as the metrics system measured it: `cpu` and `memory` in percent
        of the node's capacity (averaged over Volcano's 10-minute window), measured at `time`
        `at` (seconds since the epoch). The usage and rescheduling plugins read it; a load
        older than five minutes counts for nothing (docs/scheduler.md, "Node metrics").
        Returns whether it changed; KeyError for a node the scheduler does not have."""
        for name, value in (("cpu", cpu), ("memory", memory)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"node {node}: {name} usage must be a finite percentage, got {value!r}")
        return self._core.set_node_usage(node, float(cpu), float(memory), _now_ms(at))

    def gangs_filled(self) -> int:
        """How many times an upserted new pod brought its gang up to minMember pods (a count
        that only grows): a loop may start a session early when it grows."""
        return self._core.gangs_filled()

    def stats(self) -> dict[str, int]:
        """Sizes that follow what is alive, for monitoring a long-lived scheduler:
        task_classes (kinds of live pods alike for placement, in this scheduler), resource_names
        (resource names in use by the live objects of every scheduler in the process) and
        resource_width (how many dimensions a resource vector can have)."""
        return self._core.stats()

    def run_once(self, now: float | None = None, changed_only: bool = False, timings: bool = True,
                 metrics: bool = False) -> Decisions:
        """Runs one session; `now` is seconds since the epoch (default: the wall clock).

        A Python plugin that fails raises volcanic.PluginError; the failed session leaves the
        cache as it was.

        With changed_only, `podgroups` and `queues` hold only the statuses that differ from
        what the PodGroup and Queue objects last upserted say (what a status writer needs).
        With timings=False, `plugin_timings` stays empty (building it costs as much as closing
        a small session). With metrics=True, `metrics` is filled (see Decisions).
        """
        # The decisions of a large session are many small objects; collecting
        # while they are built would walk the caller's whole heap repeatedly.
        paused = gc.isenabled()
        gc.disable()
        try:
            return Decisions(**self._core.run_once(_now_ms(now), changed_only, timings, metrics))
        finally:
            if paused:
                gc.enable()


def schedule(objects: Iterable[dict[str, Any]], conf: str | dict[str, Any] | None = None,
             now: float | None = None, bare_pods_as_groups: bool = False,
             node_usage: Mapping[str, Mapping[str, float]] | None = None) -> Decisions:
    """Runs exactly one scheduling session over `objects` and returns its decisions.

    Objects of kinds the scheduler does not read are skipped. bare_pods_as_groups: see
    Scheduler (a one-shot session has no PodGroup controller to make groups for bare pods).
    node_usage: the nodes' measured load, {node: {"cpu": %, "memory": %, "time": seconds}}
    (Scheduler.set_node_usage).
    """
    s = Scheduler(conf, bare_pods_as_groups=bare_pods_as_groups)
    s._core.upsert_many(o for o in objects if not isinstance(o, dict) or not isinstance(o.get("kind"), str)
                        or o["kind"] in SCHEDULER_KINDS)  # a malformed kind is the core's to report
    for node, u in (node_usage or {}).items():
        s.set_node_usage(node, u["cpu"], u["memory"], u["time"])
    return s.run_once(now)
