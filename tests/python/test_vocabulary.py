"""One Kubernetes vocabulary (issue "One vocabulary, one table"): Volcano's API groups are
spelled only in volcanic.kube, and the CRDs, webhook registrations and admission routing are
made from its table of kinds."""

from __future__ import annotations

from pathlib import Path
import re

from volcanic.admission import OPERATIONS
from volcanic.admission.review import GROUPS
from volcanic.kube.kinds import ADMITTED, KINDS
from volcanic.real.manifests.definitions import crds
from volcanic.real.manifests.webhooks import WEBHOOKS

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "volcanic"
# An API version (group/vN...), a bare group in quotes, or a group-qualified resource
# ('queues.scheduling.volcano.sh'); annotation keys (group/name) are not API group strings.
GROUP_STRING = re.compile(r"(batch|scheduling|bus|topology|nodeinfo|flow)\.volcano\.sh(/v\d|[\"'])"
                          r"|\w\.(batch|scheduling|bus|topology|nodeinfo|flow)\.volcano\.sh")


def test_volcano_api_groups_are_spelled_only_in_kube():
    found = [f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}"
             for path in sorted(PACKAGE.rglob("*.py")) if path.parent.name != "kube"
             for n, line in enumerate(path.read_text().splitlines(), 1) if GROUP_STRING.search(line)]
    assert found == []


def test_crds_registrations_and_routing_come_from_the_table():
    assert {c["spec"]["names"]["kind"] for c in crds()} == {k.name for k in KINDS.values() if k.crd}
    for crd in crds():
        kind = KINDS[crd["spec"]["names"]["kind"]]
        assert crd["metadata"]["name"] == f"{kind.plural}.{kind.group}"
        assert crd["spec"]["names"].get("shortNames", []) == list(kind.short_names)
    for path, (_, group, version, resource, operations) in WEBHOOKS.items():
        kind = next(k for k in ADMITTED if k.plural == resource)
        assert (group, version) == (kind.group, kind.version)
        assert operations == OPERATIONS[(kind.name, path.rsplit("/", 1)[1])]
    assert set(GROUPS) == {k.name for k in ADMITTED}
