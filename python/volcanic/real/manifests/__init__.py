"""What `volcanic install` applies, as plain data: Volcano's CRDs (our own schemas), the
volcano-system namespace, one ServiceAccount and least-privilege ClusterRole per component,
and the root and default queues; with `all_components`, the three Deployments, the webhook's
Service and the scheduler configuration as a ConfigMap. The webhook configurations the webhook
registers are here too (webhooks.py).

Nothing here talks to an API server: `volcanic install --print` renders these without a
Kubernetes client (import-linter keeps it so); volcanic.real.install and
volcanic.real.registrations apply them.

    names.py        the namespace, the components' accounts, the webhook's Service
    definitions.py  the CRDs, from volcanic.kube's table of kinds and schemas
    accounts.py     ServiceAccounts, ClusterRoles and their bindings
    deployments.py  the production layout: Deployments, the scheduler's ConfigMap, the Service
    webhooks.py     the Mutating/ValidatingWebhookConfigurations
"""

from __future__ import annotations

from typing import Any

import yaml

from volcanic.kube.objects import Obj
from volcanic.kube.queues import default_queues
from volcanic.real.manifests import accounts, definitions, deployments
from volcanic.real.manifests.names import NAMESPACE


def namespace() -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}


def manifests(all_components: bool = False, image: str = "volcanic:latest",
              scheduler_conf: str | None = None) -> list[Obj]:
    """Everything install applies, in the order it must be applied."""
    out = [namespace(), *definitions.crds(), *accounts.rbac(), *default_queues()]
    if all_components:
        out += deployments.deployments(image, scheduler_conf)
    return out


def render(all_components: bool = False, **options: Any) -> str:
    """The manifests as multi-document YAML (`volcanic install --print`)."""
    return yaml.safe_dump_all(manifests(all_components, **options), sort_keys=False)
