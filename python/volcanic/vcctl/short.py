"""Volcano's one-command tools: vsub, vjobs, vqueues, vcancel, vsuspend and vresume
(cmd/cli/v*, pkg/cli/v*). Each is a root command with a run function; they call the job's
name -n and its namespace -N (vcctl's job commands do the opposite)."""

from __future__ import annotations

import os

from volcanic.vcctl.command import Command, Context, Flag
from volcanic.vcctl.format import text
from volcanic.vcctl.jobs import (
    COMMON,
    NAME,
    NAMESPACE,
    OUTPUT,
    delete_job,
    job_command,
    print_jobs,
    show_job,
    submit,
    swapped,
)
from volcanic.vcctl.queues import QUEUE_NAME, vqueues

V_NAME, V_NAMESPACE = swapped(NAME, "n"), swapped(NAMESPACE, "N")
# vsub's defaults from the environment, then Volcano's.
ENV_DEFAULTS = (("image", "VOLCANO_DEFAULT_IMAGE", "busybox"),
                ("namespace", "VOLCANO_DEFAULT_JOB_NAMESPACE", "default"),
                ("scheduler", "VOLCANO_SCHEDULER_NAME", "volcano"))


def _vsub(ctx: Context) -> None:
    for flag, env, default in ENV_DEFAULTS:
        if not ctx.flags[flag]:
            ctx.flags[flag] = os.environ.get(env) or default
    submit(ctx)


def _vjobs(ctx: Context) -> None:
    """A job's details (-n NAME), or the namespace's jobs: every job measured for the widths,
    those of --scheduler and --selector shown (Volcano filters while printing)."""
    f = ctx.flags
    if f.name:
        show_job(ctx, conditions=False)
        return
    jobs = ctx.api.list("Job", None if f.all_namespaces else f.namespace)
    shown = lambda j: ((not f.scheduler or f.scheduler == text(j, "spec", "schedulerName"))
                       and f.selector in j["metadata"]["name"])
    print_jobs(ctx, jobs, f.all_namespaces, shown)


def vsub() -> Command:
    image = "the container image of job, overwrite the value of 'VOLCANO_DEFAULT_IMAGE' (default \"busybox\")"
    namespace = ("the namespace of job, overwrite the value of 'VOLCANO_DEFAULT_JOB_NAMESPACE' "
                 "(default \"default\")")
    scheduler = "the scheduler for this job, overwrite the value of 'VOLCANO_SCHEDULER_NAME' (default \"volcano\")"
    return Command("vsub", "submit a job", "submit a job with specified name and arguments. yaml/json file is not "
                   "accepted, you may refer to kubectl.", run=_vsub, flags=COMMON + [
                       Flag("image", "i", usage=image), Flag("namespace", "N", usage=namespace), V_NAME,
                       Flag("min", "m", type="int", default=1, usage="the minimal available tasks of job"),
                       Flag("replicas", "r", type="int", default=1, usage="the total tasks of job"),
                       Flag("requests", "R", default="cpu=1000m,memory=100Mi",
                            usage="the resource request of the task"),
                       Flag("limits", "L", default="cpu=1000m,memory=100Mi", usage="the resource limit of the task"),
                       Flag("scheduler", "S", usage=scheduler), Flag("command", "c", usage="the command of of job")])


def vjobs() -> Command:
    return Command("vjobs", "view job information", "view information of a job with specified name or jobs from "
                   "the same namespace", run=_vjobs, flags=COMMON + [
                       V_NAMESPACE, V_NAME, Flag("scheduler", "S", usage="list job with specified scheduler name"),
                       Flag("all-namespaces", type="bool", usage="list jobs in all namespaces"),
                       Flag("selector", usage="fuzzy matching jobName"), OUTPUT])


def vqueues_command() -> Command:
    return Command("vqueues", "view queue information", "view information of a queue with specified name or queues "
                   "from the same namespace", run=vqueues, flags=COMMON + [QUEUE_NAME, OUTPUT])


def vcancel() -> Command:
    return Command("vcancel", "cancel a job", "cancel a running, pending, or aborted job with specified name in "
                   "default or specified namespace",
                   run=delete_job("cancel", "job name is mandatory to cancel a particular job"),
                   flags=COMMON + [V_NAMESPACE, V_NAME])


def vsuspend() -> Command:
    return Command("vsuspend", "suspend a job", "suspend a running or pending job with specified name in default or "
                   "specified namespace",
                   run=job_command("AbortJob", "job name is mandatory to suspend a particular job"),
                   flags=COMMON + [V_NAMESPACE, V_NAME])


def vresume() -> Command:
    return Command("vresume", "resume a job", "resume an aborted job with specified name in default or specified "
                   "namespace", run=job_command("ResumeJob", "job name is mandatory to resume a particular job"),
                   flags=COMMON + [V_NAMESPACE, V_NAME])
