"""The end-to-end suite: a dev cluster (etcd, kube-apiserver, kube-controller-manager, kwok on
127.0.0.1), `volcanic install`, and volcanic's components as separate processes, as a user
runs them. `make e2e` runs it; the first run builds the Kubernetes binaries into
~/.cache/volcanic (minutes, once)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from volcanic.real.client import KubeClient
from volcanic.real.devcluster.cluster import DevCluster
from volcanic.real.store import KubeStore


class Env:
    """The dev cluster, a KubeStore on it, and volcanic processes started against it."""

    def __init__(self, cluster: DevCluster) -> None:
        self.cluster = cluster
        self.kubeconfig = str(cluster.kubeconfig)
        self.store = KubeStore(KubeClient(self.kubeconfig))
        self.procs: list[subprocess.Popen] = []

    def volcanic(self, *args: str) -> subprocess.Popen:
        """Starts `volcanic ARGS` against the dev cluster; stopped at the end of the session."""
        log = open(self.cluster.dir / f"volcanic-{args[0]}-{len(self.procs)}.log", "wb")
        proc = subprocess.Popen([sys.executable, "-m", "volcanic.cli.main", *args, "--kubeconfig", self.kubeconfig],
                                stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONUNBUFFERED="1"))
        self.procs.append(proc)
        return proc

    def run(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "volcanic.cli.main", *args], input=input, capture_output=True,
                              text=True, env=dict(os.environ, KUBECONFIG=self.kubeconfig))

    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        return self.cluster.kubectl(*args, input=input, check=check)

    def apply(self, *objs: dict, namespace: str = "default") -> None:
        self.kubectl("apply", "-n", namespace, "-f", "-", input=yaml.safe_dump_all(objs))

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


@pytest.fixture(scope="session")
def scheduler(env):
    """One `volcanic scheduler` for the tests that need one."""
    proc = env.volcanic("scheduler")
    yield proc
    env.stop(proc)


@pytest.fixture
def namespace(env, request):
    """A namespace of the test's own, deleted afterwards."""
    name = request.node.name.lower().replace("_", "-")[:50].strip("-")
    env.kubectl("create", "namespace", name)
    env.wait(lambda: env.kubectl("get", "serviceaccount", "default", "-n", name, check=False).returncode == 0)
    yield name
    env.kubectl("delete", "namespace", name, "--wait=false", check=False)
