"""`volcanic install`: server-side apply of the manifests (volcanic.real.manifests, plain
data), idempotent. `volcanic install --print` renders them without coming here."""

from __future__ import annotations

import time
from typing import Any, Callable

from volcanic.kube.errors import NotFound, StoreError
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj, status_of
from volcanic.real.client import KubeClient
from volcanic.real.manifests import manifests
from volcanic.real.manifests.definitions import crds

FIELD_MANAGER = "volcanic"

# REST paths of the kinds install applies that volcanic's kind table does not hold.
_PATHS = {
    "CustomResourceDefinition": "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "ServiceAccount": "/api/v1/namespaces/{namespace}/serviceaccounts",
    "Deployment": "/apis/apps/v1/namespaces/{namespace}/deployments",
    "MutatingWebhookConfiguration": "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    "ValidatingWebhookConfiguration": "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
}


def path_of(obj: Obj) -> str:
    """The REST path of `obj` (a kind volcanic stores, or one install applies)."""
    meta = obj["metadata"]
    kind = KINDS.get(obj["kind"])
    if kind is not None:
        return kind.path(meta.get("namespace"), meta["name"])
    return _PATHS[obj["kind"]].format(namespace=meta.get("namespace", "")) + "/" + meta["name"]


def apply(client: KubeClient, obj: Obj) -> Obj:
    """Server-side apply, taking ownership of the fields volcanic manages."""
    return client.request("PATCH", path_of(obj), obj, query={"fieldManager": FIELD_MANAGER, "force": "true"},
                          content_type="application/apply-patch+yaml")


def install(client: KubeClient, all_components: bool = False, log: Callable[[str], None] = print,
            **options: Any) -> list[Obj]:
    """Applies every manifest; waits for the CRDs to be Established before their objects."""
    applied = []
    for obj in manifests(all_components, **options):
        if obj["kind"] == "Queue":
            queues = KINDS["Queue"]
            wait_established(client, f"{queues.plural}.{queues.group}")
        applied.append(apply(client, obj))
        log(f"applied {obj['kind']} {obj['metadata'].get('namespace', '') and obj['metadata']['namespace'] + '/'}"
            f"{obj['metadata']['name']}")
    return applied


def installed(client: KubeClient) -> bool:
    """Whether Volcano's CRDs are on the cluster already (`volcanic up` installs otherwise)."""
    names = [crd["metadata"]["name"] for crd in crds()]
    try:
        for name in names:
            client.request("GET", f"{_PATHS['CustomResourceDefinition']}/{name}")
    except NotFound:
        return False
    return True


def wait_established(client: KubeClient, name: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        crd = client.request("GET", f"{_PATHS['CustomResourceDefinition']}/{name}")
        conditions = status_of(crd).get("conditions") or []
        if any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
            return
        if time.monotonic() > deadline:
            raise StoreError("CustomResourceDefinition", "", name, f"CRD {name} not Established after {timeout:.0f} s")
        time.sleep(0.2)

