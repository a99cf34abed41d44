"""Small helpers shared by the admission modules (jobs, queues, podgroups, pods, commands).

Everything here is a pure function of its arguments and never raises on malformed input:
checks return a denial message (str) or None / an empty list, as admission rules do.

Messages
    deny(field, detail)                  "spec.weight: must be >= 1"
    invalid(field, value, detail)        'spec.queue: Invalid value: "Q": <detail>'     (field.Invalid)
    required(field)                      "spec.tasks: Required value"                    (field.Required)
    duplicate(field, value)              'spec.tasks[1].name: Duplicate value: "a"'      (field.Duplicate)
    not_supported(field, value, values)  'x: Unsupported value: "y": supported values: "a", "b"'
    go_list(messages)                    "[m1 m2]", Go's %v of a []string, as Volcano prints them
The upper-case words are Kubernetes' own (k8s.io/apimachinery/pkg/util/validation/field).

Names (k8s.io/apimachinery/pkg/util/validation; each returns Kubernetes' messages, [] if valid)
    dns1123_label_errors(value)          RFC 1123 label, <= 63 characters (task, container names)
    dns1123_subdomain_errors(value)      RFC 1123 subdomain, <= 253 characters (queue, PVC names)
    qualified_name_errors(value)         [prefix/]name, name <= 63 characters (job, pod names)

Values
    type_name(value)                     the JSON type: object, array, string, integer, number, boolean, null
    expect(value, kind, field)           "spec.replicas: must be an integer, got string", or None
    quantity(value)                      a Kubernetes quantity as a Fraction, or None if invalid
    quantity_error(field, value)         the API server's message for an invalid quantity, or None
    check_shape(value, schema, field)    the first type error in a nested object, or None

A schema for check_shape is one of:
    "string" | "integer" | "number" | "boolean" | "object" | "array" | "quantity" | "any"
    {"field": schema, ...}               an object; listed fields are checked, others ignored
    [schema]                             an array whose items all match schema
    MapOf(schema)                        an object whose values all match schema
    a callable f(value, field)           returns a message or None, for anything else
A field whose value is None (JSON null) counts as absent, as in Go's decoding.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
import json
import re
from typing import Any, Iterable

from volcanic.kube.openapi import json_type
from volcanic.kube.quantity import parse_quantity

__all__ = [
    "deny", "invalid", "required", "duplicate", "not_supported", "go_list",
    "dns1123_label_errors", "dns1123_subdomain_errors", "qualified_name_errors",
    "type_name", "expect", "quantity", "quantity_error", "MapOf", "check_shape",
    "DNS1123_LABEL_MAX", "DNS1123_SUBDOMAIN_MAX", "QUALIFIED_NAME_MAX",
]

# --- Messages ------------------------------------------------------------------------------


def deny(field: str, detail: str) -> str:
    """A denial naming the field: "<field>: <detail>"."""
    return f"{field}: {detail}"


def _render(value: Any) -> str:
    """A value as Kubernetes field errors print it: strings quoted, numbers bare."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, ensure_ascii=False, default=str) if value is not None else "null"


def invalid(field: str, value: Any, detail: str) -> str:
    """Kubernetes' field.Invalid: '<field>: Invalid value: "<value>": <detail>'."""
    return f"{field}: Invalid value: {_render(value)}: {detail}"


def required(field: str) -> str:
    """Kubernetes' field.Required with no detail: "<field>: Required value"."""
    return f"{field}: Required value"


def duplicate(field: str, value: Any) -> str:
    """Kubernetes' field.Duplicate: '<field>: Duplicate value: "<value>"'."""
    return f"{field}: Duplicate value: {_render(value)}"


def not_supported(field: str, value: Any, supported: Iterable[str]) -> str:
    """Kubernetes' field.NotSupported: '<field>: Unsupported value: "x": supported values: "a", "b"'."""
    values = ", ".join(_render(v) for v in supported)
    return f"{field}: Unsupported value: {_render(value)}: supported values: {values}"


def go_list(messages: Iterable[str]) -> str:
    """Go's %v of a []string: "[a b c]" (Volcano prints validation errors this way)."""
    return "[" + " ".join(messages) + "]"


# --- Names ---------------------------------------------------------------------------------

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_QUALIFIED_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL = re.compile(_LABEL_FMT)
_SUBDOMAIN = re.compile(_SUBDOMAIN_FMT)
_QUALIFIED = re.compile(_QUALIFIED_FMT)

