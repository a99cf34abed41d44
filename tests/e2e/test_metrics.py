"""Volcano's metrics from a real run: `volcanic up` on the dev cluster runs a Volcano Job in a
queue of its own, and its /metrics has every metric deploy/grafana/volcanic-dashboard.json
reads, with the queue's allocation and PodGroup counts (docs/metrics.md)."""

from __future__ import annotations

import json
from pathlib import Path
import sys
import urllib.request

from test_volcano_jobs import vcjob
from volcanic.kube.objects import status_of

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))  # the dashboard check's helpers
from test_dashboard import DASHBOARD, dashboard_metrics, sample_names  # noqa: E402

# The queue capacities come from the capacity plugin.
CAPACITY = "- name: capacity"


def scrape(port: int) -> str:
    return urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()


def test_a_real_run_exports_what_the_dashboard_reads(env, up, namespace):
    conf = up.conf.read_text()
    up.conf.write_text(conf.replace("- name: proportion", CAPACITY))
    try:
        env.wait_logged(up.proc, "reloaded")
        env.apply_queue("metrics-q", weight=1, capability={"cpu": "4"})
        env.apply(vcjob("metered", 2, queue="metrics-q", duration=None), namespace=namespace)
        assert env.wait(lambda: (status_of(env.store.get("Job", "metered", namespace) or {}).get("state") or {})
                        .get("phase") == "Running", timeout=60)
        wanted = dashboard_metrics(json.loads(DASHBOARD.read_text()))

        def missing() -> set[str]:
            return wanted - sample_names(scrape(up.metrics_port))
        assert env.wait(lambda: not missing(), timeout=30), sorted(missing())
        # Each as the latest session saw it: a session after the pods went Running may still be due.
        for name, labels, expected in (
                ("volcano_queue_allocated_milli_cpu", 'queue_name="metrics-q"', 2000),
                ("volcano_queue_capacity_milli_cpu", 'queue_name="metrics-q"', 4000),
                ("volcano_queue_pod_group_running_count", 'queue_name="metrics-q"', 1),
                ("volcano_queue_task_count", 'queue_name="metrics-q",status="Running"', 2)):
            assert env.wait(lambda: up.metric(name, labels) == expected, timeout=15), (name, up.metric(name, labels))
    finally:
        up.conf.write_text(conf)
