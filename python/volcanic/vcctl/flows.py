"""`vcctl jobflow ...` and `vcctl jobtemplate ...` (Volcano's pkg/cli/jobflow and jobtemplate):
create (from a YAML file), list, get, delete and describe of JobFlows and JobTemplates
(volcanic.controllers.jobflow runs them). On a server without their CRDs every command stops
at the first request with one line naming the kind (api.NotServed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import yaml

from volcanic.kube.errors import AdmissionError, InvalidObject, StoreError
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj, dig, meta_of, spec_of
from volcanic.vcctl import format as fmt
from volcanic.vcctl.command import Command, Context, Failure, Flag, message_of
from volcanic.vcctl.jobs import COMMON, OUTPUT

# ObjectMeta's fields in Go's order (describe -o json prints a typed object).
META_ORDER = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
              "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
              "ownerReferences", "finalizers", "managedFields")


@dataclass(frozen=True)
class FlowKind:
    """What differs between the jobflow and jobtemplate commands."""

    kind: str  # JobFlow, JobTemplate
    command: str  # jobflow, jobtemplate
    noun: str  # "jobflow", "job template" (in usages and messages)
    status: Callable[[], Obj]  # the empty status a typed object prints
    all_namespaces: bool  # list takes --all-namespaces
    columns: tuple[tuple[str, Callable[[Obj, float], str]], ...]  # list and get
    wide: tuple[tuple[str, Callable[[Obj, float], str]], ...]  # added by -o wide


def _age(obj: Obj, now: float) -> str:
    return fmt.since(meta_of(obj).get("creationTimestamp"), now)


def _count(field: str) -> Callable[[Obj, float], str]:
    return lambda obj, _: str(len(spec_of(obj).get(field) or []))


JOBFLOW = FlowKind(
    "JobFlow", "jobflow", "jobflow", lambda: {"state": {}}, True,
    (("Name", lambda o, _: meta_of(o).get("name", "")), ("Namespace", lambda o, _: meta_of(o).get("namespace", "")),
     ("Phase", lambda o, _: fmt.text(o, "status", "state", "phase")), ("Age", _age)),
    (("Flows", _count("flows")), ("JobRetainPolicy", lambda o, _: fmt.text(o, "spec", "jobRetainPolicy")),
     ("Completed", lambda o, _: str(len(dig(o, "status", "completedJobs") or []))),
     ("Failed", lambda o, _: str(len(dig(o, "status", "failedJobs") or []))),
     ("Running", lambda o, _: str(len(dig(o, "status", "runningJobs") or [])))))
JOBTEMPLATE = FlowKind(
    "JobTemplate", "jobtemplate", "job template", dict, False,
    (("Name", lambda o, _: meta_of(o).get("name", "")), ("Namespace", lambda o, _: meta_of(o).get("namespace", ""))),
    (("Queue", lambda o, _: fmt.text(o, "spec", "queue")), ("MinAvailable", lambda o, _: str(fmt.num(o, "spec",
                                                                                              "minAvailable"))),
     ("Tasks", _count("tasks")), ("Age", _age)))


def table(k: FlowKind, objs: list[Obj], now: float, wide: bool) -> str:
    """Volcano's PrintJobFlows / PrintJobTemplates: each column its longest (header included)
    plus 4."""
    columns = k.columns + (k.wide if wide else ())
    rows = [[cell(o, now) for _, cell in columns] for o in objs]
    return fmt.table([title for title, _ in columns], rows, 4)


def documents(path: str) -> list[Obj]:
    """The objects of a file as Volcano's create and delete read it: split at every `---`."""
    try:
        with open(path, encoding="utf-8") as f:
            data = f.read()
    except OSError as e:
        raise Failure(f"open {path}: {(e.strerror or str(e)).lower()}") from None
    objs = []
    for doc in data.split("---"):
        if not doc.strip():
            continue
        try:
            obj = yaml.safe_load(doc)
        except yaml.YAMLError as e:
            raise Failure(f"error converting YAML to JSON: {' '.join(str(e).split())}") from None
        if not isinstance(obj, dict):
            raise Failure("error unmarshaling JSON: the document is not an object")
        objs.append(obj)
    return objs


def _typed(k: FlowKind, obj: Obj) -> Obj:
    kind = KINDS[k.kind]
    meta = dict(meta_of(obj))
    meta["namespace"] = meta.get("namespace") or "default"
    return dict(obj, apiVersion=kind.api_version, kind=kind.name, metadata=meta)


