"""volcanic's foresight in vcctl (docs/foresight.md, docs/vcctl.md): `job why -N NAME`, `job
forecast [-n NS | -A] [-q QUEUE]` and `queue pending -n QUEUE`. Hidden from the help, as
volcanic's other additions, so that help reads as Volcano's.

The answers come from the API's `foresight` (volcanic.foresight.Foresight's outlook and
explain): on the embedded cluster the engine itself, on a real cluster volcanic's scheduler
over HTTP (volcanic.real.foresight_client), from its cache.
"""

from __future__ import annotations

from typing import Any

from volcanic.kube.clock import rfc3339
from volcanic.vcctl import format as fmt
from volcanic.vcctl.command import Command, Context, Failure, Flag

NO_START = "-"  # an estimated start beyond the forecast's horizon
JSON_YAML = ("json", "yaml")


def _answers(ctx: Context) -> Any:
    foresight = getattr(ctx.api, "foresight", None)
    if foresight is None:
        raise Failure("foresight needs volcanic's scheduler, and this API has none")
    return foresight


def when(start: float | None, now: float) -> str:
    """An estimated start as the tables show it: "now", "in 42m", or NO_START."""
    if start is None:
        return NO_START
    return "now" if start <= now else f"in {fmt.human_duration(start - now)}"


def why(ctx: Context) -> None:
    f = ctx.flags
    if not f.name:
        raise Failure("job name (specified by --name or -N) is mandatory to explain a particular job")
    try:
        e = _answers(ctx).explain(f.name, f.namespace)
    except KeyError as err:
        raise Failure(str(err.args[0])) from None
    if f.output in JSON_YAML:
        ctx.write(fmt.dump(e, f.output))
        return
    ctx.write(explanation_text(e, ctx.api.now()))


def explanation_text(e: dict[str, Any], now: float) -> str:
    lines = [f"Job:              {e['job']}", f"Queue:            {e['queue']}"]
    if e["position"] is not None:
        lines.append(f"Position:         {e['position']} in queue {e['queue']}"
                     + (f", which is {e['queue_position']} in the queue order" if e["queue_position"] else ""))
    lines.append("Reasons:" + ("" if e["reasons"] else "          none: it is not waiting"))
    lines += [f"  {i}. {r}" for i, r in enumerate(e["reasons"], 1)]
    start = e["estimated_start"]
    shown = NO_START if start is None else f"{fmt.go_time(rfc3339(start))} ({when(start, now)})"
    lines += [f"Estimated start:  {shown}", f"Basis:            {e['basis']}"]
    if e["remedies"]:
        lines.append("Would start it now:")
        lines += [f"  - {r}" for r in e["remedies"]]
    return "\n".join(lines) + "\n"


def forecast(ctx: Context) -> None:
    f = ctx.flags
    rows = _answers(ctx).outlook(None if f.all_namespaces else f.namespace, f.queue or None)
    _print(ctx, rows, ["Name", "Queue", "Position", "Reason", "Estimated start", "Basis"],
           lambda r: [r["job"].split("/", 1)[1], r["queue"], r["position"] or NO_START, _top(r),
                      when(r["estimated_start"], ctx.api.now()), r["basis"]],
           namespaces=f.all_namespaces)


def pending(ctx: Context) -> None:
    f = ctx.flags
    if not f.name:
        raise Failure("queue name must be specified")
    ctx.api.get("Queue", f.name)
    rows = _answers(ctx).outlook(None, f.name)
    _print(ctx, rows, ["Position", "Namespace", "Name", "Reason", "Estimated start"],
           lambda r: [r["position"] or NO_START, *r["job"].split("/", 1), _top(r),
                      when(r["estimated_start"], ctx.api.now())])


def _top(row: dict[str, Any]) -> str:
    return row["reasons"][0] if row["reasons"] else ""


def _print(ctx: Context, rows: list[dict[str, Any]], header: list[str], cells: Any, namespaces: bool = False) -> None:
    output = ctx.flags.output
    if output in JSON_YAML:
        ctx.write(fmt.dump(rows, output))
        return
    if not rows:
        ctx.write("No pending jobs\n")
        return
    table = [cells(r) for r in rows]
    if namespaces:
        header = ["Namespace", *header]
        table = [[r["job"].split("/", 1)[0], *t] for r, t in zip(rows, table)]
    ctx.write(fmt.table(header, table, 3))


def job_commands(common: list[Flag], namespace: Flag, name: Flag, output: Flag) -> list[Command]:
    return [
        Command("why", "why a job waits, where it stands, when it starts, what would start it now", run=why,
                flags=common + [namespace, name, output], hidden=True),
        Command("forecast", "the pending jobs: why each waits, its position and estimated start", run=forecast,
                flags=common + [namespace, Flag("all-namespaces", "A", type="bool", usage="in all namespaces"),
                                Flag("queue", "q", usage="of this queue only", complete="Queue"), output],
                hidden=True),
    ]


def queue_command(common: list[Flag], output: Flag) -> Command:
    return Command("pending", "a queue's pending jobs in order, with why each waits and its estimated start",
                   run=pending, flags=common + [Flag("name", "n", usage="the name of queue", complete="Queue"),
                                                output], hidden=True)
