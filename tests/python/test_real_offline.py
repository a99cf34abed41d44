"""The real-cluster layer's parts that need no API server: kubeconfig discovery, the mapping
of API errors, the manifests, and informers over a re-listing watch."""

from __future__ import annotations

import yaml

from volcanic.kube.errors import AdmissionError, AlreadyExists, Conflict, InvalidObject, NotFound, Unavailable
from volcanic.kube.informers import Handler, Informers
from volcanic.kube.store import Watch
from volcanic.real.client import api_error, kubeconfig_path
from volcanic.real.install import render
from volcanic.real.manifests import RULES, crds


def test_kubeconfig_is_found_as_kubectl_finds_it(monkeypatch, tmp_path):
    home = tmp_path / "home"
    (home / ".kube").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    assert kubeconfig_path() is None  # nothing: in-cluster credentials
    (home / ".kube" / "config").write_text("{}")
    assert kubeconfig_path() == str(home / ".kube" / "config")
    monkeypatch.setenv("KUBECONFIG", "/env/config")
    assert kubeconfig_path() == "/env/config"
    assert kubeconfig_path("/flag/config") == "/flag/config"


def test_api_errors_map_to_store_errors():
    status = lambda code, reason, message: api_error(code, {"kind": "Status", "code": code, "reason": reason,
                                                            "message": message, "details": {"kind": "pods",
                                                                                            "name": "p"}}, "x")
    assert isinstance(status(404, "NotFound", 'pods "p" not found'), NotFound)
    assert isinstance(status(409, "AlreadyExists", "exists"), AlreadyExists)
    assert isinstance(status(409, "Conflict", "the object has been modified"), Conflict)
    assert isinstance(status(422, "Invalid", "spec.containers: Required value"), InvalidObject)
    assert isinstance(status(503, "ServiceUnavailable", "later"), Unavailable)
    assert isinstance(status(429, "TooManyRequests", "later"), Unavailable)
    denied = status(400, "BadRequest", 'admission webhook "validatejob.volcano.sh" denied the request: '
                                       "job 'minAvailable' must be >= 0.")
    assert isinstance(denied, AdmissionError) and str(denied) == "job 'minAvailable' must be >= 0."


def test_crds_carry_volcanos_names_scope_status_and_columns():
    by_kind = {c["spec"]["names"]["kind"]: c["spec"] for c in crds()}
    assert by_kind["Job"]["group"] == "batch.volcano.sh" and by_kind["Job"]["versions"][0]["name"] == "v1alpha1"
    assert by_kind["Command"]["group"] == "bus.volcano.sh"
    assert by_kind["PodGroup"]["names"]["plural"] == "podgroups" and by_kind["Queue"]["scope"] == "Cluster"
    for kind in ("Job", "PodGroup", "Queue"):
        assert by_kind[kind]["versions"][0]["subresources"] == {"status": {}}
    columns = [c["name"] for c in by_kind["Job"]["versions"][0]["additionalPrinterColumns"]]
    assert columns == ["STATUS", "minAvailable", "RUNNINGS", "AGE", "QUEUE"]
    assert [c["jsonPath"] for c in by_kind["Queue"]["versions"][0]["additionalPrinterColumns"]] == [".spec.parent"]


def test_each_component_gets_only_what_it_uses():
    def verbs(component, resource):
        return {v for r in RULES[component] if resource in r["resources"] for v in r["verbs"]}
    assert verbs("scheduler", "pods/binding") == {"create"}
    assert "create" not in verbs("scheduler", "pods") and "update" not in verbs("scheduler", "podgroups")
    assert verbs("webhook", "jobs") == {"get", "list", "watch"}
    assert not verbs("webhook", "pods/binding") and not verbs("controller-manager", "pods/binding")


def test_print_is_yaml_a_user_can_pipe_to_kubectl():
    docs = list(yaml.safe_load_all(render(all_components=True)))
    assert docs[0] == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "volcano-system"}}
    assert [d["metadata"]["name"] for d in docs if d["kind"] == "Queue"] == ["root", "default"]
    conf = next(d for d in docs if d["kind"] == "ConfigMap")["data"]["volcano-scheduler.conf"]
    assert yaml.safe_load(conf)["actions"] == "enqueue, allocate, backfill"


class _Store:
    def __init__(self):
        self.w = Watch(["Pod"])

    def watch(self, kinds):
        return self.w


def _pod(name, rv):
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}}


def test_informers_follow_a_relist_replays_and_tombstones():
    """A reflector that lost its watch lists again: unchanged objects are not updates, and a
    tombstone (no resourceVersion) deletes with the last state cached."""
    store = _Store()
    inf = Informers(store, ["Pod"])
    seen = []
    inf.add_handler("Pod", Handler(on_add=lambda o: seen.append(("add", o["metadata"]["name"])),
                                   on_update=lambda a, b: seen.append(("update", b["metadata"]["name"])),
                                   on_delete=lambda o: seen.append(("delete", o["metadata"].get("resourceVersion")))))
    for obj in (_pod("a", "1"), _pod("b", "2")):
        store.w.offer("ADDED", obj)
    inf.pump()
    store.w.offer("ADDED", _pod("a", "1"))       # the re-list: a unchanged
    store.w.offer("ADDED", _pod("b", "5"))       # b changed meanwhile
    store.w.offer("DELETED", {"kind": "Pod", "metadata": {"name": "a", "namespace": "ns"}})  # tombstone
    store.w.offer("DELETED", {"kind": "Pod", "metadata": {"name": "zz", "namespace": "ns"}})  # never seen
    inf.pump()
    assert seen == [("add", "a"), ("add", "b"), ("update", "b"), ("delete", "1")]
    assert [p["metadata"]["name"] for p in inf.list("Pod")] == ["b"]
