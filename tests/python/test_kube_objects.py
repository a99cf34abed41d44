"""The object readers of volcanic.kube.objects and the patches of volcanic.kube.patch (issue 34,
"One vocabulary": one way to read an object, one patch module).

A malformed object (a field missing, null or of the wrong type, or no object at all) reads as
empty and never raises; a well-formed one reads as its own dicts, not copies.
"""

from __future__ import annotations

from typing import Any

import pytest

from volcanic.kube.objects import (
    annotation,
    annotations_of,
    as_map,
    dig,
    label,
    labels_of,
    meta_of,
    namespace_of,
    spec_of,
    status_of,
)
from volcanic.kube.patch import LAST_APPLIED, create_merge_patch, merge_patch

# No object, or one whose metadata, spec and status are missing, null or not maps.
EMPTY: list[Any] = [None, "pod", 5, [], {}, {"metadata": None, "spec": "x", "status": [1]}, {"metadata": []}]
# Objects whose labels, annotations, namespace or status.state are missing or not what they should be.
PARTLY: list[Any] = [{"metadata": {"annotations": ["a"], "labels": "a=b", "namespace": 5}},
                     {"metadata": {"namespace": ""}}, {"status": {"state": "Open"}}]


@pytest.mark.parametrize("obj", EMPTY, ids=repr)
def test_a_malformed_object_reads_as_empty_maps(obj: Any) -> None:
    assert meta_of(obj) == spec_of(obj) == status_of(obj) == {}
    assert as_map(obj) == (obj if isinstance(obj, dict) else {})


@pytest.mark.parametrize("obj", EMPTY + PARTLY, ids=repr)
def test_a_malformed_field_reads_as_empty_or_none(obj: Any) -> None:
    assert labels_of(obj) == annotations_of(obj) == {}
    assert annotation(obj, "k") is None and label(obj, "k") is None
    assert dig(obj, "status", "state", "phase") is None
    assert namespace_of(obj) == "" and namespace_of(obj, "default") == "default"


def test_a_well_formed_object_reads_as_its_own_dicts() -> None:
    pod = {"metadata": {"namespace": "ns", "labels": {"l": "1"}, "annotations": {"a": "2"}},
           "spec": {"nodeName": "n1"}, "status": {"phase": "Running", "state": {"phase": "Open"}}}
    assert meta_of(pod) is pod["metadata"] and spec_of(pod) is pod["spec"] and status_of(pod) is pod["status"]
    assert labels_of(pod) is pod["metadata"]["labels"] and annotations_of(pod) is pod["metadata"]["annotations"]
    assert (label(pod, "l"), annotation(pod, "a"), namespace_of(pod, "default")) == ("1", "2", "ns")
    assert dig(pod, "status", "state", "phase") == "Open" and dig(pod, "spec", "nodeName") == "n1"
    assert dig(pod, "spec", "nodeName", "x") is None and dig(pod) is pod


def test_the_empty_map_is_a_new_one_each_time() -> None:
    """A caller that fills in the empty map it read changes nothing shared."""
    first = status_of({})
    first["phase"] = "Running"
    assert status_of({}) == {} and as_map(None) == {}


LAST = {"metadata": {"name": "q", "labels": {"a": "1", "b": "2"}}, "spec": {"weight": 1, "list": [1, 2]}}
NEW = {"metadata": {"name": "q", "labels": {"a": "1", "c": "3"}}, "spec": {"list": [1]}}


def test_an_apply_patch_turns_the_last_configuration_into_the_new_one() -> None:
    patch = create_merge_patch(LAST, NEW)
    assert patch == {"metadata": {"labels": {"b": None, "c": "3"}}, "spec": {"weight": None, "list": [1]}}
    assert merge_patch(LAST, patch) == NEW
    assert create_merge_patch(NEW, NEW) == {}


def test_an_apply_patch_keeps_what_others_set() -> None:
    """`kubectl apply`: fields set since by admission or controllers, which the last applied
    configuration does not hold, stay on the live object."""
    live = merge_patch(LAST, {"metadata": {"annotations": {LAST_APPLIED: "{}"}}, "status": {"state": "Open"}})
    updated = merge_patch(live, create_merge_patch(LAST, NEW))
    assert updated["status"] == {"state": "Open"} and updated["metadata"]["annotations"] == {LAST_APPLIED: "{}"}
    assert updated["metadata"]["labels"] == NEW["metadata"]["labels"] and updated["spec"] == NEW["spec"]


def test_a_merge_patch_copies_and_does_not_change_its_inputs() -> None:
    target, patch = {"a": {"b": 1}}, {"a": {"c": [1]}, "d": None}
    out = merge_patch(target, patch)
    assert out == {"a": {"b": 1, "c": [1]}} and target == {"a": {"b": 1}}
    out["a"]["c"].append(2)
    assert patch == {"a": {"c": [1]}, "d": None}
