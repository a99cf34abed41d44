"""Scheduler plugins written in Python (docs/plugins-python.md).

A plugin is a subclass of `Plugin` with a `name` and any subset of the hooks below, made
known by `register_plugin(cls)` or by an entry point in the group "volcanic.plugins" (the
entry point's name is the plugin's name; it is loaded the first time a configuration names
a plugin the engine does not know, and at most once). A configuration then names it in its
tiers like a built-in plugin, with the same enable flags and combination rules.

Registered classes are kept here by name; each Scheduler copies them into its own registry
when it is made (so registering later changes no existing Scheduler), after the plugins
volcanic itself writes in Python (BUILTIN_PLUGINS: extender), which every Scheduler has. A
name is registered once: registering a taken name raises ConfigError, as kube-scheduler's
registry does, rather than replacing the plugin behind the back of schedulers that use it.

Hooks (views are read-only and valid only while their session runs):
    job_order(a, b) -> int          <0: a first, >0: b first, 0: no opinion
    task_order(a, b) -> int
    queue_order(a, b) -> int
    predicate(task, node) -> str | None          a str rejects the node, with that reason
                                                 (an Unresolvable: evicting cannot help)
    node_order(task, node) -> float
    batch_node_order(task, nodes) -> Sequence[float]   one score per node, added to the rest
    preemptable(preemptor, candidates) -> list | None  victims among candidates; None abstains
    reclaimable(reclaimer, candidates) -> list | None
    job_ready(job) -> bool
    job_pipelined(job) -> bool | None            True permits, False rejects, None abstains
    job_enqueueable(job) -> bool | None
    overused(queue) -> bool
    on_allocate(task) -> str | None    the task was placed (task.node); a str refuses the
                                       placement, which is undone (ignored where Volcano
                                       cannot refuse: backfill, an eviction undone)
    on_deallocate(task)                the task was taken off its node, or evicted
    on_session_open(session)
    on_session_close(session)
An instance leaves out a hook its class defines by setting the attribute to None in
__init__ (e.g. what its arguments do not ask for): it is then not registered at all.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
from typing import Any, ClassVar, Iterable, Mapping, TypeVar

from volcanic import _core
from volcanic._core import JobView, LabelsView, NodeView, QueueView, ResourceView, SessionView, TaskView
from volcanic.errors import ConfigError

__all__ = ["BUILTIN_PLUGINS", "ENTRY_POINT_GROUP", "HOOKS", "JobView", "LabelsView", "NodeView", "Plugin",
           "QueueView", "ResourceView", "SessionView", "TaskView", "Unresolvable", "load_entry_point_plugins",
           "plugin_names", "register_plugin", "unregister_plugin"]

HOOKS: tuple[str, ...] = tuple(_core.PLUGIN_HOOKS)
ENTRY_POINT_GROUP = "volcanic.plugins"
# The plugins volcanic writes in Python, by name: "module:class", imported when first needed.
BUILTIN_PLUGINS: dict[str, str] = {"extender": "volcanic.scheduler.extender:Extender"}


class Unresolvable(str):
    """A predicate's reason for a node that evicting pods cannot make fit (kube's
    UnschedulableAndUnresolvable): preempt and reclaim do not try that node. A plain str is
    kube's Unschedulable: they may."""

    __slots__ = ()


class Plugin:
    """Base class of scheduler plugins written in Python.

    Class attributes:
        name: the name configurations use in their tiers (required, not a built-in's name).
        node_local: a promise that predicate, node_order and batch_node_order answer from the
            task's class alone (its requests and placement constraints: node selector,
            affinity, tolerations, host ports) and the node's own state, and that a node's
            batch score does not depend on the other nodes of the batch. With it the engine
            caches answers per task class and asks again only for nodes that changed
            (docs/plugins-python.md). Default False: correct for any plugin, but the node
            hooks are called for every node and every task.

    An instance is made per session (and once when a configuration naming the plugin is
    loaded, to check its arguments) from the plugin's `arguments` in the configuration. Raise
    ValueError (or volcanic.ConfigError) for a bad argument: it becomes a ConfigError naming
    the plugin. Define only the hooks the plugin needs: a hook it does not define costs
    nothing, and the base class defines none; an instance may set a hook to None in __init__
    to leave it out as well.
    """

    name: ClassVar[str] = ""
    node_local: ClassVar[bool] = False

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        self.arguments = arguments


P = TypeVar("P", bound=type)

# The registered Python plugin classes by name.
_registered: dict[str, type[Plugin]] = {}


def register_plugin(cls: P) -> P:
    """Makes the plugin class usable by name in configurations of Schedulers made from now on;
    returns it, so it also works as a class decorator.

    Raises TypeError when `cls` is not a subclass of volcanic.Plugin or a hook is not
    callable, and ConfigError when the class has no name, takes a built-in plugin's name, or
    takes the name of a plugin already registered (unregister_plugin it first to replace it).
    """
    if not (isinstance(cls, type) and issubclass(cls, Plugin)):
        raise TypeError(f"register_plugin: {cls!r} is not a subclass of volcanic.Plugin")
    name = getattr(cls, "name", "")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"register_plugin: {cls.__qualname__} needs a class attribute `name`, the name "
                          "configurations use for it in their tiers")
    if not isinstance(cls.node_local, bool):
        raise TypeError(f"register_plugin: {cls.__qualname__}.node_local must be True or False")
    for h in _hooks_of(cls):
        if not callable(getattr(cls, h)):
            raise TypeError(f"register_plugin: {cls.__qualname__}.{h} must be a method")
    if name in _core.builtin_plugin_names() or name in BUILTIN_PLUGINS:
        raise ConfigError(f'register_plugin: "{name}" is the name of a built-in plugin; give the Python plugin '
                          "another name")
    if name in _registered:
        taken = _registered[name]
        raise ConfigError(f'register_plugin: a plugin named "{name}" is already registered '
                          f"({taken.__module__}.{taken.__qualname__}); give {cls.__qualname__} another name, or "
                          f'call unregister_plugin("{name}") first to replace it')
    _registered[name] = cls
    return cls


