"""Volcano's hyperNode-controller: HyperNodes' status.nodeCount, and HyperNodes discovered
from node labels as the controller-manager's ConfigMap configures (controller.py; the
ConfigMap in config.py, the discovery in label.py, member resolution in members.py)."""

from volcanic.controllers.hypernode.controller import HyperNodeController

__all__ = ["HyperNodeController"]
