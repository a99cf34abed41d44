"""`vcctl job run|list|view|suspend|resume|delete` (Volcano's pkg/cli/job), and the pieces
vsub, vjobs, vcancel, vsuspend and vresume share with them (pkg/cli/vsub, vjobs, ...)."""

from __future__ import annotations

import shlex
from typing import Any, Callable

import yaml

from volcanic.kube.errors import StoreError
from volcanic.kube.keys import JOB_NAME
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj, annotations_of, dig, labels_of, meta_of, spec_of, status_of
from volcanic.kube.quantity import format_quantity, parse_quantity
from volcanic.vcctl import foresight
from volcanic.vcctl import format as fmt
from volcanic.vcctl.api import Api
from volcanic.vcctl.command import Command, Context, Failure, Flag

JOB = KINDS["Job"]
JOB_TYPE = "volcano.sh/job-type"  # Volcano's batch/v1alpha1 JobTypeKey
RUN_LABEL = "job.volcano.sh"  # the label `job run` puts on the tasks' pods
QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

MASTER = Flag("master", "s", usage="the address of apiserver")
KUBECONFIG = Flag("kubeconfig", "k", usage="(optional) absolute path to the kubeconfig file", complete="files")
COMMON = [MASTER, KUBECONFIG]  # Volcano's util.InitFlags, on every command
# volcanic's addition, hidden from the help so that it reads as Volcano's (docs/vcctl.md).
OUTPUT = Flag("output", "o", usage="output format: json, yaml (the objects as the API server returns them) or wide "
              "(more columns)", choices=fmt.OUTPUTS, hidden=True)
# What every job command calls its flags (vsub, vjobs, ... swap -n and -N: short() below).
NAMESPACE = Flag("namespace", "n", default="default", usage="the namespace of job", complete="Namespace")
NAME = Flag("name", "N", usage="the name of job", complete="Job")


def swapped(flag: Flag, short: str) -> Flag:
    """The flag with another shorthand (vsub, vjobs, ... call the name -n and the namespace -N)."""
    return Flag(flag.name, short, flag.type, flag.default, flag.usage, flag.choices, flag.complete)


# job run, vsub.
RUN_FLAGS = [
    Flag("image", "i", default="busybox", usage="the container image of job"),
    NAMESPACE, NAME,
    Flag("min", "m", type="int", default=1, usage="the minimal available tasks of job"),
    Flag("replicas", "r", type="int", default=1, usage="the total tasks of job"),
    Flag("requests", "R", default="cpu=1000m,memory=100Mi", usage="the resource request of the task"),
    Flag("limits", "L", default="cpu=1000m,memory=100Mi", usage="the resource limit of the task"),
    Flag("scheduler", "S", default="volcano", usage="the scheduler for this job"),
]


def resource_list(spec: str) -> dict[str, str] | None:
    """Volcano's PopulateResourceListV1: "cpu=1000m,memory=100Mi" as a resource list, the
    quantities canonical (as Go sends them); None for ""."""
    if spec == "":
        return None
    out = {}
    for statement in spec.split(","):
        parts = statement.split("=")
        if len(parts) != 2:
            raise Failure(f"invalid argument syntax {statement}, expected <resource>=<value>")
        try:
            out[parts[0]] = format_quantity(parse_quantity(parts[1]))
        except ValueError:
            raise Failure(QUANTITY_FORMAT) from None
    return out


def launch_job(f: Any, command: list[str] | None = None) -> Obj:
    """The Job `job run` and vsub make from their flags: one task of `replicas` pods of one
    container, restartPolicy Never."""
    container: Obj = {"image": f.image, "name": f.name, "imagePullPolicy": "IfNotPresent", "resources": {}}
    if command:
        container["command"] = command
    for field, spec in (("limits", f.limits), ("requests", f.requests)):
        values = resource_list(spec)
        if values is not None:
            container["resources"][field] = values
    template = {"metadata": {"name": f.name, "labels": {RUN_LABEL: f.name}},
                "spec": {"restartPolicy": "Never", "containers": [container]}}
    return {"apiVersion": JOB.api_version, "kind": "Job", "metadata": {"name": f.name, "namespace": f.namespace},
            "spec": {"minAvailable": f.min, "schedulerName": f.scheduler,
                     "tasks": [{"replicas": f.replicas, "template": template}]}}


