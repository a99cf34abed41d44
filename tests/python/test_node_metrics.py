"""Node load end to end (docs/scheduler.md, "Node metrics"): the configuration's `metrics:`
section, the embedded cluster's simulated kubelets as the source, the usage plugin placing by
it and the rescheduling plugin moving pods off a hot node through shuffle; and the remote
sources (Volcano v1.15.1 pkg/scheduler/metrics/source) against local stand-ins of
Prometheus, Elasticsearch and the custom metrics API."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import threading
from urllib.parse import parse_qs, urlparse

import pytest

import volcanic
from volcanic.real.node_metrics import ElasticsearchSource, PrometheusAdaptorSource, PrometheusSource
from volcanic.scheduler.node_metrics import MetricsConf

METRICS = {"type": "prometheus", "address": "http://prometheus.example:9090", "interval": "30s"}


def node(name, cpu="4", annotations=None):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "annotations": annotations or {}},
            "status": {"capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                       "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def job(name, replicas, min_available=1):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
            "spec": {"minAvailable": min_available, "schedulerName": "volcano", "tasks": [
                {"name": "worker", "replicas": replicas, "template": {"spec": {
                    "restartPolicy": "Never", "containers": [
                        {"name": "main", "image": "busybox",
                         "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}}]}}


def placement(c, job_name):
    return sorted(p["spec"].get("nodeName") for p in c.list("Pod", "default")
                  if p["metadata"]["labels"].get("volcano.sh/job-name") == job_name
                  and p["status"].get("phase") == "Running")


def conf(*plugins, actions="enqueue, allocate, backfill", metrics=METRICS):
    return {"actions": actions,
            "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}, {"name": "conformance"}]},
                      {"plugins": [{"name": "drf"}, {"name": "predicates"}, {"name": "proportion"},
                                   {"name": "nodeorder"}]},
                      {"plugins": list(plugins)}],
            **({"metrics": metrics} if metrics else {})}


def test_the_usage_plugin_keeps_pods_off_a_node_the_kubelets_measure_as_loaded():
    # busy: 3.5 of its 4 CPUs used by things outside its pods (87.5%), over usage's 80%.
    c = volcanic.Cluster(conf=conf({"name": "usage"}))
    c.apply([node("busy", annotations={"volcanic/sim-cpu-usage": "3500m"}), node("quiet")])
    c.run(1)  # the first ask, as the scheduler starts
    load = c.scheduler.node_loads
    assert (load["busy"].cpu, load["busy"].time) == (pytest.approx(87.5), c.started)
    c.apply(job("j", 3))
    c.run(5)
    assert placement(c, "j") == ["quiet"] * 3
    assert c.scheduler.node_loads["quiet"].cpu == 0.0  # measured before the pods came; the next ask is at 30 s
    c.run(30)
    assert c.scheduler.node_loads["quiet"].cpu == pytest.approx(75.0)  # three 1-CPU pods
    assert c.scheduler.node_loads["quiet"].memory == pytest.approx(37.5)
    assert c.errors == []


def test_without_a_metrics_type_nothing_is_measured_and_usage_sees_no_load():
    c = volcanic.Cluster(conf=conf({"name": "usage"}, metrics=None))
    c.apply([node("busy", annotations={"volcanic/sim-cpu-usage": "3500m"})])
    c.apply(job("j", 2))
    c.run(5)
    assert placement(c, "j") == ["busy", "busy"]
    assert c.scheduler.node_loads == {}


def test_rescheduling_moves_pods_from_a_hot_node_to_a_cold_one():
    rescheduling = {"name": "rescheduling", "arguments": {
        "interval": "1m", "metricsPeriod": "10m",
        "strategies": [{"name": "lowNodeUtilization", "params": {
            "thresholds": {"cpu": 20, "memory": 20}, "targetThresholds": {"cpu": 50, "memory": 60}}}]}}
    c = volcanic.Cluster(conf=conf(rescheduling, {"name": "usage"}, actions="enqueue, allocate, backfill, shuffle"))
    c.apply([node("hot")])
    c.apply(job("j", 4))
    c.run(5)
    assert placement(c, "j") == ["hot"] * 4
    c.apply([node("cold")])
    # hot is at 100% CPU (four 1-CPU pods), over its 50% target; cold's room up to its target
    # is 2000m, which two pods use up exactly: two move. The job controller makes them again
    # and usage keeps them off hot, which its kubelet still reports loaded.
    c.run(120)
    assert placement(c, "j") == ["cold", "cold", "hot", "hot"]
    assert c.errors == []


@pytest.mark.parametrize("section, message", [
    ({"type": "graphite", "address": "x"}, 'metrics.type: "graphite" is not a monitoring system'),
    ({"type": "prometheus"}, "metrics.address: required for type prometheus"),
    ({"type": "prometheus", "address": "x", "interval": "soon"}, "metrics.interval"),
    ({"type": "prometheus", "address": "x", "port": "9090"}, 'metrics: unknown key "port"'),
    ({"type": "prometheus", "address": 9090}, "metrics.address: must be text"),
])
def test_a_bad_metrics_section_is_refused_naming_the_key(section, message):
    with pytest.raises(volcanic.ConfigError, match=message):
        volcanic.Cluster(conf=conf({"name": "usage"}, metrics=section))


def test_the_metrics_section_defaults_as_volcano():
    parsed = MetricsConf.parse({"metrics": {"type": "prometheus_adaptor", "interval": "0s"}})
    assert parsed is not None and parsed.interval == 30.0  # <= 0: Volcano's default
    assert MetricsConf.parse({"metrics": {"address": "http://x"}}) is None  # no type: nothing collected


class _Server:
    """A local HTTP server answering each request with `answer(method, path, query, body)`."""

    def __init__(self, answer):
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self):
                url = urlparse(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                outer.requests.append((self.command, url.path, parse_qs(url.query), body, dict(self.headers)))
                status, payload = answer(self.command, url.path, parse_qs(url.query), body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _serve

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.address = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self):
        self.httpd.shutdown()


def test_prometheus_is_asked_volcanos_queries_per_node_and_the_first_sample_is_taken():
    def answer(method, path, query, body):
        q = query["query"][0]
        if 'instance="empty"' in q:
            return 200, {"status": "success", "data": {"resultType": "vector", "result": []}}
        value = "42.5" if "node_cpu_seconds_total" in q else "61"
        return 200, {"status": "success", "data": {"resultType": "vector", "result": [
            {"metric": {"instance": "n1"}, "value": [1700000000, value]},
            {"metric": {"instance": "other"}, "value": [1700000000, "1"]}]}}

    server = _Server(answer)
    try:
        source = PrometheusSource(MetricsConf("prometheus", 30, {"address": server.address + "/"}), lambda: 1700000000.0)
        loads = source.collect(["n1", "empty"])
    finally:
        server.close()
    assert (loads["n1"].cpu, loads["n1"].memory, loads["n1"].time) == (42.5, 61.0, 1700000000.0)
    assert (loads["empty"].cpu, loads["empty"].memory) == (0.0, 0.0)  # no data: the load stays 0
    paths = {r[1] for r in server.requests}
    assert paths == {"/api/v1/query"}
    cpu_query = server.requests[0][2]["query"][0]
    assert cpu_query == ('avg_over_time(clamp_min(100 - (avg by (instance) (rate(node_cpu_seconds_total{mode="idle",'
                         'instance="n1"}[5m])) * 100), 0)[10m:30s])')


def test_elasticsearch_is_searched_per_node_with_volcanos_aggregation_and_basic_auth():
    def answer(method, path, query, body):
        host = body["query"]["bool"]["must"][1]["term"]["host.name"]
        if host == "n2":
            return 200, {"aggregations": {"cpu": {"value": None}, "mem": {"value": None}}}
        return 200, {"aggregations": {"cpu": {"value": 0.25}, "mem": {"value": 0.5}}}

    server = _Server(answer)
    fields = {"address": server.address, "elasticsearch.index": "beats", "elasticsearch.hostnameFieldName": "host.name",
              "elasticsearch.username": "u", "elasticsearch.password": "p"}
    try:
        loads = ElasticsearchSource(MetricsConf("elasticsearch", 30, fields), lambda: 5.0).collect(["n1", "n2"])
    finally:
        server.close()
    assert (loads["n1"].cpu, loads["n1"].memory) == (25.0, 50.0)
    assert (loads["n2"].cpu, loads["n2"].memory) == (0.0, 0.0)
    method, path, _, body, headers = server.requests[0]
    assert (method, path) == ("POST", "/beats/_search")
    assert body["query"]["bool"]["must"][0] == {"range": {"@timestamp": {"gte": "now-10m", "lt": "now"}}}
    assert headers["Authorization"] == "Basic dTpw"


def test_the_prometheus_adaptor_is_read_through_the_custom_metrics_api():
    class Client:
        def request(self, method, path):
            assert method == "GET" and path.startswith("/apis/custom.metrics.k8s.io/v1beta1/nodes/%2A/")
            value = "350m" if path.endswith("node_cpu_usage_avg") else "0.5"
            return {"items": [
                {"describedObject": {"kind": "Node", "name": "n1"}, "timestamp": "2024-01-01T00:00:10Z", "value": value},
                {"describedObject": {"kind": "Node", "name": "unknown"}, "timestamp": "2024-01-01T00:00:10Z",
                 "value": "1"}]}

    loads = PrometheusAdaptorSource(Client()).collect(["n1"])
    assert loads.keys() == {"n1"}
    assert (loads["n1"].cpu, loads["n1"].memory, loads["n1"].time) == (pytest.approx(35.0), 50.0, 1704067210.0)
