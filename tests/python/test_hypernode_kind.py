"""The HyperNode kind (topology.volcano.sh/v1alpha1): Volcano v1.15.1's types,
staging/src/volcano.sh/apis/pkg/apis/topology/v1alpha1/hypernode_types.go, and CRD,
config/crd/volcano/bases/topology.volcano.sh_hypernodes.yaml (cluster-scoped, plural
hypernodes, short name hn, status subresource, printer columns Tier/TierName/NodeCount/Age);
what `volcanic install` applies for it (the CRD, the RBAC of the controller-manager's
pkg/controllers/hypernode and of the scheduler, the /hypernodes/validate webhook of
pkg/webhooks/admission/hypernodes/validate/admit_hypernode.go), and the embedded cluster
storing it."""

from __future__ import annotations

import threading

from hypernode_helpers import exact, hypernode, regex
import volcanic
from volcanic.admission import OPERATIONS
from volcanic.kube.informers import Informers
from volcanic.kube.kinds import KINDS
from volcanic.real.manifests import manifests, render
from volcanic.real.manifests.accounts import RULES
from volcanic.real.manifests.webhooks import DEFAULT_ADMISSIONS, WEBHOOKS, configurations
from volcanic.real.operator import ControllerManager, KopfSource
from volcanic.real.webhook import UNRULED
from volcanic.webhook import PATHS

KIND = KINDS["HyperNode"]


def _crd() -> dict:
    return next(o for o in manifests() if o["kind"] == "CustomResourceDefinition"
                and o["spec"]["names"]["kind"] == "HyperNode")


def test_the_crd_is_volcanos():
    """Names, scope, subresource and printer columns as Volcano's CRD has them (Tier declared
    a string, as there)."""
    crd = _crd()
    assert crd["metadata"]["name"] == f"hypernodes.{KIND.group}"
    assert crd["spec"]["names"] == {"kind": "HyperNode", "listKind": "HyperNodeList", "plural": "hypernodes",
                                    "singular": "hypernode", "shortNames": ["hn"]}
    assert crd["spec"]["scope"] == "Cluster"
    version, = crd["spec"]["versions"]
    assert (version["name"], version["subresources"]) == ("v1alpha1", {"status": {}})
    assert version["additionalPrinterColumns"] == [
        {"name": "Tier", "jsonPath": ".spec.tier", "type": "string"},
        {"name": "TierName", "jsonPath": ".spec.tierName", "type": "string"},
        {"name": "NodeCount", "jsonPath": ".status.nodeCount", "type": "integer"},
        {"name": "Age", "jsonPath": ".metadata.creationTimestamp", "type": "date"}]
    assert "name: hypernodes." in render()  # `volcanic install --print`


def test_the_crd_schema_has_volcanos_constraints():
    """spec.tier required, >= 0; tierName <= 253; members >= 1 item, type Node|HyperNode,
    selectors with the CEL rules; status.nodeCount an int64 >= 0."""
    schema = _crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    spec, status = schema["spec"], schema["status"]
    assert spec["required"] == ["tier"] and spec["properties"]["tier"] == {"type": "integer", "minimum": 0}
    assert spec["properties"]["tierName"]["maxLength"] == 253
    members = spec["properties"]["members"]
    assert members["minItems"] == 1
    member = members["items"]["properties"]
    assert member["type"]["enum"] == ["Node", "HyperNode"]
    selector = member["selector"]
    assert set(selector["properties"]) == {"exactMatch", "regexMatch", "labelMatch"}
    assert [r["message"] for r in selector["x-kubernetes-validations"]] == [
        "Either ExactMatch or RegexMatch or LabelMatch must be specified",
        "Only one of ExactMatch, RegexMatch, or LabelMatch can be specified"]
    assert selector["properties"]["exactMatch"]["properties"]["name"]["maxLength"] == 253
    assert selector["properties"]["regexMatch"]["properties"]["pattern"]["minLength"] == 1
    assert status["properties"]["nodeCount"] == {"type": "integer", "format": "int64", "minimum": 0}


def test_install_grants_what_the_controllers_and_the_scheduler_need():
    """The controller-manager writes HyperNodes and their status and reads nodes and
    ConfigMaps; the scheduler reads HyperNodes."""
    def verbs(component: str, resource: str) -> set[str]:
        return {v for r in RULES[component] if resource in r["resources"] for v in r["verbs"]}
    assert {"create", "update", "delete", "list", "watch"} <= verbs("controller-manager", "hypernodes")
    assert "update" in verbs("controller-manager", "hypernodes/status")
    assert {"list", "watch"} <= verbs("controller-manager", "nodes") & verbs("controller-manager", "configmaps")
    assert verbs("scheduler", "hypernodes") == {"get", "list", "watch"}


