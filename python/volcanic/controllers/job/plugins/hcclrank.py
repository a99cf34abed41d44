"""The hcclrank plugin (Volcano v1.15.1's distributed-framework/hcclrank/hcclrank.go): each
pod of a job's master and worker tasks is annotated with its rank in the HCCL communicator
(Huawei Ascend's collective communication), hccl/rankIndex. A RANK env another plugin (or
the template) set in a container is used as it is; otherwise master pod i has rank i and
worker pod i has rank <master replicas> + i."""

from __future__ import annotations

from volcanic.controllers.job.plugins.common import (
    JobPlugin,
    PluginError,
    job_key,
    pod_spec,
    pod_task,
    replicas,
    task_named,
)
from volcanic.kube.keys import TASK_INDEX
from volcanic.kube.objects import Obj, annotations_of, label
from volcanic.kube.store import Store

RANK_ANNOTATION = "hccl/rankIndex"
RANK_ENV = "RANK"


def env_value(pod: Obj, name: str) -> str:
    """The value of the first env entry `name` in the pod's containers, or ""."""
    for container in pod_spec(pod).get("containers") or []:
        for entry in container.get("env") or []:
            if entry.get("name") == name:
                return str(entry.get("value") or "")
    return ""


class HcclrankPlugin(JobPlugin):
    """Flags: --master and --worker name the two tasks (defaults "master", "worker"). It
    creates no objects and, as in Volcano, records nothing in controlledResources."""

    name = "hcclrank"
    FLAGS = {"master": "master", "worker": "worker"}

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        """Annotate hccl/rankIndex unless the pod has it already."""
        meta = pod.setdefault("metadata", {})
        annotations = annotations_of(pod)
        if annotations.get(RANK_ANNOTATION):
            return
        rank = env_value(pod, RANK_ENV) or self.rank(pod, job)
        if rank:
            meta["annotations"] = {**annotations, RANK_ANNOTATION: rank}

    def rank(self, pod: Obj, job: Obj) -> str:
        """The rank from the pod's task and its volcano.sh/task-index label; "" for a pod of
        another task. A master or worker pod without a numeric index is a PluginError (Volcano
        fails the pod's creation)."""
        task = pod_task(pod)
        if task not in (self.flags["master"], self.flags["worker"]):
            return ""
        text = label(pod, TASK_INDEX)
        try:
            index = int(text)
        except (TypeError, ValueError):
            raise PluginError(f'job {job_key(job)}: plugin "hcclrank": pod "{pod["metadata"].get("name")}" '
                              f"has no numeric {TASK_INDEX} label ({text!r})") from None
        if task == self.flags["master"]:
            return str(index)
        master = task_named(job, str(self.flags["master"]))
        return str((replicas(master) if master is not None else 0) + index)

    def on_job_add(self, job: Obj, store: Store) -> None:
        """Nothing: Volcano's hcclrank records no controlledResources entry."""

    def on_job_delete(self, job: Obj, store: Store) -> None:
        """Nothing (see on_job_add)."""
