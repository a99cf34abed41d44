"""The tensorflow plugin (reference §2.4, Volcano's distributed-framework/tensorflow): each
container gets TF_CONFIG, the JSON TensorFlow reads to find its cluster and its own role."""

from __future__ import annotations

import json

from volcanic.controllers.job.plugins.common import (
    JobPlugin,
    containers,
    domain_name,
    pod_index_number,
    pod_task,
    replicas,
    set_env_value,
    tasks,
)
from volcanic.kube.objects import Obj

TF_CONFIG = "TF_CONFIG"
ROLES = ("ps", "worker", "chief", "evaluator")  # TF_CONFIG's cluster keys, in Volcano's order
TYPE_ORDER = ("chief", "worker", "ps", "evaluator")  # Volcano's order when naming a pod's type


class TensorflowPlugin(JobPlugin):
    """Flags --ps, --worker, --chief, --evaluator name the task of each role (defaults: the
    role's own name); --port (2222) is the port in every host address."""

    name = "tensorflow"
    FLAGS = {"ps": "ps", "worker": "worker", "chief": "chief", "evaluator": "evaluator", "port": 2222}

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        """Add TF_CONFIG to the containers (not init containers); a stand-alone job (one task
        of one replica) gets nothing."""
        job_tasks = tasks(job)
        if len(job_tasks) == 1 and replicas(job_tasks[0]) == 1:
            return
        value = json.dumps(self.cluster_spec(pod, job), separators=(",", ":"))
        for c in containers(pod, init=False):
            set_env_value(c, TF_CONFIG, value)

    def cluster_spec(self, pod: Obj, job: Obj) -> dict:
        """{"cluster": {role: ["<host>:<port>", ...]}, "task": {"type": role, "index": i}}.
        Only roles whose task exists and has replicas appear, in the order ps, worker, chief,
        evaluator (Go's omitempty and field order); a pod of a task that plays no role has its
        task name as type. (If two flags name one task, Volcano's two switches pick the role
        in different orders; so do we.)"""
        role_of_task: dict[str, str] = {}
        for role in ROLES:  # the first matching role wins, as in Volcano's switch
            role_of_task.setdefault(str(self.flags[role]), role)
        hosts: dict[str, list[str]] = {}
        for task in tasks(job):
            role = role_of_task.get(task.get("name"))
            if role is not None:
                hosts[role] = [f"{domain_name(job, task, i)}:{self.flags['port']}"
                               for i in range(replicas(task))]
        cluster = {role: hosts[role] for role in ROLES if hosts.get(role)}
        task_name = pod_task(pod)
        task_type = next((r for r in TYPE_ORDER if self.flags[r] == task_name), task_name)
        return {"cluster": cluster,
                "task": {"type": task_type,
                         "index": pod_index_number(pod, self.name, job)}}
