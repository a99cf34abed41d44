"""Volcano's PodGroup controller for plain pods (reference §2.5; `pkg/controllers/podgroup/`).

On a Pod add, for a pod whose spec.schedulerName is one of ctx.scheduler_names and that has
no `scheduling.k8s.io/group-name` annotation (a Volcano Job's pods always have one), it
creates PodGroup `podgroup-<controller owner uid>`, or `podgroup-<pod uid>` for a pod
without a controller owner, unless it exists, then updates the pod with its group-name annotation:
- minMember: the owner's `scheduling.volcano.sh/group-min-member` annotation, else 1;
- minResources: the pod's ResourceQuota usage x minMember (util.CalTaskRequests over
  util.GetPodQuotaUsage), see quota_usage();
- queue: the pod's `scheduling.volcano.sh/queue-name` annotation, else "default";
- priorityClassName: the pod's;
- annotations: the owners' `volcano.sh/*` annotations (--inherit-owner-annotations, on by
  default), then the pod's preemptable, cooldown-time, revocable-zone annotations and
  jdb-min-available (else jdb-max-unavailable); labels: the pod's preemptable and
  cooldown-time labels;
- spec.networkTopology from the pod's network-topology annotations (mode default hard);
- ownerReferences: the pod's, when one of them is the controller, else a controller
  reference to the pod itself (so the PodGroup goes with the pod);
- status.phase Pending.
Owners' annotations are read from the informers for the kinds they cache (ReplicaSet,
StatefulSet), or from the API server when the owner has not reached the cache yet (Volcano
GETs it every time); DaemonSets and batch/v1 Jobs are not kept, so their pods get minMember 1.

Workloads (Volcano's WorkLoadSupport feature gate, on by default; pg_controller_handler.go
addReplicaSet/addStatefulSet): on a ReplicaSet or StatefulSet add or update,
- with spec.replicas 0 its PodGroup `podgroup-<its uid>` is deleted: a Deployment's old
  ReplicaSet stays (revision history) after a rolling update, and its PodGroup would
  otherwise keep its queue's minResources reserved;
- with replicas above 0, the first pod its selector's matchLabels select (a StatefulSet's
  also by `controller-revision-hash` = status.updateRevision), if it is Volcano's and has
  no group yet, gets its PodGroup created, or the existing one's spec, labels and
  annotations rebuilt from it (createOrUpdateNormalPodPG: a changed group-min-member).
A PodGroup that appears after its owner went to 0 (its create was still on its way) is
deleted when it does.
"""

from __future__ import annotations

import re
from typing import Any, Hashable

from volcanic.controllers.events import controller_manager_recorder
from volcanic.controllers.runtime import Context, Controller
from volcanic.kube import quantity
from volcanic.kube.errors import AdmissionError, InvalidObject, NotFound, StoreError
from volcanic.kube.informers import Handler
from volcanic.kube.keys import (
    COOLDOWN_TIME,
    GROUP_MIN_MEMBER,
    GROUP_NAME,
    JDB_MAX_UNAVAILABLE,
    JDB_MIN_AVAILABLE,
    POD_QUEUE_NAME,
    PREEMPTABLE,
    REVOCABLE_ZONE,
    SCHEDULING_API_VERSION,
)
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj, annotation, annotations_of, as_map, clone, dig, labels_of, spec_of, status_of

PG_PREFIX = "podgroup-"
ANNOTATION_PREFIX = "volcano.sh/"
TOPOLOGY_MODE = "volcano.sh/network-topology-mode"
TOPOLOGY_TIER = "volcano.sh/network-topology-highest-tier"
WORKLOADS = ("ReplicaSet", "StatefulSet")  # watched under WorkLoadSupport
REVISION_HASH = "controller-revision-hash"  # a StatefulSet pod's revision label
# Owner kinds whose annotations are inherited (getAnnotationsFromUpperRes), by API group.
OWNER_KINDS = {"ReplicaSet": "apps/", "DaemonSet": "apps/", "StatefulSet": "apps/", "Job": "batch/"}


