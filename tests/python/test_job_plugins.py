"""Volcano's job plugins (reference §2.4): env, svc, ssh, tensorflow, pytorch and mpi, as the
job controller calls them: on_pod_create on a freshly built pod, on_job_add / on_job_update /
on_job_delete against the store."""

from __future__ import annotations

import base64
import copy
import json
import shutil
import socket
import subprocess

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
import pytest

from volcanic.cluster.store import MemoryStore
from volcanic.controllers.job.plugins import PLUGINS, JobPlugin, PluginError, plugins_of
from volcanic.controllers.job.plugins.common import parse_flags
from volcanic.controllers.job.plugins.pytorch import wait_script

OWNER_KEYS = {"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"}


# --- Builders ----------------------------------------------------------------------------

def _task(name, replicas, containers=None, init=None, **spec):
    pod_spec = {"containers": containers or [{"name": name, "image": "busybox"}], **spec}
    if init is not None:
        pod_spec["initContainers"] = init
    return {"name": name, "replicas": replicas, "template": {"spec": pod_spec}}


def _job(name="tf", tasks=(), plugins=None, ns="default", store=None):
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
           "metadata": {"name": name, "namespace": ns},
           "spec": {"tasks": list(tasks), "plugins": plugins or {}}}
    if store is not None:  # a stored job has a uid, so owned objects cascade from it
        job = store.create(job)
    else:
        job["metadata"]["uid"] = f"uid-{name}"
    return job


def _pod(job, task_name, index):
    """A pod as the job controller builds it from the task template (reference §2.3)."""
    task = next(t for t in job["spec"]["tasks"] if t["name"] == task_name)
    name, jname = job["metadata"]["name"], f"{job['metadata']['name']}-{task_name}-{index}"
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": jname, "namespace": job["metadata"]["namespace"],
                         "annotations": {"volcano.sh/task-spec": task_name,
                                         "volcano.sh/task-index": str(index)},
                         "labels": {"volcano.sh/job-name": name,
                                    "volcano.sh/job-namespace": job["metadata"]["namespace"],
                                    "volcano.sh/task-spec": task_name}},
            "spec": copy.deepcopy(task["template"]["spec"])}


def _env(container):
    """A container's env as {name: value or valueFrom}; asserts no name repeats."""
    entries = container.get("env") or []
    names = [e["name"] for e in entries]
    assert len(names) == len(set(names)), f"duplicate env: {names}"
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in entries}


def _plugin(name, *args):
    return PLUGINS[name](list(args))


def _owned_by(obj, job):
    (ref,) = obj["metadata"]["ownerReferences"]
    assert set(ref) == OWNER_KEYS
    assert ref["uid"] == job["metadata"]["uid"] and ref["name"] == job["metadata"]["name"]
    assert ref["kind"] == "Job" and ref["apiVersion"] == "batch.volcano.sh/v1alpha1"
    assert ref["controller"] is True and ref["blockOwnerDeletion"] is True


def _decoded(secret):
    return {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}


# --- Construction and arguments ----------------------------------------------------------

def test_plugins_of_builds_the_known_plugins_in_name_order():
    """reference §2.4: job.spec.plugins maps a name to its arguments; Volcano walks a Go map,
    we sort by name."""
    job = _job(plugins={"svc": [], "env": [], "tensorflow": ["--port=3333"], "mpi": []})
    plugins = plugins_of(job)
    assert [p.name for p in plugins] == ["env", "mpi", "svc", "tensorflow"]
    assert all(isinstance(p, JobPlugin) for p in plugins)
    assert plugins[3].flags["port"] == 3333
    assert plugins_of(_job()) == []
    assert sorted(PLUGINS) == ["env", "hcclrank", "mpi", "pytorch", "ray", "ssh", "svc", "tensorflow"]


def test_unknown_plugin_names_the_job_and_lists_the_known_ones():
    with pytest.raises(PluginError) as e:
        plugins_of(_job(name="tf", ns="team", plugins={"env": [], "horovod": []}))
    message = str(e.value)
    assert message.startswith("job team/tf: ") and '"horovod"' in message
    assert "env, hcclrank, mpi, pytorch, ray, ssh, svc, tensorflow" in message


