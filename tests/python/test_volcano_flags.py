"""`volcanic scheduler | controller-manager | webhook` take every flag of Volcano v1.15.1's
vc-scheduler, vc-controller-manager and vc-webhook-manager, spelled, typed and defaulted as
Volcano's and read as its Go binaries read them (spf13/pflag after component-base's
cliflag.InitFlags), so Volcano's Helm chart runs volcanic by changing only image and command.
Issue 35 "Production". Sources: cmd/scheduler/app/options/options.go,
cmd/controller-manager/app/options/options.go, pkg/controllers/sharding/config.go,
cmd/webhook-manager/app/options/options.go, cmd/*/main.go,
k8s.io/component-base/config/options/leaderelectionconfig.go, k8s.io/klog/v2 klog.go."""

from __future__ import annotations

import logging
import threading
import urllib.error
import urllib.request

import pytest

import volcanic
from volcanic.cli.main import parse_args
from volcanic.cli.volcano import DAEMON_HOOK_BUDGET, controller_enabled
from volcanic.kube.errors import NotFound
from volcanic.real.leader import LeaderElection
from volcanic.real.scheduler_view import EngineView, node_selector
from volcanic.real.serving import Endpoint, Health, serve

# The three Deployments' args of Volcano v1.15.1's chart
# (installer/helm/chart/volcano/templates/{scheduler,controllers,admission}.yaml) rendered with
# its values.yaml (release volcano in volcano-system): leader_elect_enable false, the
# scheduler's and controllers' metrics on, sharding_configmap_enable true, log levels 3/4/4.
CHART_SCHEDULER = [
    "--logtostderr", "--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf", "--enable-healthz=true",
    "--enable-metrics=true", "--leader-elect=false", "--kube-api-qps=2000", "--kube-api-burst=2000",
    "--schedule-period=1s", "--node-worker-threads=20", "-v=3", "2>&1"]
CHART_CONTROLLERS = [
    "--logtostderr", "--enable-healthz=true", "--enable-metrics=true", "--leader-elect=false", "--kube-api-qps=50",
    "--kube-api-burst=100", "--worker-threads=3", "--worker-threads-for-gc=5", "--worker-threads-for-podgroup=5",
    "--sharding-configmap=volcano-sharding-configmap", "--sharding-configmap-namespace=volcano-system", "-v=4",
    "2>&1"]
CHART_ADMISSION = [
    "--enabled-admission=/jobs/mutate,/jobs/validate,/podgroups/validate,/queues/mutate,/queues/validate,"
    "/hypernodes/validate,/cronjobs/validate",
    "--tls-cert-file=/admission.local.config/certificates/tls.crt",
    "--tls-private-key-file=/admission.local.config/certificates/tls.key",
    "--ca-cert-file=/admission.local.config/certificates/ca.crt",
    "--admission-conf=ADMISSION_CONF", "--webhook-namespace=volcano-system",
    "--webhook-service-name=volcano-admission-service", "--enable-healthz=true", "--logtostderr", "--port=8443",
    "-v=4", "2>&1"]
# The chart's optional args (values set), each still one of the flags below.
CHART_SCHEDULER_OPTIONAL = ["--scheduler-name=my-scheduler", "--enable-pprof=true",
                            "--leader-elect-resource-namespace=volcano-system", "--percentage-nodes-to-find=30",
                            "--plugins-dir=", "--feature-gates=SchedulingGatesQueueAdmission=true",
                            "--ignored-provisioners=rancher.io/local-path", "--scheduler-sharding-mode=soft"]
CHART_CONTROLLERS_OPTIONAL = ["--scheduler-name=my-scheduler", "--leader-elect-resource-namespace=volcano-system",
                              "--controllers=*,-sharding-controller"]

# Every flag, with a valid value other than its default where it has one: (name, value).
# Bools are (name, None). Sources as in the module docstring.
CLIENT = [("master", "https://10.0.0.1:6443"), ("kubeconfig", "KUBECONFIG"), ("ca-cert-file", "/c/ca.crt"),
          ("tls-cert-file", "/c/tls.crt"), ("tls-private-key-file", "/c/tls.key")]
