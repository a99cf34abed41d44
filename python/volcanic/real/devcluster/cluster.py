"""A dev cluster: etcd, kube-apiserver, kube-controller-manager and kwok on 127.0.0.1.

Everything lives in one directory (default ~/.cache/volcanic/dev-cluster): the service-account
key, a static token file, etcd's data, logs, the processes' pids and ports, and the kubeconfig
(`admin.kubeconfig`, a bearer token for a system:masters user; RBAC is on, so components
that use their own credentials are checked as on any cluster). The API server makes its own
serving certificate and CA on first start; the kubeconfig trusts that CA. This is a cluster
for a laptop or a CI run, never one to expose.

Nodes are kwok nodes: kwok marks them Ready and keeps their leases, and moves bound pods
through `deploy/kwok/stages.yaml` (Running at once; Succeeded/Failed after
`volcanic/sim-duration` with `volcanic/sim-exit-code`). Each has 32 CPU, 256 GiB and 110
pods, label `type: kwok` and the `kwok.x-k8s.io/node=fake:NoSchedule` taint, as in
Volcano's own kwok benchmark.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
import secrets
import shutil
import signal
import subprocess
import time
from typing import Callable, Sequence

import yaml

from volcanic.kube.kinds import KINDS
from volcanic.real.devcluster.build import Toolchain, cache_root
from volcanic.real.devcluster.operators import OPERATORS

from .ports import free_ports

COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kwok")
STAGES = Path(__file__).with_name("kwok-stages.yaml")  # also deploy/kwok/stages.yaml


class KubectlError(subprocess.CalledProcessError):
    """A failed kubectl; its message ends with what kubectl printed on stderr."""

    def __str__(self) -> str:
        return f"{super().__str__()}\n{(self.stderr or '').strip()}"


class DevClusterError(RuntimeError):
    """The dev cluster could not start; the message names the component and its log."""


def default_dir() -> Path:
    return cache_root() / "dev-cluster"


KWOK_TAINT = {"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"}
KWOK_TOLERATION = {"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}  # pods for kwok nodes


def kwok_node(name: str, cpu: str = "32", memory: str = "256Gi", pods: str = "110") -> dict:
    """A Node kwok manages, shaped as Volcano's kwok benchmark nodes."""
    capacity = {"cpu": cpu, "memory": memory, "pods": pods}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"type": "kwok", "kubernetes.io/hostname": name},
                         "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}},
            "spec": {"taints": [KWOK_TAINT]},
            "status": {"allocatable": capacity, "capacity": capacity}}


