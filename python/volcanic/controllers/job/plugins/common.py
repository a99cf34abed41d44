"""What every job plugin shares (reference §2.4): the plugin base class, Go-style flag
parsing, the job's names and hosts, the pod's task and index, and small idempotent edits of
pods and of the store.

Jobs, pods and the objects created are plain Kubernetes JSON dicts. Nothing here keeps state
between calls; every store write names the job as the owner so cascade deletion removes it.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Callable, ClassVar, Iterator

from volcanic.controllers.job.build import owner_reference, pod_name
from volcanic.kube.errors import AlreadyExists, NotFound
from volcanic.kube.keys import TASK_INDEX, TASK_SPEC
from volcanic.kube.objects import Obj, annotation, dig, meta_of, spec_of
from volcanic.kube.store import Store

DEFAULT_TASK_SPEC = "default"               # Volcano's task name for a pod without the annotation
log = logging.getLogger("volcanic.controllers.job.plugins")

FlagValue = bool | int | str


class PluginError(ValueError):
    """A bad plugin name or input (a bad flag is not one: see parse_flags). Raised by a
    plugin it names the plugin; raised through plugins_of() or a hook it also names the job,
    e.g. 'job default/tf: unknown plugin "magic"; known plugins: ...'."""


# --- Flags -------------------------------------------------------------------------------

_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


def parse_flags(plugin: str, arguments: Any, defaults: dict[str, FlagValue]) -> tuple[dict[str, FlagValue], str | None]:
    """Parse `arguments` as a Volcano plugin's flag.FlagSet (ContinueOnError) does: "-x" or
    "--x"; "--x=v" or, for a non-bool flag, "--x v"; a bare bool flag means true; "--" or
    the first argument that is not a flag ends parsing. The type of each default (bool, int,
    str) is the flag's type. Returns the values and the parse error, if any, in Go's words
    (e.g. "flag provided but not defined: -no-root"): like Go, parsing stops at the first
    error and the flags read before it keep their values; the plugin logs the error and goes
    on, as Volcano's plugins do. Arguments that are not a list of strings are a PluginError
    (the CRD types them as one; Volcano could not decode the job)."""
    if not isinstance(arguments, (list, tuple)) or not all(isinstance(a, str) for a in arguments):
        raise PluginError(f'plugin "{plugin}": arguments must be a list of strings, got {arguments!r}')
    values = dict(defaults)
    i = 0
    while i < len(arguments):
        arg = arguments[i]
        i += 1
        if arg == "--" or len(arg) < 2 or not arg.startswith("-"):
            break
        name, has_value, value = arg[2:].partition("=") if arg.startswith("--") else arg[1:].partition("=")
        if not name or name.startswith(("-", "=")):
            return values, f"bad flag syntax: {arg}"
        if name not in defaults:
            return values, f"flag provided but not defined: -{name}"
        kind = type(defaults[name])
        if kind is bool and not has_value:
            value = "true"
        elif not has_value:
            if i >= len(arguments):
                return values, f"flag needs an argument: -{name}"
            value, i = arguments[i], i + 1
        parsed = _flag_value(kind, value)
        if parsed is None:
            what = "invalid boolean value" if kind is bool else "invalid value"
            return values, f'{what} "{value}" for {"" if kind is bool else "flag "}-{name}: parse error'
        values[name] = parsed
    return values, None


def _flag_value(kind: type, text: str) -> FlagValue | None:
    """`text` as Go's flag package reads a value of `kind`; None if it cannot."""
    if kind is bool:
        return True if text in _TRUE else False if text in _FALSE else None
    if kind is int:
        try:
            return int(text, 0)
        except ValueError:
            if re.fullmatch(r"[+-]?0[0-7]+", text):  # Go reads a leading 0 as octal
                return int(text, 8)
            return None
    return text


# --- The job -----------------------------------------------------------------------------

def job_name(job: Obj) -> str:
    return job["metadata"]["name"]


def job_namespace(job: Obj) -> str:
    return job["metadata"].get("namespace") or "default"


def job_key(job: Obj) -> str:
    """"namespace/name", as error messages name a job."""
    return f"{job_namespace(job)}/{job_name(job)}"


def tasks(job: Obj) -> list[Obj]:
    return spec_of(job).get("tasks") or []


def task_named(job: Obj, name: str) -> Obj | None:
    """The first task called `name` (Volcano's GetTaskIndexUnderJob), or None."""
    return next((t for t in tasks(job) if isinstance(t, dict) and t.get("name") == name), None)


def replicas(task: Obj) -> int:
    """A task's replica count; an absent field is 0, as in the Go struct."""
    return int(task.get("replicas") or 0)