def create(k: FlowKind) -> Callable[[Context], None]:
    def run(ctx: Context) -> None:
        for obj in documents(ctx.flags.file):
            obj = _typed(k, obj)
            meta = obj["metadata"]
            try:
                ctx.api.create(obj)
            except (StoreError, AdmissionError, InvalidObject) as e:
                ctx.err.write(f"Failed to create {k.kind}: {message_of(e)}\n")
                continue
            ctx.write(f"Created {k.kind}: {meta['namespace']}/{meta.get('name', '')}\n")
    return run


def delete(k: FlowKind) -> Callable[[Context], None]:
    def run(ctx: Context) -> None:
        f = ctx.flags
        if f.file:
            for obj in documents(f.file):
                meta = _typed(k, obj)["metadata"]
                try:
                    ctx.api.delete(k.kind, meta.get("name", ""), meta["namespace"])
                except (StoreError, AdmissionError) as e:
                    ctx.err.write(f"Failed to delete {k.kind}: {message_of(e)}\n")
                    continue
                ctx.write(f"Deleted {k.kind}: {meta['namespace']}/{meta.get('name', '')}\n")
            return
        if not f.name:
            raise Failure(f"{k.noun} name must be specified")
        obj = ctx.api.get(k.kind, f.name, f.namespace)
        namespace = meta_of(obj).get("namespace") or f.namespace
        ctx.api.delete(k.kind, f.name, namespace)
        ctx.write(f"Deleted {k.kind}: {namespace}/{f.name}\n")
    return run


def list_(k: FlowKind) -> Callable[[Context], None]:
    def run(ctx: Context) -> None:
        f = ctx.flags
        objs = ctx.api.list(k.kind, None if f.get("all_namespaces") else f.namespace)
        ctx.write(fmt.listing(objs, f.output, lambda: table(k, objs, ctx.api.now(), f.output == "wide")))
    return run


def get(k: FlowKind) -> Callable[[Context], None]:
    def run(ctx: Context) -> None:
        f = ctx.flags
        if not f.name:
            raise Failure(f"name is mandatory to get the particular {k.noun} details")
        obj = ctx.api.get(k.kind, f.name, f.namespace)
        if f.output in ("json", "yaml"):
            ctx.write(fmt.dump(obj, f.output))
        else:
            ctx.write(table(k, [obj], ctx.api.now(), f.output == "wide"))
    return run


def typed_view(k: FlowKind, obj: Obj) -> dict[str, Any]:
    """The object as Volcano's typed structs print it: kind and apiVersion first, metadata in
    ObjectMeta's order without managedFields, an empty spec and status where it has none."""
    meta = {key: v for key in META_ORDER if (v := meta_of(obj).get(key)) is not None and key != "managedFields"}
    meta.update({key: v for key, v in meta_of(obj).items() if key not in META_ORDER})
    kind = KINDS[k.kind]
    out = {"kind": kind.name, "apiVersion": kind.api_version, "metadata": meta, "spec": obj.get("spec") or {},
           "status": obj.get("status") or k.status()}
    out.update({key: v for key, v in obj.items() if key not in out})
    return out


def describe(k: FlowKind) -> Callable[[Context], None]:
    def run(ctx: Context) -> None:
        f = ctx.flags
        objs = [ctx.api.get(k.kind, f.name, f.namespace)] if f.name else ctx.api.list(k.kind, f.namespace)
        texts = []
        for obj in objs:
            view = typed_view(k, obj)
            if f.format == "json":
                texts.append(fmt.go_json(view, indent=2, sort_keys=False) + "\n")
            else:
                texts.append(fmt.dump(view, "yaml"))
        ctx.write("\n\n".join(texts))
    return run


def group(k: FlowKind) -> Command:
    name = Flag("name", "N", usage=f"the name of {k.noun}", complete=k.kind)
    namespace = Flag("namespace", "n", default="default", usage=f"the namespace of {k.noun}", complete="Namespace")
    file = Flag("file", "f", usage=f"the path to the YAML file containing the {k.noun}", complete="files")
    listing = [namespace] + ([Flag("all-namespaces", type="bool", usage=f"list {k.command}s in all namespaces")]
                             if k.all_namespaces else [])
    return Command(k.command, f"vcctl command line operation {k.command}", commands=[
        Command("create", f"create a {k.command}", run=create(k), flags=COMMON + [file]),
        Command("list", f"list {k.command}s", run=list_(k), flags=COMMON + listing + [OUTPUT]),
        Command("get", f"get a {k.command}", run=get(k), flags=COMMON + [name, namespace, OUTPUT]),
        Command("delete", f"delete a {k.command}", run=delete(k), flags=COMMON + [name, namespace, file]),
        Command("describe", f"describe a {k.command}", run=describe(k), flags=COMMON + [
            name, namespace,
            Flag("format", "o", default="yaml", usage="the format of output", choices=("json", "yaml"))]),
    ])
