"""Foresight on a real API server (docs/foresight.md): `volcanic up`'s scheduler answers vcctl's
`job why`, `job forecast` and `queue pending` over HTTP beside its /metrics, from its cache,
and `volcanic what-if` asks it the same way."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from test_vcctl_on_api_server import failed, ok, running, table, vcctl
from test_volcano_jobs import vcjob


def at(up) -> dict:
    return {"VOLCANIC_SCHEDULER_ADDRESS": f"http://127.0.0.1:{up.metrics_port}"}


def test_why_forecast_and_pending_come_from_the_scheduler(env, up, namespace):
    q = namespace[:40] + "-q"
    env.apply_queue(q, weight=1, capability={"cpu": "1"})
    try:
        running(env, namespace, vcjob("first", 1, cpu="1", queue=q, duration=None))
        env.apply(vcjob("second", 2, cpu="1", queue=q, duration=None), namespace=namespace)
        why = ["job", "why", "-N", "second", "-n", namespace]
        reason = f"proportion: queue {q} capability: cpu 2 asked, 1 of 1 taken"
        assert env.wait(lambda: reason in vcctl(env, *why, extra_env=at(up)).stdout, timeout=30)
        lines = ok(env, *why, extra_env=at(up)).splitlines()
        assert lines[:5] == [f"Job:              {namespace}/second", f"Queue:            {q}",
                             f"Position:         1 in queue {q}, which is 1 in the queue order", "Reasons:",
                             f"  1. {reason}"]
        # first runs with no estimate of its end: second (whose 2 pods have none either) waits
        # past the horizon, and the basis says why. The basis counts the whole cluster's pods,
        # and this API server is shared: earlier tests' pods may still be winding down.
        assert lines[5] == "Estimated start:  -"
        basis = re.fullmatch(r"Basis:            (\d+) pod\(s\) had no estimate and no queue median: "
                             r"they run until the horizon", lines[6])
        assert basis and int(basis[1]) >= 3, lines[6]
        assert lines[7:] == ["Would start it now:", f"  - raise queue {q}'s capability to cpu 3 (now cpu 1)",
                             "  - submit it to queue default, which has room"]
        rows = json.loads(ok(env, "job", "forecast", "-n", namespace, "-o", "json", extra_env=at(up)))
        assert [(r["job"], r["queue"], r["position"], r["reasons"], r["estimated_start"]) for r in rows] == [
            (f"{namespace}/second", q, 1, [reason], None)]
        assert table(ok(env, "job", "forecast", "-n", namespace, extra_env=at(up)))[1][:3] == ["second", q, "1"]
        assert table(ok(env, "queue", "pending", "-n", q, extra_env=at(up)))[1][:3] == ["1", namespace, "second"]
        assert failed(env, "job", "why", "-N", "nope", "-n", namespace, extra_env=at(up)) == \
            f"Failed to why job: job {namespace}/nope not found"
    finally:
        env.kubectl("delete", "job.batch.volcano.sh", "--all", "-n", namespace, check=False)
        env.kubectl("delete", "queue", q, "--wait=false", check=False)


def test_an_unreachable_scheduler_is_one_line(env, up):
    line = failed(env, "job", "forecast", extra_env={"VOLCANIC_SCHEDULER_ADDRESS": "http://127.0.0.1:9"})
    assert line.startswith("Failed to forecast job: volcanic's scheduler at http://127.0.0.1:9 does not answer")
    # Without an address, through the API server's proxy to the Service `volcanic install`
    # makes; `volcanic up` makes none.
    line = failed(env, "job", "forecast")
    assert line.startswith("Failed to forecast job: volcanic's scheduler at /api/v1/namespaces/volcano-system/"
                           "services/volcano-scheduler-service:metrics/proxy did not answer (404")


def test_what_if_asks_the_running_scheduler(env, up, namespace, tmp_path):
    conf = tmp_path / "proposed.conf"
    conf.write_text(up.conf.read_text())
    done = subprocess.run([sys.executable, "-m", "volcanic.cli.main", "what-if", "--conf", str(conf), "--json"],
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, KUBECONFIG=env.kubeconfig, **at(up)))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert all(j["change"] == "same" for j in summary["jobs"])  # the same configuration: nothing moves
    assert set(summary) == {"now", "jobs", "current_waits", "proposed_waits", "current_basis", "proposed_basis"}
