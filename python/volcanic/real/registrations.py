"""Registering the webhook on a cluster: its configurations (volcanic.real.manifests.webhooks)
applied with server-side apply, and removed again by `volcanic up` when it stops cleanly
(unregister): with failurePolicy Fail, a configuration left calling a webhook that is gone
refuses every write it covers."""

from __future__ import annotations

from typing import Any

from volcanic.kube.errors import Conflict, NotFound
from volcanic.kube.objects import Obj
from volcanic.real.client import KubeClient
from volcanic.real.install import apply, path_of
from volcanic.real.manifests.webhooks import DEFAULT_ADMISSIONS, DEFAULT_SERVICE, configurations


def register(client: KubeClient, ca_bundle: bytes, url: str | None = None, paths=DEFAULT_ADMISSIONS,
             scheduler_names: tuple[str, ...] = ("volcano",), service: tuple[str, str] = DEFAULT_SERVICE) -> list[Obj]:
    """Creates or updates the configurations (server-side apply: idempotent); returns them
    as applied, for unregister()."""
    applied = configurations(ca_bundle, url, paths, scheduler_names, service)
    for obj in applied:
        apply(client, obj)
    return applied


def _client_configs(obj: Obj) -> list[Any]:
    return [w.get("clientConfig") for w in obj.get("webhooks") or []]


def unregister(client: KubeClient, registered: list[Obj]) -> list[str]:
    """Deletes the configurations register() applied that still call the same webhook (URL or
    Service, and CA bundle); one that another process has registered since is that process's
    and stays. Deletes only the version it read (a precondition), so a registration racing
    it is kept too. Returns the names deleted."""
    deleted = []
    for obj in registered:
        path = path_of(obj)
        try:
            current = client.request("GET", path)
            if _client_configs(current) != _client_configs(obj):
                continue
            client.request("DELETE", path, {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {
                "resourceVersion": current["metadata"]["resourceVersion"]}})
        except (NotFound, Conflict):
            continue
        deleted.append(obj["metadata"]["name"])
    return deleted
