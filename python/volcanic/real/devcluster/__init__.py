"""A real Kubernetes cluster on one machine, without Docker: etcd, kube-apiserver,
kube-controller-manager and kwok built from the Go module proxy and started on 127.0.0.1."""
