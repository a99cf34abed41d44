"""The workload operators most Volcano users arrive through, for the dev cluster.

KubeRay's ray-operator (RayCluster, RayJob) and the Kubeflow training operator (PyTorchJob and
its kin) are built from the Go module proxy, once, into `~/.cache/volcanic/operators/` as the
Kubernetes binaries are, and run out of cluster against the dev cluster, each set for Volcano
gang scheduling the way its own docs say: ray-operator `--batch-scheduler=volcano`, the
training operator `--gang-scheduler-name=volcano`. Their CRDs come from the same module
release, so the objects are the operators' own and unchanged.

The training operator's cert rotator wants its webhook Secret to exist in its namespace
(`kubeflow`) before it starts; it fills the Secret, then waits for the certificate to appear
where a pod would have the Secret mounted (a fixed path under /tmp), and only then starts its
reconcilers. So the dev cluster creates the Secret first and copies what the rotator wrote
into that path, as the kubelet's volume would. Its webhook serves on a port of ours that no
ValidatingWebhookConfiguration points at (out of cluster nothing could reach it): its
validation is skipped, its reconcilers run as in a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import json
from pathlib import Path
from typing import Callable

from volcanic.real.devcluster.build import cache_root, go

from .ports import free_ports


@dataclass(frozen=True)
class Operator:
    """An operator's Go module release, its main package and how it runs here."""

    name: str
    module: str
    version: str
    main: str  # import path of the main package
    crds: str  # the module's directory of CRD manifests
    flags: Callable[[list[int]], list[str]]  # given free ports
    ports: int = 0
    env: dict[str, str] = field(default_factory=dict)
    setup: tuple[dict, ...] = ()  # objects it needs before it starts
    mounts: dict[str, tuple[str, str]] = field(default_factory=dict)  # path: a Secret (namespace, name)

    @property
    def root(self) -> Path:
        return cache_root() / "operators" / f"{self.name}-v{self.version}"

    @property
    def binary(self) -> Path:
        return self.root / "bin" / Path(self.main).name

    def ensure(self, log: Callable[[str], None] = print) -> "Operator":
        """Builds the operator once; later calls find it in the cache."""
        if not self.binary.exists():
            log(f"building {self.name} v{self.version} from the Go module proxy (a few minutes, once)")
            go(["install", f"{self.main}@v{self.version}"], self.root, GOBIN=str(self.binary.parent))
        return self

    def crd_files(self) -> list[Path]:
        """The release's CRD manifests, from the module cache (downloaded if missing)."""
        info = json.loads(go(["mod", "download", "-json", f"{self.module}@v{self.version}"], self.root))
        files = sorted((Path(info["Dir"]) / self.crds).glob("*.yaml"))
        return [f for f in files if "kind: CustomResourceDefinition" in f.read_text()]  # not kustomization.yaml

    def args(self) -> list[str]:
        return self.flags(free_ports(self.ports) if self.ports else [])


TRAINING_NAMESPACE = "kubeflow"

OPERATORS = {op.name: op for op in (
    Operator(
        "kuberay", "github.com/ray-project/kuberay/ray-operator", "1.5.0",
        "github.com/ray-project/kuberay/ray-operator", "config/crd/bases",
        lambda _: ["--batch-scheduler=volcano", "--enable-leader-election=false", "--metrics-addr=0",
                   "--health-probe-bind-address=0"]),
    Operator(
        "training-operator", "github.com/kubeflow/training-operator", "1.8.1",
        "github.com/kubeflow/training-operator/cmd/training-operator.v1", "manifests/base/crds",
        lambda ports: ["--gang-scheduler-name=volcano", "--metrics-bind-address=0",
                       "--health-probe-bind-address=0", f"--webhook-server-port={ports[0]}"],
        ports=1, env={"MY_POD_NAMESPACE": TRAINING_NAMESPACE},
        mounts={"/tmp/k8s-webhook-server/serving-certs": (TRAINING_NAMESPACE, "training-operator-webhook-cert")},
        setup=({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TRAINING_NAMESPACE}},
               {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                "metadata": {"name": "training-operator-webhook-cert", "namespace": TRAINING_NAMESPACE}})),
)}
