"""Volcano's admission rules over AdmissionReview v1, the wire format of Kubernetes
admission webhooks (admission.k8s.io/v1).

    mutate(review, chain=None, lister=None, kind=None) -> review
    validate(review, chain=None, lister=None, kind=None) -> review
    parse(body) -> review                  # bytes to JSON, or ReviewError

Both take a parsed AdmissionReview (a dict, as `json.loads` or `parse` gives it) and return the
AdmissionReview to send back. `mutate` runs the chain's mutators for the request's kind and
answers with the difference as a base64 JSONPatch (RFC 6902); `validate` runs its
validators. A review that is not a well-formed AdmissionReview v1 raises ReviewError (a
ValueError) and nothing else; a rule's denial is an ordinary response with
`allowed: false`.

The response, as Volcano's webhook-manager writes it (pkg/webhooks/router/server.go and
util.ToAdmissionResponse):
- `response.uid` is `request.uid`;
- allowed: `{"uid", "allowed": true}`, plus `"patchType": "JSONPatch"` and `"patch"` (base64)
  when a mutator changed the object;
- denied: `{"uid", "allowed": false, "status": {"message": <the rule's message>}}`. Volcano
  sets no status code: the API server then reports the denial as 403 Forbidden,
  "admission webhook ... denied the request: <message>".

What is admitted:
- The kind is `request.kind` (group and kind; when `group` is absent it is read from the
  object's apiVersion). Volcano's kinds are Job (batch.volcano.sh), PodGroup and Queue
  (scheduling.volcano.sh), Command (bus.volcano.sh) and Pod (core). Any other kind — a
  Kubernetes batch/v1 Job, say — is allowed unchanged, as a chain without rules for it
  would.
- `kind="Job"` etc. restricts the call to one kind, as each of Volcano's paths does
  (/jobs/mutate only decodes jobs): a review of another kind is denied with Volcano's
  message, "expect resource to be ...".
- Pods are handed to the pod rules whatever their schedulerName; those rules leave pods of
  other schedulers alone, and nothing here denies them.
- CONNECT requests are allowed unchanged (no Volcano rule registers for CONNECT).
- A rule that raises AdmissionError denies with its message. A rule that fails in any other
  way (a bug, or an object shaped in a way the rule does not expect) denies with
  `status.code` 500 and reason InternalError, and the failure is logged: the webhook still
  answers, and the API server rejects the request as an internal error.

The JSONPatch is the difference between `request.object` and the mutated object, as
volcanic.kube.patch.json_patch makes it: `add` and `remove` for map keys, `replace` for
changed values, recursing into maps and into lists of equal length; a list whose length
changed is replaced whole (simpler, and still a correct patch: Volcano's own job mutator
replaces /spec/tasks whole). Keys are escaped as JSON Pointers (`~` -> `~0`, `/` -> `~1`).
Values are compared with their JSON types (1, 1.0 and true differ).

`lister` is what rules that read other objects use (get(kind, name, namespace) and
list(kind, namespace), as MemoryStore provides); it defaults to an empty MemoryStore. The
chain defaults to `volcano_chain()` with the default AdmissionConf.
"""

from __future__ import annotations

import base64
import json
import logging
import math
from typing import Any, Callable

from volcanic.admission.chain import EMPTY_LISTER, AdmissionChain, AdmissionRequest
from volcanic.admission.volcano import volcano_chain
from volcanic.kube.errors import AdmissionError
from volcanic.kube.kinds import ADMITTED, Kind
from volcanic.kube.objects import Obj, clone
from volcanic.kube.patch import apply_json_patch, json_patch

log = logging.getLogger(__name__)

API_VERSION = "admission.k8s.io/v1"
OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT")
# The API group of each kind the chain has rules for.
GROUPS = {k.name: k.group for k in ADMITTED}


def _expected(kind: Kind) -> str:
    """What Volcano's decoders (pkg/webhooks/schema) say of a review of another resource: the
    group/version/resources they accept."""
    if not kind.admission.decoded:
        return f"{{{kind.group} {kind.version} {kind.plural}}}"
    return "[" + " ".join(f"{{{kind.group} {v} {kind.plural}}}" for v in kind.admission.decoded) + "]"


EXPECTED_RESOURCE = {k.name: _expected(k) for k in ADMITTED if k.admission.webhook}
# Deeper than any Kubernetes object nests (a Job's pod template is about 15 levels), and the
# limit the scheduler's own decoder applies to objects; bounds the recursion of the rules and
# of the diff.
MAX_DEPTH = 64


