"""The ray plugin (Volcano v1.15.1's distributed-framework/ray/ray.go): a Ray cluster from a
job's head and worker tasks. The head container starts `ray start --head` and opens the GCS,
dashboard and client-server ports; worker containers join the head at
"<head pod>.<job>:<port>"; a Service "<job>-head-svc" exposes the head's three ports.
The job's svc plugin (which the job mutator adds for ray) makes the head's name resolve."""

from __future__ import annotations

from volcanic.controllers.job.plugins.common import (
    JobPlugin,
    PluginError,
    create_if_absent,
    delete_if_present,
    domain_name,
    is_controlled,
    job_key,
    job_name,
    job_namespace,
    mark_controlled,
    owned_object,
    pod_spec,
    pod_task,
    task_named,
    unmark_controlled,
)
from volcanic.kube.keys import JOB_NAME, JOB_NAMESPACE, TASK_SPEC
from volcanic.kube.objects import Obj
from volcanic.kube.store import Store

GCS_PORT_NAME = "gcs"
DASHBOARD_PORT_NAME = "dashboard"
CLIENT_PORT_NAME = "client-server"


def head_service_name(job: Obj) -> str:
    return f"{job_name(job)}-head-svc"


class RayPlugin(JobPlugin):
    """Flags: --head and --worker name the two tasks (defaults "head", "worker");
    --headContainer and --workerContainer the container in each that runs Ray (defaults
    "head", "worker"); --port (6379, the GCS), --dashboardPort (8265) and --clientPort
    (10001) the head's ports."""

    name = "ray"
    FLAGS = {"head": "head", "headContainer": "head", "worker": "worker", "workerContainer": "worker",
             "port": 6379, "dashboardPort": 8265, "clientPort": 10001}

    def ports(self) -> list[tuple[str, int]]:
        return [(GCS_PORT_NAME, int(self.flags["port"])), (DASHBOARD_PORT_NAME, int(self.flags["dashboardPort"])),
                (CLIENT_PORT_NAME, int(self.flags["clientPort"]))]

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        """The head task's Ray container gets the head command and the three ports (those it
        does not expose yet); the worker task's gets the command that joins the head. A job
        without the head task is a PluginError, as Volcano fails the pod's creation."""
        head = task_named(job, str(self.flags["head"]))
        if head is None:
            raise PluginError(f'job {job_key(job)}: plugin "ray": job {job_name(job)} doesn\'t have '
                              f'head task {self.flags["head"]}')
        task = pod_task(pod)
        for container in pod_spec(pod).get("containers") or []:
            if task == self.flags["head"] and container.get("name") == self.flags["headContainer"]:
                self.open_head_ports(container)
                container["command"] = ["sh", "-c", self.head_command()]
            if task == self.flags["worker"] and container.get("name") == self.flags["workerContainer"]:
                address = f"{domain_name(job, head, 0)}:{self.flags['port']}"
                container["command"] = ["sh", "-c", f"ray start --block --address={address}"]

    def head_command(self) -> str:
        return (f"ray start --head --block --dashboard-host=0.0.0.0 --port={self.flags['port']} "
                f"--dashboard-port={self.flags['dashboardPort']} --ray-client-server-port={self.flags['clientPort']}")

    def open_head_ports(self, container: Obj) -> None:
        """Add the GCS, dashboard and client-server ports, each unless the container already
        exposes that port number."""
        ports = container.get("ports") or []
        taken = {p.get("containerPort") for p in ports if isinstance(p, dict)}
        added = [{"name": name, "containerPort": port} for name, port in self.ports() if port not in taken]
        if added:
            container["ports"] = ports + added

    def on_job_add(self, job: Obj, store: Store) -> None:
        """Once per job: create the head Service unless it exists."""
        if is_controlled(job, self.name):
            return
        create_if_absent(store, self.head_service(job))
        mark_controlled(job, self.name)

    def on_job_delete(self, job: Obj, store: Store) -> None:
        """Delete the head Service."""
        if not is_controlled(job, self.name):
            return
        delete_if_present(store, "Service", head_service_name(job), job_namespace(job))
        unmark_controlled(job, self.name)

    def head_service(self, job: Obj) -> Obj:
        """The Service "<job>-head-svc" selecting the job's head pods, each port targeting the
        head container's port of that name."""
        selector = {JOB_NAME: job_name(job), JOB_NAMESPACE: job_namespace(job), TASK_SPEC: str(self.flags["head"])}
        ports = [{"name": name, "port": port, "targetPort": name, "protocol": "TCP"} for name, port in self.ports()]
        return owned_object(job, "v1", "Service", head_service_name(job), spec={"selector": selector, "ports": ports})
