"""Simulated kubelets: bound pods start, run for their simulated duration and exit.

Per pod (DESIGN.md, "Simulated kubelets"):
- a pod bound to a Ready node starts Running after the node's `volcanic/sim-start-delay`;
- each run of its containers lasts `volcanic/sim-duration` and exits with
  `volcanic/sim-exit-code` (default 0); without a duration it runs until deleted; a pod
  already Running when the kubelet first sees it (a restored state) ends that long after its
  startTime;
- restartPolicy Never, or OnFailure with exit code 0: the pod ends Succeeded (0) or Failed;
  otherwise (OnFailure with a failure, or Always, the Kubernetes default) the containers
  restart, restartCount + 1, after Kubernetes' crash-loop back-off (10 s doubling to 5 min,
  after a success too); the pod stays Running;
- every container of a pod runs and exits together (one simulated process per pod);
- a Node whose Ready condition is not True fails its pods (reason NodeLost).
Pod IPs are 10.<n>.<n>.<n> from a counter, so the same history gives the same IPs.
"""

from __future__ import annotations

from typing import Hashable

from volcanic.controllers.runtime import Context, Controller
from volcanic.kube.clock import Timer, rfc3339, seconds_of
from volcanic.kube.duration import parse_duration
from volcanic.kube.events import Recorder
from volcanic.kube.informers import Handler
from volcanic.kube.objects import annotation, spec_of, status_of

START_DELAY = "volcanic/sim-start-delay"
DURATION = "volcanic/sim-duration"
EXIT_CODE = "volcanic/sim-exit-code"
TERMINAL = ("Succeeded", "Failed")


def node_ready(node: dict) -> bool:
    for c in status_of(node).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return True  # a node that reports no conditions is taken as Ready


