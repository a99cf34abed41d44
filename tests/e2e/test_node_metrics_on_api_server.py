"""Node metrics on a real API server (docs/scheduler.md, Node metrics): the scheduler of `volcanic
up` with a configuration naming the usage plugin and a Prometheus (a stand-in the test runs,
answering Volcano's queries per node) keeps pods off the node Prometheus reports loaded."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import threading
from urllib.parse import parse_qs, urlparse

import yaml

from test_volcano_jobs import _stuck, pods_of, vcjob
from volcanic.real.devcluster.cluster import kwok_node

NODES = ("nm-busy", "nm-quiet")
LOAD = {"nm-busy": "95", "nm-quiet": "10"}  # cpu and memory percent


def prometheus(asked: list[str]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            query = parse_qs(urlparse(self.path).query)["query"][0]
            asked.append(query)
            node = next((n for n in NODES if f'instance="{n}"' in query), None)
            result = [{"metric": {"instance": node}, "value": [0, LOAD[node]]}] if node else []
            body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_usage_keeps_pods_off_the_node_prometheus_reports_loaded(env, up, namespace):
    conf = up.conf.read_text()
    asked: list[str] = []
    server = prometheus(asked)
    try:
        for name in NODES:
            n = kwok_node(name, cpu="4", memory="8Gi")
            n["metadata"]["labels"]["node-metrics"] = "yes"
            env.apply(n)
        usage_conf = yaml.safe_load(conf)
        usage_conf["tiers"].append({"plugins": [{"name": "usage"}]})
        usage_conf["metrics"] = {"type": "prometheus", "address": f"http://127.0.0.1:{server.server_address[1]}",
                                 "interval": "1s"}
        reloads = up.proc.log_path.read_text(errors="replace").count("reloaded")
        up.conf.write_text(yaml.safe_dump(usage_conf))
        assert env.wait(lambda: up.proc.log_path.read_text(errors="replace").count("reloaded") > reloads)
        # Two queries per node and ask: once the second ask has reached the last node, the
        # answer to the first is in the scheduler.
        assert env.wait(lambda: sum('instance="nm-quiet"' in q for q in asked) >= 4, timeout=30), asked

        job = vcjob("nm", 3, cpu="1", min_available=3, duration=None)
        job["spec"]["tasks"][0]["template"]["spec"]["nodeSelector"] = {"node-metrics": "yes"}
        env.apply(job, namespace=namespace)
        placed = lambda: [p["spec"].get("nodeName") for p in pods_of(env, "nm", namespace)
                          if p["spec"].get("nodeName")]
        assert env.wait(lambda: len(placed()) == 3, timeout=60), _stuck(env, up, ["nm"], namespace)
        assert placed() == ["nm-quiet"] * 3
    finally:
        server.shutdown()
        up.conf.write_text(conf)
        env.kubectl("delete", "jobs.batch.volcano.sh", "--all", "-n", namespace, "--wait=false", check=False)
        env.kubectl("delete", "node", *NODES, check=False)
