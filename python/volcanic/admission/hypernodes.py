"""Volcano's HyperNode admission (webhook-manager path /hypernodes/validate,
`pkg/webhooks/admission/hypernodes/validate/admit_hypernode.go`, CREATE and UPDATE), with the
rules of the ValidatingAdmissionPolicy Volcano's chart installs beside it
(`installer/helm/chart/volcano/policy/hypernodes-validating.yaml`), in the policy's order:

- spec.members is not empty ("member must have at least one member");
- each member's selector sets exactly one of exactMatch, regexMatch and labelMatch (also the
  CRD's CEL rules, which a real API server checks before admission);
- exactMatch.name is not empty and is a qualified name ([prefix/]name, name <= 63 characters);
- regexMatch.pattern is not empty, and has as many ')' as '(', ']' as '[' and '}' as '{' (the
  policy's crude balance checks, escaped brackets counted too);
- then the webhook's own rule: every regexMatch.pattern compiles as a Go regular expression.

Go's regexp and Python's re differ; volcanic.kube.goregexp says which patterns are accepted:
those both read the same way, a few Go spellings translated; refused are what Go refuses and
a few constructs Go takes that Python has no equivalent for (\\pL, \\Q...\\E, (?U), ...).

Each message names the field (`spec.members[2].selector.regexMatch.pattern: ...`), with
Volcano's wording after it; the AdmissionError names the HyperNode. Volcano's webhook reports
the pattern's field without the member's index; the policy's messages name no field at all.
Nothing here reads other objects: a HyperNode naming nodes or HyperNodes that do not exist,
tiers that do not nest, or a cycle are all admitted, as in Volcano.
"""

from __future__ import annotations

from typing import Any, Iterator

from volcanic.admission.chain import AdmissionRequest
from volcanic.admission.common import check_shape, deny, go_list, invalid, qualified_name_errors
from volcanic.kube.goregexp import GoRegexpError, go_regexp
from volcanic.kube.objects import as_map, spec_of

SELECTORS = ("exactMatch", "regexMatch", "labelMatch")
_SHAPE = {"spec": {"tier": "integer", "tierName": "string", "members": [{
    "type": "string",
    "selector": {"exactMatch": {"name": "string"}, "regexMatch": {"pattern": "string"}, "labelMatch": "object"},
}]}}
# The policy's balance checks: (opening, closing, what its message calls them).
_BRACKETS = (("(", ")", "parentheses"), ("[", "]", "square brackets"), ("{", "}", "curly braces"))


def _selectors(request: AdmissionRequest) -> Iterator[tuple[str, dict]]:
    """(field path, selector) of each member."""
    members = spec_of(request.obj).get("members")
    for i, member in enumerate(members if isinstance(members, list) else ()):
        yield f"spec.members[{i}].selector", as_map(as_map(member).get("selector"))


def _patterns(request: AdmissionRequest) -> Iterator[tuple[str, Any]]:
    """(field path, pattern) of each member with a regexMatch."""
    for field, selector in _selectors(request):
        if selector.get("regexMatch") is not None:
            yield f"{field}.regexMatch.pattern", as_map(selector["regexMatch"]).get("pattern")


def hypernode_well_formed(request: AdmissionRequest) -> str | None:
    """The types the CRD gives (what Volcano's decoder needs): tier an integer, tierName a
    string, each member's type and selector fields of their types."""
    if not isinstance(request.obj, dict):
        return "object: must be an object"
    return check_shape(request.obj, _SHAPE, "")


def hypernode_has_members(request: AdmissionRequest) -> str | None:
    """The webhook and the policy: spec.members must not be empty."""
    members = spec_of(request.obj).get("members")
    if members:
        return None
    return invalid("spec.members", members, "member must have at least one member")


def hypernode_one_selector(request: AdmissionRequest) -> str | None:
    """The policy (and the CRD's CEL rules): one selector kind per member, no more, no less."""
    for field, selector in _selectors(request):
        given = sum(selector.get(kind) is not None for kind in SELECTORS)
        if given == 0:
            return deny(field, "member selector must have one of exactMatch, regexMatch, or labelMatch")
        if given > 1:
            return deny(field, "cannot specify more than one selector type (exactMatch, regexMatch, labelMatch)")
    return None


def hypernode_exact_names(request: AdmissionRequest) -> str | None:
    """The policy: exactMatch.name is given and is a qualified name."""
    for field, selector in _selectors(request):
        if selector.get("exactMatch") is None:
            continue
        name = as_map(selector["exactMatch"]).get("name")
        if not name:
            return deny(f"{field}.exactMatch.name", "member exactMatch name is required")
        errors = qualified_name_errors(name)
        if errors:
            return invalid(f"{field}.exactMatch.name", name, f"member exactMatch validate failed {go_list(errors)}")
    return None


def hypernode_regex_patterns(request: AdmissionRequest) -> str | None:
    """The policy: regexMatch.pattern is given and its brackets balance (counted, as the
    policy's CEL does: `a\\(` is refused although it is a valid pattern)."""
    for field, pattern in _patterns(request):
        if not pattern:
            return deny(field, "member regexMatch pattern is required")
        for opening, closing, called in _BRACKETS:
            if opening in pattern and pattern.count(opening) != pattern.count(closing):
                return invalid(field, pattern, f"member regexMatch pattern is invalid: unmatched {called}")
    return None


def hypernode_regex_compiles(request: AdmissionRequest) -> str | None:
    """The webhook (validateHyperNodeRegexPattern): every pattern compiles as Go's regexp."""
    for field, pattern in _patterns(request):
        if not isinstance(pattern, str) or not pattern:
            continue  # the rules before refuse these
        try:
            go_regexp(pattern)
        except GoRegexpError as e:
            return invalid(field, pattern, f"member regexMatch pattern is invalid: {e}")
    return None


def mutators(conf: Any) -> list:
    """Volcano registers no /hypernodes/mutate."""
    return []


def validators(conf: Any) -> list:
    """/hypernodes/validate (CREATE, UPDATE): the policy's rules, then the webhook's."""
    return [hypernode_well_formed, hypernode_has_members, hypernode_one_selector, hypernode_exact_names,
            hypernode_regex_patterns, hypernode_regex_compiles]