class Kubelets(Controller):
    """Every node's kubelet in one controller; requests are (what, namespace, name, uid)."""

    name = "kubelet"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._timers: dict[tuple[str, str], Timer] = {}
        self._ips = 0
        self._recorder = Recorder(ctx.store, ctx.clock.now, "kubelet")

    def handlers(self) -> dict[str, Handler]:
        return {"Pod": Handler(on_add=self._pod_changed, on_update=lambda old, new: self._pod_changed(new),
                               on_delete=self._pod_deleted),
                "Node": Handler(on_add=self._node_changed, on_update=lambda old, new: self._node_changed(new))}

    # Event handlers.
    def _pod_changed(self, pod: dict) -> None:
        meta, status = pod["metadata"], status_of(pod)
        key = (meta["namespace"], meta["name"])
        node_name = spec_of(pod).get("nodeName")
        if not node_name or status.get("phase") in TERMINAL or key in self._timers:
            return
        if status.get("phase") == "Pending" and not status.get("startTime"):
            node = self.ctx.lister.get("Node", node_name)
            if node is None or not node_ready(node):
                return
            delay = self._seconds(node, START_DELAY, 0.0)
            self._later(delay, ("start", key, meta["uid"]))
        elif status.get("phase") == "Running":
            self._resume(pod)

    def _pod_deleted(self, pod: dict) -> None:
        timer = self._timers.pop((pod["metadata"]["namespace"], pod["metadata"]["name"]), None)
        if timer:
            timer.cancel()

    def _node_changed(self, node: dict) -> None:
        name = node["metadata"]["name"]
        if not node_ready(node):
            self.queue.add(("node-lost", ("", name), ""))
        else:  # pods bound while the node was not Ready start now
            for pod in self.ctx.lister.by_index("Pod", "node", name):
                self._pod_changed(pod)

    # Requests.
    def process(self, request: Hashable) -> None:
        what, key, uid = request
        if what == "node-lost":
            self._fail_pods_of(key[1])
            return
        self._timers.pop(key, None)
        pod = self.ctx.lister.get("Pod", key[1], key[0])
        if pod is None or pod["metadata"]["uid"] != uid or status_of(pod).get("phase") in TERMINAL:
            return
        if what == "start":
            self._start(pod)
        elif what == "exit":
            self._exit(pod)
        elif what == "restart":
            self._restart(pod)

    def _start(self, pod: dict) -> None:
        node = self.ctx.lister.get("Node", pod["spec"]["nodeName"])
        if node is None or not node_ready(node):
            return
        now = rfc3339(self.ctx.clock.now())
        self._ips += 1
        status = dict(status_of(pod))  # fields are replaced, never changed in place
        status.update(phase="Running", startTime=now, hostIP=self._host_ip(node),
                      podIP=f"10.{self._ips >> 16 & 255}.{self._ips >> 8 & 255}.{self._ips & 255}",
                      conditions=self._conditions(status, now, ready=True),
                      containerStatuses=[self._container(c, {"running": {"startedAt": now}}, 0)
                                         for c in pod["spec"].get("containers") or []])
        status["podIPs"] = [{"ip": status["podIP"]}]
        self._write(pod, status)
        self._schedule_exit(pod)

    def _resume(self, pod: dict) -> None:
        """A pod that was Running before this kubelet saw it (a cluster restored from another's
        state): its run ends `volcanic/sim-duration` after it started, at once if that is past."""
        duration = self._seconds(pod, DURATION, None)
        started = seconds_of(status_of(pod).get("startTime"))
        if duration is not None and started is not None:
            self._later(max(0.0, started + duration - self.ctx.clock.now()),
                        ("exit", (pod["metadata"]["namespace"], pod["metadata"]["name"]), pod["metadata"]["uid"]))

    def _schedule_exit(self, pod: dict) -> None:
        duration = self._seconds(pod, DURATION, None)
        if duration is not None:
            self._later(duration, ("exit", (pod["metadata"]["namespace"], pod["metadata"]["name"]),
                                   pod["metadata"]["uid"]))

    def _exit(self, pod: dict) -> None:
        code = self._exit_code(pod)
        policy = pod["spec"].get("restartPolicy") or "Always"
        now = rfc3339(self.ctx.clock.now())
        status = dict(status_of(pod))  # fields are replaced, never changed in place
        restarts = max((c.get("restartCount", 0) for c in status.get("containerStatuses") or []), default=0)
        terminated = {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                                     "finishedAt": now, "startedAt": status.get("startTime", now)}}
        restart = policy == "Always" or (policy == "OnFailure" and code != 0)
        if not restart:
            status["phase"] = "Succeeded" if code == 0 else "Failed"
            status["conditions"] = self._conditions(status, now, ready=False)
            status["containerStatuses"] = [self._container(c, terminated, restarts)
                                           for c in pod["spec"].get("containers") or []]
            self._write(pod, status)
            return
        waiting = {"waiting": {"reason": "CrashLoopBackOff"}}
        status["containerStatuses"] = [dict(self._container(c, waiting, restarts), lastState=terminated)
                                       for c in pod["spec"].get("containers") or []]
        status["conditions"] = self._conditions(status, now, ready=False)
        self._write(pod, status)
        backoff = 10.0 * 2 ** min(restarts, 5)  # 10 s doubling, at most 5 min
        self._later(min(backoff, 300.0), ("restart", (pod["metadata"]["namespace"], pod["metadata"]["name"]),
                                          pod["metadata"]["uid"]))

    def _restart(self, pod: dict) -> None:
        now = rfc3339(self.ctx.clock.now())
        status = dict(status_of(pod))  # fields are replaced, never changed in place
        status["containerStatuses"] = [
            dict(c, ready=True, restartCount=c.get("restartCount", 0) + 1, state={"running": {"startedAt": now}})
            for c in status.get("containerStatuses") or []]
        status["conditions"] = self._conditions(status, now, ready=True)
        self._write(pod, status)
        self._schedule_exit(pod)

    def _fail_pods_of(self, node_name: str) -> None:
        now = rfc3339(self.ctx.clock.now())
        for pod in self.ctx.lister.by_index("Pod", "node", node_name):
            if status_of(pod).get("phase") in TERMINAL:
                continue
            self._pod_deleted(pod)
            status = dict(status_of(pod))  # fields are replaced, never changed in place
            status.update(phase="Failed", reason="NodeLost",
                          message=f"Node {node_name} which was running pod {pod['metadata']['name']} "
                                  "is unresponsive",
                          conditions=self._conditions(status, now, ready=False))
            self._write(pod, status)

    # Helpers.
    def _later(self, delay: float, request: tuple) -> None:
        self._timers[request[1]] = self.ctx.clock.after(delay, lambda: self.queue.add(request))

    def _write(self, pod: dict, status: dict) -> None:
        self.ctx.store.update_status(dict(pod, status=status))

    def _seconds(self, obj: dict, key: str, default: float | None) -> float | None:
        value = annotation(obj, key)
        if value is None:
            return default
        try:
            return parse_duration(value, f"metadata.annotations[{key}]")
        except ValueError as e:
            self._recorder.event(obj, "Warning", "InvalidSimulation", str(e))
            return default

    def _exit_code(self, pod: dict) -> int:
        value = annotation(pod, EXIT_CODE)
        try:
            return int(value) if value is not None else 0
        except ValueError:
            self._recorder.event(pod, "Warning", "InvalidSimulation",
                                 f"metadata.annotations[{EXIT_CODE}]: not an integer: {value!r}")
            return 1

    @staticmethod
    def _host_ip(node: dict) -> str:
        for a in status_of(node).get("addresses") or []:
            if a.get("type") == "InternalIP":
                return a.get("address", "")
        return ""

    @staticmethod
    def _container(container: dict, state: dict, restarts: int) -> dict:
        return {"name": container.get("name", ""), "image": container.get("image", ""),
                "ready": "running" in state, "restartCount": restarts, "started": "running" in state,
                "state": state}

    @staticmethod
    def _conditions(status: dict, now: str, ready: bool) -> list[dict]:
        kept = [c for c in status.get("conditions") or []
                if c.get("type") not in ("Initialized", "ContainersReady", "Ready")]
        value = "True" if ready else "False"
        return kept + [{"type": "Initialized", "status": "True", "lastTransitionTime": now},
                       {"type": "ContainersReady", "status": value, "lastTransitionTime": now},
                       {"type": "Ready", "status": value, "lastTransitionTime": now}]
