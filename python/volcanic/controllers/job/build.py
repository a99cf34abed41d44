"""The objects the job controller makes from a Job: its PodGroup and its pods (reference §2.3,
"PodGroup built by the job controller" and "Pod construction")."""

from __future__ import annotations

from fractions import Fraction

from volcanic.controllers.podgroup import quota_usage
from volcanic.kube import quantity
from volcanic.kube.informers import Lister
from volcanic.kube.keys import (
    COOLDOWN_TIME,
    GROUP_NAME,
    JDB_MAX_UNAVAILABLE,
    JDB_MIN_AVAILABLE,
    JOB_API_VERSION,
    JOB_NAME,
    JOB_NAMESPACE,
    JOB_VERSION,
    PARTITION_ID,
    PREEMPTABLE,
    QUEUE_NAME,
    REVOCABLE_ZONE,
    SCHEDULING_API_VERSION,
    TASK_INDEX,
    TASK_SPEC,
)
from volcanic.kube.objects import Obj, annotations_of, as_map, clone, dig, labels_of, spec_of, status_of

TEMPLATE_UID = "volcano.sh/template-uid"
RETRY_COUNT = "volcano.sh/job-retry-count"
TOPOLOGY_POLICY = "volcano.sh/numa-topology-policy"
# Copied from the job's annotations to its pods, and from its labels to its pods' labels.
ANNOTATIONS_TO_PODS = (PREEMPTABLE, COOLDOWN_TIME, REVOCABLE_ZONE, JDB_MIN_AVAILABLE, JDB_MAX_UNAVAILABLE)
LABELS_TO_PODS = (PREEMPTABLE, COOLDOWN_TIME)


def podgroup_name(job: Obj) -> str:
    return f"{job['metadata']['name']}-{job['metadata']['uid']}"


def pod_name(job: Obj, task: str, index: int) -> str:
    """Volcano's MakePodName: "<job>-<task>-<index>"."""
    return f"{job['metadata']['name']}-{task}-{index}"


def owner_reference(job: Obj) -> Obj:
    """The controller reference to the job that the objects made for it carry (its pods,
    PodGroup, claims, the plugins' objects), so they go when it goes."""
    return {"apiVersion": JOB_API_VERSION, "kind": "Job", "name": job["metadata"]["name"],
            "uid": job["metadata"].get("uid"), "controller": True, "blockOwnerDeletion": True}


def task_min_available(task: Obj) -> int:
    """A task's minAvailable; without one, minPartitions x partitionSize for a partitioned
    task, else all its replicas (the job mutator writes exactly this default, so on an
    admitted job it is the task's own minAvailable)."""
    if task.get("minAvailable") is not None:
        return task["minAvailable"]
    partition = as_map(task.get("partitionPolicy"))
    if (partition.get("minPartitions") or 0) > 0:
        return partition["minPartitions"] * (partition.get("partitionSize") or 0)
    return task.get("replicas") or 0


def build_podgroup(job: Obj, lister: Lister, min_res: dict[str, str] | None = None) -> Obj:
    """The job's PodGroup; `min_res` is min_resources(job, lister) when the caller has it.
    Without a status, as Volcano's createOrUpdatePodGroup makes it: the scheduler gives it one."""
    spec = job["spec"]
    pg_spec: Obj = {
        "minMember": spec.get("minAvailable") or 0,
        "minTaskMember": {t["name"]: task_min_available(t) for t in spec.get("tasks") or []},
        "queue": spec.get("queue") or "default",
        "minResources": min_res if min_res is not None else min_resources(job, lister),
    }
    if spec.get("priorityClassName"):
        pg_spec["priorityClassName"] = spec["priorityClassName"]
    if spec.get("networkTopology"):
        pg_spec["networkTopology"] = clone(spec["networkTopology"])
    groups = [_sub_group(t) for t in spec.get("tasks") or [] if t.get("partitionPolicy")]
    if groups:
        pg_spec["subGroupPolicy"] = groups
    meta = job["metadata"]
    return {"apiVersion": SCHEDULING_API_VERSION, "kind": "PodGroup",
            "metadata": {"name": podgroup_name(job), "namespace": meta["namespace"],
                         "annotations": dict(annotations_of(job)),
                         "labels": dict(labels_of(job)),
                         "ownerReferences": [owner_reference(job)]},
            "spec": pg_spec}


def _sub_group(task: Obj) -> Obj:
    p = task["partitionPolicy"]
    group = {"name": task["name"], "subGroupSize": p.get("partitionSize") or 1,
             "minSubGroups": p.get("minPartitions") or 0,
             "labelSelector": {"matchLabels": {TASK_SPEC: task["name"]}},
             "matchLabelKeys": [PARTITION_ID]}
    if p.get("networkTopology"):
        group["networkTopology"] = clone(p["networkTopology"])
    return group


