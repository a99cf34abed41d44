"""The production layout (`volcanic install --print --all`): Volcano's three components as
three Deployments in volcano-system, the scheduler configuration as a ConfigMap mounted where
the scheduler reads (and reloads) it, the webhook's Service, and the scheduler's (its /metrics
and the foresight answers vcctl asks for, as Volcano's chart names it)."""

from __future__ import annotations

from typing import Any

from volcanic.kube.objects import Obj
from volcanic.real.manifests.names import NAMESPACE, SCHEDULER_SERVICE, SERVICE, account

CONF_DIR = "/volcano.scheduler"
CONF_FILE = "volcano-scheduler.conf"
# Volcano's volcano-scheduler.conf from its helm chart.
DEFAULT_CONF = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""
WEBHOOK_PORT = 8443
METRICS_PORT = 8080


def _deployment(component: str, image: str, args: list[str], replicas: int = 1, **pod: Any) -> Obj:
    name = account(component)
    labels = {"app": name}
    container = {"name": component, "image": image, "args": [component, *args],
                 "ports": [{"name": "metrics", "containerPort": METRICS_PORT}],
                 "livenessProbe": {"httpGet": {"path": "/healthz", "port": METRICS_PORT}},
                 "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}
    container.update(pod.pop("container", {}))
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"serviceAccountName": name, "priorityClassName": "system-cluster-critical",
                                           "containers": [container], **pod}}}}


def deployments(image: str, scheduler_conf: str | None = None) -> list[Obj]:
    metrics = f"--metrics-address=0.0.0.0:{METRICS_PORT}"
    conf_map = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "volcanic-scheduler-configmap", "namespace": NAMESPACE},
                "data": {CONF_FILE: scheduler_conf or DEFAULT_CONF}}
    scheduler = _deployment(
        "scheduler", image, [f"--scheduler-conf={CONF_DIR}/{CONF_FILE}", "--leader-elect", metrics], replicas=2,
        container={"volumeMounts": [{"name": "conf", "mountPath": CONF_DIR}]},
        volumes=[{"name": "conf", "configMap": {"name": "volcanic-scheduler-configmap"}}])
    controllers = _deployment("controller-manager", image, ["--leader-elect", metrics], replicas=2)
    webhook = _deployment(
        "webhook", image, ["--register", f"--listen=0.0.0.0:{WEBHOOK_PORT}", metrics],
        container={"ports": [{"name": "https", "containerPort": WEBHOOK_PORT},
                             {"name": "metrics", "containerPort": METRICS_PORT}]})
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": SERVICE, "namespace": NAMESPACE},
               "spec": {"selector": {"app": account("webhook")},
                        "ports": [{"port": 443, "targetPort": WEBHOOK_PORT, "name": "https"}]}}
    scheduler_service = {"apiVersion": "v1", "kind": "Service",
                         "metadata": {"name": SCHEDULER_SERVICE, "namespace": NAMESPACE},
                         "spec": {"selector": {"app": account("scheduler")},
                                  "ports": [{"port": METRICS_PORT, "targetPort": METRICS_PORT, "name": "metrics"}]}}
    return [conf_map, scheduler, controllers, webhook, service, scheduler_service]
