"""Two `volcanic scheduler --leader-elect` replicas: one binds, the other waits; when the
leader is killed (no hand-back), the other takes over once the Lease expired, and the two
never both bind (volcanic.real.leader; Volcano's cmd/scheduler/app/server.go)."""

from __future__ import annotations

import time

from conftest import metric
from volcanic.real.devcluster.cluster import KWOK_TOLERATION
from volcanic.real.devcluster.ports import free_ports


def plain_pods(namespace, prefix, count):
    """Pods of no Volcano Job, scheduled by volcano: the PodGroup controller gives each one a
    PodGroup of its own."""
    return [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{prefix}-{i}", "namespace": namespace},
             "spec": {"schedulerName": "volcano", "tolerations": [KWOK_TOLERATION], "nodeSelector": {"type": "kwok"},
                      "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "100m"}}}]}}
            for i in range(count)]


def test_two_elected_schedulers_never_both_bind(env, up, namespace):
    up.stop()  # its scheduler is not elected: it would bind too
    try:
        env.volcanic("controller-manager")
        ports = free_ports(2)
        first = env.volcanic("scheduler", "--leader-elect", "--metrics-address", f"127.0.0.1:{ports[0]}")
        env.wait_logged(first, "volcano: leading as")
        second = env.volcanic("scheduler", "--leader-elect", "--metrics-address", f"127.0.0.1:{ports[1]}")
        env.wait(lambda: False, timeout=2)  # the second one is up and waiting for the Lease
        binds = lambda port: metric(port, "volcano_schedule_attempts_total", 'result="scheduled"')

        env.apply(*plain_pods(namespace, "a", 4), namespace=namespace)
        assert env.wait(lambda: all(p["spec"].get("nodeName") for p in env.store.list("Pod", namespace)), timeout=30)
        assert env.wait(lambda: binds(ports[0]) == 4)  # counted after the session's status writes
        assert binds(ports[1]) == 0
        assert "leading as" not in second.log_path.read_text()

        first.kill()
        killed = time.monotonic()
        env.apply(*plain_pods(namespace, "b", 4), namespace=namespace)
        env.wait_logged(second, "volcano: leading as", timeout=40)
        assert time.monotonic() - killed > 10  # not before the Lease could have expired
        assert env.wait(lambda: all(p["spec"].get("nodeName") for p in env.store.list("Pod", namespace)), timeout=30)
        assert env.wait(lambda: binds(ports[1]) == 4)
        env.stop(second)
    finally:
        for p in env.procs:
            if p.poll() is None and p is not up.proc:
                env.stop(p)
        up.start()
