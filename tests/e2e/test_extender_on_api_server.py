"""The extender plugin on a real API server (docs/extender.md): the scheduler of `volcanic up`,
given a configuration naming the extender, asks an HTTP service this test runs; the service's
predicate turns a node away and its prioritize picks among the others, and a Volcano Job's
pods go where it said."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import threading

import yaml

from test_volcano_jobs import _stuck, pods_of, vcjob
from volcanic.real.devcluster.cluster import kwok_node
from volcanic.real.manifests.deployments import DEFAULT_CONF

NODES = [f"ext-node-{i}" for i in range(3)]
LABEL = "extender-e2e"


class Extender:
    """Rejects ext-node-0 and scores ext-node-2 far above the rest; records what it is asked."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []
        ext = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                verb = self.path.strip("/")
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                ext.calls.append((verb, request))
                if verb == "filter":
                    answer = {"status": "kept for something else", "code": 2} \
                        if request["node"]["Name"] == NODES[0] else {}
                else:
                    answer = {"nodeScore": {n["Name"]: 10000 if n["Name"] == NODES[2] else 0
                                            for n in request["nodes"]}}
                body = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def extender_conf(url: str) -> str:
    conf = yaml.safe_load(DEFAULT_CONF)
    conf["tiers"][1]["plugins"].append({"name": "extender", "arguments": {
        "extender.urlPrefix": url, "extender.predicateVerb": "filter", "extender.prioritizeVerb": "prioritize",
        "extender.httpTimeout": "2s"}})
    return yaml.safe_dump(conf)


def test_the_extenders_predicate_and_scores_place_a_volcano_job(env, up, namespace):
    conf = up.conf.read_text()
    ext = Extender()
    try:
        for name in NODES:
            n = kwok_node(name, cpu="4", memory="8Gi")
            n["metadata"]["labels"][LABEL] = "yes"
            env.apply(n)
        reloads = up.proc.log_path.read_text(errors="replace").count("reloaded")
        up.conf.write_text(extender_conf(ext.url))
        assert env.wait(lambda: up.proc.log_path.read_text(errors="replace").count("reloaded") > reloads)

        job = vcjob("placed", 2, cpu="1", duration=None)
        job["spec"]["tasks"][0]["template"]["spec"]["nodeSelector"] = {LABEL: "yes"}
        env.apply(job, namespace=namespace)
        running = lambda: [p for p in pods_of(env, "placed", namespace)
                           if (p.get("status") or {}).get("phase") == "Running"]
        assert env.wait(lambda: len(running()) == 2, timeout=90), _stuck(env, up, ["placed"], namespace)
        assert {p["spec"]["nodeName"] for p in running()} == {NODES[2]}

        asked = [(verb, r) for verb, r in ext.calls if r["task"]["Namespace"] == namespace]
        assert {r["node"]["Name"] for verb, r in asked if verb == "filter"} >= set(NODES)
        scored = [r for verb, r in asked if verb == "prioritize"]
        assert scored and all(NODES[0] not in {n["Name"] for n in r["nodes"]} for r in scored)
        assert all(r["task"]["Job"].startswith(f"{namespace}/placed") for _, r in asked)
    finally:
        up.conf.write_text(conf)
        env.kubectl("delete", "jobs.batch.volcano.sh", "--all", "-n", namespace, "--wait=false", check=False)
        env.kubectl("delete", "node", *NODES, check=False)
        ext.close()
