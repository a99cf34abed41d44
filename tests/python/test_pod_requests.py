"""A pod's request is one rule, the engine's (src/volcanic/api/pod_requests.h): Kubernetes'
PodRequests with sidecar init containers, as Volcano's pkg/scheduler/api/pod_info.go
GetPodResourceRequest computes it. The scheduler places by it and the controllers write PodGroup
minResources from it (volcanic.kube.quantity.pod_requests), so the two cannot drift."""

from __future__ import annotations

from fractions import Fraction

import pytest

import volcanic
from volcanic.kube import quantity


def container(requests=None, limits=None, policy=None) -> dict:
    c = {"name": "c", "resources": {}}
    if requests:
        c["resources"]["requests"] = requests
    if limits:
        c["resources"]["limits"] = limits
    if policy:
        c["restartPolicy"] = policy
    return c


def pod(spec: dict) -> dict:
    return {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": {"schedulerName": "volcano", **spec}}


def node(name: str, allocatable: dict) -> dict:
    return {"kind": "Node", "metadata": {"name": name}, "status": {"allocatable": {"pods": "10", **allocatable}}}


SIDECAR_POD = {"containers": [container({"cpu": "2", "memory": "1Gi"})],
               "initContainers": [container({"cpu": "500m"}, policy="Always")]}


def test_engine_does_not_bind_a_sidecar_pod_needing_more_than_the_node_has():
    """2 CPUs of containers + a 500m sidecar need 2.5 CPUs: not a 2-CPU node (two of them, so
    the queue's share is not what stops it)."""
    d = volcanic.schedule([node("a", {"cpu": "2", "memory": "8Gi"}), node("b", {"cpu": "2", "memory": "8Gi"}),
                           pod(SIDECAR_POD)], bare_pods_as_groups=True)
    assert d.binds == {}
    assert d.unschedulable["ns/p"] == "0/2 nodes are unavailable: 2 Insufficient cpu."
    d = volcanic.schedule([node("n3", {"cpu": "2500m", "memory": "8Gi"}), pod(SIDECAR_POD)], bare_pods_as_groups=True)
    assert d.binds == {"ns/p": "n3"}


CASES = {
    "sidecar before an init container runs beside it": (
        {"containers": [container({"cpu": "1"})],
         "initContainers": [container({"cpu": "1"}, policy="Always"), container({"cpu": "2500m"})]},
        {"cpu": "3500m"}),
    "sidecar after an init container does not": (
        {"containers": [container({"cpu": "1"})],
         "initContainers": [container({"cpu": "2500m"}), container({"cpu": "1"}, policy="Always")]},
        {"cpu": "2500m"}),
    "overhead adds to the peak": (
        {"containers": [container({"cpu": "1", "memory": "1Gi"})],
         "initContainers": [container({"memory": "2Gi"})],
         "overhead": {"cpu": "250m", "memory": "64Mi"}},
        {"cpu": "1250m", "memory": "2112Mi"}),
    "extended resources, a request defaulted from the limit": (
        {"containers": [container({"cpu": "100m"}, limits={"nvidia.com/gpu": "1"})],
         "initContainers": [container({"example.com/fpga": "2"}, policy="Always")]},
        {"cpu": "100m", "example.com/fpga": "2", "nvidia.com/gpu": "1"}),
}


@pytest.mark.parametrize("spec,expected", CASES.values(), ids=CASES.keys())
def test_python_pod_request_equals_the_engines(spec, expected):
    assert quantity.to_strings(quantity.pod_requests(spec)) == expected
    # The engine charges the queue exactly that, and the pod fits a node of exactly that size.
    d = volcanic.schedule([node("exact", expected), pod(spec)], bare_pods_as_groups=True)
    assert d.binds == {"ns/p": "exact"}
    charged = {name: q for name, q in d.queues["default"]["allocated"].items() if name != "pods"}
    assert {name: quantity.parse_quantity(q)[0] for name, q in charged.items()} == \
        {name: quantity.parse_quantity(q)[0] for name, q in expected.items()}


def test_each_pod_request_is_read_alone_whatever_came_before_it():
    """Specs are converted over the last one (bindings/convert.h): containers, requests and types
    that the earlier spec had must not carry over, nor the part read before an error."""
    wide = {"containers": [container({"cpu": "2", "memory": "1Gi", "example.com/fpga": "1"}),
                           container({"cpu": "500m"})],
            "overhead": {"cpu": "100m"}}
    assert quantity.to_strings(quantity.pod_requests(wide)) == {"cpu": "2600m", "example.com/fpga": "1",
                                                               "memory": "1Gi"}
    with pytest.raises(ValueError, match=r"^spec\.containers\[0\]\.resources\.requests\.memory: "):
        quantity.pod_requests({"containers": [container({"cpu": 4, "memory": "many"})]})
    narrow = {"containers": [container({"cpu": 1})]}
    assert quantity.to_strings(quantity.pod_requests(narrow)) == {"cpu": "1"}
    assert quantity.to_strings(quantity.pod_requests(wide)) == {"cpu": "2600m", "example.com/fpga": "1",
                                                               "memory": "1Gi"}


def test_pod_request_errors_name_the_field():
    spec = {"containers": [container({"cpu": "1"})], "initContainers": [container({"cpu": "lots"}, policy="Always")]}
    with pytest.raises(ValueError, match=r'^spec\.tasks\[0\]\.template\.spec\.initContainers\[0\]\.resources\.'
                                         r'requests\.cpu: invalid quantity "lots"'):
        quantity.pod_requests(spec, "spec.tasks[0].template.spec")


def test_quantity_edge_cases():
    """The engine's parser: Kubernetes' grammar, exact values, spaces dropped as the API server's
    JSON decoding does, the format a quantity is written in."""
    assert quantity.parse_quantity("0.1") == (Fraction(1, 10), "DecimalSI")
    assert quantity.parse_quantity(" 1Gi ") == (Fraction(2 ** 30), "BinarySI")
    assert quantity.parse_quantity("1e3") == (Fraction(1000), "DecimalExponent")
    assert quantity.parse_quantity("1E") == (Fraction(10 ** 18), "DecimalSI")  # exa, not an exponent
    assert quantity.parse_quantity(-2) == (Fraction(-2), "DecimalSI")
    assert quantity.parse_quantity(0.5) == (Fraction(1, 2), "DecimalSI")
    assert quantity.parse_quantity("1n") == (Fraction(1, 10 ** 9), "DecimalSI")
    assert quantity.parse_quantity("0.1n") == (Fraction(1, 10 ** 9), "DecimalSI")  # rounded up
    for bad in ("1.5.3", "", "Gi", "1K", True, None, "1e19"):
        with pytest.raises(ValueError, match=r"^spec\.capability\.cpu: "):
            quantity.parse_quantity(bad, "spec.capability.cpu")
    with pytest.raises(ValueError, match="out of range"):
        quantity.parse_quantity("8Ei")


@pytest.mark.parametrize("text, canonical", [
    ("1.5", "1500m"), ("0.5", "500m"), ("-1.5", "-1500m"), ("1000", "1k"), ("1500", "1500"), ("100m", "100m"),
    ("1n", "1n"), ("2000000", "2M"), ("1024Mi", "1Gi"), ("1536Mi", "1536Mi"), ("1.5Gi", "1536Mi"),
    ("512", "512"), ("1e3", "1e3"), ("1500e-3", "1500e-3"), ("0", "0"), ("5000M", "5G"),
])
def test_format_quantity_writes_the_canonical_form(text, canonical):
    """Quantity.String() (k8s.io/apimachinery/pkg/api/resource/quantity.go CanonicalizeBytes):
    the largest suffix with a whole mantissa, in the quantity's format; what minResources holds."""
    assert quantity.format_quantity(quantity.parse_quantity(text)) == canonical