def env_key(task: str) -> str:
    """A task name as it appears in env names: '-' becomes '_', upper-cased (svc plugin)."""
    return task.replace("-", "_").upper()


def host_names(job: Obj, task: Obj) -> list[tuple[str, str]]:
    """(hostname, "hostname.subdomain") for each pod of `task`: the pod name and the job name
    unless the task's template sets hostname or subdomain; a template hostname gives a single
    entry, since every replica shares it (Volcano's GenerateHosts / MakeDomainName)."""
    spec = spec_of(task.get("template"))
    fixed, subdomain = spec.get("hostname") or "", spec.get("subdomain") or job_name(job)
    if fixed:
        return [(fixed, f"{fixed}.{subdomain}")] if replicas(task) > 0 else []
    names = (pod_name(job, task["name"], i) for i in range(replicas(task)))
    return [(n, f"{n}.{subdomain}") for n in names]


def task_hosts(job: Obj, task: Obj) -> list[str]:
    """The domain names of a task's pods, "<job>-<task>-<i>.<job>" by default."""
    return [domain for _, domain in host_names(job, task)]


def domain_name(job: Obj, task: Obj, index: int) -> str:
    """Pod `index` of `task` as "<hostname>.<subdomain>" (Volcano's MakeDomainName): unlike
    task_hosts, a template hostname is repeated for every index."""
    spec = spec_of(task.get("template"))
    host = spec.get("hostname") or pod_name(job, task["name"], index)
    return f"{host}.{spec.get('subdomain') or job_name(job)}"


# --- Controlled resources ----------------------------------------------------------------

def _controlled(job: Obj) -> dict[str, str]:
    status = job.get("status")
    if not isinstance(status, dict):
        status = job["status"] = {}
    resources = status.get("controlledResources")
    if not isinstance(resources, dict):
        resources = status["controlledResources"] = {}
    return resources


def is_controlled(job: Obj, plugin: str) -> bool:
    """Whether job.status.controlledResources["plugin-<name>"] records the plugin's objects."""
    return dig(job, "status", "controlledResources", f"plugin-{plugin}") == plugin


def mark_controlled(job: Obj, plugin: str) -> None:
    _controlled(job)[f"plugin-{plugin}"] = plugin


def unmark_controlled(job: Obj, plugin: str) -> None:
    _controlled(job).pop(f"plugin-{plugin}", None)


# --- The pod -----------------------------------------------------------------------------

def pod_task(pod: Obj) -> str:
    """The pod's task (annotation volcano.sh/task-spec; "default" without it, as Volcano's
    GetTaskKey)."""
    return annotation(pod, TASK_SPEC) or DEFAULT_TASK_SPEC


def pod_index(pod: Obj) -> str:
    """The pod's index in its task as a string: the last '-' part of a name with at least
    three parts, as Volcano's GetPodIndexUnderTask; otherwise (which Volcano reads as "") the
    volcano.sh/task-index annotation, or ""."""
    parts = (meta_of(pod).get("name") or "").split("-")
    if len(parts) >= 3:
        return parts[-1]
    return annotation(pod, TASK_INDEX) or ""


def pod_index_number(pod: Obj, plugin: str, job: Obj) -> int:
    """pod_index() as an int; a non-number is a PluginError (Volcano fails the pod's creation)."""
    text = pod_index(pod)
    try:
        return int(text)
    except ValueError:
        raise PluginError(f'job {job_key(job)}: plugin "{plugin}": pod '
                          f'"{pod["metadata"].get("name")}" has no numeric index ("{text}")') from None


def pod_spec(pod: Obj) -> Obj:
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        spec = pod["spec"] = {}
    return spec


def containers(pod: Obj, init: bool = True) -> Iterator[Obj]:
    """The pod's containers, then (when `init`) its init containers."""
    spec = pod_spec(pod)
    yield from spec.get("containers") or []
    if init:
        yield from spec.get("initContainers") or []


def set_env(container: Obj, entry: Obj) -> None:
    """Add an env entry. Volcano appends, so a variable the template already sets appears
    twice and, as Kubernetes lets the last one win, the plugin's value applies. We drop the
    earlier entry instead: the same value wins, without the duplicate."""
    env = [e for e in container.get("env") or [] if e.get("name") != entry["name"]]
    env.append(entry)
    container["env"] = env


def set_env_value(container: Obj, name: str, value: str) -> None:
    set_env(container, {"name": name, "value": value})


def open_port(container: Obj, name: str, port: int) -> None:
    """Add containerPort `port` called `name` unless the container already exposes that
    port number (as Volcano's mpi and pytorch plugins check)."""
    ports = container.get("ports") or []
    if not any(p.get("containerPort") == port for p in ports):
        container["ports"] = ports + [{"name": name, "containerPort": port}]