class DevCluster:
    def __init__(self, directory: str | Path | None = None, toolchain: Toolchain | None = None) -> None:
        self.dir = Path(directory or default_dir()).expanduser().resolve()
        self.toolchain = toolchain or Toolchain()
        self.kubeconfig = self.dir / "admin.kubeconfig"

    # Commands.
    def up(self, nodes: int = 0, log: Callable[[str], None] = print, stages: Path | None = None,
           apiserver_flags: Sequence[str] = (), operators: Sequence[str] = ()) -> None:
        """Builds what is missing, starts what is not running, then makes `nodes` kwok nodes
        and starts `operators` (names of OPERATORS). `apiserver_flags` (`--name=value`) replace
        or add to kube-apiserver's own."""
        self.toolchain.ensure(log=log)
        self.dir.mkdir(parents=True, exist_ok=True)
        ports = self._ports()
        self._credentials()
        if not self._running("etcd"):
            self._start("etcd", self._etcd_args(ports))
        if not self._running("kube-apiserver"):
            self._start("kube-apiserver", self._apiserver_args(ports, apiserver_flags))
        self._wait_ready(ports["apiserver"])
        self._trust_serving_certificate()
        if not self._running("kube-controller-manager"):
            self._start("kube-controller-manager", self._controller_manager_args())
        if not self._running("kwok"):
            self._start("kwok", self._kwok_args(ports, stages or STAGES))
        self._wait_default_service_account()
        if nodes:
            self.add_nodes(nodes)
        for name in operators:
            self.start_operator(name, log)
        log(f"dev cluster up: {self.env()}")

    def start_operator(self, name: str, log: Callable[[str], None] = print) -> None:
        """Builds (once) one of OPERATORS, applies its release's CRDs and what it needs first,
        and starts it against this cluster unless it runs; `down` stops it."""
        if name not in OPERATORS:
            raise DevClusterError(f"dev-cluster: no operator {name!r}; known: {', '.join(OPERATORS)}")
        podgroups = KINDS["PodGroup"]
        if self.kubectl("get", "crd", f"{podgroups.plural}.{podgroups.group}", check=False).returncode:
            raise DevClusterError(f"dev-cluster: {name} gang-schedules through Volcano's PodGroups; run "
                                  "`volcanic install` first")
        op = OPERATORS[name].ensure(log)
        crds = [arg for f in op.crd_files() for arg in ("-f", str(f))]
        # Server-side: KubeRay's CRDs outgrow the last-applied annotation of a client-side apply.
        self.kubectl("apply", "--server-side", *crds)
        self.kubectl("wait", "--for=condition=Established", "--timeout=60s", *crds)
        if op.setup:
            self.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(op.setup))
        if not self._running(name):
            self._start(name, op.args(), binary=op.binary, env={**op.env, "KUBECONFIG": str(self.kubeconfig)})
        for path, (namespace, secret) in op.mounts.items():
            self._mount_secret(namespace, secret, Path(path))

    def _mount_secret(self, namespace: str, name: str, path: Path, timeout: float = 60.0) -> None:
        """Writes a Secret's keys as files into `path`, as the kubelet mounts a Secret volume,
        once the Secret has data (an operator may fill it after it starts)."""
        deadline = time.monotonic() + timeout
        while True:
            got = self.kubectl("get", "secret", name, "-n", namespace, "-o", "json", check=False)
            data = json.loads(got.stdout).get("data") if got.returncode == 0 else None
            if data:
                break
            if time.monotonic() > deadline:
                raise DevClusterError(f"dev-cluster: Secret {namespace}/{name} still empty after {timeout:.0f} s")
            time.sleep(0.5)
        path.mkdir(parents=True, exist_ok=True)
        for key, value in data.items():
            (path / key).write_bytes(base64.b64decode(value))

    def down(self, purge: bool = True) -> None:
        """Stops every component; `purge` removes the directory's state (etcd data, keys)."""
        for name in (*OPERATORS, *reversed(COMPONENTS)):
            pid = self._pid(name)
            if pid is not None:
                _kill(pid)
            (self.dir / f"{name}.pid").unlink(missing_ok=True)
        if purge and self.dir.exists():
            for sub in ("etcd", "pki"):
                shutil.rmtree(self.dir / sub, ignore_errors=True)
            for f in ("ports.json", "tokens.csv", "admin.kubeconfig"):
                (self.dir / f).unlink(missing_ok=True)

    def restart_apiserver(self, flags: Sequence[str] = ()) -> None:
        """Stops kube-apiserver and starts it again with `flags` (`--name=value`, replacing or
        adding to its own: `--max-requests-inflight=1` throttles it); waits until it is ready.
        Its watch caches start anew, so a watch resumed from an older resourceVersion gets 410
        Gone; the other components keep running and reconnect."""
        pid = self._pid("kube-apiserver")
        if pid is not None:
            _kill(pid)
        ports = self._ports()
        self._start("kube-apiserver", self._apiserver_args(ports, flags))
        self._wait_ready(ports["apiserver"])

    def service_account_kubeconfig(self, name: str, namespace: str = "default",
                                   cluster_role: str = "cluster-admin", hours: int = 2) -> Path:
        """A kubeconfig for ServiceAccount `name` bound to `cluster_role`, with a token good for
        `hours`: a client the API server limits (`--max-requests-inflight` does not apply to
        system:masters, which admin.kubeconfig's user is)."""
        binding = f"{namespace}-{name}-{cluster_role}"
        self.kubectl("create", "serviceaccount", name, "-n", namespace, check=False)
        self.kubectl("create", "clusterrolebinding", binding, f"--clusterrole={cluster_role}",
                     f"--serviceaccount={namespace}:{name}", check=False)
        token = self.kubectl("create", "token", name, "-n", namespace, f"--duration={hours}h").stdout.strip()
        config = yaml.safe_load(self.kubeconfig.read_text())
        config["users"] = [{"name": name, "user": {"token": token}}]
        config["contexts"][0]["context"]["user"] = name
        path = self.dir / f"{namespace}-{name}.kubeconfig"
        path.write_text(yaml.safe_dump(config))
        path.chmod(0o600)
        return path

    def env(self) -> str:
        return f"export KUBECONFIG={self.kubeconfig}"

    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        """The dev cluster's own kubectl (a fresh machine may have none). With check, a failure
        raises KubectlError, whose message carries kubectl's stderr (the API server's answer)."""
        done = subprocess.run([str(self.toolchain.path("kubectl")), "--kubeconfig", str(self.kubeconfig), *args],
                              input=input, capture_output=True, text=True)
        if check and done.returncode:
            raise KubectlError(done.returncode, done.args, done.stdout, done.stderr)
        return done

    def add_nodes(self, count: int, prefix: str = "kwok-node-", **shape: str) -> list[str]:
        """Creates (or keeps) kwok nodes prefix0..prefix{count-1}; returns their names."""
        names = [f"{prefix}{i}" for i in range(count)]
        docs = "\n---\n".join(yaml.safe_dump(kwok_node(n, **shape)) for n in names)
        self.kubectl("apply", "-f", "-", input=docs)
        return names

    # Processes.
    def _start(self, name: str, args: list[str], binary: Path | None = None, env: dict[str, str] | None = None) -> None:
        logfile = open(self.dir / f"{name}.log", "ab")
        proc = subprocess.Popen([str(binary or self.toolchain.path(name)), *args], stdout=logfile,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                                cwd=self.dir, env=dict(os.environ, **(env or {})))
        (self.dir / f"{name}.pid").write_text(str(proc.pid))
        time.sleep(0.2)
        if proc.poll() is not None:
            raise DevClusterError(f"dev-cluster: {name} exited at once; see {self.dir / (name + '.log')}")

    def _pid(self, name: str) -> int | None:
        try:
            return int((self.dir / f"{name}.pid").read_text())
        except (OSError, ValueError):
            return None

    def _running(self, name: str) -> bool:
        pid = self._pid(name)
        if pid is None:
            return False
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True

    def _wait_ready(self, port: int, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._running("kube-apiserver"):
                raise DevClusterError(f"dev-cluster: kube-apiserver exited; see {self.dir / 'kube-apiserver.log'}")
            if self.kubectl("get", "--raw", "/readyz", check=False).returncode == 0:
                return
            time.sleep(0.5)
        raise DevClusterError(f"dev-cluster: kube-apiserver not ready on port {port} after {timeout:.0f} s; "
                              f"see {self.dir / 'kube-apiserver.log'}")

    def _wait_default_service_account(self, timeout: float = 60.0) -> None:
        """Pods are refused until the controller-manager made the namespace's ServiceAccount."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.kubectl("get", "serviceaccount", "default", "-n", "default", check=False).returncode == 0:
                return
            time.sleep(0.5)
        raise DevClusterError("dev-cluster: no default ServiceAccount after 60 s; see "
                              f"{self.dir / 'kube-controller-manager.log'}")

    # Configuration.
    def _ports(self) -> dict[str, int]:
        path = self.dir / "ports.json"
        if path.exists():
            return json.loads(path.read_text())
        ports = dict(zip(("etcd", "etcd_peer", "apiserver", "kwok"), free_ports(4)))
        path.write_text(json.dumps(ports))
        return ports

    def _credentials(self) -> None:
        pki = self.dir / "pki"
        if (pki / "sa.key").exists() and self.kubeconfig.exists():
            return
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa
        pki.mkdir(parents=True, exist_ok=True)
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        (pki / "sa.key").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                       serialization.PrivateFormat.TraditionalOpenSSL,
                                                       serialization.NoEncryption()))
        (pki / "sa.pub").write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                                   serialization.PublicFormat.SubjectPublicKeyInfo))
        token = secrets.token_hex(16)
        (self.dir / "tokens.csv").write_text(f'{token},admin,admin,"system:masters"\n')
        port = self._ports()["apiserver"]
        self.kubeconfig.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "volcanic-dev",
            "clusters": [{"name": "volcanic-dev", "cluster": {"server": f"https://127.0.0.1:{port}",
                                                              "insecure-skip-tls-verify": True}}],
            "users": [{"name": "admin", "user": {"token": token}}],
            "contexts": [{"name": "volcanic-dev", "context": {"cluster": "volcanic-dev", "user": "admin"}}]}))
        self.kubeconfig.chmod(0o600)

    def _trust_serving_certificate(self) -> None:
        """Replaces the kubeconfig's first-start insecure-skip-tls-verify by the CA the API
        server generated (pki/apiserver.crt holds the certificate and its CA)."""
        config = yaml.safe_load(self.kubeconfig.read_text())
        cluster = config["clusters"][0]["cluster"]
        if cluster.pop("insecure-skip-tls-verify", None):
            cluster["certificate-authority-data"] = base64.b64encode(
                (self.dir / "pki" / "apiserver.crt").read_bytes()).decode()
            self.kubeconfig.write_text(yaml.safe_dump(config))

    def _etcd_args(self, ports: dict[str, int]) -> list[str]:
        client, peer = f"http://127.0.0.1:{ports['etcd']}", f"http://127.0.0.1:{ports['etcd_peer']}"
        return ["--name", "dev", "--data-dir", str(self.dir / "etcd"), "--listen-client-urls", client,
                "--advertise-client-urls", client, "--listen-peer-urls", peer,
                "--initial-advertise-peer-urls", peer, "--initial-cluster", f"dev={peer}",
                "--unsafe-no-fsync", "--quota-backend-bytes", str(8 << 30), "--log-level", "warn"]

    def _apiserver_args(self, ports: dict[str, int], flags: Sequence[str] = ()) -> list[str]:
        """kube-apiserver's flags, `flags` (`--name=value`) replacing those of the same name."""
        own = self._own_apiserver_args(ports)
        names = {f.split("=", 1)[0] for f in flags}
        kept = []
        for i, arg in enumerate(own):
            if arg.startswith("--"):
                name = arg.split("=", 1)[0]
                takes_next = "=" not in arg and i + 1 < len(own) and not own[i + 1].startswith("--")
                if name not in names:
                    kept += [arg, own[i + 1]] if takes_next else [arg]
        return kept + list(flags)

    def _own_apiserver_args(self, ports: dict[str, int]) -> list[str]:
        pki = self.dir / "pki"
        return ["--etcd-servers", f"http://127.0.0.1:{ports['etcd']}", "--bind-address", "127.0.0.1",
                "--advertise-address", "127.0.0.1", "--secure-port", str(ports["apiserver"]),
                "--cert-dir", str(pki), "--token-auth-file", str(self.dir / "tokens.csv"),
                "--authorization-mode", "Node,RBAC", "--service-cluster-ip-range", "10.96.0.0/16",
                "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
                "--service-account-key-file", str(pki / "sa.pub"),
                "--service-account-signing-key-file", str(pki / "sa.key"),
                # No client-side limits for a benchmark's burst of creates and binds.
                "--max-requests-inflight", "2000", "--max-mutating-requests-inflight", "1000",
                "--enable-priority-and-fairness=false", "--v", "1"]

    def _controller_manager_args(self) -> list[str]:
        return ["--kubeconfig", str(self.kubeconfig), "--secure-port", "0", "--leader-elect=false",
                "--service-account-private-key-file", str(self.dir / "pki" / "sa.key"),
                "--controllers", "*,-csrsigning", "--kube-api-qps", "1000", "--kube-api-burst", "2000",
                "--concurrent-gc-syncs", "20", "--v", "1"]

    def _kwok_args(self, ports: dict[str, int], stages: Path) -> list[str]:
        args = ["--kubeconfig", str(self.kubeconfig), "--manage-all-nodes=false",
                "--manage-nodes-with-annotation-selector", "kwok.x-k8s.io/node=fake",
                "--server-address", f"127.0.0.1:{ports['kwok']}", "--node-lease-duration-seconds", "40",
                "--cidr", "10.0.0.1/16"]  # room for a benchmark's pods (the default /24 runs out)
        if stages.exists():
            args += ["--config", str(stages)]
        return args


def _kill(pid: int, timeout: float = 3.0) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except OSError:
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except OSError:
                return
            time.sleep(0.1)
