"""volcanic on a real Kubernetes API server: the Store over a Kubernetes client, the
scheduler daemon, the kopf controller-manager, the webhook daemon and its registration, the
install manifests (manifests/: plain data, no client; install.py applies them) and the dev
cluster."""