def add_volume(pod: Obj, volume: Obj) -> None:
    """Add a pod volume unless one of that name exists (Volcano appends blindly; a second
    volume of the same name would be rejected by the API server)."""
    spec = pod_spec(pod)
    volumes = spec.get("volumes") or []
    if not any(v.get("name") == volume["name"] for v in volumes):
        spec["volumes"] = volumes + [volume]


def add_mount(container: Obj, mount: Obj) -> None:
    """Add a volume mount unless the container already mounts something at that path (two
    mounts at one path would be rejected by the API server)."""
    mounts = container.get("volumeMounts") or []
    if not any(m.get("mountPath") == mount["mountPath"] for m in mounts):
        container["volumeMounts"] = mounts + [mount]


# --- The store ---------------------------------------------------------------------------

def owned_object(job: Obj, api_version: str, kind: str, name: str, **body: Any) -> Obj:
    """A namespaced object in the job's namespace, controlled by the job (cascade deletion)."""
    return {"apiVersion": api_version, "kind": kind,
            "metadata": {"name": name, "namespace": job_namespace(job),
                         "ownerReferences": [owner_reference(job)]},
            **body}


def create_if_absent(store: Store, obj: Obj) -> None:
    """Create `obj` unless an object of its kind and name exists (Volcano's *IfNotExist)."""
    meta = obj["metadata"]
    if store.get(obj["kind"], meta["name"], meta["namespace"]) is None:
        try:
            store.create(obj)
        except AlreadyExists:
            pass


def create_or_update(store: Store, obj: Obj, field: str,
                     unchanged: Callable[[Obj], bool] | None = None) -> None:
    """Create `obj`, or, if it exists, replace its `field` (e.g. "data") with obj's unless
    `unchanged(existing)` says the existing one already fits (default: the fields are equal).
    Volcano's CreateOrUpdateConfigMap / CreateOrUpdateSecret."""
    meta = obj["metadata"]
    existing = store.get(obj["kind"], meta["name"], meta["namespace"])
    if existing is None:
        try:
            store.create(obj)
            return
        except AlreadyExists:
            existing = store.get(obj["kind"], meta["name"], meta["namespace"])
            if existing is None:
                raise
    fits = unchanged(existing) if unchanged else existing.get(field) == obj.get(field)
    if not fits:
        existing[field] = obj.get(field)
        store.update(existing)


def delete_if_present(store: Store, kind: str, name: str, namespace: str) -> None:
    try:
        store.delete(kind, name, namespace)
    except NotFound:
        pass


# --- The plugin interface ----------------------------------------------------------------

class JobPlugin:
    """A Volcano job plugin (reference §2.4): hooks the job controller calls when it builds a
    pod and when it initialises, updates or kills a job. `FLAGS` maps each accepted flag to
    its default; the parsed values are in `self.flags`, and the parse error that stopped
    reading them (logged; the job goes on, as in Volcano) in `self.flag_error`.

    The defaults here are what the plugins without cluster objects do: on_job_add records
    controlledResources["plugin-<name>"] once, on_job_delete drops it, and the pod and update
    hooks change nothing."""

    name: ClassVar[str]
    FLAGS: ClassVar[dict[str, FlagValue]] = {}
    PARSES_FLAGS: ClassVar[bool] = True   # False: the arguments are ignored, as env's are

    def __init__(self, arguments: list[str]) -> None:
        self.arguments = list(arguments) if isinstance(arguments, (list, tuple)) else arguments
        self.flag_error: str | None = None
        if not self.PARSES_FLAGS:
            self.flags: dict[str, FlagValue] = {}
            return
        self.flags, self.flag_error = parse_flags(self.name, arguments, self.FLAGS)
        if self.flag_error:
            # Volcano's plugins log this (klog.Errorf) and go on with what was parsed.
            log.error("plugin %s flagset parse failed, err: %s", self.name, self.flag_error)

    def on_pod_create(self, pod: Obj, job: Obj) -> None:
        """Mutate `pod`, about to be created, in place."""

    def on_job_add(self, job: Obj, store: Store) -> None:
        """Create the plugin's objects, once; record controlledResources."""
        if not is_controlled(job, self.name):
            mark_controlled(job, self.name)

    def on_job_delete(self, job: Obj, store: Store) -> None:
        """Remove what on_job_add created; drop the controlledResources entry."""
        if is_controlled(job, self.name):
            unmark_controlled(job, self.name)

    def on_job_update(self, job: Obj, store: Store) -> None:
        """Bring the plugin's objects in line with a changed job."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.arguments!r})"
