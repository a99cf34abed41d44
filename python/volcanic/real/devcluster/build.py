"""Builds the dev cluster's binaries from the Go module proxy, once, into a cache.

etcd, kube-apiserver, kube-controller-manager, kubectl and kwok land in
`~/.cache/volcanic/k8s/<kubernetes version>/bin` (or $VOLCANIC_CACHE/k8s/...). A binary that is
there is reused; only the missing ones are built, so a cold machine pays the build once
(several minutes on 2 cores) and every later run starts at once.

`go install` refuses k8s.io/kubernetes and etcd's server module because their go.mod files use
`replace` directives pointing into their own trees. The fix, as kube-scheduler-simulator does
it: a throwaway module that requires the main module and maps each staging module to its
published version with a `replace` line of its own. The replace list is read from the main
module's go.mod, so a new Kubernetes version needs no edit here.
"""

from __future__ import annotations

from dataclasses import dataclass
import json
import os
from pathlib import Path
import re
import shutil
import subprocess

KUBERNETES = "1.34.4"
ETCD = "3.6.6"
KWOK = "0.7.0"

BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kubectl", "kwok")


class BuildError(RuntimeError):
    """A binary could not be built; the message has the command and its output's tail."""


def cache_root() -> Path:
    return Path(os.environ.get("VOLCANIC_CACHE") or Path.home() / ".cache" / "volcanic")


@dataclass(frozen=True)
class Toolchain:
    """Where the dev cluster's binaries of one Kubernetes version live."""

    version: str = KUBERNETES

    @property
    def root(self) -> Path:
        return cache_root() / "k8s" / f"v{self.version}"

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def path(self, binary: str) -> Path:
        return self.bin / binary

    def missing(self) -> list[str]:
        return [b for b in BINARIES if not self.path(b).exists()]

    def ensure(self, log=print) -> "Toolchain":
        """Builds whatever is missing; returns self once every binary is there."""
        if shutil.which("go") is None:
            raise BuildError("dev-cluster: the Go toolchain is needed to build the Kubernetes binaries; "
                             "install Go (1.24 or newer) and retry")
        missing = self.missing()
        if {"kube-apiserver", "kube-controller-manager", "kubectl"} & set(missing):
            log(f"building kube-apiserver, kube-controller-manager, kubectl v{self.version} "
                "(a few minutes, once)")
            self._build_kubernetes()
        if "etcd" in missing:
            log(f"building etcd v{ETCD}")
            self._build_etcd()
        if "kwok" in missing:
            log(f"building kwok v{KWOK}")
            self._go(["install", f"sigs.k8s.io/kwok/cmd/kwok@v{KWOK}"], self.root, GOBIN=str(self.bin))
        still = self.missing()
        if still:
            raise BuildError(f"dev-cluster: built, yet {', '.join(still)} not found in {self.bin}")
        return self

    # Kubernetes: require k8s.io/kubernetes, replace every staging module by its release.
    def _build_kubernetes(self) -> None:
        src = self.root / "src" / "kubernetes"
        staging = self._staging_modules()
        minor = self.version.split(".")[1]
        replaces = "\n".join(f"\t{m} => {m} v0.{self.version.split('.', 1)[1]}" for m in staging)
        self._module(src, "volcanic.local/kubernetes-build", f"k8s.io/kubernetes v{self.version}", replaces,
                     ["k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes/cmd/kube-controller-manager",
                      "k8s.io/kubernetes/cmd/kubectl"])
        version = "k8s.io/component-base/version"
        ldflags = (f"-s -w -X {version}.gitVersion=v{self.version} -X {version}.gitMajor=1 "
                   f"-X {version}.gitMinor={minor} -X {version}.gitTreeState=clean")
        self._go(["build", "-trimpath", f"-ldflags={ldflags}", "-o", str(self.bin) + "/",
                  "k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes/cmd/kube-controller-manager",
                  "k8s.io/kubernetes/cmd/kubectl"], src)

    def _staging_modules(self) -> list[str]:
        out = self._go(["mod", "download", "-json", f"k8s.io/kubernetes@v{self.version}"], self.root)
        gomod = Path(json.loads(out)["GoMod"]).read_text()
        return re.findall(r"^\s*(k8s\.io/[\w.-]+)\s*=>\s*\./staging/", gomod, re.M)

    # etcd: require the server module, replace its four sibling modules by the same release.
    def _build_etcd(self) -> None:
        src = self.root / "src" / "etcd"
        siblings = ("api/v3", "client/pkg/v3", "client/v3", "pkg/v3")
        replaces = "\n".join(f"\tgo.etcd.io/etcd/{m} => go.etcd.io/etcd/{m} v{ETCD}" for m in siblings)
        self._module(src, "volcanic.local/etcd-build", f"go.etcd.io/etcd/server/v3 v{ETCD}", replaces,
                     ["go.etcd.io/etcd/server/v3"])
        self._go(["build", "-trimpath", "-ldflags=-s -w", "-o", str(self.bin / "etcd"),
                  "go.etcd.io/etcd/server/v3"], src)

    def _module(self, src: Path, name: str, require: str, replaces: str, mains: list[str]) -> None:
        src.mkdir(parents=True, exist_ok=True)
        (src / "go.mod").write_text(f"module {name}\n\ngo 1.24.0\n\nrequire {require}\n\nreplace (\n{replaces}\n)\n")
        imports = "\n".join(f'\t_ "{m}"' for m in mains)
        (src / "tools.go").write_text(f"//go:build tools\n\npackage tools\n\nimport (\n{imports}\n)\n")
        self._go(["mod", "tidy"], src)

    def _go(self, args: list[str], cwd: Path, **env: str) -> str:
        self.bin.mkdir(parents=True, exist_ok=True)
        return go(args, cwd, **env)


def go(args: list[str], cwd: Path, **env: str) -> str:
    """Runs `go ARGS` in cwd (made if missing) with the module proxy's sources as they are;
    returns its stdout, or raises BuildError with the command and its output's tail."""
    cwd.mkdir(parents=True, exist_ok=True)
    full_env = dict(os.environ, CGO_ENABLED="0", GOFLAGS="-mod=mod", **env)
    proc = subprocess.run(["go", *args], cwd=cwd, env=full_env, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout)[-3000:]
        raise BuildError(f"dev-cluster: `go {' '.join(args)}` failed in {cwd}:\n{tail}")
    return proc.stdout
