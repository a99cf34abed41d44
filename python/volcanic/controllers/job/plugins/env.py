"""The env plugin (reference §2.4, Volcano's plugins/env): every container and init container
learns the pod's index in its task as VK_TASK_INDEX and VC_TASK_INDEX."""

from __future__ import annotations

from volcanic.controllers.job.plugins.common import JobPlugin, containers, pod_index, set_env_value
from volcanic.kube.objects import Obj

TASK_VK_INDEX = "VK_TASK_INDEX"
TASK_INDEX = "VC_TASK_INDEX"


class EnvPlugin(JobPlugin):
    """No flags: its arguments are ignored, as Volcano's env plugin ignores them. No cluster
    objects: job hooks only record controlledResources."""

    name = "env"
    PARSES_FLAGS = False

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        """Set both index variables, the pod name's index suffix, on all (init) containers."""
        index = pod_index(pod)
        for c in containers(pod):
            set_env_value(c, TASK_VK_INDEX, index)
            set_env_value(c, TASK_INDEX, index)
