"""`volcanic scheduler` and `volcanic controller-manager` started with the exact args of
Volcano v1.15.1's Helm chart (installer/helm/chart/volcano/templates/scheduler.yaml and
controllers.yaml, as tests/python/test_volcano_flags.py renders them): a Volcano Job's pods
are bound and Running, and /metrics and /healthz answer where Volcano serves them. Two
differences, both for one machine: the configuration file's path is this test's, and the
HTTP addresses (appended: the last value wins, as in pflag) are free ports on 127.0.0.1,
since the chart's two pods would both listen on :11251. Issue 35 "Production"."""

from __future__ import annotations

import importlib.util
from pathlib import Path
import urllib.request

from test_volcano_jobs import on_kwok, pods_of
from volcanic.real.devcluster.ports import free_ports
from volcanic.real.manifests.deployments import DEFAULT_CONF

# The chart's args, written once in the offline test of the flags.
_spec = importlib.util.spec_from_file_location(
    "volcano_flags_args", Path(__file__).parents[1] / "python" / "test_volcano_flags.py")
_flags = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_flags)
CHART_SCHEDULER, CHART_CONTROLLERS = _flags.CHART_SCHEDULER, _flags.CHART_CONTROLLERS


def _get(port: int, path: str) -> int:
    return urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5).status


def test_the_charts_args_run_a_volcano_job(env, up, namespace):
    up.stop()  # its scheduler and controllers would do the work otherwise
    conf = env.cluster.dir / "chart-volcano-scheduler.conf"
    conf.write_text(DEFAULT_CONF)
    ports = free_ports(4)
    scheduler_args = [f"--scheduler-conf={conf}" if a.startswith("--scheduler-conf=") else a for a in CHART_SCHEDULER]
    try:
        scheduler = env.volcanic("scheduler", *scheduler_args, f"--listen-address=127.0.0.1:{ports[0]}",
                                 f"--healthz-address=127.0.0.1:{ports[1]}")
        manager = env.volcanic("controller-manager", *CHART_CONTROLLERS, f"--listen-address=127.0.0.1:{ports[2]}",
                               f"--healthz-address=127.0.0.1:{ports[3]}")
        env.wait_logged(scheduler, "caches synced; scheduling", "ignoring the arguments 2>&1",
                        "flag --node-worker-threads has no effect in volcanic")
        env.wait_logged(manager, "controllers started", "flag --worker-threads has no effect in volcanic")
        job = on_kwok({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "chart"},
                       "spec": {"schedulerName": "volcano", "queue": "default", "minAvailable": 2,
                                "tasks": [{"name": "task", "replicas": 2, "template": {"spec": {
                                    "restartPolicy": "Never",
                                    "containers": [{"name": "c", "image": "busybox",
                                                    "resources": {"requests": {"cpu": "100m"}}}]}}}]}}, None)
        env.apply(job, namespace=namespace)

        def running():
            pods = pods_of(env, "chart", namespace)
            return len(pods) == 2 and all(p["spec"].get("nodeName") and (p.get("status") or {}).get("phase")
                                          == "Running" for p in pods)
        assert env.wait(running, timeout=60), (scheduler.log_path.read_text(errors="replace")[-3000:],
                                               manager.log_path.read_text(errors="replace")[-3000:])
        assert _get(ports[0], "/metrics") == 200 and _get(ports[1], "/healthz") == 200
        assert _get(ports[2], "/metrics") == 200 and _get(ports[3], "/healthz") == 200
        assert scheduler.poll() is None and manager.poll() is None
    finally:
        env.kubectl("delete", "job.batch.volcano.sh", "--all", "-n", namespace, "--wait=false", check=False)
        for p in env.procs:
            if p.poll() is None and p is not up.proc:
                env.stop(p)
        up.start()