def test_unknown_or_malformed_arguments_are_logged_and_the_defaults_kept(caplog):
    """Volcano's plugins parse their flags with a flag.FlagSet and only log a parse error
    (pkg/controllers/job/plugins/svc/svc.go addFlags, tensorflow, mpi...): the job goes on
    with the flags read before the error. Only arguments that are not a list of strings are
    an error (the CRD types them as one)."""
    svc, = plugins_of(_job(plugins={"svc": ["--publish-not-ready-addresses", "--bogus", "--disable-network-policy"]}))
    assert svc.flags["publish-not-ready-addresses"] is True and svc.flags["disable-network-policy"] is False
    assert svc.flag_error == "flag provided but not defined: -bogus"
    assert "plugin svc flagset parse failed, err: flag provided but not defined: -bogus" in caplog.text
    tf, = plugins_of(_job(plugins={"tensorflow": ["--port=x"]}))
    assert tf.flags["port"] == 2222 and tf.flag_error == 'invalid value "x" for flag -port: parse error'
    svc, = plugins_of(_job(plugins={"svc": ["--disable-network-policy=maybe"]}))
    assert svc.flag_error == 'invalid boolean value "maybe" for -disable-network-policy: parse error'
    mpi, = plugins_of(_job(plugins={"mpi": ["--port"]}))
    assert mpi.flags["port"] == 22 and mpi.flag_error == "flag needs an argument: -port"
    with pytest.raises(PluginError, match=r"job default/tf: plugin \"svc\": arguments must be a list"):
        plugins_of(_job(plugins={"svc": "--x"}))


def test_well_known_names_and_the_job_owner_reference_are_defined_once():
    """Volcano's label and annotation keys and API versions that several modules use live in
    kube/keys.py; the pod name ("<job>-<task>-<i>", MakePodName) and the owner
    reference to the job live in job/build.py. The plugins, the job controller and the
    PodGroup controller use those, so they cannot drift apart."""
    import inspect

    from volcanic.controllers import podgroup
    from volcanic.controllers.job import build, controller, sync
    from volcanic.controllers.job.plugins import common, svc
    from volcanic.kube import keys
    shared = {v for k, v in vars(keys).items() if k.isupper() and isinstance(v, str)}
    for module in (build, common, svc, sync, controller, podgroup):
        source = inspect.getsource(module)
        assert [v for v in shared if f'"{v}"' in source] == [], module.__name__
    assert common.pod_name is build.pod_name and common.owner_reference is build.owner_reference
    job = _job("tf", [_task("ps", 2)])
    assert common.task_hosts(job, job["spec"]["tasks"][0]) == ["tf-ps-0.tf", "tf-ps-1.tf"]
    owned = common.owned_object(job, "v1", "ConfigMap", "tf-x")
    assert owned["metadata"]["ownerReferences"] == [build.owner_reference(job)]
    _owned_by(owned, job)
    assert svc.pod_selector(job) == {keys.JOB_NAME: "tf", keys.JOB_NAMESPACE: "default"}

def test_flags_parse_as_go_flag_does():
    """Volcano parses plugin arguments with Go's flag package."""
    defaults = {"on": False, "port": 1, "name": "a"}
    values = lambda args: parse_flags("p", args, defaults)[0]
    assert parse_flags("p", [], defaults) == (defaults, None)
    assert values(["--on"])["on"] is True
    assert values(["-on=true"])["on"] is True
    assert values(["--on=false"])["on"] is False
    assert parse_flags("p", ["--on=1", "--port", "2222", "--name=b"], defaults) == \
        ({"on": True, "port": 2222, "name": "b"}, None)
    assert values(["--port=0x10"])["port"] == 16
    # The first non-flag argument ends parsing; what follows is ignored.
    assert parse_flags("p", ["stray", "--bogus"], defaults) == (defaults, None)
    assert parse_flags("p", ["--port=5", "--", "--bogus"], defaults) == (dict(defaults, port=5), None)
    assert parse_flags("p", ["---x"], defaults) == (defaults, "bad flag syntax: ---x")


# --- env ---------------------------------------------------------------------------------

