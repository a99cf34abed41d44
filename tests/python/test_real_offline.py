"""The real-cluster layer's parts that need no API server: kubeconfig discovery, the mapping
of API errors, the manifests, and informers over a re-listing watch."""

from __future__ import annotations

import base64
import copy
import socket
import threading
import time
import urllib.error
import urllib.request

from prometheus_client import CollectorRegistry
import pytest
import yaml

from volcanic.kube.errors import AdmissionError, AlreadyExists, Conflict, InvalidObject, NotFound, Unavailable
from volcanic.kube.informers import Handler, Informers
from volcanic.kube.kinds import kind_named
from volcanic.kube.store import Watch
from volcanic.real import serving
from volcanic.real.client import api_error, kubeconfig_path
from volcanic.real.devcluster import ports
from volcanic.real.manifests import render
from volcanic.real.manifests.accounts import RULES
from volcanic.real.manifests.definitions import crds
from volcanic.real.manifests.webhooks import DEFAULT_ADMISSIONS, WEBHOOKS, configurations
from volcanic.real.operator import _plain
from volcanic.real.store import KubeStore, Reflector
from volcanic.scheduler.engine import Decisions
from volcanic.scheduler.metrics import SchedulerMetrics


def test_kubeconfig_is_found_as_kubectl_finds_it(monkeypatch, tmp_path):
    home = tmp_path / "home"
    (home / ".kube").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    assert kubeconfig_path() is None  # nothing: in-cluster credentials
    (home / ".kube" / "config").write_text("{}")
    assert kubeconfig_path() == str(home / ".kube" / "config")
    monkeypatch.setenv("KUBECONFIG", "/env/config")
    assert kubeconfig_path() == "/env/config"
    assert kubeconfig_path("/flag/config") == "/flag/config"


def test_api_errors_map_to_store_errors():
    status = lambda code, reason, message: api_error(code, {"kind": "Status", "code": code, "reason": reason,
                                                            "message": message, "details": {"kind": "pods",
                                                                                            "name": "p"}}, "x")
    assert isinstance(status(404, "NotFound", 'pods "p" not found'), NotFound)
    assert isinstance(status(409, "AlreadyExists", "exists"), AlreadyExists)
    assert isinstance(status(409, "Conflict", "the object has been modified"), Conflict)
    assert isinstance(status(422, "Invalid", "spec.containers: Required value"), InvalidObject)
    assert isinstance(status(503, "ServiceUnavailable", "later"), Unavailable)
    assert isinstance(status(429, "TooManyRequests", "later"), Unavailable)
    denied = status(400, "BadRequest", 'admission webhook "validatejob.volcano.sh" denied the request: '
                                       "job 'minAvailable' must be >= 0.")
    assert isinstance(denied, AdmissionError) and str(denied) == "job 'minAvailable' must be >= 0."


def test_crds_carry_volcanos_names_scope_status_and_columns():
    by_kind = {c["spec"]["names"]["kind"]: c["spec"] for c in crds()}
    assert by_kind["Job"]["group"] == "batch.volcano.sh" and by_kind["Job"]["versions"][0]["name"] == "v1alpha1"
    assert by_kind["Command"]["group"] == "bus.volcano.sh"
    assert by_kind["PodGroup"]["names"]["plural"] == "podgroups" and by_kind["Queue"]["scope"] == "Cluster"
    for kind in ("Job", "Queue"):
        assert by_kind[kind]["versions"][0]["subresources"] == {"status": {}}
    # Volcano's PodGroup CRD has `subresources: {}` (config/crd/volcano/bases/
    # scheduling.volcano.sh_podgroups.yaml): its status is written with the object.
    assert "subresources" not in by_kind["PodGroup"]["versions"][0]
    columns = [c["name"] for c in by_kind["Job"]["versions"][0]["additionalPrinterColumns"]]
    assert columns == ["STATUS", "minAvailable", "RUNNINGS", "AGE", "QUEUE"]
    assert [c["jsonPath"] for c in by_kind["Queue"]["versions"][0]["additionalPrinterColumns"]] == [".spec.parent"]


def test_each_component_gets_only_what_it_uses():
    def verbs(component, resource):
        return {v for r in RULES[component] if resource in r["resources"] for v in r["verbs"]}
    assert verbs("scheduler", "pods/binding") == {"create"}
    assert "create" not in verbs("scheduler", "pods")
    # It writes PodGroup status with the object, as Volcano's scheduler role allows
    # (installer/helm/chart/volcano/templates/scheduler.yaml: podgroups list, watch, update).
    assert "update" in verbs("scheduler", "podgroups") and not {"create", "delete"} & verbs("scheduler", "podgroups")
    assert verbs("webhook", "jobs") == {"get", "list", "watch"}
    assert not verbs("webhook", "pods/binding") and not verbs("controller-manager", "pods/binding")


