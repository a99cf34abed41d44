"""The foresight answers where users read them (docs/foresight.md, docs/vcctl.md): vcctl's `job
why`, `job forecast` and `queue pending` on the embedded cluster, column by column; the
scheduler's /foresight/ HTTP routes and vcctl's client of them; `volcanic what-if`."""

from __future__ import annotations

import json
import subprocess
import sys

from prometheus_client import CollectorRegistry
import pytest
import yaml

from test_explain import ALLOCATE, capped  # noqa: F401 - the fixture
from test_forecast import job
from volcanic.foresight import Answers
from volcanic.foresight.forecast import FORKED_KINDS
from volcanic.real.foresight_http import ForesightClient, plain_request
from volcanic.real.serving import Health, serve
from volcanic.vcctl import VcctlError


def test_job_why_prints_the_explanation(capped):  # noqa: F811
    assert capped.vcctl("job why -N b") == (
        "Job:              default/b\n"
        "Queue:            q1\n"
        "Position:         1 in queue q1, which is 1 in the queue order\n"
        "Reasons:\n"
        "  1. proportion: queue q1 capability: cpu 2 asked, 4 of 4 taken\n"
        "Estimated start:  2024-01-01 00:30:04 +0000 UTC (in 29m)\n"
        "Basis:            every pod had an estimate (2 running)\n"
        "Would start it now:\n"
        "  - raise queue q1's capability to cpu 6 (now cpu 4)\n"
        "  - submit it to queue default, which has room\n")


def test_job_why_as_json_and_its_errors(capped):  # noqa: F811
    e = json.loads(capped.vcctl("job why -N b -o json"))
    assert (e["job"], e["position"], e["estimated_start"]) == ("default/b", 1, 1704069004.0)
    with pytest.raises(VcctlError, match="^Failed to why job: job default/nope not found$"):
        capped.vcctl("job why -N nope")
    with pytest.raises(VcctlError, match="job name .* is mandatory to explain"):
        capped.vcctl("job why")


def test_job_forecast_columns_and_filters(capped):  # noqa: F811
    lines = capped.vcctl("job forecast").splitlines()
    assert lines[0].split() == ["Name", "Queue", "Position", "Reason", "Estimated", "start", "Basis"]
    assert lines[1].split()[:3] == ["b", "q1", "1"]
    assert "proportion: queue q1 capability: cpu 2 asked, 4 of 4 taken" in lines[1] and "in 29m" in lines[1]
    assert capped.vcctl("job forecast -A").splitlines()[1].split()[:2] == ["default", "b"]
    assert capped.vcctl("job forecast -q default") == "No pending jobs\n"
    rows = yaml.safe_load(capped.vcctl("job forecast -o yaml"))
    assert [r["job"] for r in rows] == ["default/b"]


def test_queue_pending_lists_a_queues_line(capped):  # noqa: F811
    lines = capped.vcctl("queue pending -n q1").splitlines()
    assert lines[0].split() == ["Position", "Namespace", "Name", "Reason", "Estimated", "start"]
    assert lines[1].split()[:3] == ["1", "default", "b"]
    with pytest.raises(VcctlError, match="not found"):
        capped.vcctl("queue pending -n nope")


def test_the_commands_are_hidden_from_help_as_volcanics_other_additions(capped):  # noqa: F811
    assert "why" not in capped.vcctl("job --help") and "pending" not in capped.vcctl("queue --help")


@pytest.fixture
def served(capped):  # noqa: F811
    """The cluster's foresight served over HTTP as the scheduler serves it; a client of it."""
    answers = {"foresight": Answers(capped.foresight)}
    server = serve("127.0.0.1:0", CollectorRegistry(), Health(), foresight=lambda: answers["foresight"])
    yield ForesightClient(f"http://127.0.0.1:{server.port}", plain_request), answers
    server.shutdown()
    server.server_close()


def test_the_http_answers_are_the_engines(served, capped):  # noqa: F811
    client, _ = served
    assert client.outlook() == [r.to_dict() for r in capped.forecast()]
    assert client.outlook(queue="default") == []
    assert client.explain("b") == capped.explain("b").to_dict()
    with pytest.raises(KeyError, match="job default/nope not found"):
        client.explain("nope")
    summary = client.what_if(ALLOCATE)
    assert [j["change"] for j in summary["jobs"]] == ["same"]


def test_a_scheduler_not_synced_answers_503_and_the_client_says_so(served, monkeypatch):
    client, answers = served
    answers["foresight"] = None
    monkeypatch.setattr("volcanic.real.foresight_http.RETRIES", 2)
    with pytest.raises(OSError, match="caches have not synced"):
        client.outlook()


def test_an_unreachable_scheduler_is_one_line():
    client = ForesightClient("http://127.0.0.1:9", plain_request)
    with pytest.raises(OSError, match=r"^volcanic's scheduler at http://127.0.0.1:9 does not answer: .*"
                                      r"VOLCANIC_SCHEDULER_ADDRESS"):
        client.outlook()


def test_volcanic_what_if_on_yaml_files(capped, tmp_path):  # noqa: F811
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all([o for kind in FORKED_KINDS for o in capped.list(kind)]))
    (tmp_path / "current.conf").write_text(ALLOCATE)
    (tmp_path / "new.conf").write_text(ALLOCATE.replace("  - name: proportion\n", ""))
    now = str(capped.started + capped.now)
    out = subprocess.run([sys.executable, "-m", "volcanic.cli.main", "what-if", "--conf", str(tmp_path / "new.conf"),
                          "--state", str(state), "--current", str(tmp_path / "current.conf"), "--now", now],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0].split() == ["JOB", "QUEUE", "CURRENT", "START", "PROPOSED", "START", "CHANGE"]
    assert out[1].split()[1:] == ["q1", "2024-01-01T00:30:04Z", "2024-01-01T00:00:15Z", "earlier"]
    assert out[2] == "1 pending job(s): 1 earlier, 0 later, 0 same, 0 starts, 0 never"
    assert out[4].split() == ["p50", "29.9m", "0.1m"]  # waits since b was created, 5 s before now


def test_a_podgroup_no_job_owns_is_named_by_itself(capped):  # noqa: F811
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": {
        "scheduling.k8s.io/group-name": "pg"}}, "spec": {"schedulerName": "volcano", "containers": [
            {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "pg"},
             "spec": {"minMember": 1, "queue": "q1"}}
    capped.apply([group, pod])
    capped.run(2)
    assert [r.job for r in capped.forecast()] == ["default/b", "default/pg"]
    # No minResources: enqueue lets it in, and allocate finds q1 overused (Volcano's message).
    e = capped.explain("pg")
    assert e.reasons == ["1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable; "
                         "Pending: 1 Unschedulable", "Queue <q1> is overused when considering task <p>, ignore it."]
    assert e.remedies == ["raise queue q1's capability to cpu 5 (now cpu 4)", "submit it to queue default, which has room"]
