"""The ssh plugin (reference §2.4, Volcano's plugins/ssh): password-less ssh between the pods
of a job, as mpirun needs. A Secret "<job>-ssh" holds an RSA key pair, authorized_keys and an
ssh client config naming every pod; each container mounts it at --ssh-key-file-path."""

from __future__ import annotations

import base64

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from volcanic.controllers.job.plugins.common import (
    JobPlugin,
    add_mount,
    add_volume,
    containers,
    create_or_update,
    delete_if_present,
    host_names,
    is_controlled,
    job_name,
    job_namespace,
    log,
    mark_controlled,
    owned_object,
    tasks,
    unmark_controlled,
)
from volcanic.kube.objects import Obj, dig
from volcanic.kube.store import Store

PRIVATE_KEY = "id_rsa"
PUBLIC_KEY = "id_rsa.pub"
AUTHORIZED_KEYS = "authorized_keys"
CONFIG = "config"
ROOT_PATH = "/root/.ssh"   # the default key path
RELATIVE_PATH = ".ssh"     # the Secret volume's directory, mounted by subPath
KEY_BITS = 2048
ROOT_FILE_MODE = 0o600     # the files' mode under /root/.ssh
USER_FILE_MODE = 0o644     # under any other path (a non-root user must read them)
DEFAULT_PORT = 22


def secret_name(job: Obj) -> str:
    return f"{job_name(job)}-ssh"


def generate_key_pair() -> tuple[bytes, bytes]:
    """A fresh RSA 2048 pair as Volcano writes it: the private key as PKCS#1 PEM
    ("-----BEGIN RSA PRIVATE KEY-----"), the public key in OpenSSH authorized_keys form
    ("ssh-rsa AAAA...\\n")."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)
    private = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                           serialization.PublicFormat.OpenSSH)
    return private, public + b"\n"


def ssh_config(job: Obj, port: int) -> str:
    """The client config: no host-key checks, then per pod "Host <pod>", "  HostName
    <pod>.<job>" and "  Port <port>" (one entry per task when its template fixes a hostname)."""
    lines = ["StrictHostKeyChecking no", "UserKnownHostsFile /dev/null"]
    for task in tasks(job):
        for host, domain in host_names(job, task):
            lines += [f"Host {host}", f"  HostName {domain}", f"  Port {port}"]
    return "\n".join(lines) + "\n"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class SshPlugin(JobPlugin):
    """Flags (Volcano v1.15.1's plugins/ssh/ssh.go): --ssh-key-file-path (/root/.ssh) is where
    containers see the files; --ssh-private-key and --ssh-public-key give the key pair
    instead of generating one (used as given, when the private key is non-empty); --ssh-port
    (22) goes in the config, and a port outside 1-65535 falls back to 22 with a warning.
    Older Volcano's --no-root is gone: like any unknown flag it is logged and ignored (a key
    path other than /root/.ssh is what makes the files readable by a non-root user)."""

    name = "ssh"
    FLAGS = {"ssh-key-file-path": ROOT_PATH, "ssh-private-key": "", "ssh-public-key": "",
             "ssh-port": DEFAULT_PORT}

    def __init__(self, arguments: list[str]) -> None:
        super().__init__(arguments)
        port = int(self.flags["ssh-port"])
        if not 0 < port <= 65535:
            log.warning("invalid ssh port %d, falling back to default port %d ...", port, DEFAULT_PORT)
            self.flags["ssh-port"] = DEFAULT_PORT

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        """Add the Secret volume (items under .ssh/; mode 0600 under /root/.ssh, 0644 under any
        other key path) and mount it, subPath .ssh, at the key path in every container and
        init container."""
        name = secret_name(job)
        items = [{"key": k, "path": f"{RELATIVE_PATH}/{k}"}
                 for k in (PRIVATE_KEY, PUBLIC_KEY, AUTHORIZED_KEYS, CONFIG)]
        mode = ROOT_FILE_MODE if self.flags["ssh-key-file-path"] == ROOT_PATH else USER_FILE_MODE
        add_volume(pod, {"name": name, "secret": {"secretName": name, "items": items,
                                                  "defaultMode": mode}})
        for c in containers(pod):
            add_mount(c, {"name": name, "mountPath": self.flags["ssh-key-file-path"],
                          "subPath": RELATIVE_PATH})

    def on_job_add(self, job: Obj, store: Store) -> None:
        """Once per job: create the Secret. If one exists with the same config it is kept
        (keys included); otherwise its data is replaced (Volcano's CreateOrUpdateSecret)."""
        if is_controlled(job, self.name):
            return
        data = self.secret_data(job)
        secret = owned_object(job, "v1", "Secret", secret_name(job), type="Opaque", data=data)
        create_or_update(store, secret, "data",
                         unchanged=lambda old: dig(old, "data", CONFIG) == data[CONFIG])
        mark_controlled(job, self.name)

    def on_job_delete(self, job: Obj, store: Store) -> None:
        """Delete the Secret."""
        if not is_controlled(job, self.name):
            return
        delete_if_present(store, "Secret", secret_name(job), job_namespace(job))
        unmark_controlled(job, self.name)

    # on_job_update: nothing, as in Volcano (a subPath mount would not see a changed Secret).

    def secret_data(self, job: Obj) -> dict[str, str]:
        """The Secret's data, base64-encoded as in Kubernetes JSON."""
        if self.flags["ssh-private-key"]:
            private = str(self.flags["ssh-private-key"]).encode()
            public = str(self.flags["ssh-public-key"]).encode()
        else:
            private, public = generate_key_pair()
        config = ssh_config(job, int(self.flags["ssh-port"])).encode()
        return {PRIVATE_KEY: _b64(private), PUBLIC_KEY: _b64(public),
                AUTHORIZED_KEYS: _b64(public), CONFIG: _b64(config)}