LEADER = [("leader-elect", None), ("leader-elect-lease-duration", "30s"), ("leader-elect-renew-deadline", "12s"),
          ("leader-elect-retry-period", "4s"), ("leader-elect-resource-lock", "leases"),
          ("leader-elect-resource-name", "mine"), ("leader-elect-resource-namespace", "kube-system"),
          ("lock-object-namespace", "other")]
KLOG = [("v", "5"), ("logtostderr", None), ("alsologtostderr", None), ("log-dir", "/tmp"), ("log-file", "/tmp/x.log"),
        ("log-file-max-size", "100"), ("add-dir-header", None), ("skip-headers", None), ("skip-log-headers", None),
        ("one-output", None), ("stderrthreshold", "WARNING"), ("alsologtostderrthreshold", "ERROR"),
        ("legacy-stderr-threshold-behavior", None), ("vmodule", "foo=2,bar*=3"),
        ("log-backtrace-at", "server.go:42"), ("log-flush-frequency", "1s"),
        ("feature-gates", "SchedulingGatesQueueAdmission=true")]
SCHEDULER = CLIENT + LEADER + KLOG + [
    ("scheduler-name", "other"), ("scheduler-conf", "/etc/volcano-scheduler.conf"), ("schedule-period", "2s"),
    ("resync-period", "30s"), ("default-queue", "batch"), ("listen-address", ":9090"),
    ("healthz-address", "127.0.0.1:11252"), ("priority-class", None), ("kube-api-qps", "100"),
    ("kube-api-burst", "200"), ("minimum-feasible-nodes", "50"), ("minimum-percentage-nodes-to-find", "10"),
    ("percentage-nodes-to-find", "40"), ("plugins-dir", ""), ("csi-storage", None), ("enable-healthz", None),
    ("enable-metrics", None), ("enable-pprof", None), ("node-selector", "volcano.sh/role:train"),
    ("cache-dumper", None), ("cache-dump-dir", "/var/tmp"), ("node-worker-threads", "4"),
    ("gate-removal-worker-num", "2"), ("ignored-provisioners", "hostpath.csi.k8s.io"),
    ("resource-sync-timeout", "0s"), ("disable-default-scheduler-config", None),
    ("scheduler-sharding-mode", "hard"), ("scheduler-sharding-name", "shard-a")]
CONTROLLER_MANAGER = CLIENT + LEADER + KLOG + [
    ("kube-api-qps", "100"), ("kube-api-burst", "200"), ("worker-threads", "8"), ("worker-threads-for-cronjob", "2"),
    ("scheduler-name", "other"), ("max-requeue-num", "3"), ("healthz-address", ":11252"), ("enable-healthz", None),
    ("enable-metrics", None), ("listen-address", ":9091"), ("inherit-owner-annotations", None),
    ("worker-threads-for-podgroup", "2"), ("worker-threads-for-gc", "2"), ("worker-threads-for-queue", "2"),
    ("controllers", "-gc-controller"), ("scheduler-configs", "volcano:volcano:0.0:0.6:false:2:100"),
    ("shard-sync-period", "30s"), ("enable-node-event-trigger", None), ("sharding-configmap", "cm"),
    ("sharding-configmap-namespace", "ns")]
WEBHOOK = CLIENT + KLOG + [
    ("listen-address", "127.0.0.1"), ("port", "9443"), ("kube-api-qps", "100"), ("kube-api-burst", "200"),
    ("webhook-namespace", "volcano-system"), ("webhook-service-name", "svc"), ("webhook-url", "https://h:1"),
    ("enabled-admission", "/jobs/mutate"), ("scheduler-name", "other"), ("admission-conf", ""),
    ("enable-healthz", None), ("healthz-address", ":11252"), ("graceful-shutdown-time", "10s"),
    ("enable-queue-allocated-pods-check", None), ("max-queue-depth", "3"), ("enable-root-queue-protection", None)]
FLAGS = [("scheduler", f) for f in SCHEDULER] + [("controller-manager", f) for f in CONTROLLER_MANAGER] + \
    [("webhook", f) for f in WEBHOOK]


