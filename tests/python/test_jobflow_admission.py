"""JobFlow admission (volcanic/admission/jobflows.py): Volcano v1.15.1's webhook,
pkg/webhooks/admission/jobflows/validate/validate_jobflow.go and util.go (every target a
flow, the flows a DAG), with its chart's ValidatingAdmissionPolicy,
installer/helm/chart/volcano/policy/jobflows-validating.yaml (the same two faults). Volcano's
unit cases (validate_jobflow_test.go TestValidateJobFlowCreate, util_test.go TestIsDAG) and its
e2e cases (test/e2e/admission/jobflow_validation_test.go) through the chain, then the
embedded cluster (the CRD's schema first, config/crd/jobflow/bases/flow.volcano.sh_jobflows.yaml)
and the review path."""

from __future__ import annotations

import pytest

from review_helpers import review
import volcanic
from volcanic.admission import validate, volcano_chain
from volcanic.admission.chain import EMPTY_LISTER
from volcanic.kube.kinds import KINDS

CHAIN = volcano_chain()
NOT_DAG = "jobflow Flow is not DAG"


def jobflow(*flows, name="valid-jobflow", ns="test", policy="retain"):
    """flows: (name, targets or None)."""
    spec_flows = [dict({"name": n}, **({"dependsOn": {"targets": list(t)}} if t is not None else {}))
                  for n, t in flows]
    return {"apiVersion": KINDS["JobFlow"].api_version, "kind": "JobFlow", "metadata": {"name": name, "namespace": ns},
            "spec": {"flows": spec_flows, "jobRetainPolicy": policy}}


def denial(obj, operation="CREATE"):
    """The chain's message for `obj`, None when admitted."""
    try:
        CHAIN.validate(operation, obj, obj if operation == "UPDATE" else None, EMPTY_LISTER)
    except volcanic.AdmissionError as e:
        assert (e.kind, e.name, e.namespace) == ("JobFlow", obj["metadata"]["name"], obj["metadata"]["namespace"])
        return str(e)
    return None


DIAMOND = [("a", None), ("b", ["a"]), ("c", ["a", "b"]), ("d", ["b"]), ("e", ["c", "d"])]


@pytest.mark.parametrize("operation", ["CREATE", "UPDATE"])
def test_a_dag_is_admitted(operation):
    """validate_jobflow_test.go TestValidateJobFlowCreate "validate valid-jobflow"."""
    assert denial(jobflow(*DIAMOND), operation) is None


def test_duplicate_flow_names_are_admitted():
    """TestValidateJobFlowCreate "validate valid-jobflow with duplicate flow name"."""
    assert denial(jobflow(("a", None), *DIAMOND)) is None


def test_a_target_that_is_no_flow_is_refused():
    """TestValidateJobFlowCreate "validate valid-jobflow with miss flow name a": Volcano's message,
    after the field of the first such target."""
    flows = [("b", ["a"]), ("c", ["a", "b"]), ("d", ["b"]), ("e", ["c", "d"])]
    assert denial(jobflow(*flows)) == \
        "spec.flows[0].dependsOn.targets[0]: jobflow Flow is not DAG: vertex is not defined: a"


def test_a_cycle_is_refused_naming_it():
    """TestValidateJobFlowCreate "validate valid-jobflow with flows not dag"."""
    flows = [("a", ["b"]), ("b", ["a"]), ("c", ["a", "b"]), ("d", ["b"]), ("e", ["c", "d"])]
    assert denial(jobflow(*flows)) == "spec.flows: jobflow Flow is not DAG: a -> b -> a"


def test_the_last_flow_of_a_name_counts():
    """TestValidateJobFlowCreate "validate valid-jobflow with lows with muti c": Volcano keys the
    flows by name, so the second c (depending on b) replaces the first; a replaced flow's
    undefined target is not looked at either."""
    assert denial(jobflow(("a", None), ("b", ["a"]), ("c", ["a"]), ("c", ["b"]))) is None
    assert denial(jobflow(("a", None), ("c", ["nowhere"]), ("c", ["a"]))) is None


