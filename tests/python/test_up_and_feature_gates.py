"""`volcanic up` leaves no lock behind and listens where its URL says (issue 33 item 11), and
the webhook's `--feature-gates` switches on Volcano's queue-allocation gate (item 12:
pkg/features/volcano_features.go SchedulingGatesQueueAdmission, Alpha and off by default;
pkg/webhooks/admission/pods/mutate/mutate_pod.go patchSchedulingGates; Volcano e2e suite
schedulinggates, run with FEATURE_GATES="SchedulingGatesQueueAdmission=true").

The parts that need no API server: the listening address, the clean-stop hook of the
process, unregistering against a recording client, the flag's parsing, and the queue-allocation
gate through the `volcanic webhook` command. tests/e2e/test_up_lifecycle.py runs `up` itself.
"""

from __future__ import annotations

import http.client
import json
import ssl
import subprocess
import sys
import threading

import pytest

from review_helpers import patch_of, pod, review
from test_webhook import make_cert, post
from volcanic.cli.kube import _admissions, admission_conf, webhook_listen
from volcanic.cli.main import build_parser
from volcanic.errors import ConfigError
from volcanic.kube.errors import Conflict, NotFound
from volcanic.real.components import Component, Process
from volcanic.real.install import path_of
from volcanic.real.manifests.webhooks import DEFAULT_ADMISSIONS
from volcanic.real.registrations import register, unregister
from volcanic.real.serving import Health

GATE = "scheduling.volcano.sh/queue-allocation-gate"


# --- Item 11: where `up` listens --------------------------------------------------------------

@pytest.mark.parametrize("url, listen", [
    ("https://127.0.0.1:9443", "127.0.0.1:9443"),
    ("https://127.0.0.1", "127.0.0.1:8443"),
    ("https://localhost:9000/", "127.0.0.1:9000"),
    ("https://192.168.1.7:8443", "192.168.1.7:8443"),
    ("https://host.docker.internal:8443", "0.0.0.0:8443"),  # a name may reach this machine on any address
    (None, "0.0.0.0:8443"),                                  # in a pod, behind the Service
])
def test_up_listens_where_its_url_says(url, listen):
    """Item 11: `--webhook-url https://127.0.0.1:...` keeps the webhook on this machine (it
    used to listen on 0.0.0.0 whatever the URL)."""
    assert webhook_listen(url) == listen


@pytest.mark.parametrize("url", ["https://[::1]:8443", "https://127.0.0.1:99999"])
def test_up_refuses_a_url_it_cannot_listen_on(url):
    with pytest.raises(ConfigError, match="--webhook-url"):
        webhook_listen(url)


# --- Item 11: a clean stop undoes what was registered -------------------------------------------

def _process() -> Process:
    return Process(client=None, health=Health(), registry=None)


def test_clean_stop_runs_each_components_clean_up():
    """Asked to stop (SIGTERM/SIGINT set the event), with every component ended cleanly, the
    process runs each component's on_clean_stop and exits 0."""
    stop, cleaned = threading.Event(), []
    c = Component("webhook", None, lambda s: s.wait(), on_clean_stop=lambda: cleaned.append("webhook"))
    threading.Timer(0.2, stop.set).start()
    assert _process().run([c, Component("other", None, lambda s: s.wait())], stop) == 0
    assert cleaned == ["webhook"]


def test_no_clean_up_after_a_failure():
    """A component that fails (or a lost Lease) ends the process non-zero; Kubernetes restarts
    it and the new process takes over the registrations, so nothing is undone."""
    stop, cleaned = threading.Event(), []

    def crash(_):
        raise RuntimeError("boom")
    c = Component("webhook", None, lambda s: s.wait(), on_clean_stop=lambda: cleaned.append("webhook"))
    assert _process().run([c, Component("scheduler", None, crash)], stop) == 1
    assert cleaned == []


def test_a_failing_clean_up_is_reported_and_exits_non_zero():
    stop = threading.Event()
    stop.set()

    def fail():
        raise Conflict("x", "", "y", "changed")
    assert _process().run([Component("webhook", None, lambda s: None, on_clean_stop=fail)], stop) == 1


class RecordingClient:
    """Webhook configurations by REST path, with server-side apply (PATCH), GET and DELETE with
    a resourceVersion precondition, as the API server answers them."""

    def __init__(self):
        self.objects, self.version, self.deleted = {}, 0, []

    def request(self, method, path, body=None, query=None, content_type=None):
        if method == "PATCH":
            self.version += 1
            self.objects[path] = dict(body, metadata=dict(body["metadata"], resourceVersion=str(self.version)))
            return self.objects[path]
        if path not in self.objects:
            raise NotFound("", "", path, "not found")
        if method == "GET":
            return self.objects[path]
        assert method == "DELETE"
        want = ((body or {}).get("preconditions") or {}).get("resourceVersion")
        if want is not None and want != self.objects[path]["metadata"]["resourceVersion"]:
            raise Conflict("", "", path, "Precondition failed")
        self.deleted.append(path)
        return self.objects.pop(path)


