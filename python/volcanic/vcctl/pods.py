"""`vcctl pod list` (Volcano's pkg/cli/pod): the pods of Volcano Jobs, with the status column
kubectl computes (Kubernetes' printPod, as Volcano re-implements it)."""

from __future__ import annotations

from typing import Any

from volcanic.kube.keys import JOB_NAME, POD_QUEUE_NAME, QUEUE_NAME
from volcanic.kube.objects import Obj, annotation, dig, label, meta_of, spec_of, status_of
from volcanic.vcctl import format as fmt
from volcanic.vcctl.command import Command, Context, Failure, Flag
from volcanic.vcctl.jobs import COMMON, OUTPUT

HEADER = ["Name", "Ready", "Status", "Restart", "Age"]
WIDE = ["Namespace", "Node", "IP", "Job", "Queue"]
TERMINAL = ("Succeeded", "Failed")
NODE_UNREACHABLE = "NodeLost"  # Kubernetes' NodeUnreachablePodReason


def list_pods(ctx: Context) -> None:
    f = ctx.flags
    namespace = None if f.all_namespaces else f.namespace
    if f.job:
        pods = ctx.api.list("Pod", namespace, {JOB_NAME: f.job})
        if f.queue and any(label(p, QUEUE_NAME) not in (None, f.queue) for p in pods):
            raise Failure(f"the input vcjob {f.job} does not match the queue {f.queue}")
    elif f.queue:
        everything = ctx.api.list("Pod", namespace)
        pods = [p for p in everything if label(p, QUEUE_NAME) == f.queue]
        names = {meta_of(p).get("name") for p in pods}
        pods += [p for p in everything
                 if annotation(p, POD_QUEUE_NAME) == f.queue and meta_of(p).get("name") not in names]
    else:
        pods = ctx.api.list("Pod", namespace, {JOB_NAME: None})
    ctx.write(fmt.listing(pods, f.output, lambda: pod_table(pods, ctx.api.now(), f.output == "wide")))


def pod_table(pods: list[Obj], now: float, wide: bool = False) -> str:
    """Volcano's PrintPods: each column as wide as its longest value plus 8 (the header is not
    measured); `wide` adds Namespace, Node, IP, Job and Queue."""
    rows = [pod_row(p, now) + (_wide(p) if wide else []) for p in pods]
    header = HEADER + (WIDE if wide else [])
    widths = [max(len(str(r[i])) for r in rows) + 8 for i in range(len(header))]
    return fmt.row(header, widths) + "".join(fmt.row(r, widths) for r in rows)


def _wide(pod: Obj) -> list[Any]:
    return [meta_of(pod).get("namespace", ""), spec_of(pod).get("nodeName") or "<none>",
            status_of(pod).get("podIP") or "<none>", label(pod, JOB_NAME) or "<none>",
            label(pod, QUEUE_NAME) or annotation(pod, POD_QUEUE_NAME) or "<none>"]


def pod_row(pod: Obj, now: float) -> list[str]:
    """Name, ready containers, status, restarts and age, as kubectl's printPod computes them."""
    spec, status = spec_of(pod), status_of(pod)
    restartable = {c.get("name"): c for c in spec.get("initContainers") or [] if _restartable(c)}
    total = len(spec.get("containers") or []) + len(restartable)
    reason = status.get("reason") or status.get("phase") or ""
    if any(c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"
           for c in status.get("conditions") or []):
        reason = "SchedulingGated"
    restarts, last_restart, ready = 0, "", 0
    sidecar_restarts, sidecar_last = 0, ""
    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    for i, c in enumerate(init_statuses):
        restarts += fmt.num(c, "restartCount")
        last_restart = max(last_restart, _finished(c))
        sidecar = c.get("name") in restartable
        if sidecar:
            sidecar_restarts += fmt.num(c, "restartCount")
            sidecar_last = max(sidecar_last, _finished(c))
        terminated, waiting = dig(c, "state", "terminated"), dig(c, "state", "waiting")
        if terminated and fmt.num(terminated, "exitCode") == 0:
            continue
        if sidecar and c.get("started"):
            ready += bool(c.get("ready"))
            continue
        if terminated:
            reason = "Init:" + terminated["reason"] if terminated.get("reason") else (
                f"Init:Signal:{terminated['signal']}" if fmt.num(terminated, "signal") else
                f"Init:ExitCode:{fmt.num(terminated, 'exitCode')}")
        elif waiting and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{len(spec.get('initContainers') or [])}"
        initializing = True
        break
    if not initializing or _condition(status, "Initialized"):
        restarts, last_restart = sidecar_restarts, sidecar_last
        running = False
        for c in reversed(status.get("containerStatuses") or []):
            restarts += fmt.num(c, "restartCount")
            last_restart = max(last_restart, _finished(c))
            waiting, terminated = dig(c, "state", "waiting"), dig(c, "state", "terminated")
            if waiting and waiting.get("reason"):
                reason = waiting["reason"]
            elif terminated and terminated.get("reason"):
                reason = terminated["reason"]
            elif terminated:
                reason = f"Signal:{terminated['signal']}" if fmt.num(terminated, "signal") else \
                    f"ExitCode:{fmt.num(terminated, 'exitCode')}"
            elif c.get("ready") and dig(c, "state", "running") is not None:
                running = True
                ready += 1
        if reason == "Completed" and running:
            reason = "Running" if _condition(status, "Ready") else "NotReady"
    if meta_of(pod).get("deletionTimestamp"):
        if status.get("reason") == NODE_UNREACHABLE:
            reason = "Unknown"
        elif status.get("phase") not in TERMINAL:
            reason = "Terminating"
    restart_text = str(restarts)
    if restarts and last_restart:
        restart_text = f"{restarts} ({fmt.since(last_restart, now)} ago)"
    return [meta_of(pod).get("name", ""), f"{ready}/{total}", reason, restart_text,
            fmt.since(meta_of(pod).get("creationTimestamp"), now)]


def _restartable(container: Any) -> bool:
    return isinstance(container, dict) and container.get("restartPolicy") == "Always"


def _finished(container_status: Obj) -> str:
    """When the container last terminated (RFC 3339 sorts as time does); "" if never."""
    return dig(container_status, "lastState", "terminated", "finishedAt") or ""


def _condition(status: Obj, kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in status.get("conditions") or [])


def group() -> Command:
    return Command("pod", "vcctl command line operation pod", commands=[
        Command("list", "list pod information created by vcjob", run=list_pods, flags=COMMON + [
            Flag("queue", "q", usage="list pod with specified queue name", complete="Queue"),
            Flag("job", "j", usage="list pod with specified job name", complete="Job"),
            Flag("namespace", "n", default="default", usage="the namespace of job", complete="Namespace"),
            Flag("all-namespaces", type="bool", usage="list jobs in all namespaces"), OUTPUT]),
    ])