# util_test.go TestIsDAG's graphs: (graph, is a DAG, LoadVertexs fails).
IS_DAG = [
    ({"1": ["2"], "2": ["1", "3"]}, False, True),
    ({"1": ["2"], "2": ["3"], "3": ["1"]}, False, False),
    ({"1": ["2"], "2": ["1", "3"], "3": []}, False, False),
    ({"1": ["2", "3"], "2": ["3"], "3": ["4"], "4": []}, True, False),
    ({"1": ["2", "3"], "2": ["4", "5"], "3": [], "4": [], "5": []}, True, False),
    ({"1": ["2", "3", "4"], "2": ["3"], "3": ["4"], "4": ["5"], "5": []}, True, False),
    ({"1": ["2", "3", "4"], "2": ["3", "5"], "3": ["5"], "4": ["3", "5"], "5": []}, True, False),
    ({"1": ["2", "3", "4"], "2": ["3", "5"], "3": ["5"], "4": ["3", "5"], "5": ["5", "3"]}, False, False),
]


@pytest.mark.parametrize("case", range(len(IS_DAG)))
def test_is_dag(case):
    """util_test.go TestIsDAG, each graph as the flows' targets."""
    graph, is_dag, undefined = IS_DAG[case]
    message = denial(jobflow(*graph.items()))
    if undefined:
        assert message.endswith(f"{NOT_DAG}: vertex is not defined: 3")
    elif is_dag:
        assert message is None
    else:
        assert message.startswith(f"spec.flows: {NOT_DAG}: ")


def test_the_cycle_named_is_one():
    """The names after Volcano's words walk a cycle: each depends on the next."""
    flows = dict(IS_DAG[7][0])
    message = denial(jobflow(*flows.items()))
    names = message.rpartition(f"{NOT_DAG}: ")[2].split(" -> ")
    assert names[0] == names[-1] and len(names) >= 2
    assert all(after in flows[before] for before, after in zip(names, names[1:]))


def test_a_long_chain_is_checked_without_recursion():
    """5000 flows in a chain: admitted; closed into a ring: refused (no recursion limit hit)."""
    chain = [("f0", None)] + [(f"f{i}", [f"f{i - 1}"]) for i in range(1, 5000)]
    assert denial(jobflow(*chain)) is None
    assert denial(jobflow(("f0", ["f4999"]), *chain[1:])).startswith(f"spec.flows: {NOT_DAG}: f0 -> f4999")


@pytest.mark.parametrize("flows, refused", [
    ([("a", None), ("b", ["a"]), ("c", ["a", "b"]), ("d", ["b"]), ("e", ["c", "d"])], None),
    ([("a", None), ("a", None), ("b", ["a"])], None),
    ([("b", ["a"]), ("c", ["a", "b"])], "vertex is not defined"),
    ([("a", None), ("b", ["a"]), ("c", ["a"]), ("c", ["b"])], None),
    ([("start", None), ("middle", ["start"]), ("end", ["middle"])], None),
    ([("a", ["a"])], NOT_DAG),
])
def test_volcanos_e2e_admission_cases(flows, refused):
    """test/e2e/admission/jobflow_validation_test.go: a valid DAG, duplicate names, a missing
    flow definition, several flows with the same target, a linear chain; and the policy's
    self-dependency. None of these JobFlows' JobTemplates exist: that is not admission's."""
    message = denial(jobflow(*flows))
    assert message is None if refused is None else refused in message


def test_an_update_is_checked_too():
    """Should allow jobflow update with valid DAG structure; an update making a cycle is refused."""
    flows = [("a", None), ("b", ["a"])]
    assert denial(jobflow(*flows, ("c", ["b"])), "UPDATE") is None
    assert NOT_DAG in denial(jobflow(("a", ["b"]), ("b", ["a"])), "UPDATE")