def test_env_sets_the_task_index_on_every_container_and_init_container():
    """reference §2.4 env: VK_TASK_INDEX and VC_TASK_INDEX = the pod's index."""
    job = _job(tasks=[_task("worker", 3, containers=[{"name": "a"}, {"name": "b", "env": [
        {"name": "KEEP", "value": "1"}, {"name": "VC_TASK_INDEX", "value": "stale"}]}],
        init=[{"name": "init"}])])
    pod = _pod(job, "worker", 2)
    _plugin("env").on_pod_create(pod, job)
    a, b = pod["spec"]["containers"]
    (init,) = pod["spec"]["initContainers"]
    assert _env(a) == {"VK_TASK_INDEX": "2", "VC_TASK_INDEX": "2"}
    assert _env(init) == {"VK_TASK_INDEX": "2", "VC_TASK_INDEX": "2"}
    # The plugin's value wins over the template's, without a duplicate entry.
    assert _env(b) == {"KEEP": "1", "VK_TASK_INDEX": "2", "VC_TASK_INDEX": "2"}


def test_plugins_without_objects_only_record_controlled_resources():
    """reference §2.4: each plugin records controlledResources["plugin-<name>"]."""
    store = MemoryStore()
    job = _job(tasks=[_task("worker", 1)])
    job.pop("status", None)
    for name in ("env", "tensorflow", "pytorch", "mpi"):
        p = _plugin(name)
        p.on_job_add(job, store)
        p.on_job_add(job, store)
        assert job["status"]["controlledResources"][f"plugin-{name}"] == name
        p.on_job_update(job, store)
    for name in ("env", "tensorflow", "pytorch", "mpi"):
        _plugin(name).on_job_delete(job, store)
    assert job["status"]["controlledResources"] == {}
    assert store.list("ConfigMap") == store.list("Secret") == store.list("Service") == []


# --- svc ---------------------------------------------------------------------------------

def _svc_job(store=None, **kw):
    return _job(name="tf", store=store, tasks=[
        _task("ps", 1), _task("tf-worker", 2, init=[{"name": "setup"}])], **kw)


def test_svc_pod_gets_hostname_subdomain_host_env_and_the_config_map_mount():
    """reference §2.4 svc: hostname/subdomain, env from configMapKeyRef, mount at /etc/volcano."""
    job = _svc_job()
    pod = _pod(job, "tf-worker", 1)
    _plugin("svc").on_pod_create(pod, job)
    spec = pod["spec"]
    assert spec["hostname"] == "tf-tf-worker-1" and spec["subdomain"] == "tf"
    assert spec["volumes"] == [{"name": "tf-svc", "configMap": {"name": "tf-svc"}}]
    for c in spec["containers"] + spec["initContainers"]:
        env = _env(c)
        assert list(env) == ["VC_PS_HOSTS", "VC_PS_NUM", "VC_TF_WORKER_HOSTS", "VC_TF_WORKER_NUM"]
        assert env["VC_TF_WORKER_HOSTS"] == {
            "configMapKeyRef": {"name": "tf-svc", "key": "VC_TF_WORKER_HOSTS"}}
        assert c["volumeMounts"] == [{"name": "tf-svc", "mountPath": "/etc/volcano"}]


def test_svc_keeps_a_template_hostname_and_can_skip_the_env():
    job = _job(tasks=[_task("master", 1, hostname="boss", subdomain="net")])
    pod = _pod(job, "master", 0)
    _plugin("svc", "--inject-hosts-env=false").on_pod_create(pod, job)
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("boss", "net")
    (c,) = pod["spec"]["containers"]
    assert "env" not in c and c["volumeMounts"] == [{"name": "tf-svc", "mountPath": "/etc/volcano"}]
    # Called twice (e.g. a retried creation), nothing is added twice.
    _plugin("svc").on_pod_create(pod, job)
    assert len(pod["spec"]["volumes"]) == 1 and len(c["volumeMounts"]) == 1
    assert len(c["env"]) == 2


def test_svc_on_job_add_creates_config_map_headless_service_and_network_policy():
    """reference §2.4 svc: ConfigMap <job>-svc, headless Service <job>, NetworkPolicy <job>."""
    store = MemoryStore()
    job = _svc_job(store=store)
    _plugin("svc").on_job_add(job, store)
    assert job["status"]["controlledResources"] == {"plugin-svc": "svc"}

    cm = store.get("ConfigMap", "tf-svc", "default")
    _owned_by(cm, job)
    assert cm["data"] == {
        "ps.host": "tf-ps-0.tf", "VC_PS_HOSTS": "tf-ps-0.tf", "VC_PS_NUM": "1",
        "tf_worker.host": "tf-tf-worker-0.tf\ntf-tf-worker-1.tf",
        "VC_TF_WORKER_HOSTS": "tf-tf-worker-0.tf,tf-tf-worker-1.tf", "VC_TF_WORKER_NUM": "2"}

    svc = store.get("Service", "tf", "default")
    _owned_by(svc, job)
    assert svc["spec"] == {"clusterIP": "None", "publishNotReadyAddresses": False,
                           "selector": {"volcano.sh/job-name": "tf", "volcano.sh/job-namespace": "default"}}

    np = store.get("NetworkPolicy", "tf", "default")
    _owned_by(np, job)
    labels = {"volcano.sh/job-name": "tf", "volcano.sh/job-namespace": "default"}
    assert np["spec"] == {"podSelector": {"matchLabels": labels},
                          "ingress": [{"from": [{"podSelector": {"matchLabels": labels}}]}],
                          "policyTypes": ["Ingress"]}


