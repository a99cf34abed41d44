"""`vcctl queue create|delete|operate|list|get` (Volcano's pkg/cli/queue) and vqueues'
tables (pkg/cli/vqueues)."""

from __future__ import annotations

from typing import Any

from volcanic.kube.errors import StoreError
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj, meta_of, spec_of, status_of
from volcanic.vcctl import foresight
from volcanic.vcctl import format as fmt
from volcanic.vcctl.command import Command, Context, Failure, Flag
from volcanic.vcctl.jobs import COMMON, OUTPUT, issue_command

QUEUE_NAME = Flag("name", "n", usage="the name of queue", complete="Queue")
WEIGHT_USAGE = "the weight of the queue"
ACTIONS = {"open": "OpenQueue", "close": "CloseQueue"}
# PodGroup phases counted per queue, in the tables' order (Volcano's PodGroupStatistics).
PHASES = ("Inqueue", "Pending", "Running", "Unknown", "Completed")
COMMAND_NAMESPACE = "default"  # where Volcano's vcctl creates a queue's Commands


def create_queue(ctx: Context) -> None:
    f = ctx.flags
    ctx.api.create({"apiVersion": KINDS["Queue"].api_version, "kind": "Queue", "metadata": {"name": f.name},
                    "spec": {"weight": f.weight} if f.weight else {}, "status": {"state": f.state}})


def delete_queue(ctx: Context) -> None:
    if not ctx.flags.name:
        raise Failure("queue name must be specified")
    ctx.api.delete("Queue", ctx.flags.name)


def operate_queue(ctx: Context) -> None:
    f = ctx.flags
    if not f.name:
        raise Failure("queue name must be specified")
    if f.action == "update":
        if f.weight == 0:
            raise Failure(f"when update queue {f.name}, weight must be specified, the value must be greater than 0")
        ctx.api.patch("Queue", f.name, None, {"spec": {"weight": f.weight}})
        return
    if f.action == "":
        raise Failure("action can not be null")
    if f.action not in ACTIONS:
        raise Failure(f"action {f.action} invalid, valid actions are open, close and update")
    queue = ctx.api.get("Queue", f.name)
    issue_command(ctx.api, queue, ACTIONS[f.action], COMMAND_NAMESPACE)


def podgroup_counts(podgroups: list[Obj]) -> dict[str, dict[str, int]]:
    """Per queue, its PodGroups by phase (Volcano's StatPodGroupCountsForQueue)."""
    counts: dict[str, dict[str, int]] = {}
    for pg in podgroups:
        phase = fmt.text(pg, "status", "phase")
        if phase in PHASES:
            queue = counts.setdefault(fmt.text(pg, "spec", "queue"), {})
            queue[phase] = queue.get(phase, 0) + 1
    return counts


WIDTHS = [25, 8, 8, 8, 8, 8, 8, 8, 8]
HEADER = ["Name", "Weight", "State", "Parent", *PHASES]
WIDE = ("Reclaimable", "Capability", "Allocated")


def queue_table(queues: list[Obj], counts: dict[str, dict[str, int]], wide: bool) -> str:
    """Volcano's PrintQueues (fixed widths); `wide` adds Reclaimable, Capability and Allocated."""
    rows = [[meta_of(q).get("name", ""), fmt.num(q, "spec", "weight"), fmt.text(q, "status", "state"),
             fmt.text(q, "spec", "parent")] + [counts.get(meta_of(q).get("name", ""), {}).get(p, 0) for p in PHASES]
            for q in queues]
    header, widths = list(HEADER), list(WIDTHS)
    if wide:
        extra = [_wide(q) for q in queues]
        widths[-1] = len(header[-1]) + 2  # "Completed" overflows Volcano's 8 columns
        for i, title in enumerate(WIDE):
            header.append(title)
            widths.append(fmt.width(title, (e[i] for e in extra), 2))
        rows = [r + e for r, e in zip(rows, extra)]
    return fmt.row(header, widths) + "".join(fmt.row(r, widths) for r in rows)


def _wide(queue: Obj) -> list[Any]:
    reclaimable = spec_of(queue).get("reclaimable")
    return ["true" if reclaimable is None else str(bool(reclaimable)).lower(),
            fmt.resources(spec_of(queue).get("capability")), fmt.resources(status_of(queue).get("allocated"))]


def list_queues(ctx: Context) -> None:
    queues = ctx.api.list("Queue")
    output = ctx.flags.output
    if output in ("json", "yaml"):
        ctx.write(fmt.dump(fmt.as_list(queues), output))
        return
    if not queues:
        ctx.write("No resources found\n")
        return
    try:
        podgroups = ctx.api.list("PodGroup")
    except StoreError as e:
        raise Failure(f"failed to list podgroups with err: {e}") from None
    ctx.write(queue_table(queues, podgroup_counts(podgroups), output == "wide"))


def get_queue(ctx: Context) -> None:
    f = ctx.flags
    if not f.name:
        raise Failure("name is mandatory to get the particular queue details")
    queue = ctx.api.get("Queue", f.name)
    if f.output in ("json", "yaml"):
        ctx.write(fmt.dump(queue, f.output))
        return
    try:
        podgroups = ctx.api.list("PodGroup")
    except StoreError as e:
        raise Failure(f"failed to list podgroup for queue {f.name} with err: {e}") from None
    ctx.write(queue_table([queue], podgroup_counts(podgroups), f.output == "wide"))


# vqueues: the queues' own status counters (which Volcano v1.15's queue controller no longer
# writes: they print as 0, in Volcano as here).
V_HEADER = ["Name", "Weight", "State", "Inqueue", "Pending", "Running", "Unknown"]


def vqueues_table(queues: list[Obj]) -> str:
    rows = [[meta_of(q).get("name", ""), fmt.num(q, "spec", "weight"), fmt.text(q, "status", "state")]
            + [fmt.num(q, "status", field) for field in ("inqueue", "pending", "running", "unknown")] for q in queues]
    return fmt.row(V_HEADER, WIDTHS) + "".join(fmt.row(r, WIDTHS) for r in rows)


def vqueues(ctx: Context) -> None:
    f = ctx.flags
    queues = [ctx.api.get("Queue", f.name)] if f.name else ctx.api.list("Queue")
    if f.output in ("json", "yaml"):
        ctx.write(fmt.dump(queues[0] if f.name else fmt.as_list(queues), f.output))
    elif not queues:
        ctx.write("No resources found\n")
    else:
        ctx.write(vqueues_table(queues))


def group() -> Command:
    return Command("queue", "Queue Operations", commands=[
        Command("create", "creates queue", run=create_queue, flags=COMMON + [
            Flag("name", "n", default="test", usage="the name of queue"),
            Flag("weight", "w", type="int32", default=1, usage=WEIGHT_USAGE),
            Flag("state", "S", default="Open", usage="the state of queue")]),
        Command("delete", "delete queue", run=delete_queue, flags=COMMON + [QUEUE_NAME]),
        Command("operate", "operate queue", run=operate_queue, flags=COMMON + [
            QUEUE_NAME, Flag("weight", "w", type="int32", usage=WEIGHT_USAGE),
            Flag("action", "a", usage="operate action to queue, valid actions are open, close, update")]),
        Command("list", "lists all the queue", run=list_queues, flags=COMMON + [OUTPUT]),
        Command("get", "get a queue", run=get_queue, flags=COMMON + [QUEUE_NAME, OUTPUT]),
        foresight.queue_command(COMMON, OUTPUT),
    ])
