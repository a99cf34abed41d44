"""The three patch formats of Kubernetes' API, on objects as plain dicts.

- JSON merge patch (RFC 7386): merge_patch(target, patch) applies one; create_merge_patch(last,
  new) makes the one that turns `last` into `new`. `kubectl apply` sends that patch, made
  from the configuration it applied last (kept in the annotation LAST_APPLIED) and the one it
  applies now, so fields set by others (admission defaults, controllers) stay.
- JSON patch (RFC 6902): json_patch(old, new) makes the add/remove/replace operations an
  admission webhook answers with; apply_json_patch(doc, ops) applies them, as a client of the
  webhook does. The operations add and remove map keys, replace changed values, recursing
  into maps and into lists of equal length; a list whose length changed is replaced whole
  (simpler, and still a correct patch: Volcano's job mutator replaces /spec/tasks whole).
  Keys are escaped as JSON Pointers (`~` -> `~0`, `/` -> `~1`); values are compared with
  their JSON types (1, 1.0 and true differ).
"""

from __future__ import annotations

from typing import Any

from volcanic.kube.objects import Obj, clone

# JSON merge patch (RFC 7386) and kubectl apply.

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def create_merge_patch(last: Any, new: Any) -> Any:
    """The merge patch that turns the last applied configuration into the new one: fields
    dropped become null, changed ones are sent whole (a changed list replaces the live
    one, as `kubectl apply` does for custom resources), unchanged ones are left out."""
    if not isinstance(last, dict) or not isinstance(new, dict):
        return new
    patch = {k: None for k in last if k not in new}
    for k, v in new.items():
        if isinstance(v, dict) and isinstance(last.get(k), dict):
            sub = create_merge_patch(last[k], v)
            if sub:
                patch[k] = sub
        elif v != last.get(k):
            patch[k] = v
    return patch


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: maps merge key by key, null removes, anything else replaces."""
    if not isinstance(patch, dict):
        return clone(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# JSON patch (RFC 6902).

def json_patch(old: Any, new: Any) -> list[Obj]:
    """The RFC 6902 operations turning `old` into `new`: see the module docstring."""
    ops: list[Obj] = []
    _diff(old, new, "", ops)
    return ops


def apply_json_patch(doc: Any, ops: list[Obj]) -> Any:
    """`doc` with the add/remove/replace operations of `ops` applied (a copy); what a client
    of an admission webhook does with the decoded patch. Raises ValueError on an operation
    that does not apply."""
    doc = clone(doc)
    for op in ops:
        doc = _apply_one(doc, op)
    return doc


def _pointer(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _same(a: Any, b: Any) -> bool:
    """JSON equality: types matter (1 is not 1.0 is not true), so does every nested value."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _diff(old: Any, new: Any, path: str, ops: list[Obj]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": f"{path}/{_pointer(key)}"})
        for key, value in new.items():
            if key not in old:
                ops.append({"op": "add", "path": f"{path}/{_pointer(key)}", "value": value})
            else:
                _diff(old[key], value, f"{path}/{_pointer(key)}", ops)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new)):
            _diff(a, b, f"{path}/{i}", ops)
    elif not _same(old, new):
        ops.append({"op": "replace", "path": path, "value": new})


def _apply_one(doc: Any, op: Any) -> Any:
    if not isinstance(op, dict) or op.get("op") not in ("add", "remove", "replace") \
            or not isinstance(op.get("path"), str):
        raise ValueError(f"unsupported JSONPatch operation {op!r}")
    path = op["path"]
    if path == "":
        if op["op"] == "remove":
            raise ValueError("cannot remove the whole document")
        return clone(op["value"])
    if not path.startswith("/"):
        raise ValueError(f"JSON Pointer {path!r} does not start with '/'")
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]
    parent = doc
    for token in tokens[:-1]:
        parent = _step(parent, token, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if op["op"] != "add" and last not in parent:
            raise ValueError(f"{op['op']} {path}: no such member")
        if op["op"] == "remove":
            del parent[last]
        else:
            parent[last] = clone(op["value"])
    elif isinstance(parent, list):
        if op["op"] == "add" and last == "-":
            parent.append(clone(op["value"]))
            return doc
        index = _index(last, path)
        limit = len(parent) + (1 if op["op"] == "add" else 0)
        if index >= limit:
            raise ValueError(f"{op['op']} {path}: index out of range")
        if op["op"] == "add":
            parent.insert(index, clone(op["value"]))
        elif op["op"] == "remove":
            del parent[index]
        else:
            parent[index] = clone(op["value"])
    else:
        raise ValueError(f"{op['op']} {path}: the parent is not a container")
    return doc


def _step(node: Any, token: str, path: str) -> Any:
    if isinstance(node, dict) and token in node:
        return node[token]
    if isinstance(node, list):
        index = _index(token, path)
        if index < len(node):
            return node[index]
    raise ValueError(f"{path}: no such location")


def _index(token: str, path: str) -> int:
    if not (token.isascii() and token.isdigit()) or (len(token) > 1 and token[0] == "0"):
        raise ValueError(f"{path}: {token!r} is not an array index")
    return int(token)