def min_resources(job: Obj, lister: Lister) -> dict[str, str]:
    """calcPGMinResources: tasks by their template's priority (highest first); the quota
    usage (util.CalTaskRequests: `pods`, `count/pods`, requests and limits under quota's
    names, see controllers/podgroup.py quota_usage) of the pods the gang needs (reference §2.3)."""
    spec = job["spec"]
    tasks = list(spec.get("tasks") or [])
    tasks.sort(key=lambda t: -_priority_of(t, lister))  # stable: equal priorities keep spec order
    job_min = spec.get("minAvailable") or 0
    usages = [_task_usage(t) for t in tasks]
    total: quantity.Resources = {}

    def add(usage: quantity.Resources, n: int) -> None:
        if n > 0:  # CalTaskRequests of no replica adds no name, not zeros
            quantity.add(total, usage, n)
    if job_min < sum(task_min_available(t) for t in tasks):
        left = job_min
        for t, usage in zip(tasks, usages):
            n = min(left, t.get("replicas") or 0)
            add(usage, n)
            left -= n
    else:
        for t, usage in zip(tasks, usages):
            add(usage, task_min_available(t))
        left = job_min - sum(task_min_available(t) for t in tasks)
        for t, usage in zip(tasks, usages):
            n = max(0, min(left, (t.get("replicas") or 0) - task_min_available(t)))
            add(usage, n)
            left -= n
    return quantity.to_strings(total)


def _task_usage(task: Obj) -> quantity.Resources:
    """The quota usage of a pod of the task (Volcano's `&v1.Pod{Spec: template.Spec}`)."""
    spec = spec_of(task.get("template"))
    usage = quota_usage(spec, where=f"spec.tasks[{task.get('name')}].template.spec")
    return {name: (Fraction(milli, 1000), fmt) for name, (milli, fmt) in usage.items()}


def template_priorities(job: Obj, lister: Lister) -> tuple[int, ...]:
    """The value of the PriorityClass each task's template names (0 for none or an unknown
    one), in task order: besides the job itself, what min_resources depends on."""
    return tuple(_priority_of(t, lister) for t in job["spec"].get("tasks") or [])


def _priority_of(task: Obj, lister: Lister) -> int:
    name = dig(task, "template", "spec", "priorityClassName")
    pc = lister.get("PriorityClass", name) if name else None
    return int(pc.get("value", 0)) if pc else 0


def build_pod(job: Obj, task: Obj, index: int) -> Obj:
    """createJobPod: the pod `<job>-<task>-<index>` from the task's template."""
    meta, spec = job["metadata"], job["spec"]
    template = clone(as_map(task.get("template")))
    pod_spec = spec_of(template)
    name = task["name"]
    pod_spec["schedulerName"] = pod_spec.get("schedulerName") or spec.get("schedulerName") or "volcano"
    if not pod_spec.get("priorityClassName") and spec.get("priorityClassName"):
        pod_spec["priorityClassName"] = spec["priorityClassName"]
    _mount_job_volumes(job, pod_spec)
    status = status_of(job)
    annotations = dict(annotations_of(template))
    annotations.update({TASK_SPEC: name, TASK_INDEX: str(index), GROUP_NAME: podgroup_name(job),
                        JOB_NAME: meta["name"], QUEUE_NAME: spec.get("queue") or "default",
                        JOB_VERSION: str(status.get("version", 0)), TEMPLATE_UID: f"{meta['name']}-{name}",
                        RETRY_COUNT: str(status.get("retryCount", 0))})
    if task.get("topologyPolicy"):
        annotations[TOPOLOGY_POLICY] = task["topologyPolicy"]
    job_annotations = annotations_of(job)
    annotations.update({k: job_annotations[k] for k in ANNOTATIONS_TO_PODS if k in job_annotations})
    labels = dict(labels_of(template))
    labels.update({TASK_INDEX: str(index), JOB_NAME: meta["name"], TASK_SPEC: name,
                   JOB_NAMESPACE: meta["namespace"], QUEUE_NAME: spec.get("queue") or "default"})
    partition = dig(task, "partitionPolicy", "partitionSize")
    if partition:
        labels[PARTITION_ID] = str(index // partition)
    job_labels = labels_of(job)
    labels.update({k: job_labels[k] for k in LABELS_TO_PODS if k in job_labels})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": pod_name(job, name, index), "namespace": meta["namespace"],
                         "labels": labels, "annotations": annotations,
                         "ownerReferences": [owner_reference(job)]},
            "spec": pod_spec}


def _mount_job_volumes(job: Obj, pod_spec: Obj) -> None:
    """Every container mounts every job volume (the controller names the claims first)."""
    for v in job["spec"].get("volumes") or []:
        claim = v.get("volumeClaimName")
        if not claim:
            continue
        pod_spec.setdefault("volumes", []).append({"name": claim, "persistentVolumeClaim": {"claimName": claim}})
        for c in pod_spec.get("containers") or []:
            c.setdefault("volumeMounts", []).append({"name": claim, "mountPath": v.get("mountPath", "")})
