"""The embedded control plane: object store, admission, clock, kubelets, scheduler loop."""

from volcanic.cluster.cluster import Cluster

__all__ = ["Cluster"]