def unregister_plugin(name: str) -> None:
    """Forgets the Python plugin registered as `name`, so the name may be registered again.
    Schedulers already made keep it. Raises ConfigError when no Python plugin has that name."""
    if _registered.pop(name, None) is None:
        raise ConfigError(f'unregister_plugin: no Python plugin is registered as "{name}"')
    _loaded.discard(name)


def plugin_names() -> list[str]:
    """The names configurations may use now: the built-in plugins and the registered ones."""
    return sorted([*_core.builtin_plugin_names(), *BUILTIN_PLUGINS, *_registered])


def registered_plugins() -> list[tuple[str, type[Plugin], list[str], bool]]:
    """The built-in Python plugins and the registered classes as a Scheduler's registry takes
    them: (name, class, the hooks it defines, node_local)."""
    classes = [*_builtin_classes().items(), *_registered.items()]
    return [(name, cls, _hooks_of(cls), cls.node_local) for name, cls in classes]


_builtins: dict[str, type[Plugin]] = {}


def _builtin_classes() -> dict[str, type[Plugin]]:
    """BUILTIN_PLUGINS' classes, imported once (they import this module)."""
    if not _builtins:
        for name, where in BUILTIN_PLUGINS.items():
            module, _, attr = where.partition(":")
            _builtins[name] = getattr(importlib.import_module(module), attr)
    return _builtins


def _hooks_of(cls: type) -> list[str]:
    """The hooks the class defines (the base class defines none)."""
    return [h for h in HOOKS if getattr(cls, h, None) is not None]


# The group's entry points by name, read once; and the names loaded from them.
_entry_points: dict[str, importlib.metadata.EntryPoint] | None = None
_loaded: set[str] = set()


def _scan_entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    global _entry_points
    if _entry_points is None:
        found: dict[str, importlib.metadata.EntryPoint] = {}
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            found.setdefault(ep.name, ep)  # two distributions with one name: the first found
        _entry_points = found
    return _entry_points


def load_entry_point_plugins(names: Iterable[str]) -> None:
    """Registers, from the "volcanic.plugins" entry points, each of `names` that no plugin has
    yet. Names that are neither registered nor an entry point are left for the engine, which
    reports them as unknown. A failing entry point is a ConfigError naming it."""
    known: set[str] | None = None
    for name in names:
        if name in _loaded:
            continue
        if known is None:
            known = set(plugin_names())
        if name in known:
            continue
        ep = _scan_entry_points().get(name)
        if ep is None:
            continue
        try:
            cls = ep.load()
        except Exception as e:
            raise ConfigError(f'plugin "{name}": entry point "{ep.value}" (group {ENTRY_POINT_GROUP}) failed to '
                              f"load: {type(e).__name__}: {e}") from e
        if not (isinstance(cls, type) and issubclass(cls, Plugin)) or cls.name != name:
            raise ConfigError(f'plugin "{name}": entry point "{ep.value}" (group {ENTRY_POINT_GROUP}) must be a '
                              f'volcanic.Plugin subclass whose name is "{name}", got {cls!r}')
        register_plugin(cls)
        _loaded.add(name)


def without_unknown_plugins(conf_json: str | None) -> tuple[str | None, list[str]]:
    """The configuration (as load_conf returns it) without the tier entries naming no known
    plugin (built in, registered, or an entry point), and those names, in tier order. Volcano's
    scheduler does this at every session open (pkg/scheduler/framework/framework.go logs
    "Failed to get plugin <name>." and runs without it)."""
    names = plugin_names_in(conf_json)
    load_entry_point_plugins(names)
    known = set(plugin_names())
    unknown = [n for n in names if n not in known]
    if not unknown or conf_json is None:  # None names no plugin: nothing is unknown
        return conf_json, []
    conf = json.loads(conf_json)
    for tier in conf["tiers"]:  # well formed where the names were found (plugin_names_in)
        if isinstance(tier, dict) and isinstance(tier.get("plugins"), list):
            tier["plugins"] = [p for p in tier["plugins"] if not (isinstance(p, dict) and p.get("name") in unknown)]
    return json.dumps(conf), unknown


def plugin_names_in(conf_json: str | None) -> list[str]:
    """The plugin names a configuration (as load_conf returns it) uses, in tier order."""
    if conf_json is None:
        return []
    conf = json.loads(conf_json)
    names = []
    tiers = conf.get("tiers") if isinstance(conf, dict) else None
    for tier in tiers if isinstance(tiers, list) else []:
        plugins = tier.get("plugins") if isinstance(tier, dict) else None
        for p in plugins if isinstance(plugins, list) else []:
            if isinstance(p, dict) and isinstance(p.get("name"), str):
                names.append(p["name"])
    return names
