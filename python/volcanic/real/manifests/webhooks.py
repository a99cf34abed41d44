"""The webhook configurations Volcano installs, one per admission path, as its Helm chart
writes them (installer/helm/chart/volcano/templates/webhooks.yaml): named
`volcano-admission-service-<resource>-<op>`, failurePolicy Fail, matchPolicy Equivalent,
sideEffects NoneOnDryRun, timeoutSeconds 10, admission review v1, and no calls for objects in
volcano-system or kube-system. Volcano's webhook-manager only fills in caBundle; volcanic
creates or updates the whole configurations (volcanic.real.registrations applies them), so one
command installs them.

Which paths: `--enabled-admission`, Volcano's flag, defaulting to what its chart enables and
volcanic serves (jobs, queues, podgroups, hypernodes and cronjobs validation), and /jobflows/validate,
which the chart leaves off: without it nothing refuses a JobFlow whose flows form a cycle (the
chart's ValidatingAdmissionPolicy, where `vap_enable` is set, refuses only undefined targets and
self-dependencies), and such a JobFlow never runs. The pod webhooks are opt-in, as in the
chart, and then never block a pod volcanic does not own: /pods/validate is called only for
pods whose schedulerName is one of volcanic's (a matchCondition), and /pods/mutate, which may
not know (resource groups), has failurePolicy Ignore instead of Fail.
"""

from __future__ import annotations

import base64

from volcanic.admission import OPERATIONS
from volcanic.kube.kinds import ADMITTED
from volcanic.kube.objects import Obj
from volcanic.real.manifests.names import NAMESPACE, SERVICE

DEFAULT_ADMISSIONS = ("/jobs/mutate", "/jobs/validate", "/podgroups/validate", "/queues/mutate", "/queues/validate",
                      "/hypernodes/validate", "/cronjobs/validate", "/jobflows/validate",
                      "/queuebindings/validate")

# path -> (webhook name, group, version, resource, operations), the operations being those
# the embedded admission chain calls the path's rules for.
WEBHOOKS: dict[str, tuple[str, str, str, str, tuple[str, ...]]] = {
    f"/{kind.plural}/{phase}": (f"{phase}{kind.name.lower()}.volcano.sh", kind.group, kind.version, kind.plural,
                                OPERATIONS[(kind.name, phase)])
    for kind in ADMITTED if kind.admission.webhook
    for phase in ("mutate", "validate") if OPERATIONS[(kind.name, phase)]  # HyperNodes: validate only
}


# The webhook's Service: (name, namespace); Volcano's --webhook-service-name and
# --webhook-namespace name another.
DEFAULT_SERVICE = (SERVICE, NAMESPACE)


def service_hosts(service: tuple[str, str] = DEFAULT_SERVICE) -> list[str]:
    """The DNS names of the webhook's Service, for its serving certificate."""
    name, namespace = service
    return [name, f"{name}.{namespace}", f"{name}.{namespace}.svc"]


def configuration_name(path: str) -> str:
    return SERVICE + path.replace("/", "-")


def configurations(ca_bundle: bytes, url: str | None = None, paths=DEFAULT_ADMISSIONS,
                   scheduler_names: tuple[str, ...] = ("volcano",),
                   service: tuple[str, str] = DEFAULT_SERVICE) -> list[Obj]:
    """The configurations for `paths`, calling `service` (name, namespace), or `url`
    (https://host:port) instead; objects in the Service's namespace and kube-system are left
    out, as the chart leaves out volcano-system's."""
    unknown = sorted(set(paths) - set(WEBHOOKS))
    if unknown:
        raise ValueError(f"--enabled-admission: unknown path(s) {', '.join(unknown)}; known: {', '.join(WEBHOOKS)}")
    return [_configuration(path, base64.b64encode(ca_bundle).decode(), url, scheduler_names, service)
            for path in paths]


def _configuration(path: str, ca: str, url: str | None, scheduler_names: tuple[str, ...],
                   service: tuple[str, str]) -> Obj:
    name, group, version, resource, operations = WEBHOOKS[path]
    mutating = path.endswith("/mutate")
    client = {"url": url.rstrip("/") + path} if url else \
        {"service": {"name": service[0], "namespace": service[1], "path": path, "port": 443}}
    webhook: Obj = {
        "name": name, "admissionReviewVersions": ["v1"], "clientConfig": dict(client, caBundle=ca),
        "failurePolicy": "Ignore" if path == "/pods/mutate" else "Fail", "matchPolicy": "Equivalent",
        "sideEffects": "NoneOnDryRun", "timeoutSeconds": 10, "objectSelector": {},
        "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                                                    "values": [service[1], "kube-system"]}]},
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
