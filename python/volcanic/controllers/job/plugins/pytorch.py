"""The pytorch plugin (reference §2.4, Volcano's distributed-framework/pytorch): the env that
torch.distributed's env:// rendezvous reads, the rendezvous port, and optionally an init
container that holds workers until the master answers."""

from __future__ import annotations

from volcanic.controllers.job.plugins.common import (
    JobPlugin,
    containers,
    domain_name,
    open_port,
    pod_index_number,
    pod_spec,
    pod_task,
    replicas,
    set_env_value,
    task_named,
    tasks,
)
from volcanic.kube.objects import Obj

MASTER_ADDR = "MASTER_ADDR"
MASTER_PORT = "MASTER_PORT"
WORLD_SIZE = "WORLD_SIZE"
RANK = "RANK"
PORT_NAME = "pytorchjob-port"
WAIT_CONTAINER = "wait-for-master"


class PytorchPlugin(JobPlugin):
    """Flags: --master and --worker name the two tasks (defaults "master", "worker"); --port
    (23456) is the master's rendezvous port; --wait-master-enabled (false),
    --wait-master-timeout (300 s) and --wait-master-image (busybox:1.36.1) control the
    worker's wait-for-master init container."""

    name = "pytorch"
    FLAGS = {"master": "master", "worker": "worker", "port": 23456,
             "wait-master-enabled": False, "wait-master-timeout": 300,
             "wait-master-image": "busybox:1.36.1"}

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        """Every container: the port opened, MASTER_ADDR, MASTER_PORT, WORLD_SIZE (master plus
        worker replicas) and, in the master and worker tasks, RANK (0 for the master, index+1
        for worker i). A job without the master task is left alone, as Volcano does."""
        master = task_named(job, str(self.flags["master"]))
        if master is None:
            return
        task = pod_task(pod)
        rank = None
        if task == self.flags["worker"]:
            rank = pod_index_number(pod, self.name, job) + 1
        elif task == self.flags["master"]:
            rank = 0
        address, port = domain_name(job, master, 0), int(self.flags["port"])
        for c in containers(pod, init=False):
            open_port(c, PORT_NAME, port)
            set_env_value(c, MASTER_ADDR, address)
            set_env_value(c, MASTER_PORT, str(port))
            set_env_value(c, WORLD_SIZE, str(self.world_size(job)))
            if rank is not None:
                set_env_value(c, RANK, str(rank))
        if task == self.flags["worker"] and self.flags["wait-master-enabled"]:
            self.add_wait_container(pod, address, port)

    def world_size(self, job: Obj) -> int:
        """Replicas of the master and worker tasks together."""
        roles = {self.flags["master"], self.flags["worker"]}
        return sum(replicas(t) for t in tasks(job) if t.get("name") in roles)

    def add_wait_container(self, pod: Obj, address: str, port: int) -> None:
        """Put a wait-for-master init container first (unless the pod has one): it polls the
        master's port (nc -z, else bash's /dev/tcp under `timeout`, else the shell's own /dev/tcp)
        every 2 s and fails the pod after --wait-master-timeout seconds."""
        spec = pod_spec(pod)
        inits = spec.get("initContainers") or []
        if any(c.get("name") == WAIT_CONTAINER for c in inits):
            return
        wait = {"name": WAIT_CONTAINER, "image": self.flags["wait-master-image"],
                "command": ["sh", "-c", wait_script(address, port, int(self.flags["wait-master-timeout"]))]}
        spec["initContainers"] = [wait] + inits


def wait_script(address: str, port: int, timeout: int) -> str:
    """The shell loop of the wait-for-master init container."""
    return (
        f"addr={address}; port={port}; timeout={timeout}\n"
        "tcp() { exec 3<>\"/dev/tcp/$addr/$port\"; }\n"
        "reachable() {\n"
        "  if command -v nc >/dev/null 2>&1; then nc -z -w 2 \"$addr\" \"$port\"\n"
        "  elif command -v bash >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1; then\n"
        "    timeout 2 bash -c \"exec 3<>/dev/tcp/$addr/$port\"\n"
        "  else (tcp)\n"
        "  fi\n"
        "} >/dev/null 2>&1\n"
        "deadline=$(( $(date +%s) + timeout ))\n"
        "until reachable; do\n"
        "  if [ \"$(date +%s)\" -ge \"$deadline\" ]; then\n"
        "    echo \"master $addr:$port not ready after ${timeout}s\" >&2; exit 1\n"
        "  fi\n"
        "  echo \"waiting for master $addr:$port\"; sleep 2\n"
        "done\n"
        "echo \"master $addr:$port is ready\"\n"
    )