@pytest.fixture
def admission_conf(tmp_path):
    """The chart's config/volcano-admission.conf: every line a comment."""
    path = tmp_path / "volcano-admission.conf"
    path.write_text("#resourceGroups:\n#- resourceGroup: management\n")
    return str(path)


def test_the_charts_scheduler_args_reach_its_configuration():
    cfg = parse_args(["scheduler", *CHART_SCHEDULER]).config
    assert cfg.conf_path == "/volcano.scheduler/volcano-scheduler.conf"
    assert cfg.period == 1.0
    assert cfg.process.election is None                       # --leader-elect=false
    assert (cfg.process.qps, cfg.process.burst) == (2000.0, 2000)
    assert cfg.process.endpoints == [Endpoint(":8080", metrics=True, healthz=False),   # Volcano's listen-address
                                     Endpoint(":11251", metrics=False, healthz=True)]  # and healthz-address
    assert cfg.process.log_level == logging.INFO                # -v=3
    assert cfg.process.ignored == ["2>&1"]
    assert cfg.view.scheduler_names == ("volcano",)
    assert cfg.python_hook_budget == DAEMON_HOOK_BUDGET
    optional = parse_args(["scheduler", *CHART_SCHEDULER, *CHART_SCHEDULER_OPTIONAL]).config
    assert optional.view.scheduler_names == ("my-scheduler",)
    assert "SchedulingGatesQueueAdmission" in optional.feature_gates


def test_the_charts_controller_args_reach_its_configuration():
    cfg = parse_args(["controller-manager", *CHART_CONTROLLERS]).config
    assert cfg.process.election is None
    assert (cfg.process.qps, cfg.process.burst) == (50.0, 100)
    assert cfg.process.endpoints == [Endpoint(":8081", metrics=True, healthz=False),
                                     Endpoint(":11251", metrics=False, healthz=True)]
    assert cfg.process.log_level == logging.DEBUG                # -v=4
    assert cfg.running() == ["job-controller", "pg-controller", "queue-controller", "gc-controller",
                             "hyperNode-controller", "jobflow-controller", "jobtemplate-controller",
                             "cronjob-controller", "queuebinding-controller"]
    optional = parse_args(["controller-manager", *CHART_CONTROLLERS, *CHART_CONTROLLERS_OPTIONAL]).config
    assert optional.scheduler_names == ("my-scheduler",)


def test_the_charts_admission_args_reach_its_configuration(admission_conf):
    args = [a.replace("ADMISSION_CONF", admission_conf) for a in CHART_ADMISSION]
    cfg = parse_args(["webhook", *args]).config
    assert cfg.listen == "0.0.0.0:8443"
    assert cfg.tls == ("/admission.local.config/certificates/tls.crt", "/admission.local.config/certificates/tls.key")
    assert cfg.ca_cert == "/admission.local.config/certificates/ca.crt"
    assert cfg.fill_ca_bundle and not cfg.register             # the chart made the configurations
    assert cfg.paths[-2:] == ("/hypernodes/validate", "/cronjobs/validate")
    assert cfg.admission.resource_groups == ()
    # healthz over HTTPS with the certificates, as Volcano's StartHealthz
    assert cfg.process.endpoints == [Endpoint(":11251", metrics=False, healthz=True, tls=cfg.tls)]


@pytest.mark.parametrize("command,flag", FLAGS, ids=[f"{c}--{f[0]}" for c, f in FLAGS])
def test_every_volcano_flag_is_accepted(command, flag, tmp_path):
    name, value = flag
    value = str(tmp_path / "kubeconfig") if value == "KUBECONFIG" else value
    if value is None:
        forms = [[f"--{name}"], [f"--{name}=true"], [f"--{name}=false"]]
    else:
        forms = [[f"--{name}={value}"], [f"--{name}", value], [f"--{name.replace('-', '_')}={value}"]]
    for form in forms:
        args = parse_args([command, *form])
        assert name in args.given_flags


