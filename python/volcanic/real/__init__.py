"""volcanic on a real Kubernetes API server: the Store over a Kubernetes client, the
scheduler daemon, the kopf controller-manager, webhook registration, install manifests and
the dev cluster."""
