"""The mpi plugin (reference §2.4, Volcano's distributed-framework/mpi): the master learns its
workers' hosts as MPI_HOST, and every container opens the ssh port mpirun uses."""

from __future__ import annotations

from volcanic.controllers.job.plugins.common import (
    JobPlugin,
    containers,
    open_port,
    pod_task,
    set_env_value,
    task_hosts,
    task_named,
)
from volcanic.kube.objects import Obj

MPI_HOST = "MPI_HOST"
PORT_NAME = "mpijob-port"


class MpiPlugin(JobPlugin):
    """Flags: --master and --worker name the two tasks (defaults "master", "worker"); --port
    (22) is the port opened."""

    name = "mpi"
    FLAGS = {"master": "master", "worker": "worker", "port": 22}

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        """Open --port as "mpijob-port" on every container and init container; on master
        pods also set MPI_HOST, the worker hosts "<job>-<worker>-<i>.<job>" joined by ','.
        (Volcano crashes on a job without a worker task or with 0 workers; MPI_HOST is then
        empty here.)"""
        is_master = pod_task(pod) == self.flags["master"]
        hosts = ""
        if is_master:
            worker = task_named(job, str(self.flags["worker"]))
            hosts = ",".join(task_hosts(job, worker)) if worker is not None else ""
        for c in containers(pod):
            open_port(c, PORT_NAME, int(self.flags["port"]))
            if is_master:
                set_env_value(c, MPI_HOST, hosts)