def test_unregister_removes_what_still_calls_this_webhook():
    """Item 11: what `up` registered is deleted when it stops; a configuration another webhook
    has registered since (another CA bundle or URL) is that webhook's and stays, and one
    already gone is no error."""
    client = RecordingClient()
    mine = register(client, b"my-ca", "https://127.0.0.1:8443")
    assert len(client.objects) == len(DEFAULT_ADMISSIONS)
    theirs = register(client, b"their-ca", "https://10.0.0.9:8443", paths=("/jobs/validate",))
    del client.objects[path_of(next(o for o in mine if o["metadata"]["name"].endswith("-queues-mutate")))]
    removed = unregister(client, mine)
    assert sorted(removed) == sorted(o["metadata"]["name"] for o in mine
                                     if not o["metadata"]["name"].endswith(("-jobs-validate", "-queues-mutate")))
    assert list(client.objects) == [path_of(theirs[0])]


def test_unregister_keeps_a_configuration_changed_while_it_looked():
    """The DELETE carries the resourceVersion read: a re-registration between the read and the
    delete (a Conflict) keeps the new one."""
    client = RecordingClient()
    mine = register(client, b"my-ca", "https://127.0.0.1:8443", paths=("/jobs/mutate",))
    get = client.request

    def racing(method, path, body=None, **kw):
        answer = get(method, path, body, **kw)
        if method == "GET":  # someone applies the same configuration again: a new version
            client.request("PATCH", path, mine[0])
        return answer
    client.request = racing
    assert unregister(client, mine) == []
    assert path_of(mine[0]) in client.objects


# --- Item 12: --feature-gates -------------------------------------------------------------------

def parse(*argv):
    return build_parser().parse_args(list(argv))


def test_feature_gates_flag_takes_volcanos_syntax():
    """`Name=true,Other=false` as Kubernetes' component-base reads it (spaces and empty items
    ignored, Go's boolean spellings); unset gates keep Volcano's defaults."""
    args = parse("webhook", "--feature-gates", " SchedulingGatesQueueAdmission = True,,PriorityClass=0")
    gates = admission_conf(args).feature_gates
    assert "SchedulingGatesQueueAdmission" in gates and "PriorityClass" not in gates
    assert "WorkLoadSupport" in gates and "CSIStorage" not in gates  # defaults: on and off
    assert "SchedulingGatesQueueAdmission" not in admission_conf(parse("webhook")).feature_gates
    up = parse("up", "--feature-gates", "SchedulingGatesQueueAdmission=true")
    assert "SchedulingGatesQueueAdmission" in admission_conf(up).feature_gates


@pytest.mark.parametrize("text, message", [
    ("QueueAllocationGate=true", "unrecognized feature gate: QueueAllocationGate (known: WorkLoadSupport"),
    ("SchedulingGatesQueueAdmission", "missing bool value for SchedulingGatesQueueAdmission"),
    ("SchedulingGatesQueueAdmission=yes", "invalid value of SchedulingGatesQueueAdmission=yes"),
])
def test_feature_gates_flag_refuses_what_volcano_refuses(capsys, text, message):
    with pytest.raises(SystemExit) as e:
        parse("webhook", "--feature-gates", text)
    assert e.value.code == 2
    assert f"argument --feature-gates: {message}" in capsys.readouterr().err


def test_the_gate_registers_the_pod_mutation_that_applies_it():
    """With SchedulingGatesQueueAdmission on, `up` and `webhook --register` also register
    /pods/mutate (without it the gate would never reach a pod); --enabled-admission wins."""
    assert _admissions(parse("up")) == DEFAULT_ADMISSIONS
    assert _admissions(parse("up", "--feature-gates", "SchedulingGatesQueueAdmission=true")) == \
        (*DEFAULT_ADMISSIONS, "/pods/mutate")
    assert _admissions(parse("webhook", "--feature-gates", "SchedulingGatesQueueAdmission=true",
                             "--enabled-admission", "/jobs/validate")) == ("/jobs/validate",)


def _mutate_pod(tmp_path, *flags):
    """A pod opting in to the queue-allocation gate, through `volcanic webhook FLAGS`."""
    cert, key = make_cert(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "volcanic.cli.main", "webhook", "--listen", "127.0.0.1:0",
                             "--tls-cert", cert, "--tls-key", key, *flags], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("serving https://127.0.0.1:"), line
        c = http.client.HTTPSConnection("127.0.0.1", int(line.rsplit(":", 1)[1]),
                                        context=ssl.create_default_context(cafile=cert), timeout=10)
        status, _, data = post(c, "/pods/mutate", review(pod(scheduler="volcano", annotations={GATE: "true"})))
        c.close()
        assert status == 200
        return json.loads(data)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_webhook_command_adds_the_queue_allocation_gate_when_switched_on(tmp_path):
    """Item 12 (mutate_pod.go patchSchedulingGates): `volcanic webhook --feature-gates
    SchedulingGatesQueueAdmission=true` gives a pod annotated
    scheduling.volcano.sh/queue-allocation-gate: "true" that scheduling gate; without the
    flag (Volcano's default) the pod is left alone."""
    on = _mutate_pod(tmp_path, "--feature-gates", "SchedulingGatesQueueAdmission=true")
    assert on["response"]["allowed"]
    assert {"op": "add", "path": "/spec/schedulingGates", "value": [{"name": GATE}]} in patch_of(on)
    off = _mutate_pod(tmp_path)
    assert off["response"]["allowed"] and not patch_of(off)
