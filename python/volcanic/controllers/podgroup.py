"""Volcano's PodGroup controller for plain pods (reference §2.5; `pkg/controllers/podgroup/`).

On a Pod add, for a pod whose spec.schedulerName is one of ctx.scheduler_names and that has
no `scheduling.k8s.io/group-name` annotation (a Volcano Job's pods always have one), it
creates PodGroup `podgroup-<controller owner uid>`, or `podgroup-<pod uid>` for a pod
without a controller owner, unless it exists, then updates the pod with its group-name annotation:
- minMember: the owner's `scheduling.volcano.sh/group-min-member` annotation, else 1;
- minResources: the pod's requests x minMember (util.CalTaskRequests), see pod_requests();
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
Owners are read from the store when their kind is one it keeps (ReplicaSet, StatefulSet,
DaemonSet, batch/v1 Job); the embedded cluster keeps none of them today, so minMember is 1.

Deviation: Volcano's minResources is the ResourceQuota usage of the pod (GetPodQuotaUsage),
which besides the compute requests holds object counts and quota names (count/pods, pods,
requests.cpu, limits.cpu, ...). Only the compute resources are written here: the scheduler
would read the others as extended resources that no node has.
"""

from __future__ import annotations

import re
from typing import Hashable

from volcanic.kube import quantity
from volcanic.controllers.keys import (
    COOLDOWN_TIME,
    GROUP_NAME,
    JDB_MAX_UNAVAILABLE,
    JDB_MIN_AVAILABLE,
    PREEMPTABLE,
    REVOCABLE_ZONE,
    SCHEDULING_API_VERSION,
)
from volcanic.controllers.runtime import Context, Controller
from volcanic.kube.errors import AdmissionError, StoreError
from volcanic.kube.informers import Handler
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj, clone

MIN_MEMBER = "scheduling.volcano.sh/group-min-member"
QUEUE_NAME = "scheduling.volcano.sh/queue-name"  # a pod's queue (not the job's volcano.sh/queue-name)
PG_PREFIX = "podgroup-"
ANNOTATION_PREFIX = "volcano.sh/"
TOPOLOGY_MODE = "volcano.sh/network-topology-mode"
TOPOLOGY_TIER = "volcano.sh/network-topology-highest-tier"
# Owner kinds whose annotations are inherited (getAnnotationsFromUpperRes), by API group.
OWNER_KINDS = {"ReplicaSet": "apps/", "DaemonSet": "apps/", "StatefulSet": "apps/", "Job": "batch/"}


def _quota_tracked(name: str) -> bool:
    """The compute resources quota's PodUsageFunc reports (podComputeUsageHelper): cpu,
    memory, ephemeral-storage, hugepages-* and extended resources."""
    if name in ("cpu", "memory", "ephemeral-storage") or name.startswith("hugepages-"):
        return True
    return "/" in name and not name.startswith("requests.") and "kubernetes.io/" not in name


def pod_requests(pod: Obj) -> dict[str, tuple[int, str]]:
    """GetPodQuotaUsage's compute resources: the pod's requests (milli-units, format), nothing
    for a terminal pod. The quota's object counts (count/pods, pods, requests.*, limits.*) are
    left out: see the module docstring."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return {}
    return {name: q for name, q in quantity.pod_requests_milli(pod.get("spec") or {}).items() if _quota_tracked(name)}


def min_resources(pod: Obj, min_member: int) -> dict[str, str]:
    """util.CalTaskRequests: the pod's requests added min_member times."""
    return {name: quantity.format_nanos(milli * min_member * 1_000_000, fmt)
            for name, (milli, fmt) in sorted(pod_requests(pod).items()) if min_member > 0}


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


class PodGroupController(Controller):
    name = "pg-controller"
    inherit_owner_annotations = True  # --inherit-owner-annotations

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)

    def handlers(self) -> dict[str, Handler]:
        return {"Pod": Handler(on_add=self._pod_added)}

    def _pod_added(self, pod: Obj) -> None:
        self.queue.add((pod["metadata"]["namespace"], pod["metadata"]["name"]))

    def process(self, request: Hashable) -> None:
        namespace, name = request
        pod = self.ctx.lister.get("Pod", name, namespace)
        if pod is None:
            return
        if (pod.get("spec") or {}).get("schedulerName") not in self.ctx.scheduler_names:
            return
        if (pod["metadata"].get("annotations") or {}).get(GROUP_NAME):
            return
        try:
            self._create_podgroup(pod)
        except AdmissionError:
            self.retry_later(request)  # Volcano's rate limiter (5 ms doubling, up to 1000 s), forever
            return
        self.forget(request)

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

    def build_podgroup(self, pod: Obj, pg_name: str) -> Obj:
        """buildPodGroupFromPod."""
        meta = pod["metadata"]
        pod_annotations = meta.get("annotations") or {}
        pod_labels = meta.get("labels") or {}
        owner_annotations = self._owner_annotations(pod) if self.inherit_owner_annotations else {}
        min_member = self._min_member(owner_annotations)
        spec: Obj = {"minMember": min_member, "queue": pod_annotations.get(QUEUE_NAME) or "default"}
        if (pod.get("spec") or {}).get("priorityClassName"):
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
            owner = self.ctx.store.get(kind, name, pod["metadata"]["namespace"])
            for k, v in ((owner or {}).get("metadata", {}).get("annotations") or {}).items():
                out.setdefault(k, v)
        return out

    @staticmethod
    def _min_member(owner_annotations: dict[str, str]) -> int:
        """getMinMemberFromUpperRes: a bad or negative value leaves 1."""
        value = owner_annotations.get(MIN_MEMBER)
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
        annotations = current["metadata"].get("annotations") or {}
        if annotations.get(GROUP_NAME):
            return
        self.ctx.store.update(dict(current, metadata=dict(current["metadata"],
                                                          annotations={**annotations, GROUP_NAME: pg_name})))
