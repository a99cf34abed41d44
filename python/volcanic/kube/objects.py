"""Objects as plain dicts in Kubernetes JSON form, their keys and deep copies."""

from __future__ import annotations

import copy
from typing import Any

from volcanic import _core

Obj = dict[str, Any]
Key = tuple[str, str]  # namespace ("" when cluster-scoped), name


def key_of(obj: Obj) -> Key:
    meta = obj["metadata"]
    return (meta.get("namespace") or "", meta["name"])


def label(obj: Obj, name: str) -> str | None:
    return (obj["metadata"].get("labels") or {}).get(name)


def resource_version(obj: Obj) -> int | None:
    """resourceVersion as a number (etcd's revision, the embedded store's counter), to tell
    which of two versions of an object is newer; None when it is not a number."""
    version = obj["metadata"].get("resourceVersion")
    return int(version) if isinstance(version, str) and version.isdigit() else None


def describe(obj: Obj) -> str:
    """"Kind ns/name" (or "Kind name"), for messages; never raises on a malformed object."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
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
