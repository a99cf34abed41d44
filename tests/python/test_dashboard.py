"""deploy/grafana/volcanic-dashboard.json reads only metrics volcanic exports: every metric a
panel's query names is a sample of an embedded Cluster(metrics=True) after a job ran (the
scheduler's and the controller-manager's Volcano metrics) or of the real processes' own
(volcanic.real.metrics). tests/e2e/test_metrics.py checks the same against a real run."""

from __future__ import annotations

import json
from pathlib import Path
import re
from types import SimpleNamespace

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from builders import node, pod, podgroup, queue
import volcanic
from volcanic.real.manifests.deployments import DEFAULT_CONF
from volcanic.real.metrics import ApiRequestMetrics, ControllerMetrics

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "volcanic-dashboard.json"
METRIC = re.compile(r"\b(volcan(?:o|ic)_[a-zA-Z0-9_]+)")


def dashboard_metrics(dashboard: dict) -> set[str]:
    """Every volcano_*/volcanic_* name in the panels' queries and the template variables."""
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    exprs += [v["definition"] for v in dashboard["templating"]["list"] if "definition" in v]
    return {m for e in exprs for m in METRIC.findall(e)}


def sample_names(text: str) -> set[str]:
    """The metric families and samples named in a /metrics text (a family without samples
    yet, a labelled gauge no label set has been given, is named too)."""
    families = list(text_string_to_metric_families(text))
    return {f.name for f in families} | {s.name for f in families for s in f.samples}


CAPACITY_CONF = DEFAULT_CONF.replace("- name: proportion", "- name: capacity")


def exported_by_embedded_cluster() -> set[str]:
    """What a cluster exports after a gang ran in a queue, with Volcano's default
    configuration (proportion) and with capacity (the queues' capacities)."""
    names: set[str] = set()
    for conf in (None, CAPACITY_CONF):
        c = volcanic.Cluster(conf=conf, metrics=True)
        c.apply([node("n1"), queue("q", 1, capability={"cpu": "2"})])
        c.run(1)  # the queue controller opens the queue
        c.apply([podgroup("g", 2, queue="q"), pod("a", "g"), pod("b", "g")])
        c.run(3)
        assert c.errors == []
        names |= sample_names(c.metrics())
    return names


def exported_by_real_processes() -> set[str]:
    registry = CollectorRegistry()
    ApiRequestMetrics(registry, SimpleNamespace(sent=1, retried=0, refused=0))
    ControllerMetrics(registry, SimpleNamespace(controllers=[SimpleNamespace(name="job-controller", queue=[])]))
    return sample_names(generate_latest(registry).decode())


def test_every_panel_reads_an_exported_metric():
    dashboard = json.loads(DASHBOARD.read_text())
    wanted = dashboard_metrics(dashboard)
    assert len(wanted) > 30
    missing = wanted - exported_by_embedded_cluster() - exported_by_real_processes()
    assert not missing, f"the dashboard reads metrics nothing exports: {sorted(missing)}"


def test_panels_are_well_formed():
    dashboard = json.loads(DASHBOARD.read_text())
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for p in dashboard["panels"]:
        assert p["targets"] and all(t["expr"].strip() for t in p["targets"]), p["title"]
