"""The end-to-end suite: a dev cluster (etcd, kube-apiserver, kube-controller-manager, kwok on
127.0.0.1), `volcanic install`, and volcanic's components as separate processes, as a user
runs them. `make e2e` runs it; the first run builds the Kubernetes binaries into
~/.cache/volcanic (minutes, once)."""

from __future__ import annotations

import os
from pathlib import Path
import re
import subprocess
import sys
import time
import urllib.request

import pytest
import yaml

from volcanic.real.client import KubeClient
from volcanic.real.devcluster.cluster import DevCluster
from volcanic.real.devcluster.ports import free_port
from volcanic.real.manifests.deployments import DEFAULT_CONF
from volcanic.real.store import KubeStore


class Env:
    """The dev cluster, a KubeStore on it, and volcanic processes started against it."""

    def __init__(self, cluster: DevCluster) -> None:
        self.cluster = cluster
        self.kubeconfig = str(cluster.kubeconfig)
        self.store = KubeStore(KubeClient(self.kubeconfig))
        self.procs: list[subprocess.Popen] = []

    def volcanic(self, *args: str) -> subprocess.Popen:
        """Starts `volcanic ARGS` against the dev cluster; stopped at the end of the session.
        Its output is in proc.log_path."""
        log_path = self.cluster.dir / f"volcanic-{args[0]}-{len(self.procs)}.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen([sys.executable, "-m", "volcanic.cli.main", *args, "--kubeconfig", self.kubeconfig],
                                    stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONUNBUFFERED="1"))
        proc.log_path = log_path
        self.procs.append(proc)
        return proc

    def wait_logged(self, proc: subprocess.Popen, *lines: str, timeout: float = 30.0) -> None:
        """Waits until proc's output has every one of `lines`."""
        def logged():
            text = proc.log_path.read_text(errors="replace")
            assert proc.poll() is None, f"volcanic exited ({proc.returncode}):\n{text}"
            return all(line in text for line in lines)
        assert self.wait(logged, timeout), proc.log_path.read_text(errors="replace")

    def run(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "volcanic.cli.main", *args], input=input, capture_output=True,
                              text=True, env=dict(os.environ, KUBECONFIG=self.kubeconfig))

    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        return self.cluster.kubectl(*args, input=input, check=check)

    def apply(self, *objs: dict, namespace: str = "default") -> None:
        self.kubectl("apply", "-n", namespace, "-f", "-", input=yaml.safe_dump_all(objs))

    def apply_queue(self, name: str, **spec) -> None:
        """Creates a Queue and waits until the queue controller has opened it: admission
        refuses jobs for a queue whose state is not Open yet (reference §3.1 queue), so
        Volcano's e2e (test/e2e/util/queue.go) waits for it too."""
        self.apply({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
                    "spec": spec})
        opened = self.wait(lambda: ((self.store.get("Queue", name) or {}).get("status") or {}).get("state") == "Open")
        assert opened, self.store.get("Queue", name)

    @staticmethod
    def wait(condition, timeout: float = 30.0, step: float = 0.2):
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value or time.monotonic() > deadline:
                return value
            time.sleep(step)

    def stop(self, proc: subprocess.Popen) -> None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def env(tmp_path_factory):
    cluster = DevCluster(tmp_path_factory.mktemp("dev-cluster"))
    cluster.up(nodes=2, log=lambda s: print(s, file=sys.stderr))
    e = Env(cluster)
    assert e.run("install").returncode == 0
    yield e
    for p in e.procs:
        e.stop(p)
    e.store.close()
    cluster.down()


def metric(port: int, name: str, labels: str = "") -> float:
    """One sample of a process's /metrics (0 when it has none yet)."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    m = re.search(rf"^{re.escape(name + (('{' + labels + '}') if labels else ''))} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


class Up:
    """`volcanic up` as a user runs it, with its scheduler configuration in a file the tests
    may rewrite, its webhook on a free port and /metrics on another."""

    def __init__(self, env: Env) -> None:
        self.env = env
        self.conf = env.cluster.dir / "volcano-scheduler.conf"
        self.conf.write_text(DEFAULT_CONF)
        self.webhook_port = free_port()
        self.proc: subprocess.Popen | None = None
        self.metrics_port = 0

    def start(self) -> subprocess.Popen:
        self.metrics_port = free_port()
        self.proc = self.env.volcanic("up", "--scheduler-conf", str(self.conf), "--metrics-address",
                                      f"127.0.0.1:{self.metrics_port}",
                                      "--webhook-url", f"https://127.0.0.1:{self.webhook_port}")
        self.env.wait_logged(self.proc, "caches synced; scheduling", "controllers started", "webhook: registered")
        return self.proc

    def kill(self) -> None:
        """SIGKILL: no clean-up at all, as a crash or an OOM kill."""
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        self.env.stop(self.proc)

    def metric(self, name: str, labels: str = "") -> float:
        return metric(self.metrics_port, name, labels)


@pytest.fixture(scope="session")
def up(env):
    """One `volcanic up` for the suite (tests that stop it start it again)."""
    u = Up(env)
    u.start()
    yield u
    u.stop()


@pytest.fixture
def namespace(env, request):
    """A namespace of the test's own, deleted afterwards."""
    name = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[:50].strip("-")  # a DNS label
    env.kubectl("create", "namespace", name)
    # kube-controller-manager makes the default ServiceAccount pods need; after a test has
    # restarted the API server it can take longer than a test waits, so make it here (the
    # controller keeps one that exists).
    env.kubectl("create", "serviceaccount", "default", "-n", name, check=False)
    assert env.wait(lambda: env.kubectl("get", "serviceaccount", "default", "-n", name, check=False).returncode == 0)
    yield name
    env.kubectl("delete", "namespace", name, "--wait=false", check=False)
