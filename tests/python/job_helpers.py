"""Builders, observers and starting points for the job controller's scenario tests
(test_job_states.py, test_job_policies.py, test_job_sync.py; reference §2.1-§2.3).

Every test drives an embedded cluster (virtual clock, scheduler, simulated kubelets) only
through the public API: c.apply of Nodes, Jobs and bus Commands, c.evict, c.delete,
c.set_node_ready, c.run; it observes Jobs, Pods, PodGroups and Events with c.get / c.list and
the store's watch (c.api.watch), which records every committed change in order.

Timing in the embedded cluster: the scheduler runs a session every second from t=0, so a job
applied at t=0 gets its PodGroup Inqueue at t=0, its pods at t=0, bound at t=1 and Running at
t=1 (+ the node's volcanic/sim-start-delay); a pod with volcanic/sim-duration D exits at
start + D with volcanic/sim-exit-code.
"""

from __future__ import annotations

from typing import Any, Callable

import volcanic

NS = "default"
FINAL = ("Completed", "Failed", "Terminated", "Aborted")
OUT_OF_SYNC = "volcano.sh/controller-out-of-sync"


# Builders.
def node(name: str, cpu: str = "4", memory: str = "8Gi", start_delay: str | None = None,
         labels: dict | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}}
    if start_delay is not None:
        meta["annotations"] = {"volcanic/sim-start-delay": start_delay}
    alloc = {"cpu": cpu, "memory": memory, "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta,
            "status": {"allocatable": alloc, "capacity": dict(alloc)}}


def _given(fields: dict[str, Any]) -> dict[str, Any]:
    """The fields whose value is not None."""
    return {k: v for k, v in fields.items() if v is not None}


