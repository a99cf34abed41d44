"""`volcanic bench --preset admission`: the HTTPS admission webhook under load.

It makes a self-signed certificate, starts `volcanic webhook` on loopback in a child
process (so that the clients do not share its interpreter lock) and sends JOBS typical
Volcano Jobs from CLIENTS threads, each over one persistent HTTPS connection: every job is
a mutate review (POST /jobs/mutate) and then a validate review of the patched job
(POST /jobs/validate), as the API server sends them. The job is a TensorFlow job of two
tasks (1 ps, 4 workers) with resources, ports, env, volume mounts, policies and plugins,
about 2.3 KB as a review, left for the mutator to default (queue, maxRetry, minAvailable...).

It reports reviews (HTTP requests) per second over the whole run and the latency of one
review as the client sees it (send, server, receive; the client's own JSON and patch work
is outside it), p50 and p99 in ms, overall and per path.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from volcanic.kube.keys import JOB_API_VERSION
from volcanic.kube.kinds import KINDS

# preset -> (jobs, client threads); every job is two reviews.
ADMISSION_PRESETS = {"admission": (2_000, 4)}


JOB = KINDS["Job"]


def typical_job(i: int) -> dict[str, Any]:
    """A Volcano TensorFlow Job of two tasks, as users write it (no defaults filled in)."""
    def task(name: str, replicas: int, port: int, cpu: str, memory: str) -> dict[str, Any]:
        return {"name": name, "replicas": replicas, "template": {
            "metadata": {"labels": {"app": "tf-mnist", "role": name}},
            "spec": {"restartPolicy": "OnFailure", "containers": [{
                "name": "tensorflow", "image": "volcanosh/dist-mnist-tf-example:0.0.1",
                "command": ["sh", "-c", "PS_HOST=`cat /etc/volcano/ps.host | sed 's/$/&:2222/g' | "
                            "sed 's/^/\"/;s/$/\"/' | tr \"\\n\" \",\"`; python /var/tf_dist_mnist/dist_mnist.py"],
                "ports": [{"containerPort": port, "name": "tfjob-port"}],
                "env": [{"name": "TF_ROLE", "value": name},
                        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                "resources": {"requests": {"cpu": cpu, "memory": memory},
                              "limits": {"cpu": cpu, "memory": memory}},
                "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
                "volumes": [{"name": "data", "emptyDir": {}}]}}}

    return {"apiVersion": JOB_API_VERSION, "kind": "Job",
            "metadata": {"name": f"tf-mnist-{i:06d}", "namespace": "default",
                         "labels": {"team": "ml", "bench": "admission"}},
            "spec": {"plugins": {"env": [], "svc": []},
                     "policies": [{"event": "PodEvicted", "action": "RestartJob"},
                                  {"event": "TaskCompleted", "action": "CompleteJob"}],
                     "tasks": [task("ps", 1, 2222, "1", "2Gi"), task("worker", 4, 2222, "2", "4Gi")]}}


def review(uid: str, operation: str, obj: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": uid, "kind": {"group": JOB.group, "version": JOB.version, "kind": "Job"},
                        "resource": {"group": JOB.group, "version": JOB.version, "resource": JOB.plural},
                        "name": obj["metadata"]["name"], "namespace": obj["metadata"]["namespace"],
                        "operation": operation, "userInfo": {"username": "bench"},
                        "object": obj, "oldObject": None, "dryRun": False}}


def _start_webhook(directory: str) -> tuple[subprocess.Popen, int, str]:
    from volcanic.httpd.tls import self_signed_cert

    cert, key = self_signed_cert(directory)
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    log_path = os.path.join(directory, "webhook.log")  # a file: a full pipe would stall the server
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "volcanic.cli.main", "webhook", "--listen", "127.0.0.1:0",
                                 "--tls-cert", cert, "--tls-key", key],
                                stdout=subprocess.PIPE, stderr=log, text=True, env=env)
    line = proc.stdout.readline() if proc.stdout else ""  # "serving https://127.0.0.1:PORT"
    if not line.startswith("serving "):
        proc.kill()
        proc.wait()
        with open(log_path) as f:
            raise RuntimeError(f"the webhook did not start: {line}{f.read()}")
    return proc, int(line.rsplit(":", 1)[1]), cert


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_admission(preset: str = "admission", jobs: int | None = None, clients: int | None = None) -> dict[str, Any]:
    from volcanic.kube.patch import apply_json_patch

    n_jobs, n_clients = ADMISSION_PRESETS[preset]
    n_jobs, n_clients = jobs or n_jobs, clients or n_clients
    with tempfile.TemporaryDirectory(prefix="volcanic-bench-") as directory:
        proc, port, cert = _start_webhook(directory)
        try:
            context = ssl.create_default_context(cafile=cert)
            connections = []
            for _ in range(n_clients):
                c = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)
                c.request("GET", "/healthz")
                c.getresponse().read()
                connections.append(c)
            latencies: dict[str, list[float]] = {"mutate": [], "validate": []}
            counts = {"denied": 0, "patched": 0, "errors": 0}
            lock = threading.Lock()

            def post(c: http.client.HTTPSConnection, path: str, body: bytes) -> tuple[float, Any]:
                start = time.perf_counter()
                c.request("POST", path, body, {"Content-Type": "application/json"})
                r = c.getresponse()
                data = r.read()
                took = time.perf_counter() - start
                return took, (json.loads(data)["response"] if r.status == 200 else None)

            def client(k: int) -> None:
                c = connections[k]
                mine = {"mutate": [], "validate": []}
                seen = {"denied": 0, "patched": 0, "errors": 0}
                for i in range(k, n_jobs, n_clients):
                    job = typical_job(i)
                    took, answer = post(c, "/jobs/mutate", json.dumps(review(f"m-{i}", "CREATE", job)).encode())
                    mine["mutate"].append(took)
                    if answer is None:
                        seen["errors"] += 1
                        continue
                    if answer.get("patch"):
                        seen["patched"] += 1
                        job = apply_json_patch(job, json.loads(base64.b64decode(answer["patch"])))
                    took, answer = post(c, "/jobs/validate", json.dumps(review(f"v-{i}", "CREATE", job)).encode())
                    mine["validate"].append(took)
                    if answer is None:
                        seen["errors"] += 1
                    elif not answer["allowed"]:
                        seen["denied"] += 1
                with lock:
                    for path, values in mine.items():
                        latencies[path].extend(values)
                    for key, value in seen.items():
                        counts[key] += value

            threads = [threading.Thread(target=client, args=(k,)) for k in range(n_clients)]
            start = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - start
            for c in connections:
                c.close()
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    every = latencies["mutate"] + latencies["validate"]

    def ms(seconds: float) -> float:
        return round(seconds * 1000, 2)
    return {"preset": preset, "jobs": n_jobs, "reviews": len(every), "clients": n_clients,
            "wall_s": round(wall, 2), "reviews_per_s": round(len(every) / wall, 1) if wall > 0 else None,
            "p50_ms": ms(_percentile(every, 0.50)), "p99_ms": ms(_percentile(every, 0.99)),
            "mutate": {"p50_ms": ms(_percentile(latencies["mutate"], 0.50)),
                       "p99_ms": ms(_percentile(latencies["mutate"], 0.99))},
            "validate": {"p50_ms": ms(_percentile(latencies["validate"], 0.50)),
                         "p99_ms": ms(_percentile(latencies["validate"], 0.99))},
            "patched": counts["patched"], "denied": counts["denied"], "errors": counts["errors"]}
