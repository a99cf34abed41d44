"""HyperNode admission (volcanic/admission/hypernodes.py): Volcano v1.15.1's webhook,
pkg/webhooks/admission/hypernodes/validate/admit_hypernode.go (members non-empty, regexMatch
patterns compile), and its chart's ValidatingAdmissionPolicy,
installer/helm/chart/volcano/policy/hypernodes-validating.yaml (one selector per member,
exactMatch.name a qualified name, patterns non-empty with balanced brackets). Each rule is
called through the chain, accepting and refusing; then end to end through volcanic.Cluster
(schema first, as the CRD config/crd/volcano/bases/topology.volcano.sh_hypernodes.yaml) and
over AdmissionReview."""

from __future__ import annotations

import json
import re

import pytest

from hypernode_helpers import exact, hypernode, labels, regex
from review_helpers import review
import volcanic
from volcanic.admission import validate, volcano_chain
from volcanic.admission.chain import EMPTY_LISTER
from volcanic.kube.goregexp import GoRegexpError, go_regexp
from volcanic.kube.kinds import KINDS

CHAIN = volcano_chain()


def denial(obj: dict, operation: str = "CREATE") -> str | None:
    """The chain's message for `obj`, None when admitted."""
    old = obj if operation == "UPDATE" else None
    try:
        CHAIN.validate(operation, obj, old, EMPTY_LISTER)
    except volcanic.AdmissionError as e:
        assert (e.kind, e.name) == ("HyperNode", obj["metadata"]["name"])  # the error names the object
        return str(e)
    return None


@pytest.mark.parametrize("operation", ["CREATE", "UPDATE"])
def test_a_valid_hypernode_of_each_selector_is_admitted(operation):
    """admit_hypernode_test.go's valid cases (exactMatch node-1, labelMatch topology-rack), a
    regex and a HyperNode member, on CREATE and UPDATE."""
    assert denial(hypernode("hn", 1, exact("node-1")), operation) is None
    assert denial(hypernode("hn", 1, labels(**{"topology-rack": "rack1"})), operation) is None
    assert denial(hypernode("hn", 0, regex(r"^s0-n[12]$"), exact("s1", "HyperNode")), operation) is None
    assert denial(hypernode("hn", 1, exact("example.com/node-1"))) is None  # a qualified name may have a prefix


@pytest.mark.parametrize("operation", ["CREATE", "UPDATE"])
def test_members_must_not_be_empty(operation):
    """validateHyperNode and the policy's first rule: "member must have at least one member"."""
    missing = hypernode("hn")
    del missing["spec"]["members"]
    assert denial(missing, operation) == "spec.members: Invalid value: null: member must have at least one member"
    empty = hypernode("hn")
    empty["spec"]["members"] = []
    assert denial(empty, operation) == "spec.members: Invalid value: []: member must have at least one member"


def test_a_selector_names_exactly_one_kind():
    """The policy (and the CRD's CEL rules): at least one and at most one of exactMatch,
    regexMatch and labelMatch, the member's field named."""
    none = hypernode("hn", 1, exact("n1"), {"type": "Node", "selector": {}})
    assert denial(none) == ("spec.members[1].selector: member selector must have one of exactMatch, "
                            "regexMatch, or labelMatch")
    both = {"type": "Node", "selector": {"exactMatch": {"name": "n1"}, "regexMatch": {"pattern": "n"}}}
    assert denial(hypernode("hn", 1, both)) == ("spec.members[0].selector: cannot specify more than one "
                                                "selector type (exactMatch, regexMatch, labelMatch)")


def test_exact_match_names_are_required_qualified_names():
    """The policy: exactMatch.name non-empty ("member exactMatch name is required") and a
    qualified name (CEL format.qualifiedName: the name part at most 63 characters)."""
    assert denial(hypernode("hn", 1, exact(""))) == \
        "spec.members[0].selector.exactMatch.name: member exactMatch name is required"
    long = "n" * 64
    message = denial(hypernode("hn", 1, exact(long)))
    assert message.startswith(f'spec.members[0].selector.exactMatch.name: Invalid value: "{long}": '
                              "member exactMatch validate failed [name part must be no more than 63 characters")
    assert denial(hypernode("hn", 1, exact("-n1"))).endswith("start and end with an alphanumeric character "
                                                             "(e.g. 'MyName', or 'my.name', or '123-abc', regex used "
                                                             "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
                                                             "[A-Za-z0-9]')]")


@pytest.mark.parametrize("pattern,called", [("a(b", "parentheses"), ("a[b", "square brackets"),
                                            ("a{2", "curly braces"), (r"a\(", "parentheses")])
def test_regex_brackets_must_balance_by_count(pattern, called):
    """The policy's crude checks count brackets, escaped ones too (so a valid `a\\(` is refused,
    as the policy refuses it)."""
    assert denial(hypernode("hn", 1, regex(pattern))) == (
        f"spec.members[0].selector.regexMatch.pattern: Invalid value: {json.dumps(pattern)}: "
        f"member regexMatch pattern is invalid: unmatched {called}")