def read_job_file(filename: str) -> Obj:
    """Volcano's readFile: the Job in a YAML file (its first document)."""
    if ".yaml" not in filename and ".yml" not in filename:
        raise Failure("only support yaml file")
    try:
        with open(filename, encoding="utf-8") as f:
            data = f.read()
    except OSError as e:
        raise Failure(f"failed to read file, err: open {filename}: {(e.strerror or str(e)).lower()}") from None
    try:
        job = next(iter(yaml.safe_load_all(data)), None)
    except yaml.YAMLError as e:
        raise Failure(f"failed to unmarshal file, err:  {' '.join(str(e).split())}") from None
    if not isinstance(job, dict):
        raise Failure("failed to unmarshal file, err:  the file does not hold a Job (a YAML map)")
    return dict(job, apiVersion=JOB.api_version, kind="Job")


def create_job(api: Api, job: Obj, namespace: str) -> Obj:
    """Creates the Job in `namespace` (the namespace the request is sent to, as Volcano's
    Jobs(namespace).Create)."""
    meta = meta_of(job)
    if meta.get("namespace") and meta["namespace"] != namespace:
        raise Failure("the namespace of the provided object does not match the namespace sent on the request")
    return api.create(dict(job, metadata=dict(meta, namespace=namespace)))


def run_job(ctx: Context) -> None:
    f = ctx.flags
    if not f.name and not f.filename:
        raise Failure("job name cannot be left blank")
    resource_list(f.requests)
    resource_list(f.limits)
    job = read_job_file(f.filename) if f.filename else launch_job(f)
    created = create_job(ctx.api, job, f.namespace)
    ctx.write(f"run job {created['metadata']['name']} successfully\n")


def submit(ctx: Context) -> None:
    """vsub: `job run` without a file, with a command, its defaults from the environment."""
    f = ctx.flags
    if not f.name:
        raise Failure("job name cannot be left blank")
    resource_list(f.requests)
    resource_list(f.limits)
    try:
        command = shlex.split(f.command) if f.command else None
    except ValueError as e:
        raise Failure(str(e)) from None
    created = create_job(ctx.api, launch_job(f, command), f.namespace)
    ctx.write(f"run job {created['metadata']['name']} successfully\n")


# job list, vjobs.
def job_table(jobs: list[Obj], all_namespaces: bool, wide: bool, now: float,
              shown: Callable[[Obj], bool] = lambda _: True) -> str:
    """Volcano's PrintJobs: widths from every job, rows for those `shown` (vjobs filters
    after measuring); `wide` adds Queue, Scheduler and Age."""
    name_width = fmt.width("Name", (meta_of(j).get("name", "") for j in jobs), 3)
    header = ["Name", "Creation", "Phase", "JobType", "Replicas", "Min", "Pending", "Running", "Succeeded",
              "Failed", "Unknown", "RetryCount"]
    widths = [name_width, 15, 12, 12, 12, 6, 10, 10, 12, 10, 12, 10]
    rows = [_job_row(j, now) for j in jobs if shown(j)]
    extra = []
    if wide:
        extra = [[fmt.text(j, "spec", "queue"), fmt.text(j, "spec", "schedulerName"),
                  fmt.since(meta_of(j).get("creationTimestamp"), now)] for j in jobs if shown(j)]
        widths[-1] += 3  # Volcano's last column is exactly as wide as its title
        for i, title in enumerate(("Queue", "Scheduler", "Age")):
            header.append(title)
            widths.append(fmt.width(title, (e[i] for e in extra), 3))
        rows = [r + e for r, e in zip(rows, extra)]
    if all_namespaces:
        header.insert(0, "Namespace")
        widths.insert(0, fmt.width("Namespace", (meta_of(j).get("namespace", "") for j in jobs), 3))
        shown_jobs = [j for j in jobs if shown(j)]
        rows = [[meta_of(j).get("namespace", "")] + r for j, r in zip(shown_jobs, rows)]
    return fmt.row(header, widths) + "".join(fmt.row(r, widths) for r in rows)