def test_the_webhook_validates_hypernodes_on_create_and_update():
    """Volcano registers /hypernodes/validate for CREATE and UPDATE and no mutating path; the
    chart enables it by default, and volcanic now answers it with rules (not UNRULED)."""
    assert WEBHOOKS["/hypernodes/validate"] == ("validatehypernode.volcano.sh", KIND.group, "v1alpha1",
                                                "hypernodes", ("CREATE", "UPDATE"))
    assert "/hypernodes/mutate" not in WEBHOOKS and OPERATIONS[("HyperNode", "mutate")] == ()
    assert "/hypernodes/validate" in DEFAULT_ADMISSIONS and "/hypernodes/validate" not in UNRULED
    assert PATHS["/hypernodes/validate"] == ("HyperNode", False)
    config, = configurations(b"CA", paths=("/hypernodes/validate",))
    assert config["webhooks"][0]["rules"] == [{"apiGroups": [KIND.group], "apiVersions": ["v1alpha1"],
                                               "operations": ["CREATE", "UPDATE"], "resources": ["hypernodes"],
                                               "scope": "*"}]


def test_the_embedded_cluster_stores_hypernodes_cluster_scoped():
    """create/get/list/delete; the namespace is ignored, the status sent on create too (a
    status subresource), and the fields the store fills are there."""
    c = volcanic.Cluster()
    sent = hypernode("s0", 1, exact("n1"), regex("^n[23]$"), tierName="leaf")
    sent["status"] = {"nodeCount": 99}
    stored = c.apply(sent)
    assert stored["apiVersion"] == KIND.api_version and "status" not in stored
    got = c.get("HyperNode", "s0", namespace="elsewhere")
    assert got["spec"] == sent["spec"] and got["metadata"]["uid"] and got["metadata"]["generation"] == 1
    assert "namespace" not in got["metadata"]
    assert [h["metadata"]["name"] for h in c.list("HyperNode")] == ["s0"]
    c.delete("HyperNode", "s0")
    assert c.get("HyperNode", "s0") is None


class _Store:
    """What KopfSource lists before kopf runs."""

    class client:  # noqa: N801 - stands for KubeStore.client
        pass

    def __init__(self, configmaps: list[dict]) -> None:
        self.configmaps = configmaps

    def list(self, kind: str, namespace: str | None = None) -> list[dict]:
        return [c for c in self.configmaps if namespace in (None, c["metadata"]["namespace"])]

    def reflect(self, kinds, into, listed: threading.Event) -> None:
        listed.set()


def test_the_controller_manager_watches_only_its_configmap():
    """On a real cluster kopf sees every ConfigMap; only the hyperNode-controller's reaches the
    informers (Volcano's informer lists and watches that one by a field selector)."""
    def cm(namespace: str, name: str, rv: str = "1") -> dict:
        return {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"namespace": namespace, "name": name, "resourceVersion": rv}}
    ours = ("volcano-system", "volcano-controller-configmap")
    source = KopfSource(_Store([cm(*ours), cm("volcano-system", "other"), cm("ns", "volcano-controller-configmap")]),
                        scoped={"ConfigMap": ours})
    informers = Informers(source, ["ConfigMap"])
    assert source.prime(threading.Event())
    source.offer("ADDED", cm("volcano-system", "late"))
    source.offer("MODIFIED", cm(*ours, rv="2"))
    informers.pump()
    assert [(o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in informers.list("ConfigMap")] == \
        [("volcano-controller-configmap", "2")]


def test_the_controller_manager_watches_hypernode_kinds_only_for_the_controller(monkeypatch):
    """--controllers: with hyperNode-controller on (Volcano's default), HyperNodes, Nodes and
    the ConfigMap of $KUBE_POD_NAMESPACE are watched; with it off, none of them."""
    monkeypatch.setenv("KUBE_POD_NAMESPACE", "ops")
    on = ControllerManager(_Store([]))
    assert {"HyperNode", "Node", "ConfigMap"} <= set(on.kinds)
    assert "hyperNode-controller" in [c.name for c in on.runner.controllers]
    assert on.source.scoped == {"ConfigMap": ("ops", "volcano-controller-configmap")}
    off = ControllerManager(_Store([]), enabled=lambda name: name != "hyperNode-controller")
    assert not {"HyperNode", "Node", "ConfigMap"} & set(off.kinds)
