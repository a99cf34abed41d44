"""Objects as plain dicts in Kubernetes JSON form: their keys, safe readers and deep copies.

The readers never raise on a malformed object: a field that is missing, null or of the wrong
type reads as empty, `{}` from the map readers (as_map, meta_of, spec_of, status_of,
labels_of, annotations_of) and None from the value readers (label, annotation, dig), so each
caller decides only what an empty field means. A map reader returns the object's own dict,
not a copy (change it only in an object you own); the empty map is a new one at each call.
Rejecting a malformed object with a message naming the field is admission's job, not theirs.
"""

from __future__ import annotations

import copy
from typing import Any

from volcanic import _core

Obj = dict[str, Any]
Key = tuple[str, str]  # namespace ("" when cluster-scoped), name


def key_of(obj: Obj) -> Key:
    meta = obj["metadata"]
    return (meta.get("namespace") or "", meta["name"])


def as_map(value: Any) -> dict:
    """`value` if it is a map, else a new empty one."""
    return value if isinstance(value, dict) else {}


def meta_of(obj: Any) -> dict:
    """metadata; {} when absent or not a map."""
    value = obj.get("metadata") if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}


def spec_of(obj: Any) -> dict:
    """spec; {} when absent or not a map."""
    value = obj.get("spec") if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}


def status_of(obj: Any) -> dict:
    """status; {} when absent or not a map."""
    value = obj.get("status") if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}


def labels_of(obj: Any) -> dict:
    """metadata.labels; {} when absent or not a map."""
    value = meta_of(obj).get("labels")
    return value if isinstance(value, dict) else {}


def annotations_of(obj: Any) -> dict:
    """metadata.annotations; {} when absent or not a map."""
    value = meta_of(obj).get("annotations")
    return value if isinstance(value, dict) else {}


def label(obj: Any, name: str) -> Any:
    """The label `name`; None when absent."""
    return labels_of(obj).get(name)


def annotation(obj: Any, name: str) -> Any:
    """The annotation `name`; None when absent."""
    return annotations_of(obj).get(name)


def namespace_of(obj: Any, default: str = "") -> str:
    """metadata.namespace; `default` when absent, empty or not a string."""
    namespace = meta_of(obj).get("namespace")
    return namespace if isinstance(namespace, str) and namespace else default


def dig(obj: Any, *path: str) -> Any:
    """The value at `path` (dig(job, "status", "state", "phase")); None when a step is missing
    or not a map."""
    for step in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(step)
    return obj


def resource_version(obj: Obj) -> int | None:
    """resourceVersion as a number (etcd's revision, the embedded store's counter), to tell
    which of two versions of an object is newer; None when it is not a number."""
    version = obj["metadata"].get("resourceVersion")
    return int(version) if isinstance(version, str) and version.isdigit() else None


def describe(obj: Obj) -> str:
    """"Kind ns/name" (or "Kind name"), for messages; never raises on a malformed object."""
    meta = meta_of(obj)
    name = meta.get("name") if isinstance(meta.get("name"), str) else "?"
    namespace = meta.get("namespace")
    return f"{obj.get('kind')} {namespace + '/' if isinstance(namespace, str) and namespace else ''}{name}"


def clone(obj: Any) -> Any:
    """A deep copy of JSON-shaped data: new dicts and lists sharing the immutable values,
    natively (several times faster than marshal's round trip); copy.deepcopy for anything
    else."""
    try:
        return _core.clone_json(obj)
    except TypeError:
        return copy.deepcopy(obj)