def _job_row(job: Obj, now: float) -> list[Any]:
    status = status_of(job)
    replicas = sum(fmt.num(t, "replicas") for t in spec_of(job).get("tasks") or [] if isinstance(t, dict))
    return [meta_of(job).get("name", ""), fmt.go_date(meta_of(job).get("creationTimestamp")),
            fmt.text(status, "state", "phase"), labels_of(job).get(JOB_TYPE) or "Batch", replicas,
            fmt.num(status, "minAvailable"), fmt.num(status, "pending"), fmt.num(status, "running"),
            fmt.num(status, "succeeded"), fmt.num(status, "failed"), fmt.num(status, "unknown"),
            fmt.num(status, "retryCount")]


def list_jobs(ctx: Context) -> None:
    f = ctx.flags
    jobs = [j for j in ctx.api.list("Job", None if f.all_namespaces else f.namespace)
            if (not f.queue or f.queue == fmt.text(j, "spec", "queue"))
            and (not f.scheduler or f.scheduler == fmt.text(j, "spec", "schedulerName"))
            and (not f.selector or f.selector in meta_of(j).get("name", ""))]
    print_jobs(ctx, jobs, f.all_namespaces)


def print_jobs(ctx: Context, jobs: list[Obj], all_namespaces: bool,
               shown: Callable[[Obj], bool] = lambda _: True) -> None:
    output = ctx.flags.output
    if output in ("json", "yaml"):
        ctx.write(fmt.dump(fmt.as_list([j for j in jobs if shown(j)]), output))
    elif not jobs:
        ctx.write("No resources found\n")
    else:
        ctx.write(job_table(jobs, all_namespaces, output == "wide", ctx.api.now(), shown))


# job view, vjobs -n.
def view_job(ctx: Context) -> None:
    f = ctx.flags
    if not f.name:
        raise Failure("job name (specified by --name or -N) is mandatory to view a particular job")
    show_job(ctx, conditions=True)


def show_job(ctx: Context, conditions: bool) -> None:
    """A job's details and events (Volcano's PrintJobInfo and PrintEvents), or the Job itself
    with -o json|yaml; -o wide adds its pods."""
    f = ctx.flags
    job = ctx.api.get("Job", f.name, f.namespace)
    if f.output in ("json", "yaml"):
        ctx.write(fmt.dump(job, f.output))
        return
    ctx.write(job_info(job, conditions))
    ctx.write(events_table(job_events(ctx.api, job, f.namespace), ctx.api.now()))
    if f.output == "wide":
        from volcanic.vcctl.pods import pod_table
        pods = ctx.api.list("Pod", f.namespace, {JOB_NAME: meta_of(job)["name"]})
        ctx.write("Pods:\n" + (pod_table(pods, ctx.api.now(), wide=True) if pods else "  <none>\n"))


def _line(level: int, text: str) -> str:
    return "  " * level + text + "\n"


def job_info(job: Obj, conditions: bool = True) -> str:
    """Volcano's PrintJobInfo, field for field (API Version and Kind print empty, as Volcano's
    typed client leaves them; vjobs prints no conditions)."""
    meta, spec, status = meta_of(job), spec_of(job), status_of(job)
    labels, annotations = labels_of(job), annotations_of(job)
    out = [_line(0, f"Name:       \t{meta.get('name', '')}"), _line(0, f"Namespace:  \t{meta.get('namespace', '')}"),
           _line(0, f"Labels:     \t{fmt.go_json(labels) if labels else '<none>'}"),
           _line(0, f"Annotations:\t{fmt.go_json(annotations) if annotations else '<none>'}"),
           _line(0, "API Version:\t"), _line(0, "Kind:       \t"), _line(0, "Metadata:"),
           _line(1, f"Creation Timestamp:\t{fmt.go_time(meta.get('creationTimestamp'))}"),
           _line(1, f"Generate Name:     \t{meta.get('generateName', '')}"),
           _line(1, f"Generation:        \t{fmt.num(meta, 'generation')}"),
           _line(1, f"Resource Version:  \t{meta.get('resourceVersion', '')}"),
           _line(1, f"UID:               \t{meta.get('uid', '')}"),
           _line(0, "Spec:"), _line(1, f"Min Available:     \t{fmt.num(spec, 'minAvailable')}"),
           _line(1, "Plugins:"), _line(2, f"Env:\t{fmt.go_slice(dig(spec, 'plugins', 'env'))}"),
           _line(2, f"Ssh:\t{fmt.go_slice(dig(spec, 'plugins', 'ssh'))}"),
           _line(1, f"Scheduler Name:    \t{fmt.text(spec, 'schedulerName')}"), _line(1, "Tasks:")]
    for task in spec.get("tasks") or []:
        out += _task_info(task if isinstance(task, dict) else {})
    out += [_line(0, "Status:")]
    for title, field in (("Succeeded:    ", "succeeded"), ("Pending:      ", "pending"), ("Running:      ", "running"),
                         ("Failed:       ", "failed"), ("Terminating:  ", "terminating"),
                         ("Unknown:      ", "unknown"), ("RetryCount:   ", "retryCount"),
                         ("Min Available:", "minAvailable"), ("Version:      ", "version")):
        if fmt.num(status, field) > 0:
            out.append(_line(1, f"{title}\t{fmt.num(status, field)}"))
    out += [_line(1, "State:"), _line(2, f"Phase:\t{fmt.text(status, 'state', 'phase')}")]
    controlled = status.get("controlledResources")
    if isinstance(controlled, dict) and controlled:
        out.append(_line(1, "Controlled Resources:"))
        out += [_line(2, f"{k}: \t{v}") for k, v in sorted(controlled.items())]
    if conditions and status.get("conditions"):
        out.append(_line(1, "Conditions:\n    Status\tTransitionTime"))
        for c in status["conditions"]:
            stamp = dig(c, "lastTransitionTime")
            out.append(_line(2, f"{fmt.text(c, 'status')} \t{fmt.go_time(stamp) if stamp else '<nil>'} "))
    return "".join(out)