class ReviewError(ValueError):
    """The input is not a well-formed AdmissionReview v1; the message says where."""


# Public API.

def mutate(review: Any, chain: AdmissionChain | None = None, lister: Any = None,
           kind: str | None = None) -> Obj:
    """The AdmissionReview answering `review` with the chain's mutators: allowed, with a
    base64 JSONPatch when the object changed; or denied. Raises ReviewError only."""
    return _admit(review, chain, lister, kind, mutating=True)


def validate(review: Any, chain: AdmissionChain | None = None, lister: Any = None,
             kind: str | None = None) -> Obj:
    """The AdmissionReview answering `review` with the chain's validators: allowed, or
    denied with the first denial's message. Raises ReviewError only."""
    return _admit(review, chain, lister, kind, mutating=False)


def parse(body: bytes | str) -> Any:
    """The JSON value of a request body; ReviewError if it is not JSON (truncated, not
    UTF-8, NaN or Infinity, nested too deep for the parser)."""
    try:
        return json.loads(body, parse_constant=_reject_constant)
    except (ValueError, TypeError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError
        raise ReviewError(f"the body is not JSON: {e}") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# review.json_patch and review.apply_patch, as docs/admission.md names them.
apply_patch = apply_json_patch


def allowed_response(uid: str) -> Obj:
    return _review({"uid": uid, "allowed": True})


def denied_response(uid: str, message: str, code: int | None = None, reason: str | None = None) -> Obj:
    """A denial as Volcano's util.ToAdmissionResponse writes it (message only), or with a
    status code and reason for internal errors."""
    status: Obj = {"message": message}
    if code is not None:
        status["code"] = code
    if reason is not None:
        status["reason"] = reason
    return _review({"uid": uid, "allowed": False, "status": status})


# The codec.

_default_chain: AdmissionChain | None = None


def _chain() -> AdmissionChain:
    global _default_chain
    if _default_chain is None:
        _default_chain = volcano_chain()
    return _default_chain


def _admit(review: Any, chain: AdmissionChain | None, lister: Any, only_kind: str | None,
           mutating: bool) -> Obj:
    request = _request(review)
    uid, operation, kind, group = request["uid"], request["operation"], request["_kind"], request["_group"]
    obj, old = request.get("object"), request.get("oldObject")
    if only_kind is not None and (kind != only_kind or group != GROUPS.get(only_kind)):
        expected = EXPECTED_RESOURCE.get(only_kind, only_kind)
        return denied_response(uid, f"expect resource to be {expected}")
    if GROUPS.get(kind) != group or operation == "CONNECT":
        return allowed_response(uid)
    chain = chain if chain is not None else _chain()
    rules: list[Callable] = chain.rules(kind, operation, mutating)
    if not rules or (mutating and obj is None):
        return allowed_response(uid)
    lister = lister if lister is not None else EMPTY_LISTER
    # The rules see copies that carry their kind (the chain dispatches on it) and may change
    # them freely; the patch is taken against the object as sent.
    current = _with_kind(clone(obj), kind) if obj is not None else None
    previous = _with_kind(clone(old), kind) if old is not None else None
    for rule in rules:
        name = getattr(rule, "__qualname__", repr(rule))
        try:
            result = rule(AdmissionRequest(operation, current, previous, lister))
        except AdmissionError as e:
            return denied_response(uid, str(e))
        except Exception as e:  # a rule's bug must not take the webhook down
            log.exception("admission rule %s failed on %s %s", name, operation, kind)
            return denied_response(uid, f"internal error: admission rule {name} failed: "
                                        f"{type(e).__name__}: {e}", 500, "InternalError")
        if mutating:
            if not isinstance(result, dict):
                log.error("admission mutator %s returned %s, not an object", name, type(result).__name__)
                return denied_response(uid, f"internal error: admission mutator {name} returned "
                                            f"{type(result).__name__}, not an object", 500, "InternalError")
            current = result
        elif result:
            return denied_response(uid, str(result))
    if not mutating:
        return allowed_response(uid)
    if "kind" not in obj and current.get("kind") == kind:
        current = {k: v for k, v in current.items() if k != "kind"}
    try:
        _check_json(current, "mutated object")
        ops = json_patch(obj, current)
        patch = json.dumps(ops, separators=(",", ":"), allow_nan=False).encode()
    except (ReviewError, ValueError, TypeError, RecursionError) as e:
        log.error("admission mutators of %s made an object that is not JSON: %s", kind, e)
        return denied_response(uid, f"internal error: the mutated {kind} is not JSON: {e}", 500,
                               "InternalError")
    response = allowed_response(uid)
    if ops:
        response["response"]["patchType"] = "JSONPatch"
        response["response"]["patch"] = base64.b64encode(patch).decode("ascii")
    return response


def _review(response: Obj) -> Obj:
    return {"apiVersion": API_VERSION, "kind": "AdmissionReview", "response": response}


def _with_kind(obj: Obj, kind: str) -> Obj:
    if "kind" not in obj:
        obj["kind"] = kind
    return obj


def _request(review: Any) -> Obj:
    """request of a well-formed AdmissionReview v1, with `_kind` and `_group` resolved."""
    if not isinstance(review, dict):
        raise ReviewError(f"AdmissionReview: must be a JSON object, got {_type(review)}")
    if review.get("apiVersion") != API_VERSION:
        raise ReviewError(f"AdmissionReview: apiVersion: must be {API_VERSION!r}, got {review.get('apiVersion')!r}")
    if review.get("kind") != "AdmissionReview":
        raise ReviewError(f"AdmissionReview: kind: must be 'AdmissionReview', got {review.get('kind')!r}")
    request = review.get("request")
    if not isinstance(request, dict):
        raise ReviewError(f"AdmissionReview: request: must be an object, got {_type(request)}")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise ReviewError(f"AdmissionReview: request.uid: must be a non-empty string, got {uid!r}")
    operation = request.get("operation")
    if operation not in OPERATIONS:
        raise ReviewError(f"AdmissionReview: request.operation: must be one of {', '.join(OPERATIONS)}, "
                          f"got {operation!r}")
    gvk = request.get("kind")
    if not isinstance(gvk, dict) or not isinstance(gvk.get("kind"), str) or not gvk["kind"]:
        raise ReviewError("AdmissionReview: request.kind: must be an object with a non-empty string kind")
    for field in ("group", "version"):
        if field in gvk and not isinstance(gvk[field], str):
            raise ReviewError(f"AdmissionReview: request.kind.{field}: must be a string, got {gvk[field]!r}")
    objects = {}
    for field in ("object", "oldObject"):
        value = request.get(field)
        if value is not None:
            if not isinstance(value, dict):
                raise ReviewError(f"AdmissionReview: request.{field}: must be an object or null, "
                                  f"got {_type(value)}")
            _check_json(value, f"request.{field}")
            if "kind" in value and value["kind"] != gvk["kind"] and operation != "CONNECT":
                raise ReviewError(f"AdmissionReview: request.{field}.kind: {value['kind']!r} is not "
                                  f"request.kind.kind {gvk['kind']!r}")
        objects[field] = value
    if operation in ("CREATE", "UPDATE") and objects["object"] is None:
        raise ReviewError(f"AdmissionReview: request.object: is required for {operation}")
    if operation == "UPDATE" and objects["oldObject"] is None:
        raise ReviewError("AdmissionReview: request.oldObject: is required for UPDATE")
    group = gvk.get("group")
    if group is None:
        api_version = next((o.get("apiVersion") for o in objects.values() if o is not None), "")
        group = api_version.rpartition("/")[0] if isinstance(api_version, str) else ""
    return dict(request, _kind=gvk["kind"], _group=group)


def _type(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            type(None): "null", int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _check_json(value: Any, where: str) -> None:
    """Raises ReviewError unless `value` is JSON data (string keys, finite numbers) nested at
    most MAX_DEPTH deep."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            if depth > MAX_DEPTH:
                raise ReviewError(f"AdmissionReview: {where}: nested deeper than {MAX_DEPTH} levels")
            for k, item in v.items():
                if not isinstance(k, str):
                    raise ReviewError(f"AdmissionReview: {where}: key {k!r} is not a string")
                if isinstance(item, (dict, list)):
                    stack.append((item, depth + 1))
                elif not _scalar(item):
                    raise ReviewError(f"AdmissionReview: {where}.{k}: {item!r} is not a JSON value")
        elif isinstance(v, list):
            if depth > MAX_DEPTH:
                raise ReviewError(f"AdmissionReview: {where}: nested deeper than {MAX_DEPTH} levels")
            for item in v:
                if isinstance(item, (dict, list)):
                    stack.append((item, depth + 1))
                elif not _scalar(item):
                    raise ReviewError(f"AdmissionReview: {where}: {item!r} is not a JSON value")
        elif not _scalar(v):
            raise ReviewError(f"AdmissionReview: {where}: {v!r} is not a JSON value")


def _scalar(v: Any) -> bool:
    if v is None or isinstance(v, (str, bool, int)):
        return True
    return isinstance(v, float) and math.isfinite(v)