def test_svc_on_job_add_is_idempotent_and_tolerates_existing_objects():
    store = MemoryStore()
    job = _svc_job(store=store)
    svc = _plugin("svc")
    svc.on_job_add(job, store)
    versions = {k: store.get(k, n, "default")["metadata"]["resourceVersion"]
                for k, n in (("ConfigMap", "tf-svc"), ("Service", "tf"), ("NetworkPolicy", "tf"))}
    svc.on_job_add(job, store)  # recorded: nothing is written
    # Status lost (e.g. a restarted controller): the objects exist already; no error, no rewrite.
    job["status"] = {}
    svc.on_job_add(job, store)
    assert job["status"]["controlledResources"] == {"plugin-svc": "svc"}
    for (kind, name), version in zip((("ConfigMap", "tf-svc"), ("Service", "tf"), ("NetworkPolicy", "tf")),
                                     versions.values()):
        assert store.get(kind, name, "default")["metadata"]["resourceVersion"] == version


def test_svc_flags_publish_not_ready_addresses_and_disable_network_policy():
    store = MemoryStore()
    job = _svc_job(store=store)
    svc = _plugin("svc", "--publish-not-ready-addresses", "--disable-network-policy=true")
    svc.on_job_add(job, store)
    assert store.get("Service", "tf", "default")["spec"]["publishNotReadyAddresses"] is True
    assert store.get("NetworkPolicy", "tf", "default") is None
    svc.on_job_delete(job, store)
    assert store.get("Service", "tf", "default") is None


def test_svc_on_job_update_regenerates_the_config_map_for_new_replicas():
    store = MemoryStore()
    job = _svc_job(store=store)
    svc = _plugin("svc")
    svc.on_job_add(job, store)
    job["spec"]["tasks"][1]["replicas"] = 3
    svc.on_job_update(job, store)
    data = store.get("ConfigMap", "tf-svc", "default")["data"]
    assert data["VC_TF_WORKER_NUM"] == "3"
    assert data["tf_worker.host"].split("\n") == [f"tf-tf-worker-{i}.tf" for i in range(3)]


def test_svc_on_job_delete_removes_its_objects_and_tolerates_missing_ones():
    store = MemoryStore()
    job = _svc_job(store=store)
    svc = _plugin("svc")
    svc.on_job_add(job, store)
    store.delete("NetworkPolicy", "tf", "default")  # already gone: NotFound is tolerated
    svc.on_job_delete(job, store)
    assert job["status"]["controlledResources"] == {}
    assert store.list("ConfigMap") == store.list("Service") == store.list("NetworkPolicy") == []
    svc.on_job_delete(job, store)  # nothing recorded: nothing to do


def test_objects_of_the_plugins_are_deleted_with_their_job():
    store = MemoryStore()
    job = _svc_job(store=store)
    _plugin("svc").on_job_add(job, store)
    _plugin("ssh").on_job_add(job, store)
    store.delete("Job", "tf", "default")
    for kind in ("ConfigMap", "Service", "NetworkPolicy", "Secret"):
        assert store.list(kind) == []


# --- ssh ---------------------------------------------------------------------------------