def task(name: str = "t", replicas: int = 1, *, cpu: str = "1", duration: str | None = None,
         exit_code: int | None = None, restart: str = "Never", min_available: int | None = None,
         max_retry: int | None = None, policies: list | None = None, depends_on: dict | None = None,
         selector: dict | None = None, **extra: Any) -> dict[str, Any]:
    """A task whose pods run `duration` (forever when None) and exit with `exit_code`."""
    annotations = _given({"volcanic/sim-duration": duration,
                          "volcanic/sim-exit-code": None if exit_code is None else str(exit_code)})
    spec: dict[str, Any] = {"restartPolicy": restart,
                            "containers": [{"name": "main", "image": "busybox",
                                            "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}}}]}
    if selector:
        spec["nodeSelector"] = selector
    return {"name": name, "replicas": replicas,
            "template": {"metadata": {"annotations": annotations}, "spec": spec}, **extra,
            **_given({"minAvailable": min_available, "maxRetry": max_retry, "policies": policies,
                      "dependsOn": depends_on})}


def job(name: str = "j", *tasks: dict, min_available: int | None = None, policies: list | None = None,
        max_retry: int | None = None, min_success: int | None = None, **spec: Any) -> dict[str, Any]:
    s: dict[str, Any] = {"tasks": list(tasks) or [task()], **spec,
                         **_given({"minAvailable": min_available, "policies": policies, "maxRetry": max_retry,
                                   "minSuccess": min_success})}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS}, "spec": s}


def policy(action: str, event: str | None = None, **extra: Any) -> dict[str, Any]:
    p = {"action": action, **extra}
    if event is not None:
        p["event"] = event
    return p


def failing_job(timeout: str, action: str = "RestartJob", **kw: Any) -> dict:
    """Task a fails at t=3 (exit 1, Never); task b runs on; PodFailed -> action after timeout."""
    return job("j", task("a", 1, duration="2s", exit_code=1), task("b", 1),
               policies=[policy(action, "PodFailed", timeout=timeout)], **kw)


# Observers.
class Watch:
    """Every committed change of Jobs, Pods and PodGroups, in commit order, from now on."""

    def __init__(self, c: volcanic.Cluster) -> None:
        self._w = c.api.watch(("Job", "Pod", "PodGroup"))
        self._w.drain()  # what exists now, replayed as ADDED
        self.events: list[tuple[str, dict]] = []
        self._initial = {j["metadata"]["name"]: ((j.get("status") or {}).get("state") or {}).get("phase")
                         for j in c.list("Job", NS)}

    def poll(self) -> list[tuple[str, dict]]:
        self.events.extend(self._w.drain())
        return self.events

    def phases(self, name: str = "j") -> list[str]:
        """The phases the job moved to since the watch started, in order."""
        out: list[str] = []
        last = self._initial.get(name)
        for _, obj in self.poll():
            if obj["kind"] == "Job" and obj["metadata"]["name"] == name:
                p = ((obj.get("status") or {}).get("state") or {}).get("phase")
                if p and p != last:
                    out.append(p)
                    last = p
        return out

    def deleted_pods(self) -> list[dict]:
        """Each deleted pod as last seen before it went."""
        return [obj for ev, obj in self.poll() if ev == "DELETED" and obj["kind"] == "Pod"]


def status(c: volcanic.Cluster, name: str = "j") -> dict:
    return (c.get("Job", name) or {}).get("status") or {}


def phase(c: volcanic.Cluster, name: str = "j") -> str | None:
    return (status(c, name).get("state") or {}).get("phase")


def pods(c: volcanic.Cluster, name: str = "j") -> dict[str, dict]:
    return {p["metadata"]["name"]: p for p in c.list("Pod", NS)
            if (p["metadata"].get("labels") or {}).get("volcano.sh/job-name") == name}


def pod_phases(c: volcanic.Cluster, name: str = "j") -> dict[str, str]:
    return {n: (p.get("status") or {}).get("phase") for n, p in pods(c, name).items()}


def uids(c: volcanic.Cluster, name: str = "j") -> dict[str, str]:
    return {n: p["metadata"]["uid"] for n, p in pods(c, name).items()}


def podgroup(c: volcanic.Cluster, name: str = "j") -> dict | None:
    j = c.get("Job", name)
    return c.get("PodGroup", f"{name}-{j['metadata']['uid']}") if j else None


def events(c: volcanic.Cluster, reason: str, name: str = "j") -> list[str]:
    return [e["message"] for e in c.list("Event", NS)
            if e["reason"] == reason and e["involvedObject"].get("kind") == "Job"
            and e["involvedObject"].get("name") == name]


def command(c: volcanic.Cluster, action: str, name: str = "j", cmd: str | None = None) -> str:
    """Issues a bus Command (as vcctl does) and returns its name."""
    j = c.get("Job", name)
    cmd = cmd or f"{name}-{action.lower()}"
    c.apply(command_obj(j, action, cmd))
    return cmd


def command_obj(j: dict, action: str, cmd: str) -> dict:
    return {"apiVersion": "bus.volcano.sh/v1alpha1", "kind": "Command",
            "metadata": {"name": cmd, "namespace": NS}, "action": action,
            "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                       "name": j["metadata"]["name"], "uid": j["metadata"]["uid"]}}


def wait(c: volcanic.Cluster, cond: Callable[[], bool], limit: float = 120.0) -> bool:
    """Runs one virtual second at a time until cond() holds; False after `limit` seconds."""
    return c.run_until(lambda _: cond(), limit=limit, step=1.0)


def cluster(*nodes: dict) -> volcanic.Cluster:
    c = volcanic.Cluster()
    c.apply(list(nodes) or [node("n1")])
    return c


def started(*objs: dict, nodes: tuple = ()) -> volcanic.Cluster:
    c = cluster(*nodes)
    c.apply(list(objs))
    c.run(0)
    return c


def started_without_job_validation(*objs: dict) -> volcanic.Cluster:
    """started(), with Volcano's Job validation (reference §3.1) left out of admission: for
    jobs the webhook refuses, to see how the controller copes with one that got through."""
    from volcanic.admission import AdmissionConf, volcano_chain
    chain = volcano_chain(AdmissionConf())
    chain.validators.pop("Job")
    c = volcanic.Cluster(admission=chain)
    c.apply([node("n1"), *objs])
    c.run(0)
    return c


def a_running_job(**spec: Any) -> volcanic.Cluster:
    """Job j: task a (1 pod, 3 s, exit 0) and task b (2 pods, forever), minAvailable 3;
    Running at t=1, a-0 Succeeded at t=4; returned at t=6."""
    c = started(job("j", task("a", 1, duration="3s"), task("b", 2), **spec))
    c.run(6)
    assert phase(c) == "Running"
    assert pod_phases(c) == {"j-a-0": "Succeeded", "j-b-0": "Running", "j-b-1": "Running"}
    return c


def a_pending_job() -> volcanic.Cluster:
    """Job j (2 pods, forever) on a node whose kubelet takes 1000 s to start pods: the
    pods are created and bound but stay Pending, and so does the job."""
    c = started(job("j", task("t", 2)), nodes=(node("n1", start_delay="1000s"),))
    c.run(3)
    assert phase(c) == "Pending"
    assert pod_phases(c) == {"j-t-0": "Pending", "j-t-1": "Pending"}
    assert all(p["spec"].get("nodeName") == "n1" for p in pods(c).values())
    return c
