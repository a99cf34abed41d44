"""Volcano's JobFlow admission (webhook-manager path /jobflows/validate,
`pkg/webhooks/admission/jobflows/validate/validate_jobflow.go` and `util.go`, CREATE and
UPDATE), which also holds the two rules of the ValidatingAdmissionPolicy Volcano's chart
installs beside it (`installer/helm/chart/volcano/policy/jobflows-validating.yaml`): every
`dependsOn.targets` entry names a flow of the JobFlow, and the flows form a DAG (a flow
depending on itself included).

Messages name the field, with Volcano's wording after it:
    spec.flows[1].dependsOn.targets[0]: jobflow Flow is not DAG: vertex is not defined: a
    spec.flows: jobflow Flow is not DAG: a -> b -> a
Volcano says no more than "jobflow Flow is not DAG" for a cycle; volcanic names one.

As in Volcano, flows are keyed by name and a later flow of the same name replaces an earlier
one (its targets alone count); Volcano's checks walk a Go map, so which of several faults it
names varies, while volcanic names the first in the order of the flows. Nothing here reads
other objects: a JobFlow naming JobTemplates that do not exist yet is admitted, as Volcano
admits it (its e2e suite creates such JobFlows); the jobflow controller waits for them.
"""

from __future__ import annotations

from typing import Any

from volcanic.admission.chain import AdmissionRequest
from volcanic.admission.common import check_shape, deny
from volcanic.kube.objects import as_map, spec_of

NOT_DAG = "jobflow Flow is not DAG"
NOT_DEFINED = "vertex is not defined"
_SHAPE = {"spec": {"flows": [{"name": "string", "dependsOn": {"targets": ["string"]}}],
                   "jobRetainPolicy": "string"}}


def _graph(flows: list) -> dict[str, tuple[int, list[str]]]:
    """Flow name -> (its index, its targets); a later flow of a name replaces an earlier one
    (Volcano's map), keeping the name's first place in the order."""
    graph: dict[str, tuple[int, list[str]]] = {}
    for i, flow in enumerate(flows):
        flow = as_map(flow)
        graph[flow.get("name") or ""] = (i, list(as_map(flow.get("dependsOn")).get("targets") or []))
    return graph


def _undefined_target(graph: dict[str, tuple[int, list[str]]]) -> str | None:
    """LoadVertexs: every target must be a flow's name."""
    for i, targets in graph.values():
        for j, target in enumerate(targets):
            if target not in graph:
                return deny(f"spec.flows[{i}].dependsOn.targets[{j}]", f"{NOT_DAG}: {NOT_DEFINED}: {target}")
    return None


def _cycle(graph: dict[str, tuple[int, list[str]]]) -> list[str] | None:
    """The first cycle a depth-first walk of the flows finds, as the names along it (the
    first repeated at the end); None for a DAG. Iterative: a long chain of flows must not
    exhaust Python's recursion."""
    done: set[str] = set()
    for start in graph:
        if start in done:
            continue
        path, on_path = [start], {start}
        pending = [iter(graph[start][1])]  # per flow on the path: the targets left to walk
        while pending:
            target = next(pending[-1], None)
            if target is None:  # every target of the last flow on the path walked
                finished = path.pop()
                on_path.discard(finished)
                done.add(finished)
                pending.pop()
            elif target in on_path:
                return path[path.index(target):] + [target]
            elif target not in done:
                path.append(target)
                on_path.add(target)
                pending.append(iter(graph[target][1]))
    return None


def jobflow_well_formed(request: AdmissionRequest) -> str | None:
    """The types the CRD gives (what Volcano's decoder needs): flows a list of objects with
    a string name and string targets."""
    if not isinstance(request.obj, dict):
        return "object: must be an object"
    return check_shape(request.obj, _SHAPE, "")


def jobflow_is_dag(request: AdmissionRequest) -> str | None:
    """validateJobFlowDAG: the targets are flows (the policy's first rule too) and there is
    no cycle (the policy's second rule, a flow depending on itself, is the shortest)."""
    graph = _graph(spec_of(request.obj).get("flows") or [])
    undefined = _undefined_target(graph)
    if undefined:
        return undefined
    cycle = _cycle(graph)
    return deny("spec.flows", f"{NOT_DAG}: {' -> '.join(cycle)}") if cycle else None


def mutators(conf: Any) -> list:
    """Volcano registers no /jobflows/mutate."""
    return []


def validators(conf: Any) -> list:
    """/jobflows/validate (CREATE, UPDATE)."""
    return [jobflow_well_formed, jobflow_is_dag]
