"""Volcano's CustomResourceDefinitions, made from the table of kinds (volcanic.kube.kinds).

Each has Volcano's group, version, kind, plural, short names, scope, status subresource
(none for PodGroups, as in Volcano's CRD) and printer columns. Their schemas are
volcanic.kube.crds.SCHEMAS: Volcano's types, minimums, maximums, patterns, enums, required
fields and defaults at the spec level, so the API server refuses what Volcano's CRDs refuse
with the same messages and fills in the same defaults; objects stay open
(x-kubernetes-preserve-unknown-fields), so every valid Volcano object is stored as sent. The
admission webhook holds Volcano's other rules.
"""

from __future__ import annotations

import copy

from volcanic.kube.crds import SCHEMAS
from volcanic.kube.kinds import KINDS, Column, Kind
from volcanic.kube.objects import Obj


def crds() -> list[Obj]:
    return [_crd(k) for k in KINDS.values() if k.crd]


def _crd(kind: Kind) -> Obj:
    """A CRD whose schema is the kind's in volcanic.kube.crds, the table the embedded cluster
    validates with too."""
    names = {"kind": kind.name, "listKind": f"{kind.name}List", "plural": kind.plural, "singular": kind.name.lower()}
    if kind.short_names:
        names["shortNames"] = list(kind.short_names)
    served: Obj = {"name": kind.version, "served": True, "storage": True,
                   "schema": {"openAPIV3Schema": copy.deepcopy(SCHEMAS[kind.name])}}
    if kind.status_subresource:
        served["subresources"] = {"status": {}}
    if kind.columns:
        served["additionalPrinterColumns"] = [_column(c) for c in kind.columns]
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{kind.plural}.{kind.group}"},
            "spec": {"group": kind.group, "names": names, "scope": "Namespaced" if kind.namespaced else "Cluster",
                     "versions": [served]}}


def _column(c: Column) -> Obj:
    col = {"name": c.name, "jsonPath": c.path, "type": c.type}
    return dict(col, priority=c.priority) if c.priority else col