def test_ssh_secret_holds_a_real_rsa_key_pair_and_the_host_config():
    """reference §2.4 ssh: Secret <job>-ssh with id_rsa (RSA 2048 PEM), id_rsa.pub,
    authorized_keys and config."""
    store = MemoryStore()
    job = _job(name="mpi", store=store, tasks=[_task("master", 1), _task("worker", 2)])
    _plugin("ssh").on_job_add(job, store)
    assert job["status"]["controlledResources"] == {"plugin-ssh": "ssh"}
    secret = store.get("Secret", "mpi-ssh", "default")
    _owned_by(secret, job)
    data = _decoded(secret)
    assert set(data) == {"id_rsa", "id_rsa.pub", "authorized_keys", "config"}

    assert data["id_rsa"].startswith("-----BEGIN RSA PRIVATE KEY-----\n")  # PKCS#1, as Volcano
    private = serialization.load_pem_private_key(data["id_rsa"].encode(), password=None)
    assert isinstance(private, rsa.RSAPrivateKey) and private.key_size == 2048
    assert data["id_rsa.pub"].startswith("ssh-rsa ") and data["id_rsa.pub"].endswith("\n")
    public = serialization.load_ssh_public_key(data["id_rsa.pub"].strip().encode())
    assert public.public_numbers() == private.public_key().public_numbers()
    assert data["authorized_keys"] == data["id_rsa.pub"]

    assert data["config"] == (
        "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n"
        "Host mpi-master-0\n  HostName mpi-master-0.mpi\n  Port 22\n"
        "Host mpi-worker-0\n  HostName mpi-worker-0.mpi\n  Port 22\n"
        "Host mpi-worker-1\n  HostName mpi-worker-1.mpi\n  Port 22\n")


def test_ssh_on_job_add_is_idempotent_and_on_job_delete_removes_the_secret():
    store = MemoryStore()
    job = _job(name="mpi", store=store, tasks=[_task("worker", 2)])
    ssh = _plugin("ssh")
    ssh.on_job_add(job, store)
    first = store.get("Secret", "mpi-ssh", "default")
    ssh.on_job_add(job, store)
    job["status"] = {}
    ssh.on_job_add(job, store)  # the Secret exists with the same config: kept, keys included
    assert store.get("Secret", "mpi-ssh", "default") == first
    ssh.on_job_delete(job, store)
    assert store.get("Secret", "mpi-ssh", "default") is None
    assert job["status"]["controlledResources"] == {}
    ssh.on_job_delete(job, store)


def test_ssh_uses_keys_given_by_flag_and_the_ssh_port():
    store = MemoryStore()
    job = _job(name="mpi", store=store, tasks=[_task("worker", 1)])
    _plugin("ssh", "--ssh-private-key=PRIVATE", "--ssh-public-key=ssh-rsa AAAA me",
             "--ssh-port=2222").on_job_add(job, store)
    data = _decoded(store.get("Secret", "mpi-ssh", "default"))
    assert data["id_rsa"] == "PRIVATE"
    assert data["id_rsa.pub"] == data["authorized_keys"] == "ssh-rsa AAAA me"
    assert "Host mpi-worker-0\n  HostName mpi-worker-0.mpi\n  Port 2222\n" in data["config"]


def test_ssh_pod_mounts_the_secret_by_sub_path_with_mode_0600_for_root():
    """reference §2.4 ssh: mounted at the key path with subPath .ssh; mode 0600 under
    /root/.ssh, 0644 under another path (Volcano v1.15.1 plugins/ssh/ssh.go mountRsaKey)."""
    job = _job(name="mpi", tasks=[_task("worker", 1, init=[{"name": "init"}])])
    for args, path, mode in (([], "/root/.ssh", 0o600), (["--ssh-key-file-path=/home/u/.ssh"], "/home/u/.ssh", 0o644)):
        pod = _pod(job, "worker", 0)
        _plugin("ssh", *args).on_pod_create(pod, job)
        (volume,) = pod["spec"]["volumes"]
        assert volume == {"name": "mpi-ssh", "secret": {
            "secretName": "mpi-ssh", "defaultMode": mode,
            "items": [{"key": "id_rsa", "path": ".ssh/id_rsa"},
                      {"key": "id_rsa.pub", "path": ".ssh/id_rsa.pub"},
                      {"key": "authorized_keys", "path": ".ssh/authorized_keys"},
                      {"key": "config", "path": ".ssh/config"}]}}
        for c in pod["spec"]["containers"] + pod["spec"]["initContainers"]:
            assert c["volumeMounts"] == [{"name": "mpi-ssh", "mountPath": path, "subPath": ".ssh"}]


# --- tensorflow --------------------------------------------------------------------------