def _task_info(task: Obj) -> list[str]:
    template = task.get("template") if isinstance(task.get("template"), dict) else {}
    tmeta, tspec = meta_of(template), spec_of(template)
    annotations = annotations_of(template)
    out = [_line(2, f"Name:\t{fmt.text(task, 'name')}"), _line(2, f"Replicas:\t{fmt.num(task, 'replicas')}"),
           _line(2, "Template:"), _line(3, "Metadata:"), _line(4, "Annotations:"),
           _line(5, f"Cri . Cci . Io / Container - Type:          \t"
                    f"{annotations.get('cri.cci.io/container-type', '')}"),
           _line(5, f"Kubernetes . Io / Availablezone:            \t"
                    f"{annotations.get('kubernetes.io/availablezone', '')}"),
           _line(5, f"Network . Alpha . Kubernetes . Io / Network:\t"
                    f"{annotations.get('network.alpha.kubernetes.io/network', '')}"),
           _line(4, f"Creation Timestamp:\t{fmt.go_time(tmeta.get('creationTimestamp'))}"),
           _line(3, "Spec:"), _line(4, "Containers:")]
    for c in tspec.get("containers") or []:
        c = c if isinstance(c, dict) else {}
        out.append(_line(5, "Command:"))
        out += [_line(6, str(arg)) for arg in c.get("command") or []]
        out += [_line(5, f"Image:\t{fmt.text(c, 'image')}"), _line(5, f"Name: \t{fmt.text(c, 'name')}"),
                _line(5, "Ports:")]
        for p in c.get("ports") or []:
            out += [_line(6, f"Container Port:\t{fmt.num(p, 'containerPort')}"),
                    _line(6, f"Name:          \t{fmt.text(p, 'name')}")]
        out += [_line(5, "Resources:")]
        for title, field in (("Limits:", "limits"), ("Requests:", "requests")):
            values = dig(c, "resources", field) or {}
            out += [_line(6, title), _line(7, f"Cpu:   \t{fmt.quantity(values.get('cpu'))}"),
                    _line(7, f"Memory:\t{fmt.quantity(values.get('memory'))}")]
        out.append(_line(6, f"Working Dir:\t{fmt.text(c, 'workingDir')}"))
    out.append(_line(4, "Image Pull Secrets:"))
    out += [_line(5, f"Name:     \t{fmt.text(s, 'name')}") for s in tspec.get("imagePullSecrets") or []]
    out.append(_line(4, f"Restart Policy:   \t{fmt.text(tspec, 'restartPolicy')}"))
    return out


def job_events(api: Api, job: Obj, namespace: str) -> list[Obj]:
    """The namespace's events named after the job (`<job>.<suffix>`), as Volcano's GetEvents
    finds them; none when they cannot be listed."""
    try:
        events = api.list("Event", namespace)
    except StoreError:
        return []
    prefix = meta_of(job).get("name", "") + "."
    return [e for e in events if meta_of(e).get("name", "").startswith(prefix)]


