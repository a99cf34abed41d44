"""`vcctl cronjob list|get|suspend|resume|delete` (docs/vcctl.md): Volcano's CronJobs
(docs/workflows.md), which Volcano v1.15.1's vcctl has no command for. Hidden from the help,
as volcanic's other additions, so that help reads as Volcano's.

`list` prints kubectl's CronJob columns (Name, Schedule, Timezone, Suspend, Active, Last
Schedule, Age); `get -N NAME` that row, then the Jobs the CronJob owns with their phases, the
newest last. `suspend` and `resume` set spec.suspend (the controller then makes no Job, or
makes them again; a missed activation within startingDeadlineSeconds still runs on resume).
"""

from __future__ import annotations

from typing import Callable

from volcanic.kube.keys import CRONJOB_SCHEDULED
from volcanic.kube.objects import Obj, meta_of, spec_of, status_of
from volcanic.vcctl import format as fmt
from volcanic.vcctl.command import Command, Context, Failure, Flag
from volcanic.vcctl.jobs import COMMON, OUTPUT

KIND = "CronJob"
NONE = "<none>"  # as kubectl prints an unset Timezone or Last Schedule
GAP = 3  # between columns, as volcanic's other tables

HEADER = ["Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age"]
WIDE = ["Concurrency", "Jobs"]  # -o wide: concurrencyPolicy and the active Jobs' names


def _row(cron: Obj, now: float, wide: bool, all_namespaces: bool) -> list[str]:
    spec, status = spec_of(cron), status_of(cron)
    active = [ref.get("name", "") for ref in status.get("active") or () if isinstance(ref, dict)]
    last = status.get("lastScheduleTime")
    row = [meta_of(cron).get("name", ""), fmt.text(cron, "spec", "schedule"), spec.get("timeZone") or NONE,
           "True" if spec.get("suspend") else "False", str(len(active)),
           fmt.since(last, now) if last else NONE, fmt.since(meta_of(cron).get("creationTimestamp"), now)]
    if wide:
        row += [spec.get("concurrencyPolicy") or "Allow", ",".join(active) or NONE]
    return ([meta_of(cron).get("namespace", "")] if all_namespaces else []) + row


def cron_table(crons: list[Obj], now: float, wide: bool, all_namespaces: bool = False) -> str:
    header = (["Namespace"] if all_namespaces else []) + HEADER + (WIDE if wide else [])
    return fmt.table(header, [_row(c, now, wide, all_namespaces) for c in crons], GAP)


JOBS_HEADER = ["Job", "Phase", "Scheduled", "Age"]


def jobs_table(jobs: list[Obj], now: float) -> str:
    """The CronJob's Jobs, oldest activation first."""
    if not jobs:
        return "No jobs\n"
    jobs = sorted(jobs, key=lambda j: ((meta_of(j).get("annotations") or {}).get(CRONJOB_SCHEDULED, ""),
                                       meta_of(j).get("name", "")))
    rows = [[meta_of(j).get("name", ""), fmt.text(j, "status", "state", "phase") or "Pending",
             (meta_of(j).get("annotations") or {}).get(CRONJOB_SCHEDULED, NONE),
             fmt.since(meta_of(j).get("creationTimestamp"), now)] for j in jobs]
    return fmt.table(JOBS_HEADER, rows, GAP)


def owned_jobs(ctx: Context, cron: Obj) -> list[Obj]:
    uid = meta_of(cron).get("uid")

    def owned(job: Obj) -> bool:
        refs = meta_of(job).get("ownerReferences") or ()
        return any(ref.get("kind") == KIND and ref.get("uid") == uid for ref in refs)
    return [j for j in ctx.api.list("Job", meta_of(cron).get("namespace")) if owned(j)]


def list_crons(ctx: Context) -> None:
    f = ctx.flags
    crons = ctx.api.list(KIND, None if f.all_namespaces else f.namespace)
    ctx.write(fmt.listing(crons, f.output,
                          lambda: cron_table(crons, ctx.api.now(), f.output == "wide", f.all_namespaces)))


def _named(ctx: Context, doing: str) -> Obj:
    if not ctx.flags.name:
        raise Failure(f"name is mandatory to {doing} the particular cronjob")
    return ctx.api.get(KIND, ctx.flags.name, ctx.flags.namespace)


def get_cron(ctx: Context) -> None:
    f = ctx.flags
    cron = _named(ctx, "get")
    if f.output in ("json", "yaml"):
        ctx.write(fmt.dump(cron, f.output))
        return
    now = ctx.api.now()
    ctx.write(cron_table([cron], now, f.output == "wide") + "\n" + jobs_table(owned_jobs(ctx, cron), now))


def set_suspend(suspend: bool, verb: str) -> Callable[[Context], None]:
    def run(ctx: Context) -> None:
        meta = meta_of(_named(ctx, verb))
        ctx.api.patch(KIND, meta["name"], meta.get("namespace"), {"spec": {"suspend": suspend}})
        ctx.write(f"{verb} cronjob {meta['name']} successfully\n")
    return run


def delete_cron(ctx: Context) -> None:
    cron = _named(ctx, "delete")
    meta = meta_of(cron)
    ctx.api.delete(KIND, meta["name"], meta.get("namespace"))
    ctx.write(f"delete cronjob {meta['name']} successfully\n")


def group() -> Command:
    name = Flag("name", "N", usage="the name of cronjob", complete=KIND)
    namespace = Flag("namespace", "n", default="default", usage="the namespace of cronjob", complete="Namespace")
    named = COMMON + [namespace, name]
    return Command("cronjob", "vcctl command line operation cronjob", hidden=True, commands=[
        Command("list", "list cronjobs", run=list_crons, flags=COMMON + [
            namespace, Flag("all-namespaces", type="bool", usage="list cronjobs in all namespaces"), OUTPUT]),
        Command("get", "get a cronjob with the jobs it made", run=get_cron, flags=named + [OUTPUT]),
        Command("suspend", "suspend a cronjob: it makes no more jobs", run=set_suspend(True, "suspend"),
                flags=named),
        Command("resume", "resume a suspended cronjob", run=set_suspend(False, "resume"), flags=named),
        Command("delete", "delete a cronjob (its jobs go with it)", run=delete_cron, flags=named),
    ])