def test_tensorflow_config_lists_the_cluster_and_the_pods_role():
    """reference §2.4 tensorflow: TF_CONFIG with "<job>-<task>-<i>.<job>:<port>" hosts."""
    job = _job(name="tf", tasks=[_task("ps", 1), _task("worker", 2, init=[{"name": "init"}])])
    pod = _pod(job, "worker", 1)
    _plugin("tensorflow").on_pod_create(pod, job)
    raw = _env(pod["spec"]["containers"][0])["TF_CONFIG"]
    # Volcano's exact shape: compact JSON, cluster before task, only roles present.
    assert raw == ('{"cluster":{"ps":["tf-ps-0.tf:2222"],'
                   '"worker":["tf-worker-0.tf:2222","tf-worker-1.tf:2222"]},'
                   '"task":{"type":"worker","index":1}}')
    assert json.loads(raw)["task"] == {"type": "worker", "index": 1}
    assert "env" not in pod["spec"]["initContainers"][0]


def test_tensorflow_role_flags_and_port():
    job = _job(name="t", tasks=[_task("boss", 1), _task("ps", 1), _task("trainer", 2), _task("eval", 1)])
    plugin = _plugin("tensorflow", "--chief=boss", "--worker=trainer", "--evaluator=eval", "--port=3000")
    pod = _pod(job, "boss", 0)
    plugin.on_pod_create(pod, job)
    config = json.loads(_env(pod["spec"]["containers"][0])["TF_CONFIG"])
    assert list(config["cluster"]) == ["ps", "worker", "chief", "evaluator"]
    assert config["cluster"]["chief"] == ["t-boss-0.t:3000"]
    assert config["cluster"]["worker"] == ["t-trainer-0.t:3000", "t-trainer-1.t:3000"]
    assert config["cluster"]["evaluator"] == ["t-eval-0.t:3000"]
    assert config["task"] == {"type": "chief", "index": 0}


def test_tensorflow_skips_a_stand_alone_job():
    job = _job(tasks=[_task("worker", 1)])
    pod = _pod(job, "worker", 0)
    _plugin("tensorflow").on_pod_create(pod, job)
    assert "env" not in pod["spec"]["containers"][0]


# --- pytorch -----------------------------------------------------------------------------

def test_pytorch_env_gives_world_size_and_ranks():
    """reference §2.4 pytorch: MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK; port pytorchjob-port."""
    job = _job(name="pt", tasks=[_task("master", 1), _task("worker", 3)])
    plugin = _plugin("pytorch")
    expected = [("master", 0, "0"), ("worker", 0, "1"), ("worker", 2, "3")]
    for task, index, rank in expected:
        pod = _pod(job, task, index)
        plugin.on_pod_create(pod, job)
        (c,) = pod["spec"]["containers"]
        assert _env(c) == {"MASTER_ADDR": "pt-master-0.pt", "MASTER_PORT": "23456",
                           "WORLD_SIZE": "4", "RANK": rank}
        assert c["ports"] == [{"name": "pytorchjob-port", "containerPort": 23456}]
        assert "initContainers" not in pod["spec"]  # wait-for-master is off by default


def test_pytorch_keeps_an_existing_port_and_ignores_other_tasks():
    job = _job(name="pt", tasks=[_task("master", 1, containers=[
        {"name": "m", "ports": [{"name": "mine", "containerPort": 29500}]}]),
        _task("worker", 1), _task("logger", 2)])
    plugin = _plugin("pytorch", "--port=29500")
    pod = _pod(job, "master", 0)
    plugin.on_pod_create(pod, job)
    assert pod["spec"]["containers"][0]["ports"] == [{"name": "mine", "containerPort": 29500}]
    other = _pod(job, "logger", 1)
    plugin.on_pod_create(other, job)
    env = _env(other["spec"]["containers"][0])
    assert env["WORLD_SIZE"] == "2" and "RANK" not in env  # only master and worker replicas count
    no_master = _job(tasks=[_task("worker", 2)])
    pod = _pod(no_master, "worker", 0)
    plugin.on_pod_create(pod, no_master)
    assert "env" not in pod["spec"]["containers"][0]