def events_table(events: list[Obj], now: float) -> str:
    """Volcano's PrintEvents (its header says "Form" for the source)."""
    if not events:
        return "Events: \t<none>\n"
    out = [f"Events:\n{'Type':<15}\t{'Reason':<40}\t{'Age':<30}\t{'Form':<40}\tMessage\n",
           f"{'-------':<15}\t{'-------':<40}\t{'-------':<30}\t{'-------':<40}\t-------\n"]
    for e in events:
        first = fmt.since(e.get("firstTimestamp"), now, volcano=True)
        count = fmt.num(e, "count")
        age = f"{fmt.since(e.get('lastTimestamp'), now, volcano=True)} (x{count} over {first})" if count > 1 else first
        source = [fmt.text(e, "source", "component")] + ([e["source"]["host"]] if dig(e, "source", "host") else [])
        out.append(f"{fmt.text(e, 'type'):<15}\t{fmt.text(e, 'reason'):<40}\t{age:<30}\t{', '.join(source):<40}\t"
                   f"{fmt.text(e, 'message').strip()}\n")
    return "".join(out)


# job suspend, resume (and queue open, close): bus Commands.
def issue_command(api: Api, target: Obj, action: str, namespace: str) -> Obj:
    """A bus Command for `target`, as Volcano's CreateJobCommand and CreateQueueCommand make
    it: named `<target>-<action>-` plus the server's suffix, owned by its target (a controller
    reference), in `namespace`."""
    meta = meta_of(target)
    ref = {"apiVersion": target.get("apiVersion") or KINDS[target["kind"]].api_version, "kind": target["kind"],
           "name": meta["name"], "uid": meta.get("uid", ""), "controller": True, "blockOwnerDeletion": True}
    command = {"apiVersion": KINDS["Command"].api_version, "kind": "Command",
               "metadata": {"generateName": f"{meta['name']}-{action.lower()}-", "namespace": namespace,
                            "ownerReferences": [ref]},
               "target": dict(ref), "action": action}
    return api.create(command)


def job_command(action: str, missing: str) -> Callable[[Context], None]:
    def run(ctx: Context) -> None:
        f = ctx.flags
        if not f.name:
            raise Failure(missing)
        job = ctx.api.get("Job", f.name, f.namespace)
        issue_command(ctx.api, job, action, meta_of(job).get("namespace") or f.namespace)
    return run


def delete_job(said: str, missing: str) -> Callable[[Context], None]:
    """`job delete` ("delete job x successfully") and vcancel ("cancel job x successfully")."""
    def run(ctx: Context) -> None:
        f = ctx.flags
        if not f.name:
            raise Failure(missing)
        ctx.api.delete("Job", f.name, f.namespace)
        ctx.write(f"{said} job {f.name} successfully\n")
    return run


def group() -> Command:
    named = [NAMESPACE, NAME]
    return Command("job", "vcctl command line operation job", commands=[
        Command("run", "run job by parameters from the command line", run=run_job,
                flags=COMMON + RUN_FLAGS + [Flag("filename", "f", usage="the yaml file of job", complete="files")]),
        Command("list", "list job information", run=list_jobs, flags=COMMON + [
            Flag("queue", "q", usage="list job with specified queue name", complete="Queue"), NAMESPACE,
            Flag("scheduler", "S", usage="list job with specified scheduler name"),
            Flag("all-namespaces", type="bool", usage="list jobs in all namespaces"),
            Flag("selector", usage="fuzzy matching jobName"), OUTPUT]),
        Command("view", "show job information", run=view_job, flags=COMMON + named + [OUTPUT]),
        Command("suspend", "abort a job", run=job_command("AbortJob", "job name is mandatory to suspend a particular "
                                                          "job"), flags=COMMON + named),
        Command("resume", "resume a job", run=job_command("ResumeJob", "job name is mandatory to resume a particular "
                                                          "job"), flags=COMMON + named),
        Command("delete", "delete a job", run=delete_job("delete", "job name is mandatory to delete a particular job"),
                flags=COMMON + named),
        *foresight.job_commands(COMMON, NAMESPACE, NAME, OUTPUT),
    ])