def test_print_is_yaml_a_user_can_pipe_to_kubectl():
    docs = list(yaml.safe_load_all(render(all_components=True)))
    assert docs[0] == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "volcano-system"}}
    assert [d["metadata"]["name"] for d in docs if d["kind"] == "Queue"] == ["root", "default"]
    conf = next(d for d in docs if d["kind"] == "ConfigMap")["data"]["volcano-scheduler.conf"]
    assert yaml.safe_load(conf)["actions"] == "enqueue, allocate, backfill"


class _Store:
    def __init__(self):
        self.w = Watch(["Pod"])

    def watch(self, kinds):
        return self.w


def _pod(name, rv):
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}}


def test_informers_follow_a_relist_replays_and_tombstones():
    """A reflector that lost its watch lists again: unchanged objects are not updates, and a
    tombstone (no resourceVersion) deletes with the last state cached."""
    store = _Store()
    inf = Informers(store, ["Pod"])
    seen = []
    inf.add_handler("Pod", Handler(on_add=lambda o: seen.append(("add", o["metadata"]["name"])),
                                   on_update=lambda a, b: seen.append(("update", b["metadata"]["name"])),
                                   on_delete=lambda o: seen.append(("delete", o["metadata"].get("resourceVersion")))))
    for obj in (_pod("a", "1"), _pod("b", "2")):
        store.w.offer("ADDED", obj)
    inf.pump()
    store.w.offer("ADDED", _pod("a", "1"))       # the re-list: a unchanged
    store.w.offer("ADDED", _pod("b", "5"))       # b changed meanwhile
    store.w.offer("DELETED", {"kind": "Pod", "metadata": {"name": "a", "namespace": "ns"}})  # tombstone
    store.w.offer("DELETED", {"kind": "Pod", "metadata": {"name": "zz", "namespace": "ns"}})  # never seen
    inf.pump()
    assert seen == [("add", "a"), ("add", "b"), ("update", "b"), ("delete", "1")]
    assert [p["metadata"]["name"] for p in inf.list("Pod")] == ["b"]


class _PagedClient:
    """An API server listing pods two pages of one; it notes what the watch held when the
    second page was asked for."""

    def __init__(self, watch):
        self.watch, self.held_at_second_page = watch, None

    def request(self, method, path, query=None, **_):
        if "continue" not in query:
            return {"metadata": {"continue": "c1", "resourceVersion": "5"}, "items": [_pod("a", "4")]}
        self.held_at_second_page = [o["metadata"]["name"] for _, o in self.watch.events]
        return {"metadata": {"resourceVersion": "6"}, "items": [_pod("b", "6")]}


def test_a_list_is_offered_page_by_page():
    """The cold-start benchmark (volcanic.bench.cold_start): 140,000 pods offered only once
    all were listed left the scheduler 100,000 objects to take in after the lists; each page
    goes to the watch as it comes, and the list's resourceVersion is the last page's."""
    watch = Watch(["Pod"])
    client = _PagedClient(watch)
    listed = []
    reflector = Reflector(KubeStore(client=client), kind_named("Pod"), watch, lambda: listed.append(True))
    reflector._relist()
    assert client.held_at_second_page == ["a"]
    assert [o["metadata"]["name"] for _, o in watch.drain()] == ["a", "b"]
    assert reflector.version == "6" and listed == [True]


