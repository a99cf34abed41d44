"""A pod template's validation: the subset of Kubernetes' ValidatePodTemplate that catches
real mistakes, with Kubernetes' messages (reference §3.1, "The pod template passes
Kubernetes ValidatePodTemplate")."""

from __future__ import annotations

from typing import Any

from volcanic.admission.common import (
    deny,
    dns1123_label_errors,
    duplicate,
    invalid,
    not_supported,
    quantity,
    required,
)
from volcanic.kube.objects import Obj, as_map, spec_of
from volcanic.kube.quantity import format_quantity, parse_quantity

RESTART_POLICIES = ("Always", "OnFailure", "Never")                             # core/v1
STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")           # + hugepages-*


# --- Pod template (a subset of Kubernetes' ValidatePodTemplate) -----------------------------

def pod_template_errors(template: Any) -> list[str]:
    """Kubernetes' ValidatePodTemplate, the subset that catches real mistakes, with
    Kubernetes' messages and paths ("template.spec..."), after Kubernetes' defaulting
    (restartPolicy "" is Always):
    - containers is required and not empty (template_containers_errors);
    - container and init container names are required, RFC 1123 labels and unique
      (container_name_errors); every container has an image (container_image_errors);
    - resource names are standard or qualified, quantities are >= 0, requests <= limits, and
      non-overcommitable (extended) resources have limits equal to requests
      (container_resources_errors);
    - restartPolicy is Always, OnFailure or Never (restart_policy_errors).
    Not checked: volumes and mounts, ports, probes, env, security context (privileged is
    allowed, as Volcano allows it), affinity, tolerations, metadata."""
    spec = spec_of(template)
    errs = template_containers_errors(spec)
    names: set[str] = set()
    for key in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(key) or []):
            if not isinstance(c, dict):
                continue
            path = f"template.spec.{key}[{i}]"
            errs += container_name_errors(c, path, names)
            errs += container_image_errors(c, path)
            errs += container_resources_errors(c, path)
    errs += restart_policy_errors(spec)
    return errs


def template_containers_errors(spec: Obj) -> list[str]:
    """ValidatePodSpec: at least one container."""
    if not spec.get("containers"):
        return [required("template.spec.containers")]
    return []


def container_name_errors(container: Obj, path: str, seen: set[str]) -> list[str]:
    """validateContainers: the name is required, an RFC 1123 label and unique in the pod
    (containers and init containers together); `seen` collects the names."""
    name = container.get("name")
    if not name:
        return [required(f"{path}.name")]
    errs = dns1123_label_errors(name)
    if errs:
        return [invalid(f"{path}.name", name, "; ".join(errs))]
    if name in seen:
        return [duplicate(f"{path}.name", name)]
    seen.add(name)
    return []


def container_image_errors(container: Obj, path: str) -> list[str]:
    """validateContainers: the image is required."""
    if not container.get("image"):
        return [required(f"{path}.image")]
    return []


def _overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native resources other than hugepages."""
    native = "/" not in name or "kubernetes.io/" in name
    return native and not name.startswith("hugepages-")


def container_resources_errors(container: Obj, path: str) -> list[str]:
    """ValidateResourceRequirements: standard resource names for unqualified names, quantities
    >= 0, requests <= limits, and requests == limits (with limits set) for resources that
    cannot be overcommitted (extended resources, hugepages)."""
    res = container.get("resources")
    if not isinstance(res, dict):
        return []
    limits = as_map(res.get("limits"))
    requests = as_map(res.get("requests"))
    errs: list[str] = []
    for kind, values in (("limits", limits), ("requests", requests)):
        for name, value in values.items():
            where = f"{path}.resources.{kind}[{name}]"
            if "/" not in name and name not in STANDARD_CONTAINER_RESOURCES and not name.startswith("hugepages-"):
                errs.append(invalid(where, name, "must be a standard resource for containers"))
            q = quantity(value)
            if q is not None and q < 0:
                errs.append(invalid(where, _canonical(value), "must be greater than or equal to 0"))
    for name, value in requests.items():
        q = quantity(value)
        if q is None:
            continue
        if name in limits:
            limit = quantity(limits[name])
            if limit is None:
                continue
            if q != limit and not _overcommit_allowed(name):
                errs.append(invalid(f"{path}.resources.requests", _canonical(value),
                                    f"must be equal to {name} limit of {_canonical(limits[name])}"))
            elif q > limit:
                errs.append(invalid(f"{path}.resources.requests", _canonical(value),
                                    f"must be less than or equal to {name} limit of {_canonical(limits[name])}"))
        elif not _overcommit_allowed(name):
            errs.append(deny(f"{path}.resources.limits",
                             "Required value: Limit must be set for non overcommitable resources"))
    return errs


def _canonical(value: Any) -> str:
    """Quantity.String() of a valid quantity."""
    return format_quantity(parse_quantity(value))


def restart_policy_errors(spec: Obj) -> list[str]:
    """validateRestartPolicy: Always, OnFailure or Never ("" defaults to Always)."""
    policy = spec.get("restartPolicy")
    if policy in (None, "") or policy in RESTART_POLICIES:
        return []
    return [not_supported("template.spec.restartPolicy", policy, RESTART_POLICIES)]