def test_malformed_flows_are_refused_by_type():
    """What Volcano's decoder refuses: flows not a list, a name or a target not a string."""
    bad = jobflow(("a", None))
    bad["spec"]["flows"] = {"a": 1}
    assert "spec.flows" in denial(bad)
    bad["spec"]["flows"] = [{"name": "a", "dependsOn": {"targets": [1]}}]
    assert "spec.flows[0].dependsOn.targets[0]" in denial(bad)


def test_the_cluster_refuses_a_cycle_and_keeps_nothing():
    c = volcanic.Cluster()
    with pytest.raises(volcanic.AdmissionError, match="jobflow Flow is not DAG: a -> b -> a"):
        c.apply(jobflow(("a", ["b"]), ("b", ["a"]), ns="default"))
    with pytest.raises(volcanic.AdmissionError, match="vertex is not defined: x"):
        c.apply(jobflow(("a", ["x"]), ns="default"))
    assert c.list("JobFlow") == []
    stored = c.apply(jobflow(*DIAMOND, ns="default"))
    stored["spec"]["flows"][0]["dependsOn"] = {"targets": ["e"]}  # an update closing a cycle
    with pytest.raises(volcanic.AdmissionError, match=NOT_DAG):
        c.apply(stored)
    c.delete("JobFlow", "valid-jobflow")  # DELETE is not validated
    assert c.list("JobFlow") == []


def test_the_cluster_checks_the_crds_schema_first():
    """config/crd/jobflow/bases: jobRetainPolicy is retain or delete, a flow's name is not empty,
    a patch's JobSpec is a Job's (its defaults filled in)."""
    c = volcanic.Cluster()
    with pytest.raises(volcanic.InvalidObject, match=r'spec.jobRetainPolicy: Unsupported value: "keep"'):
        c.apply(jobflow(("a", None), ns="default", policy="keep"))
    with pytest.raises(volcanic.InvalidObject, match=r"spec.flows\[0\].name"):
        c.apply(jobflow(("", None), ns="default"))
    patched = jobflow(("a", None), ns="default")
    patched["spec"]["flows"][0]["patch"] = {"jobSpec": {"tasks": [{"name": "t", "replicas": 1, "template": {}}]}}
    stored = c.apply(patched)
    assert stored["spec"]["flows"][0]["patch"]["jobSpec"]["queue"] == "default"
    probed = jobflow(("a", None), name="probed", ns="default")
    probed["spec"]["flows"][0]["dependsOn"] = {"probe": {"tcpSocketList": [{"port": 70000}]}}
    with pytest.raises(volcanic.InvalidObject, match=r"tcpSocketList\[0\].port in body should be less than or equal to 65535"):
        c.apply(probed)


def test_the_review_path_validates_jobflows_and_only_them():
    """/jobflows/validate over AdmissionReview: a denial with the rule's message; another kind is
    refused with DecodeJobFlow's "expect resource to be ..."."""
    group = KINDS["JobFlow"].group
    bad = review(jobflow(("a", ["a"])), group=group)
    response = validate(bad, kind="JobFlow")["response"]
    assert response["allowed"] is False and response["status"]["message"] == "spec.flows: jobflow Flow is not DAG: a -> a"
    assert validate(review(jobflow(*DIAMOND), group=group), kind="JobFlow")["response"]["allowed"] is True
    queue = {"apiVersion": KINDS["Queue"].api_version, "kind": "Queue", "metadata": {"name": "q"}}
    response = validate(review(queue), kind="JobFlow")["response"]
    assert response["status"]["message"] == "expect resource to be {flow.volcano.sh v1alpha1 jobflows}"


def test_job_templates_have_no_admission():
    """Volcano has no JobTemplate webhook: any JobTemplate the CRD takes is stored."""
    assert not CHAIN.has_rules("JobTemplate", "CREATE")
    assert not CHAIN.has_rules("JobFlow", "DELETE") and CHAIN.rules("JobFlow", "CREATE", True) == []