# The compute resources whose request ResourceQuota counts under both the plain and the
# `requests.` name, and whose limit under `limits.` (podComputeUsageHelper).
_COMPUTE = ("cpu", "memory", "ephemeral-storage")
_ONE = (1000, "DecimalSI")  # one object, in milli-units


def _native(name: str) -> bool:
    """k8s v1helper.IsNativeResource: no domain, or a kubernetes.io one."""
    return "/" not in name or "kubernetes.io/" in name


def _extended(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a resource of another domain (nvidia.com/gpu), which
    quota names `requests.<name>`."""
    return not _native(name) and not name.startswith("requests.")


def _limits_spec(spec: Obj) -> Obj:
    """The spec with each container's limits as its requests and no overhead: what the
    engine's request rule sums and maxes over it is Kubernetes' PodLimits before overhead."""
    def as_requests(c: Any) -> Any:
        if not isinstance(c, dict):
            return c
        out: Obj = {"name": c.get("name", "")}
        if "restartPolicy" in c:
            out["restartPolicy"] = c["restartPolicy"]  # sidecars are summed, as for requests
        limits = dig(c, "resources", "limits")
        if limits:
            out["resources"] = {"requests": limits}
        return out
    return {field: [as_requests(c) for c in spec[field]] for field in ("containers", "initContainers")
            if isinstance(spec.get(field), list)}


def _has_limits(spec: Obj) -> bool:
    """Whether a container or init container sets limits (requests were read first, so the
    lists are lists)."""
    for field in ("containers", "initContainers"):
        for c in spec.get(field) or ():
            resources = c.get("resources") if isinstance(c, dict) else None
            if isinstance(resources, dict) and resources.get("limits"):
                return True
    return False


def pod_limits(spec: Obj, where: str = "spec") -> dict[str, tuple[int, str]]:
    """resourcehelper.PodLimits: the containers' limits summed (sidecars too), at least each
    init container's, plus the overhead of the resources that have a limit."""
    if not _has_limits(spec):
        return {}  # the usual case: no need to ask the engine
    limits = quantity.pod_requests_milli(_limits_spec(spec), where)
    overhead = quantity.pod_requests_milli({"overhead": spec["overhead"]}, where) if spec.get("overhead") else {}
    for name, (milli, _) in overhead.items():
        if name in limits:
            limits[name] = (limits[name][0] + milli, limits[name][1])
    return limits


def quota_usage(spec: Obj, terminal: bool = False, where: str = "spec") -> dict[str, tuple[int, str]]:
    """util.GetPodQuotaUsage (milli-units, format): the pod's ResourceQuota usage
    (k8s quota/v1/evaluator/core/pods.go PodUsageFunc) as Volcano's controllers write it into
    PodGroup minResources: `count/pods` always; unless the pod is terminal also `pods`, each
    of cpu, memory and ephemeral-storage under its plain and `requests.` names with its
    `limits.` one, hugepages under both names, and an extended resource as `requests.<name>`
    and (Volcano's addition) as `<name>`. The scheduler reads only what it schedules on
    (Volcano's api.NewResource drops count/*, requests.* and limits.*)."""
    usage = {"count/pods": _ONE}
    if terminal:
        return usage
    requests = quantity.pod_requests_milli(spec, where)
    limits = pod_limits(spec, where)
    usage["pods"] = _ONE
    for name in _COMPUTE:
        if name in requests:
            usage[name] = usage["requests." + name] = requests[name]
        if name in limits:
            usage["limits." + name] = limits[name]
    for name, q in requests.items():
        if name.startswith("hugepages-") or _extended(name):
            usage[name] = usage["requests." + name] = q
    return usage


def pod_quota_usage(pod: Obj) -> dict[str, tuple[int, str]]:
    """quota_usage of a pod: a Succeeded or Failed one counts only as an object."""
    terminal = status_of(pod).get("phase") in ("Succeeded", "Failed")
    return quota_usage(spec_of(pod), terminal)


def min_resources(pod: Obj, min_member: int) -> dict[str, str]:
    """util.CalTaskRequests: the pod's quota usage added min_member times (nothing for 0)."""
    if min_member <= 0:
        return {}
    texts: dict[tuple[int, str], str] = {}  # cpu and requests.cpu share one value: format it once
    out = {}
    for name, q in sorted(pod_quota_usage(pod).items()):
        if q not in texts:
            texts[q] = quantity.format_nanos(q[0] * min_member * 1_000_000, q[1])
        out[name] = texts[q]
    return out


def podgroup_name(pod: Obj) -> str:
    """helpers.GeneratePodgroupName."""
    for ref in pod["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return PG_PREFIX + str(ref.get("uid", ""))
    return PG_PREFIX + pod["metadata"]["uid"]


def owner_references(pod: Obj) -> list[Obj]:
    """newPGOwnerReferences."""
    refs = pod["metadata"].get("ownerReferences") or []
    if any(r.get("controller") for r in refs):
        return clone(refs)
    return [{"apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"],
             "uid": pod["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]


def _network_topology(annotations: dict[str, str]) -> Obj | None:
    """parseNetworkTopologyFromPod."""
    if TOPOLOGY_MODE not in annotations and TOPOLOGY_TIER not in annotations:
        return None
    topology: Obj = {"mode": "hard"}
    mode = str(annotations.get(TOPOLOGY_MODE, "")).lower()
    if mode in ("hard", "soft"):
        topology["mode"] = mode
    tier = annotations.get(TOPOLOGY_TIER)
    if tier is not None and re.fullmatch(r"[+-]?\d+", str(tier).strip()):
        topology["highestTierAllowed"] = int(str(tier).strip())
    return topology


def _replicas(workload: Obj) -> int:
    """spec.replicas, 1 when absent (the API server's default); not an integer is an
    InvalidObject naming the workload and the field."""
    value = spec_of(workload).get("replicas", 1)
    if isinstance(value, bool) or not isinstance(value, int):
        meta = workload["metadata"]
        raise InvalidObject(f"{workload.get('kind')} {meta.get('namespace')}/{meta['name']}: spec.replicas: "
                            f"must be an integer, got {value!r}")
    return value


def _selected_labels(workload: Obj) -> dict[str, str]:
    """The labels a workload's pods carry, for addReplicaSet/addStatefulSet's pod lookup: its
    selector's matchLabels, and a StatefulSet's current revision (controller-revision-hash)."""
    labels = dict(as_map(dig(workload, "spec", "selector", "matchLabels")))
    if labels and workload.get("kind") == "StatefulSet":
        labels[REVISION_HASH] = str(status_of(workload).get("updateRevision") or "")
    return labels


def _workload_owner(pg: Obj) -> tuple[str, str] | None:
    """(kind, name) of a PodGroup's controller owner when it is a ReplicaSet or StatefulSet."""
    for ref in pg["metadata"].get("ownerReferences") or []:
        apps = str(ref.get("apiVersion", "")).startswith("apps/")
        if ref.get("controller") and ref.get("kind") in WORKLOADS and apps:
            return ref["kind"], str(ref.get("name", ""))
    return None


def _differs(have: Obj, want: Obj) -> bool:
    """Whether a PodGroup's spec, labels or annotations differ from those built for it."""
    if spec_of(have) != want["spec"]:
        return True
    return labels_of(have) != labels_of(want) or annotations_of(have) != annotations_of(want)


class PodGroupController(Controller):
    """Requests are ("Pod", namespace, name) and ("ReplicaSet" | "StatefulSet", namespace, name)."""

    name = "pg-controller"
    inherit_owner_annotations = True  # --inherit-owner-annotations

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)

    def handlers(self) -> dict[str, Handler]:
        workload = Handler(on_add=self._workload_changed, on_update=lambda _old, new: self._workload_changed(new))
        return {"Pod": Handler(on_add=self._pod_added), "ReplicaSet": workload, "StatefulSet": workload,
                "PodGroup": Handler(on_add=self._podgroup_added)}

    def _pod_added(self, pod: Obj) -> None:
        self.queue.add(("Pod", pod["metadata"]["namespace"], pod["metadata"]["name"]))

    def _workload_changed(self, workload: Obj) -> None:
        self.queue.add((workload["kind"], workload["metadata"]["namespace"], workload["metadata"]["name"]))

    def _podgroup_added(self, pg: Obj) -> None:
        """A workload's PodGroup may arrive after the workload went to 0 replicas: look again."""
        owner = _workload_owner(pg)
        if owner is not None:
            self.queue.add((owner[0], pg["metadata"]["namespace"], owner[1]))

    def process(self, request: Hashable) -> None:
        kind, namespace, name = request
        if kind != "Pod":
            self._sync_workload(kind, namespace, name)
            return
        pod = self.ctx.lister.get("Pod", name, namespace)
        if pod is None or not self._needs_group(pod):
            return
        try:
            self._create_podgroup(pod)
        except AdmissionError:
            self.retry_later(request)  # Volcano's rate limiter (5 ms doubling, up to 1000 s), forever
            return
        except ValueError as e:  # a pod admission would have refused (a negative request): told on it
            controller_manager_recorder(self.ctx).event(pod, "Warning", "PodGroupError",
                                                         f"no PodGroup made for the pod: {e}")
        self.forget(request)

    def _needs_group(self, pod: Obj) -> bool:
        """A pod of Volcano's schedulers that no PodGroup has yet."""
        if spec_of(pod).get("schedulerName") not in self.ctx.scheduler_names:
            return False
        return not annotation(pod, GROUP_NAME)

    def _sync_workload(self, kind: str, namespace: str, name: str) -> None:
        """addReplicaSet / addStatefulSet (see the module docstring)."""
        workload = self.ctx.lister.get(kind, name, namespace)
        if workload is None:
            return
        if _replicas(workload) == 0:
            pg_name = PG_PREFIX + str(workload["metadata"].get("uid", ""))
            if self.ctx.lister.get("PodGroup", pg_name, namespace) is not None:
                try:
                    self.ctx.store.delete("PodGroup", pg_name, namespace)
                except NotFound:
                    pass
            return
        pod = self._first_pod(namespace, _selected_labels(workload))
        if pod is None or not self._needs_group(pod):
            return
        try:
            self._create_or_update_podgroup(pod)
        except AdmissionError:
            pass  # a refused create: the pod's own request retries it, with back-off

    def _first_pod(self, namespace: str, labels: dict[str, str]) -> Obj | None:
        """The first pod by name (an API list's order) carrying all of `labels`; None for an
        empty selector, which selects nothing here."""
        if not labels:
            return None
        pods = [p for p in self.ctx.lister.list("Pod", namespace)
                if labels.items() <= labels_of(p).items()]
        return min(pods, key=lambda p: p["metadata"]["name"], default=None)

    def _create_podgroup(self, pod: Obj) -> None:
        """createNormalPodPGIfNotExist."""
        namespace, pg_name = pod["metadata"]["namespace"], podgroup_name(pod)
        if self.ctx.lister.get("PodGroup", pg_name, namespace) is None:
            try:
                self.ctx.store.create(self.build_podgroup(pod, pg_name))  # status Pending with it
            except StoreError as e:
                if e.reason != "AlreadyExists":
                    raise
        self._annotate_pod(pod, pg_name)

    def _create_or_update_podgroup(self, pod: Obj) -> None:
        """createOrUpdateNormalPodPG: an existing PodGroup takes the spec, labels and
        annotations built from the pod when they differ (shouldUpdateExistingPodGroup)."""
        namespace, pg_name = pod["metadata"]["namespace"], podgroup_name(pod)
        have = self.ctx.lister.get("PodGroup", pg_name, namespace)
        if have is None:
            self._create_podgroup(pod)
            return
        want = self.build_podgroup(pod, pg_name)
        if not _differs(have, want):
            self._annotate_pod(pod, pg_name)
            return
        new = clone(have)
        new["spec"] = want["spec"]
        for field in ("labels", "annotations"):
            new["metadata"].pop(field, None)
            if field in want["metadata"]:
                new["metadata"][field] = want["metadata"][field]
        self.ctx.store.update(new)
        self._annotate_pod(pod, pg_name)

    def build_podgroup(self, pod: Obj, pg_name: str) -> Obj:
        """buildPodGroupFromPod."""
        meta = pod["metadata"]
        pod_annotations, pod_labels = annotations_of(pod), labels_of(pod)
        owner_annotations = self._owner_annotations(pod) if self.inherit_owner_annotations else {}
        min_member = self._min_member(owner_annotations)
        spec: Obj = {"minMember": min_member, "queue": pod_annotations.get(POD_QUEUE_NAME) or "default"}
        if spec_of(pod).get("priorityClassName"):
            spec["priorityClassName"] = pod["spec"]["priorityClassName"]
        spec["minResources"] = min_resources(pod, min_member)
        annotations = {k: v for k, v in owner_annotations.items() if k.startswith(ANNOTATION_PREFIX)}
        for key in (PREEMPTABLE, COOLDOWN_TIME, REVOCABLE_ZONE):
            if key in pod_annotations:
                annotations[key] = pod_annotations[key]
        if JDB_MIN_AVAILABLE in pod_annotations:
            annotations[JDB_MIN_AVAILABLE] = pod_annotations[JDB_MIN_AVAILABLE]
        elif JDB_MAX_UNAVAILABLE in pod_annotations:
            annotations[JDB_MAX_UNAVAILABLE] = pod_annotations[JDB_MAX_UNAVAILABLE]
        labels = {k: pod_labels[k] for k in (PREEMPTABLE, COOLDOWN_TIME) if k in pod_labels}
        topology = _network_topology(pod_annotations)
        if topology is not None:
            spec["networkTopology"] = topology
        pg_meta: Obj = {"name": pg_name, "namespace": meta["namespace"], "ownerReferences": owner_references(pod)}
        if annotations:
            pg_meta["annotations"] = annotations
        if labels:
            pg_meta["labels"] = labels
        if not spec["minMember"]:
            del spec["minMember"]  # omitempty
        return {"apiVersion": SCHEDULING_API_VERSION, "kind": "PodGroup", "metadata": pg_meta,
                "spec": spec, "status": {"phase": "Pending"}}

    def _owner_annotations(self, pod: Obj) -> dict[str, str]:
        """getAnnotationsFromUpperRes: the first owner's value wins for a key."""
        out: dict[str, str] = {}
        for ref in pod["metadata"].get("ownerReferences") or []:
            kind, name = ref.get("kind"), ref.get("name")
            group = OWNER_KINDS.get(kind or "")
            if not name or group is None or kind not in KINDS:
                continue
            if not (ref.get("apiVersion") or "").startswith(group) or not KINDS[kind].api_version.startswith(group):
                continue  # e.g. kind Job here is Volcano's Job, not batch/v1
            owner = self._owner(kind, name, pod["metadata"]["namespace"])
            for k, v in annotations_of(owner).items():
                out.setdefault(k, v)
        return out

    def _owner(self, kind: str, name: str, namespace: str) -> Obj | None:
        """From the cache, else from the API server: a ReplicaSet's pod can come before the
        ReplicaSet does on another watch, and Volcano GETs the owner every time."""
        owner = self.ctx.lister.get(kind, name, namespace)
        if owner is not None:
            return owner
        try:
            return self.ctx.store.get(kind, name, namespace)
        except StoreError:
            return None

    @staticmethod
    def _min_member(owner_annotations: dict[str, str]) -> int:
        """getMinMemberFromUpperRes: a bad or negative value leaves 1."""
        value = owner_annotations.get(GROUP_MIN_MEMBER)
        if value is None:
            return 1
        try:
            n = int(str(value).strip(), 10)
        except ValueError:
            return 1
        return n if 0 <= n <= 2 ** 31 - 1 else 1

    def _annotate_pod(self, pod: Obj, pg_name: str) -> None:
        """updatePodAnnotations: the cached pod with the group-name annotation, updated (a
        stale cache is a Conflict, and the request is retried)."""
        meta = pod["metadata"]
        current = self.ctx.lister.get("Pod", meta["name"], meta["namespace"])
        if current is None or current["metadata"].get("uid") != meta.get("uid"):
            return
        annotations = annotations_of(current)
        if annotations.get(GROUP_NAME):
            return
        self.ctx.store.update(dict(current, metadata=dict(current["metadata"],
                                                          annotations={**annotations, GROUP_NAME: pg_name})))
