"""A kubeconfig for a client of a local test server (one cluster, one token user)."""

from __future__ import annotations

import json
from pathlib import Path


def write_kubeconfig(directory: Path, server: str, cluster: dict | None = None, user: dict | None = None) -> str:
    """Writes `directory`/config pointing at `server` (with `cluster`'s extra settings), as
    `user` (a token by default); its path."""
    kubeconfig = directory / "config"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": server, **(cluster or {})}}],
        "users": [{"name": "u", "user": user or {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    return str(kubeconfig)
