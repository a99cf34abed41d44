"""The embedded control plane: an object store with Kubernetes semantics (more to come)."""
