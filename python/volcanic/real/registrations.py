"""The webhook configurations Volcano installs, one per admission path, as its Helm chart
writes them (installer/helm/chart/volcano/templates/webhooks.yaml): named
`volcano-admission-service-<resource>-<op>`, failurePolicy Fail, matchPolicy Equivalent,
sideEffects NoneOnDryRun, timeoutSeconds 10, admission review v1, and no calls for objects in
volcano-system or kube-system. Volcano's webhook-manager only fills in caBundle; volcanic
creates or updates the whole configurations (server-side apply), so one command installs them.
`volcanic up` also removes them when it is stopped (unregister): with failurePolicy Fail, a
configuration left calling a webhook that is gone refuses every write it covers.

Which paths: `--enabled-admission`, Volcano's flag, defaulting to what its chart enables and
volcanic serves (jobs, queues, podgroups validation). The pod webhooks are opt-in, as in the
chart, and then never block a pod volcanic does not own: /pods/validate is called only for
pods whose schedulerName is one of volcanic's (a matchCondition), and /pods/mutate, which may
not know (resource groups), has failurePolicy Ignore instead of Fail.
"""

from __future__ import annotations

import base64
from typing import Any

from volcanic.admission import OPERATIONS
from volcanic.kube.errors import Conflict, NotFound
from volcanic.kube.kinds import ADMITTED
from volcanic.kube.objects import Obj
from volcanic.real.client import KubeClient
from volcanic.real.install import apply, path_of
from volcanic.real.manifests import NAMESPACE

SERVICE = "volcano-admission-service"
DEFAULT_ADMISSIONS = ("/jobs/mutate", "/jobs/validate", "/podgroups/validate", "/queues/mutate", "/queues/validate")

# path -> (webhook name, group, version, resource, operations), the operations being those
# the embedded admission chain calls the path's rules for.
WEBHOOKS: dict[str, tuple[str, str, str, str, tuple[str, ...]]] = {
    f"/{kind.plural}/{phase}": (f"{phase}{kind.name.lower()}.volcano.sh", kind.group, kind.version, kind.plural,
                                OPERATIONS[(kind.name, phase)])
    for kind in ADMITTED if kind.admission.webhook
    for phase in ("mutate", "validate")
}


def service_hosts() -> list[str]:
    """The DNS names of the webhook's Service, for its serving certificate."""
    return [SERVICE, f"{SERVICE}.{NAMESPACE}", f"{SERVICE}.{NAMESPACE}.svc"]


def configuration_name(path: str) -> str:
    return SERVICE + path.replace("/", "-")


def configurations(ca_bundle: bytes, url: str | None = None, paths=DEFAULT_ADMISSIONS,
                   scheduler_names: tuple[str, ...] = ("volcano",)) -> list[Obj]:
    """The configurations for `paths`; `url` (https://host:port) instead of the Service."""
    unknown = sorted(set(paths) - set(WEBHOOKS))
    if unknown:
        raise ValueError(f"--enabled-admission: unknown path(s) {', '.join(unknown)}; known: {', '.join(WEBHOOKS)}")
    return [_configuration(path, base64.b64encode(ca_bundle).decode(), url, scheduler_names) for path in paths]


def _configuration(path: str, ca: str, url: str | None, scheduler_names: tuple[str, ...]) -> Obj:
    name, group, version, resource, operations = WEBHOOKS[path]
    mutating = path.endswith("/mutate")
    client = {"url": url.rstrip("/") + path} if url else \
        {"service": {"name": SERVICE, "namespace": NAMESPACE, "path": path, "port": 443}}
    webhook: Obj = {
        "name": name, "admissionReviewVersions": ["v1"], "clientConfig": dict(client, caBundle=ca),
        "failurePolicy": "Ignore" if path == "/pods/mutate" else "Fail", "matchPolicy": "Equivalent",
        "sideEffects": "NoneOnDryRun", "timeoutSeconds": 10, "objectSelector": {},
        "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                                                    "values": [NAMESPACE, "kube-system"]}]},
        "rules": [{"apiGroups": [group], "apiVersions": [version], "operations": list(operations),
                   "resources": [resource], "scope": "*"}],
    }
    if path == "/pods/validate":
        names = ", ".join(f"'{n}'" for n in scheduler_names)
        webhook["matchConditions"] = [{"name": "volcanic-scheduled",
                                       "expression": f"object.spec.schedulerName in [{names}]"}]
    if mutating:
        webhook["reinvocationPolicy"] = "Never"
    kind = "MutatingWebhookConfiguration" if mutating else "ValidatingWebhookConfiguration"
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": configuration_name(path)}, "webhooks": [webhook]}


def register(client: KubeClient, ca_bundle: bytes, url: str | None = None, paths=DEFAULT_ADMISSIONS,
             scheduler_names: tuple[str, ...] = ("volcano",)) -> list[Obj]:
    """Creates or updates the configurations (server-side apply: idempotent); returns them
    as applied, for unregister()."""
    applied = configurations(ca_bundle, url, paths, scheduler_names)
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