def test_objects_are_kept_without_the_servers_managed_fields():
    """As kube-scheduler's and kube-controller-manager's informers keep them (real/store.py
    received): a watched or listed object, and one kopf hands over, lose metadata.managedFields
    and nothing else; kopf's own copy is left as it is."""
    managed = [{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:spec": {}}}]
    watch = Watch(["Pod"])
    reflector = Reflector(KubeStore(client=None), kind_named("Pod"), watch, None)
    pod = {"metadata": {"name": "p", "namespace": "ns", "resourceVersion": "7", "labels": {"a": "b"},
                        "managedFields": managed}, "spec": {"nodeName": "n1"}}
    assert reflector._event({"type": "ADDED", "object": pod})
    [(event, obj)] = watch.drain()
    assert (event, obj["kind"], obj["metadata"]) == ("ADDED", "Pod", {"name": "p", "namespace": "ns",
                                                                      "resourceVersion": "7", "labels": {"a": "b"}})
    assert obj["spec"] == {"nodeName": "n1"} and reflector.version == "7"
    body = {"metadata": {"name": "j", "namespace": "ns", "managedFields": managed}}
    job = _plain(body, kind_named("Job"))
    assert (job["kind"], job["metadata"]) == ("Job", {"name": "j", "namespace": "ns"})
    assert body["metadata"]["managedFields"] == managed


def test_a_watch_lingers_after_the_event_that_ends_its_wait():
    """Watch.wait(linger=...): a burst is taken in one pass, not one wake per event."""
    watch = Watch(["Pod"])
    started = time.monotonic()
    threading.Timer(0.05, lambda: [watch.offer("ADDED", {"kind": "Pod", "n": i}) for i in range(3)]).start()
    threading.Timer(0.1, lambda: watch.offer("ADDED", {"kind": "Pod", "n": 3})).start()
    assert watch.wait(timeout=5, linger=0.5)
    assert time.monotonic() - started >= 0.5
    assert [obj["n"] for _, obj in watch.drain()] == [0, 1, 2, 3]
    watch.wake()  # a wake without events still ends the wait, and returns False
    assert not watch.wait(timeout=5, linger=0.01)


def test_webhook_configurations_are_volcanos_and_never_block_foreign_pods():
    """Names, paths and policies of Volcano's chart (installer/helm/chart/volcano/templates/
    webhooks.yaml); the opt-in pod webhooks never block pods of other schedulers."""
    by_name = {c["metadata"]["name"]: c for c in configurations(b"CA", paths=tuple(WEBHOOKS))}
    assert set(by_name) == {"volcano-admission-service-" + p.strip("/").replace("/", "-") for p in WEBHOOKS}
    job = by_name["volcano-admission-service-jobs-validate"]
    assert job["kind"] == "ValidatingWebhookConfiguration"
    hook = job["webhooks"][0]
    assert hook["name"] == "validatejob.volcano.sh" and hook["failurePolicy"] == "Fail"
    assert hook["rules"][0]["operations"] == ["CREATE", "UPDATE"] and hook["sideEffects"] == "NoneOnDryRun"
    assert hook["clientConfig"]["service"] == {"name": "volcano-admission-service", "namespace": "volcano-system",
                                               "path": "/jobs/validate", "port": 443}
    assert base64.b64decode(hook["clientConfig"]["caBundle"]) == b"CA"
    assert hook["namespaceSelector"]["matchExpressions"][0]["values"] == ["volcano-system", "kube-system"]
    pods = by_name["volcano-admission-service-pods-validate"]["webhooks"][0]
    assert pods["matchConditions"][0]["expression"] == "object.spec.schedulerName in ['volcano']"
    assert by_name["volcano-admission-service-pods-mutate"]["webhooks"][0]["failurePolicy"] == "Ignore"
    assert by_name["volcano-admission-service-jobs-mutate"]["webhooks"][0]["reinvocationPolicy"] == "Never"
    default = configurations(b"CA", url="https://127.0.0.1:8443")
    assert len(default) == len(DEFAULT_ADMISSIONS) and not any("pods" in c["metadata"]["name"] for c in default)
    assert default[0]["webhooks"][0]["clientConfig"]["url"] == "https://127.0.0.1:8443/jobs/mutate"
    with pytest.raises(ValueError, match="--enabled-admission: unknown path"):
        configurations(b"CA", paths=("/gizmos/validate",))


def test_health_and_metrics_endpoints():
    registry, health = CollectorRegistry(), serving.Health()
    metrics = SchedulerMetrics(registry)
    metrics.observe(Decisions(binds={"ns/a": "n1", "ns/b": "n2"}, unschedulable={"ns/c": "no room"},
                              metrics={"queues": {"default": {"allocated": {"cpu": 1500, "memory": 2**30}}}}),
                    0.01, 1, 1)
    server = serving.serve("127.0.0.1:0", registry, health)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        text = urllib.request.urlopen(url + "/metrics").read().decode()
        assert 'volcano_schedule_attempts_total{result="scheduled"} 1.0' in text
        assert 'volcano_schedule_attempts_total{result="error"} 1.0' in text
        assert 'volcano_queue_allocated_milli_cpu{queue_name="default"} 1500.0' in text
        health.beat("scheduler")
        assert urllib.request.urlopen(url + "/healthz").read() == b"ok"
        health._beats["scheduler"] -= serving.STALE + 1  # its loop stopped beating
        try:
            urllib.request.urlopen(url + "/healthz")
            raise AssertionError("a stuck component must fail /healthz")
        except urllib.error.HTTPError as e:
            assert e.code == 503 and b"stuck: scheduler" in e.read()
    finally:
        server.shutdown()
        server.server_close()


def test_idle_clients_of_the_metrics_server_hold_no_thread_and_are_closed_at_the_deadline():
    """The old ThreadingHTTPServer gave each connection a thread that waited for a request
    line forever."""
    import socket
    import threading
    import time
    registry, health = CollectorRegistry(), serving.Health()
    server = serving.serve("127.0.0.1:0", registry, health, header_timeout=0.5)
    port = server.server_address[1]
    threads = threading.active_count()
    try:
        idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(100)]
        health.beat("scheduler")
        assert urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).read() == b"ok"
        assert threading.active_count() <= threads + 1  # at most the one worker that answered
        start = time.monotonic()
        assert all(s.recv(1) == b"" for s in idle)  # closed by the server
        assert time.monotonic() - start < 1.5
        for s in idle:
            s.close()
    finally:
        server.shutdown()
        server.server_close()