def test_defaults_are_volcanos():
    s = parse_args(["scheduler"]).config
    assert s.process.election == LeaderElection("volcano-system", None, 15.0, 10.0, 2.0)  # LeaderElectionDefault
    assert s.process.endpoints == [] and s.period == 1.0 and s.view == EngineView()
    c = parse_args(["controller-manager"]).config
    assert c.process.election == LeaderElection() and c.controllers == ["*", "-sharding-controller"]
    assert not parse_args(["up"]).config.process.election     # volcanic's own: off
    w = parse_args(["webhook"]).config
    assert w.listen == "0.0.0.0:8443" and w.admission.scheduler_names == ("volcano",)


def test_leader_election_flags():
    cfg = parse_args(["controller-manager", "--leader-elect", "--leader-elect-lease-duration=30s",
                      "--leader-elect-renew-deadline", "20s", "--leader-elect-retry-period=4s",
                      "--leader-elect-resource-name=mine", "--leader-elect-resource-namespace=ops"]).config
    assert cfg.process.election == LeaderElection("ops", "mine", 30.0, 20.0, 4.0)
    old = parse_args(["scheduler", "--lock-object-namespace=legacy", "--leader-elect-resource-namespace=ops"])
    assert old.config.process.election.namespace == "legacy"  # the deprecated flag wins, as in server.go
    assert parse_args(["scheduler", "--leader-elect=false"]).config.process.election is None
    assert parse_args(["scheduler", "--leader-elect=0"]).config.process.election is None


def test_repeated_scheduler_names_are_all_served():
    cfg = parse_args(["scheduler", "--scheduler-name=a", "--scheduler-name", "b,c"]).config
    assert cfg.view.scheduler_names == ("a", "b,c")  # a StringArray: commas are part of a name
    view = cfg.view
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}

    def pod(name: str, scheduler: str) -> dict:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns", "uid": name},
                "spec": {"schedulerName": scheduler, "containers": [{"name": "c", "resources": {
                    "requests": {"cpu": "1"}}}]}, "status": {"phase": "Pending"}}
    objects = [node, pod("pa", "a"), pod("pb", "b,c"), pod("pv", "volcano"), pod("po", "other")]
    shown = [view(o) for o in objects]
    d = volcanic.schedule([o for o in shown if o is not None], bare_pods_as_groups=True)
    assert set(d.binds) == {"ns/pa", "ns/pb"}          # volcano's and other's pods are not this scheduler's
    assert objects[1]["spec"]["schedulerName"] == "a"   # the cluster's object is untouched


def test_node_selector_as_volcano_reads_it():
    assert node_selector(["volcano.sh/role:train", " zone : a ", "bad", "empty:"]) == {
        "volcano.sh/role:train", "zone:a"}
    cfg = parse_args(["scheduler", "--node-selector=role:train,role:serve", "--node-selector", "zone:b"]).config
    view = cfg.view

    def node(labels: dict) -> dict:
        return {"kind": "Node", "metadata": {"name": "n", "labels": labels}}
    assert view(node({"role": "serve"})) is not None and view(node({"zone": "b", "x": "y"})) is not None
    assert view(node({"role": "other"})) is None and view(node({})) is None