def test_pytorch_wait_for_master_init_container_on_workers_when_enabled():
    job = _job(name="pt", tasks=[_task("master", 1), _task("worker", 2, init=[{"name": "user"}])])
    plugin = _plugin("pytorch", "--wait-master-enabled", "--wait-master-timeout=60",
                     "--wait-master-image=alpine:3")
    pod = _pod(job, "worker", 1)
    plugin.on_pod_create(pod, job)
    plugin.on_pod_create(pod, job)  # not added twice
    wait, user = pod["spec"]["initContainers"]
    assert user == {"name": "user"}
    assert wait["name"] == "wait-for-master" and wait["image"] == "alpine:3"
    assert wait["command"][:2] == ["sh", "-c"]
    script = wait["command"][2]
    assert "addr=pt-master-0.pt; port=23456; timeout=60" in script and "nc -z" in script
    master = _pod(job, "master", 0)
    plugin.on_pod_create(master, job)
    assert "initContainers" not in master["spec"]


# --- mpi ---------------------------------------------------------------------------------

def test_mpi_master_gets_the_worker_hosts_and_every_container_the_port():
    """reference §2.4 mpi: MPI_HOST on master pods; port mpijob-port on all containers."""
    job = _job(name="mpi", tasks=[_task("master", 1, init=[{"name": "init"}]),
                                  _task("worker", 3, containers=[
                                      {"name": "w", "ports": [{"containerPort": 22}]}])])
    plugin = _plugin("mpi")
    master = _pod(job, "master", 0)
    plugin.on_pod_create(master, job)
    for c in master["spec"]["containers"] + master["spec"]["initContainers"]:
        assert _env(c) == {"MPI_HOST": "mpi-worker-0.mpi,mpi-worker-1.mpi,mpi-worker-2.mpi"}
        assert c["ports"] == [{"name": "mpijob-port", "containerPort": 22}]
    worker = _pod(job, "worker", 1)
    plugin.on_pod_create(worker, job)
    (c,) = worker["spec"]["containers"]
    assert "env" not in c and c["ports"] == [{"containerPort": 22}]  # port 22 is open already


def test_mpi_role_flags_and_port():
    job = _job(name="j", tasks=[_task("launcher", 1), _task("node", 2)])
    master = _pod(job, "launcher", 0)
    _plugin("mpi", "--master=launcher", "--worker=node", "--port=2022").on_pod_create(master, job)
    (c,) = master["spec"]["containers"]
    assert _env(c) == {"MPI_HOST": "j-node-0.j,j-node-1.j"}
    assert c["ports"] == [{"name": "mpijob-port", "containerPort": 2022}]


# --- Together ----------------------------------------------------------------------------

def test_all_plugins_on_one_pod():
    """An MPI job as the webhook completes it (mpi implies svc and ssh, reference §2.4)."""
    store = MemoryStore()
    job = _job(name="m", store=store, tasks=[_task("master", 1), _task("worker", 2)],
               plugins={"mpi": [], "svc": [], "ssh": [], "env": []})
    plugins = plugins_of(job)
    for p in plugins:
        p.on_job_add(job, store)
    assert job["status"]["controlledResources"] == {
        "plugin-env": "env", "plugin-mpi": "mpi", "plugin-ssh": "ssh", "plugin-svc": "svc"}
    pod = _pod(job, "master", 0)
    for p in plugins:
        p.on_pod_create(pod, job)
    (c,) = pod["spec"]["containers"]
    env = _env(c)
    assert env["MPI_HOST"] == "m-worker-0.m,m-worker-1.m" and env["VC_TASK_INDEX"] == "0"
    assert "VC_WORKER_HOSTS" in env
    assert [m["mountPath"] for m in c["volumeMounts"]] == ["/root/.ssh", "/etc/volcano"]
    for p in plugins:
        p.on_job_delete(job, store)
    assert job["status"]["controlledResources"] == {}
    assert store.list("Secret") == store.list("ConfigMap") == store.list("Service") == []


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")
def test_pytorch_wait_script_returns_once_the_master_port_answers():
    """The wait-for-master script really polls the port: ready when it listens, an error
    (exit 1) once the timeout has passed."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        ready = subprocess.run(["sh", "-c", wait_script("127.0.0.1", port, 10)],
                               capture_output=True, text=True, timeout=30)
    assert ready.returncode == 0 and "is ready" in ready.stdout
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed = unused.getsockname()[1]  # bound, not listening: connections are refused
        late = subprocess.run(["sh", "-c", wait_script("127.0.0.1", closed, 0)],
                              capture_output=True, text=True, timeout=30)
    assert late.returncode == 1 and "not ready after 0s" in late.stderr
