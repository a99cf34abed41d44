"""Volcano's hyperNode-controller (pkg/controllers/hypernode/: hypernode_controller.go,
hypernode_handler.go, configmap_handler.go, discovery/manager.go, discovery/label/label.go).

Requests:
- ("status", name): status.nodeCount of the HyperNode (members.node_count), written through
  the status subresource when it differs (absent counts as 0, as Volcano compares). Asked on
  every HyperNode add and update, as Volcano does, and, beyond Volcano (which counts again
  only when the HyperNode changes), when a node is added or deleted or its labels change, for
  the HyperNodes whose members select nodes by pattern or labels, so the count stays true.
- ("config",): the ConfigMap (config.configmap_location) read again on its every add, update
  and delete: a source no longer enabled stops (its HyperNodes stay, as in Volcano), and the
  label source, when enabled, is run again. A ConfigMap that cannot be read keeps the
  configuration running; it and every part left out are logged and recorded as a Warning
  Event (InvalidConfig) on the ConfigMap, naming the field.
- ("discover",): while the label source runs, label.discover over the cached nodes, then
  reconcileTopology: HyperNodes labelled volcano.sh/network-topology-source=label that were
  not discovered are deleted, the others created or updated (spec replaced, labels and
  annotations merged); HyperNodes without the label, made by hand, are never touched. Asked
  when the source (re)starts, a node with one of the configured labels is added or deleted, a
  node's configured labels change, and a HyperNode is deleted.

A write that fails for a reason that may pass (a conflict, a busy or unreachable API server)
makes the runner retry the request; one the API server refuses (an invalid name) is logged
and left, as Volcano logs it.
"""

from __future__ import annotations

import logging
import os
from typing import Any, Callable, Hashable

from volcanic.controllers.events import controller_manager_recorder
from volcanic.controllers.hypernode import label
from volcanic.controllers.hypernode.config import (
    CONFIG_KEY,
    ConfigError,
    configmap_location,
    parse_config,
)
from volcanic.controllers.hypernode.members import node_count, selects_by_node
from volcanic.controllers.runtime import Context, Controller
from volcanic.kube.errors import Conflict, NotFound, StoreError, Unavailable
from volcanic.kube.informers import Handler
from volcanic.kube.keys import NETWORK_TOPOLOGY_SOURCE
from volcanic.kube.objects import Obj, as_map, clone, labels_of, meta_of, status_of

log = logging.getLogger("volcanic.controllers.hypernode")
RETRIED = (Conflict, Unavailable, NotFound)  # failures worth another try
DISCOVER, CONFIG = ("discover",), ("config",)