_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
              "and must start and end with an alphanumeric character")
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                  "'-' or '.', and must start and end with an alphanumeric character")
_QUALIFIED_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
                  "an alphanumeric character")


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    """validation.RegexError: the message, examples and the regex."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}'," for e in examples)
    return f"{message} (e.g. {shown} regex used for validation is '{fmt}')"


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def _name_errors(value: Any, max_len: int, pattern: Any, msg: str, fmt: str, *examples: str) -> list[str]:
    """Kubernetes' name checks: a string of at most `max_len` characters matching `pattern`."""
    if not isinstance(value, str):
        return [f"must be a string, got {type_name(value)}"]
    errs = []
    if len(value) > max_len:
        errs.append(_max_len(max_len))
    if not pattern.fullmatch(value):
        errs.append(_regex_error(msg, fmt, *examples))
    return errs


def dns1123_label_errors(value: Any) -> list[str]:
    """validation.IsDNS1123Label: [] if `value` is a valid RFC 1123 label."""
    return _name_errors(value, DNS1123_LABEL_MAX, _LABEL, _LABEL_MSG, _LABEL_FMT, "my-name", "123-abc")


def dns1123_subdomain_errors(value: Any) -> list[str]:
    """validation.IsDNS1123Subdomain: [] if `value` is a valid RFC 1123 subdomain."""
    return _name_errors(value, DNS1123_SUBDOMAIN_MAX, _SUBDOMAIN, _SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com")


def qualified_name_errors(value: Any) -> list[str]:
    """validation.IsQualifiedName: [] if `value` is "[DNS-subdomain prefix/]name", the name
    part at most 63 alphanumeric, '-', '_' or '.' characters."""
    if not isinstance(value, str):
        return [f"must be a string, got {type_name(value)}"]
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix))
    else:
        return ["a qualified name " + _regex_error(_QUALIFIED_MSG, _QUALIFIED_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX:
        errs.append("name part " + _max_len(QUALIFIED_NAME_MAX))
    if not _QUALIFIED.fullmatch(name):
        errs.append("name part " + _regex_error(_QUALIFIED_MSG, _QUALIFIED_FMT, "MyName", "my.name", "123-abc"))
    return errs


# --- Values --------------------------------------------------------------------------------


type_name = json_type  # the JSON type of a decoded value


_ARTICLE = {"integer": "an integer", "object": "an object", "array": "an array", "string": "a string",
            "number": "a number", "boolean": "a boolean", "quantity": "a quantity"}


def _is(value: Any, kind: str) -> bool:
    if kind == "any":
        return True
    if kind == "number":
        return type_name(value) in ("integer", "number")
    return type_name(value) == kind


def expect(value: Any, kind: str, field: str) -> str | None:
    """None if `value` has JSON type `kind` ("integer", "string", "object", "array", "number",
    "boolean"), else "<field>: must be an integer, got string"."""
    if _is(value, kind):
        return None
    return deny(field, f"must be {_ARTICLE.get(kind, kind)}, got {type_name(value)}")


_QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def quantity(value: Any) -> Fraction | None:
    """A Kubernetes quantity ("500m", "2Gi", 1.5) as an exact Fraction; None if invalid."""
    try:
        return parse_quantity(value)[0]
    except (ValueError, TypeError, ArithmeticError):
        return None


def quantity_error(field: str, value: Any) -> str | None:
    """None if `value` is a valid quantity, else the API server's decoding message."""
    if quantity(value) is not None:
        return None
    return deny(field, f"{_QUANTITY_FORMAT}, got {_render(value)}")


@dataclass(frozen=True)
class MapOf:
    """Schema of an object used as a map: every value matches `values`."""

    values: Any


Schema = Any  # str | dict | list | MapOf | Callable[[Any, str], str | None]


def check_shape(value: Any, schema: Schema, field: str) -> str | None:
    """The first place where `value` does not have the types `schema` describes (see the
    module docstring), as "<field.path>: must be ..., got ..."; None if it fits."""
    if value is None:
        return None
    if callable(schema):
        return schema(value, field)
    if isinstance(schema, str):
        if schema == "quantity":
            return quantity_error(field, value)
        return expect(value, schema, field)
    if isinstance(schema, MapOf):
        if not isinstance(value, dict):
            return expect(value, "object", field)
        for key, item in value.items():
            message = check_shape(item, schema.values, f"{field}.{key}")
            if message:
                return message
        return None
    if isinstance(schema, list):
        if not isinstance(value, list):
            return expect(value, "array", field)
        for i, item in enumerate(value):
            if item is None:
                return deny(f"{field}[{i}]", "must not be null")
            message = check_shape(item, schema[0], f"{field}[{i}]")
            if message:
                return message
        return None
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            return expect(value, "object", field)
        for key, sub in schema.items():
            message = check_shape(value.get(key), sub, f"{field}.{key}" if field else key)
            if message:
                return message
        return None
    raise TypeError(f"check_shape: bad schema {schema!r}")  # a programming error, not input

