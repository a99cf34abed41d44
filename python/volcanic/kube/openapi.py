"""A small structural-schema validator: what the Kubernetes API server does with a CRD's
openAPIV3Schema when a custom object is created or updated, for the embedded cluster.

    node = compile_schema(openapi_v3_schema)     # once per kind
    obj = with_defaults(obj, node)               # nulls dropped, `default`s filled in
    errors = schema_errors(obj, node)            # [] or the API server's field errors

What it covers (apiextensions-apiserver, kube-openapi's validate package, apimachinery's
field errors, Kubernetes 1.34):
- defaulting: a property absent, or null and not `nullable`, gets its `default` (a deep
  copy); a null property without a default is dropped, as the API server prunes
  non-nullable nulls before validating (PruneNonNullableNullsWithoutDefaults);
- `type` (object, array, string, integer, number, boolean; an integral float is an
  integer), `x-kubernetes-int-or-string`, `format` int32/int64 on integers, `enum`,
  `minimum`/`maximum` (and their exclusive forms), `minLength`/`maxLength`, `pattern`,
  `minItems`/`maxItems`, `required`, `properties`, `items`, `additionalProperties`;
- messages as the API server words them, e.g.
  'spec.minAvailable: Invalid value: -1: spec.minAvailable in body should be greater than or equal to 0',
  'spec.queue: Too long: may not be more than 253 bytes',
  'spec.volumes[0].mountPath: Required value'.
Not covered: CEL rules (x-kubernetes-validations), list and map types, pruning of unknown
fields (volcanic's schemas keep them: x-kubernetes-preserve-unknown-fields), `anyOf`
beyond int-or-string, string formats. A value of the wrong type gets the type error (and
the enum's, as kube-openapi checks enums whatever the type), nothing else.
Errors come in schema order (properties as the schema lists them); the API server's order
among several errors of one object is not fixed.

Never raises on malformed input; the schema itself is trusted (volcanic's own).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from volcanic.kube.objects import as_map

_MISSING = object()


class SchemaNode:
    """One compiled schema node: its constraints, and its children compiled."""

    __slots__ = ("type", "format", "int_or_string", "nullable", "default", "enum", "minimum",
                 "maximum", "exclusive_minimum", "exclusive_maximum", "min_length", "max_length",
                 "pattern", "regex", "min_items", "max_items", "required", "properties", "items",
                 "additional")

    def __init__(self, schema: dict[str, Any]) -> None:
        self.type = schema.get("type")
        self.format = schema.get("format")
        self.int_or_string = bool(schema.get("x-kubernetes-int-or-string"))
        self.nullable = bool(schema.get("nullable"))
        self.default = schema.get("default", _MISSING)
        self.enum = schema.get("enum")
        self.minimum, self.maximum = schema.get("minimum"), schema.get("maximum")
        self.exclusive_minimum = bool(schema.get("exclusiveMinimum"))
        self.exclusive_maximum = bool(schema.get("exclusiveMaximum"))
        self.min_length, self.max_length = schema.get("minLength"), schema.get("maxLength")
        self.pattern = schema.get("pattern")
        # Kubernetes' patterns are ECMA-262; the ones volcanic's schemas use read the same
        # in Python's re.
        self.regex = re.compile(self.pattern) if self.pattern else None
        self.min_items, self.max_items = schema.get("minItems"), schema.get("maxItems")
        self.required = tuple(schema.get("required") or ())
        self.properties = {k: SchemaNode(v) for k, v in as_map(schema.get("properties")).items()}
        self.items = SchemaNode(schema["items"]) if isinstance(schema.get("items"), dict) else None
        extra = schema.get("additionalProperties")
        self.additional = SchemaNode(extra) if isinstance(extra, dict) else None


def compile_schema(schema: dict[str, Any]) -> SchemaNode:
    return SchemaNode(schema)


# --- Defaulting ----------------------------------------------------------------------------

def with_defaults(value: Any, node: SchemaNode) -> Any:
    """`value` with non-nullable nulls dropped and defaults filled in, at every level the
    schema describes. Copy on write: `value` is never changed; what needs no change is
    shared with the result."""
    if isinstance(value, dict):
        return _object_defaults(value, node)
    if isinstance(value, list) and node.items is not None:
        items = [with_defaults(v, node.items) for v in value]
        return items if any(a is not b for a, b in zip(items, value)) else value
    return value


def _object_defaults(obj: dict, node: SchemaNode) -> dict:
    out = obj
    for name, child in node.properties.items():
        current = obj.get(name, _MISSING)
        if current is _MISSING or (current is None and not child.nullable):
            if child.default is not _MISSING:
                new = json.loads(json.dumps(child.default))
            elif current is None:
                if out is obj:
                    out = dict(obj)
                del out[name]
                continue
            else:
                continue
        else:
            new = with_defaults(current, child)
            if new is current:
                continue
        if out is obj:
            out = dict(obj)
        out[name] = new
    if node.additional is not None:
        for name, current in obj.items():
            if name in node.properties:
                continue
            new = with_defaults(current, node.additional)
            if new is not current:
                if out is obj:
                    out = dict(obj)
                out[name] = new
    return out


# --- Validation ----------------------------------------------------------------------------

def schema_errors(value: Any, node: SchemaNode, path: str = "") -> list[str]:
    """The API server's field errors for `value` against `node`, [] when it is valid."""
    if _passes(value, node):
        return []  # the usual case, told without building a path or a message
    errors: list[str] = []
    _check(value, node, path, errors)
    return errors