def test_regex_patterns_are_required_and_must_compile_as_go_regexps():
    """The policy: a pattern is required; the webhook (validateHyperNodeRegexPattern): it
    compiles with Go's regexp.Compile, whose refusals volcanic keeps (see goregexp)."""
    assert denial(hypernode("hn", 1, regex(""))) == \
        "spec.members[0].selector.regexMatch.pattern: member regexMatch pattern is required"
    assert denial(hypernode("hn", 1, exact("n1"), regex("(?=n)n1"))) == (
        'spec.members[1].selector.regexMatch.pattern: Invalid value: "(?=n)n1": member regexMatch pattern is '
        "invalid: error parsing regexp: invalid or unsupported Perl syntax: `(?=`")
    assert "valid in Go but not supported by volcanic" in denial(hypernode("hn", 1, regex(r"\pL+")))
    assert denial(hypernode("hn", 1, regex(r"^rack-\d{1,3}\z"))) is None


@pytest.mark.parametrize("pattern,message", [
    ("(?=a)", "invalid or unsupported Perl syntax: `(?=`"), ("(?<!a)b", "invalid or unsupported Perl syntax: `(?<!`"),
    (r"(a)\1", r"invalid escape sequence: `\1`"), ("a*+", "invalid nested repetition operator: `*+`"),
    ("a{1001}", "invalid repeat count: `{1001}`"), (r"a\Z", r"invalid escape sequence: `\Z`"),
    ("(?x)a b", "invalid or unsupported Perl syntax: `(?x)`"), ("(?#c)a", "invalid or unsupported Perl syntax: `(?#`"),
])
def test_go_refusals_that_python_would_accept_are_refused(pattern, message):
    """Go's regexp/syntax refuses these; Python's re would compile them."""
    with pytest.raises(GoRegexpError, match=re.escape("error parsing regexp: " + message)):
        go_regexp(pattern)


def test_go_spellings_are_read_as_go_reads_them():
    """\\z is the end of the text, (?<name>...) a named group, and {,n} literal text in Go."""
    assert go_regexp(r"n1\z").search("n1") and not go_regexp(r"n1\z").search("n1x")
    assert go_regexp(r"(?<rack>r\d)").search("r1").group("rack") == "r1"
    assert go_regexp("n{,3}").search("n{,3}") and not go_regexp("n{,3}").search("nnn")
    for valid_in_go in (r"\pL", r"\Q.\E", r"\x{41}", "[[:alpha:]]", "(?U)a+", "a(?i)b"):
        with pytest.raises(GoRegexpError, match="valid in Go but not supported by volcanic"):
            go_regexp(valid_in_go)


def test_the_embedded_cluster_checks_the_schema_then_admission():
    """Cluster.apply: the CRD's schema (tier required and >= 0, member type Node|HyperNode,
    minItems 1, name pattern) refuses first, with the API server's message; admission then
    refuses what the schema lets through, naming the HyperNode."""
    c, group = volcanic.Cluster(), KINDS["HyperNode"].group
    for bad, field in [(hypernode("hn", -1), "spec.tier"), (hypernode("hn", 1, exact("n1", "Rack")),
                                                            "spec.members[0].type"),
                       (hypernode("hn", 1, exact("N_1")), "spec.members[0].selector.exactMatch.name")]:
        with pytest.raises(volcanic.InvalidObject, match=re.escape(f'HyperNode.{group} "hn" is invalid: {field}:')):
            c.apply(bad)
    no_tier = hypernode("hn")
    del no_tier["spec"]["tier"]
    with pytest.raises(volcanic.InvalidObject, match="spec.tier: Required value"):
        c.apply(no_tier)
    with pytest.raises(volcanic.AdmissionError, match="unmatched parentheses") as e:
        c.apply(hypernode("hn", 1, regex("n(1")))
    assert (e.value.kind, e.value.name) == ("HyperNode", "hn")
    assert c.list("HyperNode") == []
    c.apply(hypernode("hn", 0, regex("^n")))
    with pytest.raises(volcanic.AdmissionError, match="member selector must have one of"):
        c.apply(hypernode("hn", 0, {"type": "Node", "selector": {}}))  # an update is checked too
    c.delete("HyperNode", "hn")  # DELETE is not validated
    assert c.list("HyperNode") == []


def test_the_review_path_validates_hypernodes_and_only_them():
    """/hypernodes/validate over AdmissionReview: a denial with the rule's message; another
    kind is refused with DecodeHyperNode's "expect resource to be ..."."""
    group = KINDS["HyperNode"].group
    bad = review(hypernode("hn", 1, regex("a[")), operation="UPDATE", old=hypernode("hn"), group=group)
    response = validate(bad, kind="HyperNode")["response"]
    assert response["allowed"] is False and "unmatched square brackets" in response["status"]["message"]
    assert validate(review(hypernode("hn"), group=group), kind="HyperNode")["response"]["allowed"] is True
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"}}
    response = validate(review(queue), kind="HyperNode")["response"]
    assert response["status"]["message"] == "expect resource to be {topology.volcano.sh v1alpha1 hypernodes}"
