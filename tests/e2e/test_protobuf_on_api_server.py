"""Protobuf against a real API server (volcanic.real.protobuf): a pod with much of PodSpec in
use, the API server's own defaults and status added, reads the same in protobuf and in JSON
(one object, a list, the nodes, a watch's events; but for metadata.managedFields, which the
codec leaves out as the store drops them), and the pod created from protobuf is the pod
created from JSON. tests/python/test_protobuf.py has the rules one by one."""

from __future__ import annotations

import copy
import threading

from volcanic.real import protobuf
from volcanic.real.client import KubeClient

RICH = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "rich", "labels": {"app": "a", "tier": "b"}, "annotations": {"note": "x"}},
    "spec": {
        "schedulerName": "nobody",  # left pending: nothing binds it
        "initContainers": [{"name": "init", "image": "busybox", "command": ["sh", "-c", "true"]}],
        "containers": [{
            "name": "c", "image": "nginx", "args": ["-g", "daemon off;"], "workingDir": "/w",
            "ports": [{"containerPort": 80, "name": "http"}, {"containerPort": 53, "protocol": "UDP"}],
            "resources": {"requests": {"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": 1},
                          "limits": {"cpu": 1, "memory": "1Gi", "nvidia.com/gpu": 1}},
            "env": [{"name": "A", "value": "1"},
                    {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {"name": "C", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory",
                                                                     "divisor": "1Mi"}}}],
            "livenessProbe": {"httpGet": {"path": "/", "port": "http"}, "initialDelaySeconds": 3},
            "readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 5},
            "startupProbe": {"grpc": {"port": 9000}},
            "lifecycle": {"preStop": {"exec": {"command": ["sleep", "1"]}}},
            "securityContext": {"runAsUser": 1000, "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]}},
            "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}, {"name": "cfg", "mountPath": "/cfg"},
                             {"name": "token", "mountPath": "/token", "readOnly": True},
                             {"name": "claim", "mountPath": "/claim"}]}],
        "volumes": [
            {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi", "medium": "Memory"}},
            {"name": "cfg", "configMap": {"name": "cfg", "defaultMode": 420,
                                          "items": [{"key": "k", "path": "p"}]}},
            {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "t",
                                                                                  "expirationSeconds": 3600}}]}},
            {"name": "claim", "ephemeral": {"volumeClaimTemplate": {
                "metadata": {"labels": {"v": "1"}},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}],
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5},
                        {"key": "type", "value": "kwok", "effect": "NoSchedule"}],
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "type", "operator": "In", "values": ["kwok"]}]}]}},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                   "labelSelector": {"matchLabels": {"app": "a"}}}}]}},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
                                       "labelSelector": {"matchLabels": {"app": "a"}}}],
        "nodeSelector": {"type": "kwok"}, "priority": 0, "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["h"]}],
        "dnsConfig": {"nameservers": ["1.1.1.1"], "options": [{"name": "ndots", "value": "2"}]},
        "securityContext": {"runAsNonRoot": True, "fsGroup": 2000, "sysctls": [{"name": "net.core.somaxconn",
                                                                               "value": "1024"}]},
        "readinessGates": [{"conditionType": "example.com/ready"}],
        "terminationGracePeriodSeconds": 5, "activeDeadlineSeconds": 600,
        "automountServiceAccountToken": False}}  # no token volume of a random name to tell the pods apart


def _unmanaged(answer: dict) -> dict:
    """A JSON answer as the protobuf codec reads it: without metadata.managedFields."""
    for obj in [answer, answer.get("object") or {}, *(answer.get("items") or [])]:
        (obj.get("metadata") or {}).pop("managedFields", None)
    return answer


def _clients(env) -> tuple[KubeClient, KubeClient]:
    return KubeClient(env.kubeconfig), KubeClient(env.kubeconfig, protobuf=False)


def _pod(namespace: str, name: str = "rich") -> dict:
    pod = copy.deepcopy(RICH)
    pod["metadata"].update(name=name, namespace=namespace)
    return pod


def test_objects_read_the_same_in_protobuf_and_json(env, namespace):
    pb, js = _clients(env)
    js.request("POST", f"/api/v1/namespaces/{namespace}/pods", _pod(namespace))
    for path in (f"/api/v1/namespaces/{namespace}/pods/rich", f"/api/v1/namespaces/{namespace}/pods",
                 "/api/v1/nodes"):
        assert pb.request("GET", path) == _unmanaged(js.request("GET", path)), path
    assert pb.protobuf  # every answer was read in protobuf: nothing fell back to JSON


def test_a_watch_reads_the_same_in_protobuf_and_json(env, namespace):
    pb, js = _clients(env)
    path = f"/api/v1/namespaces/{namespace}/pods"
    since = js.request("GET", path)["metadata"]["resourceVersion"]
    seen: dict[str, list] = {"pb": [], "json": []}

    def watch(client: KubeClient, events: list) -> None:
        def take(event: dict) -> bool:
            events.append(event)
            return event["type"] != "DELETED"
        client.stream(path, {"watch": "true", "resourceVersion": since, "timeoutSeconds": 60}, 90, take)
    threads = [threading.Thread(target=watch, args=(c, seen[k])) for c, k in ((pb, "pb"), (js, "json"))]
    for t in threads:
        t.start()
    js.request("POST", path, _pod(namespace))
    pod = js.request("GET", f"{path}/rich")
    pod["metadata"]["labels"]["changed"] = "yes"
    js.request("PUT", f"{path}/rich", pod)
    js.request("DELETE", f"{path}/rich", query={"gracePeriodSeconds": 0})
    for t in threads:
        t.join(90)
    assert [e["type"] for e in seen["pb"]] == ["ADDED", "MODIFIED", "MODIFIED", "DELETED"]
    assert seen["pb"] == [_unmanaged(e) for e in seen["json"]]
    assert pb.protobuf


def test_a_pod_created_from_protobuf_is_the_pod_created_from_json(env, namespace):
    pb, js = _clients(env)
    path = f"/api/v1/namespaces/{namespace}/pods"
    assert protobuf.encode(_pod(namespace)) is not None  # so pb sends it as protobuf
    created = pb.request("POST", path, _pod(namespace, "from-protobuf"))
    js.request("POST", path, _pod(namespace, "from-json"))
    a, b = (js.request("GET", f"{path}/{name}") for name in ("from-protobuf", "from-json"))
    assert a["spec"] == b["spec"]
    assert (a["metadata"]["labels"], a["metadata"]["annotations"]) == (RICH["metadata"]["labels"],
                                                                      RICH["metadata"]["annotations"])
    assert created["metadata"]["uid"] == a["metadata"]["uid"]  # the create's answer, read from protobuf
