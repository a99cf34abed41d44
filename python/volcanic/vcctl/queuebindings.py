"""`vcctl queuebinding list|get` (docs/vcctl.md): volcanic's own QueueBindings
(scheduling.volcanic.dev/v1alpha1, docs/queues.md), which Volcano's vcctl has no command for.
Hidden from the help, as volcanic's other additions, so that help reads as Volcano's.

`list` prints one row a binding: its queue, what it binds (the listed namespaces, then the
selector as kubectl prints one) and its limits; `get -N NAME` that row, then the usage per bound
namespace the queuebinding-controller writes in its status beside the limits it counts against.
"""

from __future__ import annotations

from typing import Any, Callable

from volcanic.kube.objects import Obj, as_map, meta_of, spec_of, status_of
from volcanic.vcctl import format as fmt
from volcanic.vcctl.command import Command, Context, Failure, Flag
from volcanic.vcctl.jobs import COMMON, OUTPUT

KIND = "QueueBinding"
LIMITS = ("maxRunningPods", "maxPendingJobs")  # the order the Limits column and usage table show them
NONE = "-"  # no limit, nothing bound
EVERY_NAMESPACE = "<all>"  # an empty selector ({}) selects every namespace
GAP = 3  # between columns, as volcanic's other tables (foresight)
# kubectl's rendering of a selector requirement (labels.Requirement.String).
OPERATORS: dict[str, Callable[[str, list[str]], str]] = {
    "In": lambda key, values: f"{key} in ({','.join(values)})",
    "NotIn": lambda key, values: f"{key} notin ({','.join(values)})",
    "Exists": lambda key, values: key,
    "DoesNotExist": lambda key, values: f"!{key}",
}


def selector_text(selector: Obj) -> str:
    """A LabelSelector as kubectl prints one (metav1.FormatLabelSelector): `team=a,tier in
    (gpu)`, requirements sorted by key, values sorted; EVERY_NAMESPACE for an empty one."""
    terms = [(str(k), f"{k}={v}") for k, v in as_map(selector.get("matchLabels")).items()]
    for e in selector.get("matchExpressions") or ():
        render = OPERATORS.get(str(e.get("operator"))) if isinstance(e, dict) else None
        if render is not None:
            key = str(e.get("key", ""))
            terms.append((key, render(key, sorted(str(v) for v in e.get("values") or ()))))
    return ",".join(text for _, text in sorted(terms, key=lambda t: t[0])) or EVERY_NAMESPACE


def bound_text(binding: Obj) -> str:
    """What a binding binds: its listed namespaces, in its order, then its selector."""
    spec = spec_of(binding)
    parts = [str(n) for n in spec.get("namespaces") or ()]
    if isinstance(spec.get("namespaceSelector"), dict):
        parts.append(selector_text(spec["namespaceSelector"]))
    return ",".join(parts) or NONE


def limit(binding: Obj, name: str) -> Any:
    """A limit of the binding, or None when it sets none."""
    return as_map(spec_of(binding).get("limits")).get(name)


def limits_text(binding: Obj) -> str:
    """`maxRunningPods=100,maxPendingJobs=10`, the limits set; NONE without any."""
    return ",".join(f"{name}={limit(binding, name)}" for name in LIMITS if limit(binding, name) is not None) or NONE


def usage_of(binding: Obj) -> dict[str, Obj] | None:
    """The usage per bound namespace in the binding's status; None before the controller wrote it."""
    usage = status_of(binding).get("namespaces")
    return {str(ns): as_map(u) for ns, u in usage.items()} if isinstance(usage, dict) else None


HEADER = ["Name", "Queue", "Namespaces", "Limits", "Age"]
WIDE = ["Bound"]  # -o wide: the namespaces bound now (the status's, the selector's matches included)


def binding_table(bindings: list[Obj], now: float, wide: bool) -> str:
    rows = [[meta_of(b).get("name", ""), fmt.text(b, "spec", "queue"), bound_text(b), limits_text(b),
             fmt.since(meta_of(b).get("creationTimestamp"), now)]
            + ([",".join(sorted(usage_of(b) or {})) or NONE] if wide else []) for b in bindings]
    return fmt.table(HEADER + (WIDE if wide else []), rows, GAP)


USAGE_HEADER = ["Namespace", "Running pods", "Max running pods", "Pending jobs", "Max pending jobs"]


def usage_table(binding: Obj) -> str:
    """The usage of each bound namespace beside the limits it counts against (NONE: no limit)."""
    usage = usage_of(binding)
    if usage is None:
        return "No usage recorded yet\n"
    if not usage:
        return "No bound namespaces\n"
    running, pending = (NONE if limit(binding, name) is None else limit(binding, name) for name in LIMITS)
    rows = [[ns, fmt.num(u, "runningPods"), running, fmt.num(u, "pendingJobs"), pending]
            for ns, u in sorted(usage.items())]
    return fmt.table(USAGE_HEADER, rows, GAP)


def list_bindings(ctx: Context) -> None:
    output = ctx.flags.output
    bindings = ctx.api.list(KIND)
    ctx.write(fmt.listing(bindings, output, lambda: binding_table(bindings, ctx.api.now(), output == "wide")))


def get_binding(ctx: Context) -> None:
    f = ctx.flags
    if not f.name:
        raise Failure("name is mandatory to get the particular queuebinding details")
    binding = ctx.api.get(KIND, f.name)
    if f.output in ("json", "yaml"):
        ctx.write(fmt.dump(binding, f.output))
        return
    ctx.write(binding_table([binding], ctx.api.now(), f.output == "wide") + "\n" + usage_table(binding))


def group() -> Command:
    name = Flag("name", "N", usage="the name of queuebinding", complete=KIND)
    return Command("queuebinding", "vcctl command line operation queuebinding", hidden=True, commands=[
        Command("list", "list queuebindings", run=list_bindings, flags=COMMON + [OUTPUT]),
        Command("get", "get a queuebinding with the usage of each bound namespace", run=get_binding,
                flags=COMMON + [name, OUTPUT]),
    ])