class FakeLeases:
    """An API server's Lease endpoint: create, get, and update with resourceVersion checks."""

    def __init__(self) -> None:
        self.lease: dict | None = None
        self.version = 0

    def request(self, method, path, body=None, query=None, timeout=None, **_):
        if method == "GET":
            if self.lease is None:
                raise NotFound("Lease", "volcano-system", "volcano", "not found")
            return copy.deepcopy(self.lease)
        if method == "POST" and self.lease is not None:
            raise AlreadyExists("Lease", "volcano-system", "volcano", "exists")
        if method == "PUT" and body["metadata"].get("resourceVersion") != str(self.version):
            raise Conflict("Lease", "volcano-system", "volcano", "the object has been modified")
        self.version += 1
        self.lease = copy.deepcopy(body)
        self.lease["metadata"]["resourceVersion"] = str(self.version)
        return copy.deepcopy(self.lease)


def test_leader_election_follows_client_gos_rules(monkeypatch):
    """One holder at a time; a candidate takes a Lease that stopped being renewed only a whole
    lease after it last saw it change, on its own clock; a released Lease is taken at once
    (volcanic.real.leader; client-go's tryAcquireOrRenew)."""
    from volcanic.real import leader
    clock = [1000.0]
    monkeypatch.setattr(leader.time, "monotonic", lambda: clock[0])
    api = FakeLeases()
    a = leader.LeaderElector(api, "volcano", identity="a")
    b = leader.LeaderElector(api, "volcano", identity="b")
    assert a._try() and not b._try()
    clock[0] += 10
    assert a._try() and not b._try()          # renewed: b saw it change
    clock[0] += 14
    assert not b._try()                        # 14 s since b saw the last renewal
    clock[0] += 2
    assert b._try() and api.lease["spec"]["holderIdentity"] == "b"
    assert api.lease["spec"]["leaseTransitions"] == 1
    assert not a._try()                        # a sees b's record change: b holds it
    b._release()
    assert a._try()                            # handed back: no waiting


def test_free_ports_stay_out_of_the_range_outgoing_connections_use(monkeypatch):
    """A port from the ephemeral range can be taken by a connection before its listener starts
    (a CI run's webhook failed with EADDRINUSE); free ports come from below that range and
    skip ports someone listens on."""
    low = ports._ephemeral_low()
    picked = ports.free_ports(5)
    assert len(set(picked)) == 5 and all(low - ports._SPAN <= p < low for p in picked)
    with socket.create_server(("127.0.0.1", picked[0])):
        monkeypatch.setattr(ports, "_ephemeral_low", lambda: picked[0] + 2)
        monkeypatch.setattr(ports, "_SPAN", 2)
        assert ports.free_ports(1) == [picked[0] + 1]
        with pytest.raises(OSError, match="no 2 free ports"):
            ports.free_ports(2)
    monkeypatch.setattr(ports, "_ephemeral_low", lambda: 1024)  # no room below: the kernel's choice
    assert len(set(ports.free_ports(3))) == 3


def test_the_webhook_reads_admission_conf_again_when_it_changes(tmp_path):
    """--admission-conf is watched, as Volcano's webhook-manager watches it (pkg/webhooks/
    config): a changed file's resource groups go to the next reviews; one that does not read
    keeps the running ones."""
    import os
    from types import SimpleNamespace

    from volcanic.real.webhook import WebhookDaemon
    path = tmp_path / "admission.conf"
    path.write_text("# nothing yet\n")
    daemon = WebhookDaemon(_Store(), tls=None, admission_conf=str(path), register=False)
    daemon.server = SimpleNamespace(chain=None)
    group = {"resourceGroup": "gpu", "object": {"key": "namespace", "value": ["ml"]}, "schedulerName": "volcano"}
    path.write_text(yaml.safe_dump({"resourceGroups": [group]}))
    os.utime(path, (1, 1))  # a new modification time, whatever the clock's resolution
    daemon.reload_conf()
    assert daemon.conf.resource_groups == (group,)
    assert daemon.server.chain is not None
    path.write_text("resourceGroups: {not: a list}\n")
    os.utime(path, (2, 2))
    daemon.reload_conf()
    assert daemon.conf.resource_groups == (group,)  # kept
