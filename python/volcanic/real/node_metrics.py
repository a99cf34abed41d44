"""The monitoring systems Volcano's scheduler reads node load from (pkg/scheduler/metrics/source,
v1.15.1), asked as it asks them, with the standard library's HTTP client:

- prometheus: two instant queries per node at `address`/api/v1/query, Volcano's PromQL (CPU
  busy percent from node_cpu_seconds_total, memory from node_memory_MemAvailable_bytes /
  MemTotal_bytes, each averaged over 10m in 30s steps, the node's name as `instance`); the
  first sample of a vector answer is taken; a query without data leaves that load at 0;
- prometheus_adaptor: the custom metrics API through the API server,
  node_cpu_usage_avg and node_memory_usage_avg for every node (fractions, times 100), each
  stamped with the sample's own time;
- elasticsearch: one search per node in `elasticsearch.index` (default metricbeat-*) for the
  last 10m of documents whose `elasticsearch.hostnameFieldName` (default host.hostname) is the
  node, averaging host.cpu.usage and system.memory.actual.used.pct (fractions, times 100),
  with basic auth when a username is set.

`tls.insecureSkipVerify: "true"` turns certificate checks off (Volcano warns; so do we). An
HTTP error fails the whole ask, as in Volcano, and the scheduler keeps the loads it had.
"""

from __future__ import annotations

import base64
import json
import logging
import ssl
from typing import Any
import urllib.parse
import urllib.request

from volcanic.kube.clock import seconds_of
from volcanic.kube.quantity import parse_quantity
from volcanic.scheduler.node_metrics import MetricsConf, NodeLoad, Source

log = logging.getLogger(__name__)

PERIOD = "10m"  # Volcano's NODE_METRICS_PERIOD
TIMEOUT = 60.0  # Volcano's context deadline for one ask
MAX_BODY = 1 << 20
_CPU_QUERY = ('avg_over_time(clamp_min(100 - (avg by (instance) (rate(node_cpu_seconds_total{{mode="idle",'
              'instance="{node}"}}[5m])) * 100), 0)[{period}:30s])')
_MEMORY_QUERY = ('100*avg_over_time(((1-node_memory_MemAvailable_bytes{{instance="{node}"}}/'
                 'node_memory_MemTotal_bytes{{instance="{node}"}}))[{period}:30s])')
CUSTOM_METRICS = "/apis/custom.metrics.k8s.io/v1beta1/nodes/%2A/"


def remote_source(conf: MetricsConf, client: Any, now: Any) -> Source:
    """The source the configuration names; `client` is the API server's (for the adaptor),
    `now()` the clock."""
    if conf.type == "prometheus":
        return PrometheusSource(conf, now)
    if conf.type == "elasticsearch":
        return ElasticsearchSource(conf, now)
    return PrometheusAdaptorSource(client)


def _tls(conf: MetricsConf) -> ssl.SSLContext | None:
    if conf.get("tls.insecureSkipVerify") != "true":
        return None
    log.warning("WARNING: TLS certificate verification is disabled for the metrics source; "
                "do not use this in production")
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def _fetch(request: urllib.request.Request, context: ssl.SSLContext | None) -> Any:
    with urllib.request.urlopen(request, timeout=TIMEOUT, context=context) as answer:
        return json.loads(answer.read(MAX_BODY))


class PrometheusSource:
    remote = True

    def __init__(self, conf: MetricsConf, now: Any) -> None:
        self.address, self.now, self.context = conf.get("address").rstrip("/"), now, _tls(conf)

    def collect(self, nodes: list[str]) -> dict[str, NodeLoad]:
        return {node: NodeLoad(self._query(_CPU_QUERY, node), self._query(_MEMORY_QUERY, node), self.now())
                for node in nodes}

    def _query(self, template: str, node: str) -> float:
        query = template.format(node=node, period=PERIOD)
        url = f"{self.address}/api/v1/query?" + urllib.parse.urlencode({"query": query, "time": f"{self.now():.3f}"})
        answer = _fetch(urllib.request.Request(url), self.context)
        data = answer.get("data") or {}
        result = data.get("result") or []
        if data.get("resultType") != "vector" or not result:
            log.warning("Warning querying Prometheus: no data found for %s", query)
            return 0.0
        return float(result[0]["value"][1])


class ElasticsearchSource:
    remote = True

    def __init__(self, conf: MetricsConf, now: Any) -> None:
        self.address, self.now, self.context = conf.get("address").rstrip("/"), now, _tls(conf)
        self.index = conf.get("elasticsearch.index", "metricbeat-*")
        self.host_field = conf.get("elasticsearch.hostnameFieldName", "host.hostname")
        self.headers = {"Content-Type": "application/json"}
        if conf.get("elasticsearch.username"):
            pair = f"{conf.get('elasticsearch.username')}:{conf.get('elasticsearch.password')}"
            self.headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()

    def collect(self, nodes: list[str]) -> dict[str, NodeLoad]:
        return {node: self._node(node) for node in nodes}

    def _node(self, node: str) -> NodeLoad:
        query = {"size": 0,
                 "query": {"bool": {"must": [{"range": {"@timestamp": {"gte": f"now-{PERIOD}", "lt": "now"}}},
                                             {"term": {self.host_field: node}}]}},
                 "aggs": {"cpu": {"avg": {"field": "host.cpu.usage"}},
                          "mem": {"avg": {"field": "system.memory.actual.used.pct"}}}}
        url = f"{self.address}/{urllib.parse.quote(self.index)}/_search"
        request = urllib.request.Request(url, json.dumps(query).encode(), self.headers, method="POST")
        aggs = _fetch(request, self.context).get("aggregations") or {}
        # No document: the average is null, which Volcano reads as 0.
        value = lambda name: float((aggs.get(name) or {}).get("value") or 0.0) * 100
        return NodeLoad(value("cpu"), value("mem"), self.now())


class PrometheusAdaptorSource:
    remote = True

    def __init__(self, client: Any) -> None:
        self.client = client

    def collect(self, nodes: list[str]) -> dict[str, NodeLoad]:
        wanted = set(nodes)
        found: dict[str, dict[str, float]] = {}
        for metric, field in (("node_cpu_usage_avg", "cpu"), ("node_memory_usage_avg", "memory")):
            for item in self.client.request("GET", CUSTOM_METRICS + metric).get("items") or []:
                node = (item.get("describedObject") or {}).get("name")
                if node not in wanted:
                    continue  # Volcano warns: the scheduler does not have that node
                got = found.setdefault(node, {"cpu": 0.0, "memory": 0.0, "time": 0.0})
                got[field] = float(parse_quantity(item.get("value"), f"{metric} of node {node}")[0]) * 100
                got["time"] = seconds_of(item.get("timestamp")) or 0.0
        return {node: NodeLoad(v["cpu"], v["memory"], v["time"]) for node, v in found.items()}