class HyperNodeController(Controller):
    name = "hyperNode-controller"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.configmap = configmap_location(os.environ)
        # The label source's topology types while it runs, else None.
        self.label_types: dict[str, tuple[str, ...]] | None = None
        # The HyperNodes whose members select nodes by pattern or labels (their counts follow
        # nodes), as an ordered set: the same history gives the same order of writes.
        self._by_node: dict[str, None] = {}
        self.recorder = controller_manager_recorder(ctx)

    def handlers(self) -> dict[str, Handler]:
        return {
            "HyperNode": Handler(on_add=self._hypernode_changed, on_delete=self._hypernode_deleted,
                                 on_update=lambda old, new: self._hypernode_changed(new)),
            "Node": Handler(on_add=self._node_came_or_went, on_delete=self._node_came_or_went,
                            on_update=self._node_updated),
            "ConfigMap": Handler(on_add=self._configmap_changed, on_delete=self._configmap_changed,
                                 on_update=lambda old, new: self._configmap_changed(new)),
        }

    # Handlers.
    def _hypernode_changed(self, hn: Obj) -> None:
        name = hn["metadata"]["name"]
        if selects_by_node(hn):
            self._by_node[name] = None
        else:
            self._by_node.pop(name, None)
        self.queue.add(("status", name))

    def _hypernode_deleted(self, hn: Obj) -> None:
        self._by_node.pop(hn["metadata"]["name"], None)
        self._discover_again()

    def _discover_again(self) -> None:
        if self.label_types is not None:
            self.queue.add(DISCOVER)

    def _node_came_or_went(self, node: Obj) -> None:
        if self._topology_labels(node):
            self._discover_again()
        self._count_again()

    def _node_updated(self, old: Obj, new: Obj) -> None:
        if self._topology_labels(old) != self._topology_labels(new):
            self._discover_again()
        if labels_of(old) != labels_of(new):
            self._count_again()

    def _configmap_changed(self, cm: Obj) -> None:
        if (meta_of(cm).get("namespace"), meta_of(cm).get("name")) == self.configmap:
            self.queue.add(CONFIG)

    def _topology_labels(self, node: Obj) -> dict[str, str]:
        """getNodeNetworkTopologyLabels: the node's labels the label source reads."""
        labels = labels_of(node)
        keys = {k for keys in (self.label_types or {}).values() for k in keys}
        return {k: labels[k] for k in keys if k in labels}

    def _count_again(self) -> None:
        for name in self._by_node:
            self.queue.add(("status", name))

    # Requests.
    def process(self, request: Hashable) -> None:
        if request == CONFIG:
            self._reload()
        elif request == DISCOVER:
            self._discover()
        elif isinstance(request, tuple) and request[0] == "status":
            self._sync_status(request[1])

    def _sync_status(self, name: str) -> None:
        """syncHyperNodeStatus."""
        hn = self.ctx.lister.get("HyperNode", name)
        if hn is None:
            return
        count = node_count(hn, self.ctx.lister.list("Node") if selects_by_node(hn) else [])
        if (status_of(hn).get("nodeCount") or 0) != count:
            self.ctx.store.update_status(dict(hn, status=dict(status_of(hn), nodeCount=count)))

    def _reload(self) -> None:
        """The discovery manager's syncHandler."""
        namespace, name = self.configmap
        cm = self.ctx.lister.get("ConfigMap", name, namespace)
        try:
            conf = parse_config(cm)
        except ConfigError as e:
            self._warn(cm, f"{e}; keeping the running configuration")
            return
        for problem in conf.problems:
            self._warn(cm, problem)
        if conf.label_types is None and self.label_types is not None:
            log.info("hyperNode-controller: label discovery stopped (ConfigMap %s/%s)", namespace, name)
        self.label_types = conf.label_types
        if self.label_types is not None:
            log.info("hyperNode-controller: label discovery (re)started: %s", self.label_types)
            self.queue.add(DISCOVER)

    def _warn(self, cm: Obj | None, problem: str) -> None:
        namespace, name = self.configmap
        message = f"ConfigMap {namespace}/{name}: {CONFIG_KEY}: {problem}"
        log.warning("hyperNode-controller: %s", message)
        if cm is not None:
            self.recorder.event(cm, "Warning", "InvalidConfig", message)

    def _discover(self) -> None:
        if self.label_types is None:
            return
        existing = self.ctx.lister.list("HyperNode")
        self._reconcile(label.SOURCE, label.discover(self.label_types, self.ctx.lister.list("Node"), existing),
                        existing)

    def _reconcile(self, source: str, discovered: list[Obj], existing: list[Obj]) -> None:
        """reconcileTopology: the source's HyperNodes made to be `discovered`; the first
        failure worth retrying is raised once every write was tried."""
        ours = {hn["metadata"]["name"]: hn for hn in existing if labels_of(hn).get(NETWORK_TOPOLOGY_SOURCE) == source}
        failures = [self._write(self._create_or_update, hn, ours.pop(hn["metadata"]["name"], None))
                    for hn in discovered]
        failures += [self._write(self._delete, hn) for _, hn in sorted(ours.items())]
        retry = next((e for e in failures if e is not None), None)
        if retry is not None:
            raise retry

    def _create_or_update(self, hn: Obj, current: Obj | None = None) -> None:
        if current is None:
            log.info("hyperNode-controller: creating HyperNode %s", hn["metadata"]["name"])
            self.ctx.store.create(hn)
            return
        new = clone(current)
        new["spec"] = hn["spec"]
        for field in ("labels", "annotations"):
            merged = {**as_map(meta_of(current).get(field)), **as_map(hn["metadata"].get(field))}
            if merged:
                new["metadata"][field] = merged
        if new != current:
            log.info("hyperNode-controller: updating HyperNode %s", hn["metadata"]["name"])
            self.ctx.store.update(new)

    def _delete(self, hn: Obj) -> None:
        log.info("hyperNode-controller: deleting HyperNode %s", hn["metadata"]["name"])
        try:
            self.ctx.store.delete("HyperNode", hn["metadata"]["name"], uid=hn["metadata"].get("uid"))
        except NotFound:
            pass  # gone already

    def _write(self, write: Callable[..., None], *args: Any) -> StoreError | None:
        """Runs one write of a HyperNode (args[0]); a failure is logged, and returned if it
        is worth retrying."""
        name = args[0]["metadata"]["name"]
        try:
            write(*args)
        except RETRIED as e:
            log.warning("hyperNode-controller: HyperNode %s: %s; retrying", name, e)
            return e
        except (StoreError, ValueError) as e:  # refused: an invalid name, a denial
            log.error("hyperNode-controller: HyperNode %s not written: %s", name, e)
        return None
