"""The svc plugin (reference §2.4, Volcano's plugins/svc): pods of a job find each other by
name. Each pod gets hostname "<pod>" and subdomain "<job>"; a headless Service "<job>" makes
"<pod>.<job>" resolve; a ConfigMap "<job>-svc" lists every task's hosts and is mounted at
/etc/volcano and exported as env; a NetworkPolicy "<job>" admits only the job's own pods."""

from __future__ import annotations

from volcanic.controllers.job.plugins.common import (
    JobPlugin,
    add_mount,
    add_volume,
    containers,
    create_if_absent,
    create_or_update,
    delete_if_present,
    env_key,
    is_controlled,
    job_name,
    job_namespace,
    mark_controlled,
    owned_object,
    pod_spec,
    set_env,
    task_hosts,
    tasks,
    unmark_controlled,
)
from volcanic.kube.keys import JOB_NAME, JOB_NAMESPACE
from volcanic.kube.objects import Obj
from volcanic.kube.store import Store

MOUNT_PATH = "/etc/volcano"
HOST_FILE = "{}.host"        # ConfigMap key of a task's newline-separated hosts
HOSTS_ENV = "VC_{}_HOSTS"    # ConfigMap key and env: comma-separated hosts
NUM_ENV = "VC_{}_NUM"        # ConfigMap key and env: the number of hosts


def config_map_name(job: Obj) -> str:
    return f"{job_name(job)}-svc"


def host_file(job: Obj) -> dict[str, str]:
    """The ConfigMap data (Volcano's GenerateHosts): per task, "<task>.host" (newline-separated
    hosts, '-' in the task name becomes '_'), VC_<TASK>_HOSTS (comma-separated) and
    VC_<TASK>_NUM (the count)."""
    data: dict[str, str] = {}
    for task in tasks(job):
        hosts = task_hosts(job, task)
        data[HOST_FILE.format(task["name"].replace("-", "_"))] = "\n".join(hosts)
        data[HOSTS_ENV.format(env_key(task["name"]))] = ",".join(hosts)
        data[NUM_ENV.format(env_key(task["name"]))] = str(len(hosts))
    return data


def pod_selector(job: Obj) -> dict[str, str]:
    return {JOB_NAME: job_name(job), JOB_NAMESPACE: job_namespace(job)}


class SvcPlugin(JobPlugin):
    """Flags (Volcano v1.15.1's plugins/svc/svc.go): --publish-not-ready-addresses (false)
    sets the Service's publishNotReadyAddresses; --disable-network-policy (false) skips the
    NetworkPolicy. volcanic's own --inject-hosts-env (true) exports the host lists as env
    (turn off for jobs so large the lists would overflow the environment). Any other flag
    (e.g. --enable-networking, which Volcano's e2e passes) is logged and ignored, as in
    Volcano."""

    name = "svc"
    FLAGS = {"publish-not-ready-addresses": False, "disable-network-policy": False,
             "inject-hosts-env": True}

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        """Hostname and subdomain (when the template leaves them empty), the host env of every
        task read from the ConfigMap, and the ConfigMap mounted at /etc/volcano, on all
        containers and init containers."""
        spec = pod_spec(pod)
        if not spec.get("hostname"):
            spec["hostname"] = pod["metadata"]["name"]
        if not spec.get("subdomain"):
            spec["subdomain"] = job_name(job)
        cm = config_map_name(job)
        env = []
        if self.flags["inject-hosts-env"]:
            for task in tasks(job):
                for key in (HOSTS_ENV.format(env_key(task["name"])), NUM_ENV.format(env_key(task["name"]))):
                    env.append({"name": key, "valueFrom": {"configMapKeyRef": {"name": cm, "key": key}}})
        add_volume(pod, {"name": cm, "configMap": {"name": cm}})
        for c in containers(pod):
            for entry in env:
                set_env(c, dict(entry))
            add_mount(c, {"name": cm, "mountPath": MOUNT_PATH})

    def on_job_add(self, job: Obj, store: Store) -> None:
        """Once per job: create or refresh the ConfigMap, and create the headless Service and
        (unless disabled) the NetworkPolicy if they do not exist."""
        if is_controlled(job, self.name):
            return
        self.write_config_map(job, store)
        create_if_absent(store, self.service(job))
        if not self.flags["disable-network-policy"]:
            create_if_absent(store, self.network_policy(job))
        mark_controlled(job, self.name)

    def on_job_update(self, job: Obj, store: Store) -> None:
        """Regenerate the ConfigMap, e.g. for new replica counts."""
        self.write_config_map(job, store)

    def on_job_delete(self, job: Obj, store: Store) -> None:
        """Delete the ConfigMap, the Service and (unless disabled) the NetworkPolicy."""
        if not is_controlled(job, self.name):
            return
        ns = job_namespace(job)
        delete_if_present(store, "ConfigMap", config_map_name(job), ns)
        delete_if_present(store, "Service", job_name(job), ns)
        unmark_controlled(job, self.name)
        if not self.flags["disable-network-policy"]:
            delete_if_present(store, "NetworkPolicy", job_name(job), ns)

    def write_config_map(self, job: Obj, store: Store) -> None:
        create_or_update(store, owned_object(job, "v1", "ConfigMap", config_map_name(job),
                                             data=host_file(job)), "data")

    def service(self, job: Obj) -> Obj:
        """The headless Service "<job>" selecting the job's pods."""
        return owned_object(job, "v1", "Service", job_name(job), spec={
            "clusterIP": "None", "selector": pod_selector(job),
            "publishNotReadyAddresses": bool(self.flags["publish-not-ready-addresses"])})

    def network_policy(self, job: Obj) -> Obj:
        """The NetworkPolicy "<job>": the job's pods accept ingress only from the job's pods."""
        return owned_object(job, "networking.k8s.io/v1", "NetworkPolicy", job_name(job), spec={
            "podSelector": {"matchLabels": pod_selector(job)},
            "ingress": [{"from": [{"podSelector": {"matchLabels": pod_selector(job)}}]}],
            "policyTypes": ["Ingress"]})