def test_default_queue_and_priority_class():
    view = parse_args(["scheduler", "--default-queue=batch", "--priority-class=false"]).config.view
    pg = {"kind": "PodGroup", "metadata": {"name": "g", "namespace": "ns"}, "spec": {"minMember": 1}}
    assert view(pg)["spec"]["queue"] == "batch" and "queue" not in pg["spec"]
    assert view({"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 100}) is None
    gate_off = parse_args(["scheduler", "--feature-gates=PriorityClass=false"]).config.view
    assert not gate_off.priority_classes


def test_controllers_as_volcano_enables_them():
    enabled = controller_enabled(["-job-controller", "*"])
    assert not enabled("job-controller") and enabled("gc-controller")
    only = controller_enabled(["+queue-controller", "pg-controller"])
    assert only("queue-controller") and only("pg-controller") and not only("gc-controller")
    assert controller_enabled([])("job-controller")
    cfg = parse_args(["controller-manager", "--controllers=*,-gc-controller,-sharding-controller"]).config
    assert cfg.running() == ["job-controller", "pg-controller", "queue-controller", "hyperNode-controller",
                             "jobflow-controller", "jobtemplate-controller", "cronjob-controller",
                             "queuebinding-controller"]


def test_pflag_spellings():
    a = parse_args(["scheduler", "-v", "4", "--log_dir=/tmp", "--enable-metrics", "false", "--", "--x"])
    assert a.v == 4 and a.log_dir == "/tmp" and a.enable_metrics is True
    assert a.ignored_arguments == ["false", "--x"]             # a bool takes no separate value
    assert parse_args(["scheduler", "-v4"]).v == 4 and parse_args(["scheduler", "--v=2"]).v == 2
    assert parse_args(["scheduler", "--minimum-feasible-nodes=0x10"]).minimum_feasible_nodes == 16


@pytest.mark.parametrize("command,args,flag", [
    ("controller-manager", ["--leader-elect=maybe"], "--leader-elect"),
    ("scheduler", ["--schedule-period=soon"], "--schedule-period"),
    ("scheduler", ["--schedule-period=0s"], "--schedule-period"),
    ("scheduler", ["--minimum-feasible-nodes=many"], "--minimum-feasible-nodes"),
    ("scheduler", ["--percentage-nodes-to-find=4294967296"], "--percentage-nodes-to-find"),
    ("scheduler", ["--node-worker-threads=-1"], "--node-worker-threads"),
    ("scheduler", ["--scheduler-sharding-mode=odd"], "--scheduler-sharding-mode"),
    ("scheduler", ["--stderrthreshold=LOUD"], "--stderrthreshold"),
    ("scheduler", ["-v=high"], "--v"),
    ("scheduler", ["--enable-metrics", "--listen-address=8080"], "--listen-address"),
    ("scheduler", ["--leader-elect-renew-deadline=20s"], "--leader-elect-lease-duration"),
    ("scheduler", ["--leader-elect-retry-period=9s"], "--leader-elect-renew-deadline"),
    ("controller-manager", ["--leader-elect-resource-lock=endpoints"], "--leader-elect-resource-lock"),
    ("controller-manager", ["--worker-threads=1.5"], "--worker-threads"),
    ("controller-manager", ["--controllers=job-controller,-job-controller"], "--controllers"),
    ("webhook", ["--port=0"], "--port"),
    ("webhook", ["--graceful-shutdown-time=long"], "--graceful-shutdown-time"),
    ("webhook", ["--admission-conf=/no/such/file"], "--admission-conf"),
    ("webhook", ["--enabled-admission=/jobs/mutate,/nodes/validate"], "--enabled-admission"),
    ("webhook", ["--register", "--enabled-admission=/jobtemplates/validate"], "--enabled-admission"),
])
def test_bad_values_are_refused_naming_the_flag(command, args, flag, capsys):
    with pytest.raises(SystemExit) as e:
        parse_args([command, *args])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert flag in err and "Traceback" not in err


def test_inert_flags_are_logged_once_with_why(caplog, monkeypatch):
    from volcanic.cli.volcano import log_inert
    # import-linter's dictConfig (test_layers) disables the loggers that exist when it runs
    monkeypatch.setattr(logging.getLogger("volcanic"), "disabled", False)
    with caplog.at_level(logging.INFO, logger="volcanic"):
        log_inert(parse_args(["scheduler", "--percentage-nodes-to-find=40", "-v=3"]).given_flags, "scheduler")
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1 and messages[0].startswith("flag --percentage-nodes-to-find has no effect in volcanic:")


def test_endpoints_serve_what_they_are_for():
    """--listen-address serves /metrics only, --healthz-address /healthz only (Volcano's
    cmd/scheduler/app/server.go startMetricsServer, helpers.StartHealthz)."""
    from prometheus_client import CollectorRegistry
    health = Health()
    health.beat("scheduler")
    healthz = serve("127.0.0.1:0", CollectorRegistry(), health, metrics=False, healthz=True)
    metrics = serve("127.0.0.1:0", CollectorRegistry(), health, metrics=True, healthz=False)
    try:
        def status(server, path):
            try:
                return urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=5).status
            except urllib.error.HTTPError as e:
                return e.code
        assert (status(healthz, "/healthz"), status(healthz, "/metrics")) == (200, 404)
        assert (status(metrics, "/metrics"), status(metrics, "/healthz")) == (200, 404)
    finally:
        for s in (healthz, metrics):
            s.shutdown()
            s.server_close()


def test_the_ca_bundle_is_filled_into_the_charts_configurations():
    """Volcano's addCaCertForWebhook (cmd/webhook-manager/app/util.go): wait for each enabled
    path's configuration, then set every webhook's caBundle."""
    from volcanic.real.webhook import fill_ca_bundles
    configs = {"/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/"
               "volcano-admission-service-jobs-mutate": {"webhooks": [{"clientConfig": {}}, {"clientConfig": {}}]}}
    calls = []

    class Client:
        def request(self, method, path, body=None, **_):
            calls.append((method, path))
            if method == "PUT":
                configs[path] = body
                return body
            if path not in configs:
                configs[path] = {"webhooks": [{"clientConfig": {"caBundle": "old"}}]}  # appears later
                raise NotFound("", "", "", "not found")
            return configs[path]
    fill_ca_bundles(Client(), ("/jobs/mutate", "/queues/validate"), b"CA", threading.Event())
    assert all(w["clientConfig"]["caBundle"] == "Q0E=" for c in configs.values() for w in c["webhooks"])
    assert [m for m, _ in calls].count("GET") == 3  # the validating one was waited for once


def test_the_hook_budget_is_the_daemons_only():
    assert parse_args(["scheduler"]).config.python_hook_budget == DAEMON_HOOK_BUDGET
    assert parse_args(["scheduler", "--python-hook-budget=250ms"]).config.python_hook_budget == 0.25
    assert volcanic.Cluster().scheduler.python_hook_budget is None  # the embedded cluster keeps none


def test_paths_volcanic_has_no_rules_for_are_allowed(tmp_path):
    """A Volcano path of a kind volcanic has no rules for (/jobtemplates/validate), enabled with
    a configuration of failurePolicy Fail: volcanic allows its reviews instead of refusing the
    writes."""
    import json
    import ssl

    from volcanic.admission import volcano_chain
    from volcanic.httpd.tls import self_signed_cert, tls_context
    from volcanic.real.webhook import DaemonWebhookServer
    cert, key = self_signed_cert(str(tmp_path), ["127.0.0.1"])
    server = DaemonWebhookServer(("127.0.0.1", 0), tls_context(cert, key), volcano_chain(), None)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u1"}}
        request = urllib.request.Request(f"https://127.0.0.1:{server.port}/jobtemplates/validate",
                                         json.dumps(review).encode(), {"Content-Type": "application/json"})
        answer = json.load(urllib.request.urlopen(request, context=ssl._create_unverified_context(), timeout=5))
        assert answer["response"] == {"uid": "u1", "allowed": True}
    finally:
        server.shutdown()
        server.server_close()


def test_webhook_service_flags_name_what_the_configurations_call():
    """--webhook-service-name and --webhook-namespace (cmd/webhook-manager/app/options): the
    registered configurations call that Service and leave its namespace's objects out."""
    from volcanic.real.manifests.webhooks import configurations
    cfg = parse_args(["webhook", "--register", "--webhook-service-name=adm", "--webhook-namespace=ops"]).config
    assert cfg.service == ("adm", "ops")
    for obj in configurations(b"CA", paths=cfg.paths, service=cfg.service):
        hook = obj["webhooks"][0]
        assert hook["clientConfig"]["service"]["name"] == "adm"
        assert hook["clientConfig"]["service"]["namespace"] == "ops"
        assert hook["namespaceSelector"]["matchExpressions"][0]["values"] == ["ops", "kube-system"]
    assert parse_args(["webhook", "--register"]).config.service == ("volcano-admission-service", "volcano-system")
