"""Volcano v1.15.1's JobFlow metrics (pkg/controllers/jobflow/state/metrics.go):
volcano_jobflow_succeed_phase_count and volcano_jobflow_failed_phase_count, labelled
jobflow_namespace, as the embedded cluster's metrics() exports them (what the controller-manager
serves at /metrics). Volcano's example/jobflow (a -> b -> {c, d} -> e) runs on the setup of
test_jobflow_cluster.py; the counting rules are state/running.go and state/pending.go."""

from __future__ import annotations

import re

from prometheus_client import CollectorRegistry
import yaml

from job_helpers import command
from test_jobflow_cluster import cluster, example_jobflow, example_templates, phase, run_until, run_with_b_failing
from test_jobflow_controller import Flows, jobflow, template
from volcanic.controllers.metrics import JobFlowMetrics

SUCCEED, FAILED = "volcano_jobflow_succeed_phase_count", "volcano_jobflow_failed_phase_count"


def sample(text: str, name: str, namespace: str = "default") -> float | None:
    """The value of `name{jobflow_namespace=namespace}` in Prometheus text; None if absent."""
    m = re.search(rf'^{name}{{jobflow_namespace="{namespace}"}} (\S+)$', text, re.M)
    return float(m.group(1)) if m else None


def test_the_example_counts_one_success_under_volcanos_names():
    """state/running.go: the sync that makes a Running JobFlow Succeed calls UpdateJobFlowSucceed
    (state/metrics.go: a CounterVec `volcano_jobflow_succeed_phase_count{jobflow_namespace}`,
    no _total); the Succeed state's later syncs (jobRetainPolicy delete deleting the Jobs) count
    nothing more. Nothing failed: the failure family has no series (a CounterVec has none until
    its first Inc)."""
    c = cluster(metrics=True)
    c.apply(example_templates())
    c.apply(example_jobflow())
    run_until(c, lambda: phase(c) == "Succeed")
    c.run(5)
    assert c.list("Job") == []  # the delete policy's sync ran
    text = c.metrics()
    assert sample(text, SUCCEED) == 1.0 and sample(text, FAILED) is None
    assert f"# TYPE {SUCCEED} " in text and f"# TYPE {FAILED} " in text  # the names, no _total
    assert "jobflow_succeed_phase_count_total" not in text


def test_each_succeeded_jobflow_of_a_namespace_counts():
    """The counter is per namespace, not per JobFlow: two JobFlows of `default` count 2."""
    c = cluster(metrics=True)
    c.apply(example_templates("2s"))
    c.apply(example_jobflow("retain", "one"))
    c.apply(example_jobflow("retain", "two"))
    run_until(c, lambda: phase(c, "one") == phase(c, "two") == "Succeed")
    c.run(5)
    assert sample(c.metrics(), SUCCEED) == 2.0


def test_a_failure_of_a_running_flow_is_not_counted():
    """state/running.go makes a Running JobFlow Failed when a Job failed without calling
    UpdateJobFlowFailed: the flow of b failing after a completed is Failed, and no count."""
    c = cluster(metrics=True)
    run_with_b_failing(c, max_retry=1)
    text = c.metrics()
    assert sample(text, FAILED) is None and sample(text, SUCCEED) is None


def test_a_failure_of_a_pending_flow_is_counted():
    """state/pending.go calls UpdateJobFlowFailed when the sync of a Pending JobFlow finds a Job
    failed or terminated and none running or completed: a, which no node can hold, is
    terminated by a bus Command while the flow is still Pending."""
    c = cluster(metrics=True)
    templates = list(yaml.safe_load_all(example_templates("2s")))
    templates[0]["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "100"
    c.apply(templates)
    c.apply(example_jobflow("retain"))
    c.run(5)
    assert phase(c) == "Pending"
    command(c, "TerminateJob", "test-a")
    run_until(c, lambda: phase(c) == "Failed")
    c.run(5)
    text = c.metrics()
    assert c.get("JobFlow", "test")["status"]["terminatedJobs"] == ["test-a"]
    assert sample(text, FAILED) == 1.0 and sample(text, SUCCEED) is None


def test_only_the_move_to_succeed_counts():
    """The controller alone (test_jobflow_controller.py's harness): a JobFlow Running, then
    Succeed once its one Job completed, counts once in its own namespace; further syncs of the
    Succeed JobFlow (jobRetainPolicy retain, its Job updated) count nothing."""
    h = Flows()
    registry = CollectorRegistry()
    h.ctx.extra["jobflow_metrics"] = JobFlowMetrics(registry)
    h.create(template("a", ns="ns1"))
    h.create(jobflow(flows=("a",), ns="ns1"))
    h.settle()
    h.set_phase("jobflow-a", "Running", ns="ns1")
    h.settle()
    assert h.phase(ns="ns1") == "Running"
    h.set_phase("jobflow-a", "Completed", ns="ns1")
    h.settle()
    h.set_phase("jobflow-a", "Completed", ns="ns1", retryCount=1)  # a new version: another sync
    h.settle()
    assert h.phase(ns="ns1") == "Succeed"
    assert registry.get_sample_value(SUCCEED, {"jobflow_namespace": "ns1"}) == 1.0
    assert registry.get_sample_value(FAILED, {"jobflow_namespace": "ns1"}) is None