def _passes(value: Any, node: SchemaNode) -> bool:
    """Whether _check would find nothing: the same rules, with no messages."""
    if value is None and node.nullable:
        return True
    if (node.type is not None or node.int_or_string) and _type_error(value, node) is not None:
        return False
    if node.enum is not None and value not in node.enum:
        return False
    if isinstance(value, dict):
        for name in node.required:
            if value.get(name) is None:
                return False
        for name, child in node.properties.items():
            item = value.get(name)
            if (item is not None or (name in value and child.nullable)) and not _passes(item, child):
                return False
        extra = node.additional
        return extra is None or all(_passes(item, extra) for name, item in value.items() if name not in node.properties)
    if isinstance(value, str):
        return ((node.max_length is None or len(value) <= node.max_length)
                and (node.min_length is None or len(value) >= node.min_length)
                and (node.regex is None or node.regex.search(value) is not None))
    if isinstance(value, list):
        return ((node.min_items is None or len(value) >= node.min_items)
                and (node.max_items is None or len(value) <= node.max_items)
                and (node.items is None or all(_passes(item, node.items) for item in value)))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        errors: list[str] = []
        if node.minimum is not None or node.maximum is not None:
            _check_number(value, node, "", errors)  # rare: the bounds are few
        return not errors
    return True


def json_type(value: Any) -> str:
    """The JSON type of a decoded value (the Python type's name for anything else)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


def _type_error(value: Any, node: SchemaNode) -> tuple[str, str] | None:
    """(the expected type name, what the data is) when `value` is not of the node's type,
    as kube-openapi's type validator names them; None when it fits."""
    actual = json_type(value)
    if node.int_or_string:
        return None if actual in ("integer", "string") else ("integer,string", actual)
    if node.type is None or actual == node.type:
        return None
    integral = actual == "number" and math.isfinite(value) and float(value).is_integer()
    if node.type == "integer" and integral or node.type == "number" and actual == "integer":
        return None
    if node.type == "integer" and node.format and actual not in ("string", "array", "null"):
        # A typed format is compared first: a boolean, object or fractional number is
        # reported against the format, with the data's own format ("" or "float64").
        return node.format, "float64" if actual == "number" else ""
    return node.type, actual


def _check(value: Any, node: SchemaNode, path: str, errors: list[str]) -> None:
    if value is None and node.nullable:
        return
    wrong = _type_error(value, node)
    if wrong is not None:
        expected, actual = wrong
        errors.append(f"{path}: Invalid value: {go_value(actual)}: "
                      f"{path} in body must be of type {expected}: {go_value(actual)}")
    elif isinstance(value, str):
        _check_string(value, node, path, errors)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_number(value, node, path, errors)
    elif isinstance(value, list):
        _check_array(value, node, path, errors)
    if node.enum is not None and value not in node.enum:  # checked whatever the type
        supported = ", ".join(go_value(v if isinstance(v, str) else json.dumps(v)) for v in node.enum)
        errors.append(f"{path}: Unsupported value: {go_value(value)}: supported values: {supported}")
    if wrong is None and isinstance(value, dict):
        _check_object(value, node, path, errors)


def _check_string(value: str, node: SchemaNode, path: str, errors: list[str]) -> None:
    if node.max_length is not None and len(value) > node.max_length:
        unit = "byte" if node.max_length == 1 else "bytes"
        errors.append(f"{path}: Too long: may not be more than {node.max_length} {unit}")
    if node.min_length is not None and len(value) < node.min_length:
        errors.append(f"{path}: Invalid value: {go_value(value)}: "
                      f"{path} in body should be at least {node.min_length} chars long")
    if node.regex is not None and not node.regex.search(value):
        errors.append(f"{path}: Invalid value: {go_value(value)}: {path} in body should match '{node.pattern}'")


def _check_number(value: int | float, node: SchemaNode, path: str, errors: list[str]) -> None:
    if node.maximum is not None:
        over = value >= node.maximum if node.exclusive_maximum else value > node.maximum
        if over:
            than = "less than" if node.exclusive_maximum else "less than or equal to"
            errors.append(f"{path}: Invalid value: {go_value(value)}: "
                          f"{path} in body should be {than} {go_value(node.maximum)}")
    if node.minimum is not None:
        under = value <= node.minimum if node.exclusive_minimum else value < node.minimum
        if under:
            than = "greater than" if node.exclusive_minimum else "greater than or equal to"
            errors.append(f"{path}: Invalid value: {go_value(value)}: "
                          f"{path} in body should be {than} {go_value(node.minimum)}")


def _check_array(value: list, node: SchemaNode, path: str, errors: list[str]) -> None:
    if node.min_items is not None and len(value) < node.min_items:
        errors.append(f"{path}: Invalid value: {len(value)}: {path} in body should have at least "
                      f"{node.min_items} items")
    if node.max_items is not None and len(value) > node.max_items:
        unit = "item" if node.max_items == 1 else "items"
        errors.append(f"{path}: Too many: {len(value)}: must have at most {node.max_items} {unit}")
    if node.items is not None:
        for i, item in enumerate(value):
            _check(item, node.items, f"{path}[{i}]", errors)


def _check_object(value: dict, node: SchemaNode, path: str, errors: list[str]) -> None:
    for name in node.required:
        if value.get(name) is None:
            errors.append(f"{_child(path, name)}: Required value")
    for name, child in node.properties.items():
        if value.get(name) is not None or (name in value and child.nullable):
            _check(value[name], child, _child(path, name), errors)
    if node.additional is not None:
        for name, item in value.items():
            if name not in node.properties:
                _check(item, node.additional, _child(path, str(name)), errors)


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def go_value(value: Any) -> str:
    """A bad value as apimachinery's field errors print it: numbers and booleans bare (Go's
    %v: 2.0 is "2"), strings quoted, anything else as compact JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)
