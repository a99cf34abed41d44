"""Volcano v1.15.1's job-controller metrics, as the embedded cluster's metrics() exports them
(what the controller-manager serves at /metrics): pkg/controllers/job/state/metrics.go
(volcano_job_completed_phase_count and volcano_job_failed_phase_count {job_name, queue_name},
counted at every move into Completed or Failed, in state/running.go, restarting.go and
completing.go; removed with the Job in job_controller_handler.go deleteJob) and
pkg/controllers/metrics/job.go (volcano_controller_job_to_pod_creation_latency_milliseconds,
observed per pod created in job_controller_actions.go)."""

from __future__ import annotations

import re

from job_helpers import NS, command, job, node, phase, task, wait
import volcanic

COMPLETED, FAILED = "volcano_job_completed_phase_count", "volcano_job_failed_phase_count"
LATENCY = "volcano_controller_job_to_pod_creation_latency_milliseconds"


def started(*jobs: dict) -> volcanic.Cluster:
    c = volcanic.Cluster(metrics=True)
    c.apply(node("n1", cpu="8"))
    c.run(0)
    c.apply(list(jobs))
    return c


def outcome(text: str, family: str, job: str = "j", queue: str = "default") -> float | None:
    """`family{job_name="default/<job>",queue_name=<queue>}` in Prometheus text; None if absent."""
    m = re.search(rf'^{family}{{job_name="{NS}/{job}",queue_name="{queue}"}} (\S+)$', text, re.M)
    return float(m.group(1)) if m else None


def histogram(text: str) -> dict[str, float]:
    """The latency histogram's _count, _sum and each bucket (by its le)."""
    out = {k: float(v) for k, v in re.findall(rf'^{LATENCY}_(count|sum) (\S+)$', text, re.M)}
    out.update({le: float(v) for le, v in re.findall(rf'^{LATENCY}_bucket{{le="([^"]+)"}} (\S+)$', text, re.M)})
    return out


def test_a_completed_job_counts_once_under_volcanos_names_and_each_pod_its_creation_latency():
    c = started(job("j", task("t", 3, duration="5s")))
    assert wait(c, lambda: phase(c) == "Completed")
    c.run(5)  # later syncs of the Completed job count nothing more
    text = c.metrics()
    assert outcome(text, COMPLETED) == 1.0 and outcome(text, FAILED) is None
    assert f"# TYPE {COMPLETED} " in text and "job_completed_phase_count_total" not in text
    created = [p["metadata"]["creationTimestamp"] for p in c.list("Pod", NS)]
    latency = histogram(text)
    # The pods are made once the PodGroup is Inqueue, a session after the Job: 1 s, in whole
    # seconds as the API server stamps objects.
    assert latency["count"] == len(created) == 3 and latency["sum"] == 3000.0
    buckets = {le: n for le, n in latency.items() if le not in ("count", "sum")}
    assert len(buckets) == 31  # Volcano's 30 (50 ms to 60 s), and +Inf
    assert {le: n for le, n in buckets.items() if n} == {le: 3.0 for le in buckets if float(le) >= 1000}


def test_a_failed_job_counts_under_failed_with_its_queue():
    c = volcanic.Cluster(metrics=True)
    c.apply([node("n1", cpu="8"), {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                                   "metadata": {"name": "q"}, "spec": {"weight": 1}}])
    c.run(0)
    c.apply(job("j", task("t", 2, duration="2s", exit_code=1), queue="q"))
    assert wait(c, lambda: phase(c) == "Failed")
    text = c.metrics()
    assert outcome(text, FAILED, queue="q") == 1.0 and outcome(text, COMPLETED, queue="q") is None


def test_restarts_to_max_retry_count_one_failure():
    """state/restarting.go: the Restarting job that has used its retries becomes Failed, once."""
    c = started(job("j", task("t", 1, duration="2s", exit_code=1), max_retry=2,
                    policies=[{"event": "PodFailed", "action": "RestartJob"}]))
    assert wait(c, lambda: phase(c) == "Failed")
    assert c.get("Job", "j")["status"]["retryCount"] == 2
    assert outcome(c.metrics(), FAILED) == 1.0


def test_aborted_and_terminated_jobs_count_nothing_and_a_deleted_jobs_series_go():
    c = started(job("a", task("t", 1)), job("b", task("t", 1)), job("done", task("t", 1, duration="1s")))
    assert wait(c, lambda: phase(c, "a") == phase(c, "b") == "Running" and phase(c, "done") == "Completed")
    command(c, "AbortJob", "a")
    command(c, "TerminateJob", "b")
    assert wait(c, lambda: phase(c, "a") == "Aborted" and phase(c, "b") == "Terminated")
    text = c.metrics()
    assert [outcome(text, f, j) for f in (COMPLETED, FAILED) for j in ("a", "b")] == [None] * 4
    assert outcome(text, COMPLETED, "done") == 1.0
    c.delete("Job", "done")
    c.run(1)
    assert outcome(c.metrics(), COMPLETED, "done") is None
