"""Volcano's Pod admission (reference §3 intro, §3.3; webhook-manager paths /pods/validate and
/pods/mutate, `pkg/webhooks/admission/pods/{validate,mutate}`).

Validation (CREATE) applies only to pods whose spec.schedulerName is one of Volcano's
(--scheduler-name, AdmissionConf.scheduler_names); every other pod is allowed untouched. It
checks the job-disruption-budget annotations volcano.sh/jdb-min-available and
volcano.sh/jdb-max-unavailable: at most one, a positive integer or a percentage in 1%..99%.

Mutation (CREATE), in Volcano's order:
- With the SchedulingGatesQueueAdmission feature gate (Alpha, off by default in Volcano, and
  so here unless the configuration enables it: see `mutators`), a pod annotated
  scheduling.volcano.sh/queue-allocation-gate: "true" gets that scheduling gate.
- Resource groups (--admission-conf resourceGroups, AdmissionConf.resource_groups): the first
  group the pod belongs to merges its labels into nodeSelector, sets its affinity if the pod
  has none, appends its tolerations and sets its schedulerName. A group matches by namespace
  (object.key "namespace"), by annotation (object.key "annotation", values "key: value"), or,
  with no object.key, also by the pod annotation volcano.sh/resource-group=<group name>.

Volcano adds the gate only when an --admission-conf file is loaded (its createPatch returns
early otherwise); here the gate does not depend on resource groups being configured.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from typing import Any, Callable, Iterable, Mapping

from volcanic.admission.chain import AdmissionRequest
from volcanic.kube.keys import (
    JDB_MAX_UNAVAILABLE,
    JDB_MIN_AVAILABLE,
    QUEUE_ALLOCATION_GATE,
)
from volcanic.kube.objects import Obj, annotation, annotations_of, as_map, namespace_of, spec_of

JDB_KEYS = (JDB_MIN_AVAILABLE, JDB_MAX_UNAVAILABLE)
RESOURCE_GROUP_ANNOTATION = "volcano.sh/resource-group"
FEATURE_GATE = "SchedulingGatesQueueAdmission"

_GO_INT = re.compile(r"[+-]?\d+")
_INT64 = (-2 ** 63, 2 ** 63 - 1)


def _for_volcano(request: AdmissionRequest, scheduler_names: Iterable[str]) -> bool:
    """A CREATE of a pod whose schedulerName is one of Volcano's."""
    if request.operation != "CREATE" or not isinstance(request.obj, dict):
        return False
    name = spec_of(request.obj).get("schedulerName")
    return isinstance(name, str) and name in tuple(scheduler_names)


# --- Validation (reference §3.3 "validate") -------------------------------------------------

def _go_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _atoi(text: str) -> tuple[int | None, str]:
    """strconv.Atoi: (value, "") or (None, its error)."""
    if not _GO_INT.fullmatch(text):
        return None, f"strconv.Atoi: parsing {_go_quote(text)}: invalid syntax"
    value = int(text)
    if not _INT64[0] <= value <= _INT64[1]:
        return None, f"strconv.Atoi: parsing {_go_quote(text)}: value out of range"
    return value, ""


def _jdb_value_error(key: str, value: str) -> str | None:
    """validateIntPercentageStr over intstr.Parse: an integer (kept as int32) must be > 0; any
    other text, with its "%" signs removed, must be an integer in 1..99."""
    number, _ = _atoi(value)
    if number is not None:
        as_int32 = (number + 2 ** 31) % 2 ** 32 - 2 ** 31
        if as_int32 <= 0:
            return f"invalid value <{_go_quote(value)}> for {key}, it must be a positive integer"
        return None
    percent, error = _atoi(value.replace("%", ""))
    if percent is None:
        return f"invalid value {error} for {key}"
    if percent <= 0 or percent >= 100:
        return f"invalid value <{_go_quote(value)}> for {key}, it must be a valid percentage which between 1% ~ 99%"
    return None


def pod_jdb_annotations(request: AdmissionRequest, scheduler_names: Iterable[str] = ("volcano",)) -> str | None:
    """§3.3 validate (CREATE, Volcano pods only): of volcano.sh/jdb-min-available and
    volcano.sh/jdb-max-unavailable at most one is set, and its value is a positive integer
    or a percentage between 1% and 99% (validateAnnotation)."""
    if not _for_volcano(request, scheduler_names):
        return None
    annotations = annotations_of(request.obj)
    found = 0
    for key in JDB_KEYS:
        if key in annotations:
            found += 1
            value = annotations[key]
            if not isinstance(value, str):
                return f"metadata.annotations.{key}: must be a string"
            error = _jdb_value_error(key, value)
            if error:
                return error
    if found > 1:
        return f"not allow configure multiple annotations <[{' '.join(JDB_KEYS)}]> at same time"
    return None


# --- Mutation (reference §3.3 "mutate") -----------------------------------------------------

def pod_queue_allocation_gate(request: AdmissionRequest) -> Obj:
    """§3.3 mutate (SchedulingGatesQueueAdmission; CREATE): a pod annotated
    scheduling.volcano.sh/queue-allocation-gate: "true" gets the scheduling gate of that
    name, once (a gate already there is not added again)."""
    pod = request.obj
    if request.operation != "CREATE" or not isinstance(pod, dict):
        return pod
    if annotation(pod, QUEUE_ALLOCATION_GATE) != "true":
        return pod
    spec = pod.get("spec")
    if spec is not None and not isinstance(spec, dict):
        return pod
    gates = (spec or {}).get("schedulingGates")
    if gates is None:
        gates = []
    if not isinstance(gates, list):
        return pod
    if any(isinstance(g, dict) and g.get("name") == QUEUE_ALLOCATION_GATE for g in gates):
        return pod
    return dict(pod, spec=dict(spec or {}, schedulingGates=[*gates, {"name": QUEUE_ALLOCATION_GATE}]))


def _annotation_pairs(values: Any) -> dict[str, str]:
    """The group's object.value entries, each a YAML map "key: value", merged (the first
    value of a key wins, as mergo.Merge keeps it); entries that are not maps are skipped."""
    import yaml

    pairs: dict[str, str] = {}
    for text in values if isinstance(values, list) else ():
        try:
            parsed = yaml.safe_load(text) if isinstance(text, str) else None
        except yaml.YAMLError:
            continue
        if not isinstance(parsed, dict):
            continue
        for k, v in parsed.items():
            if isinstance(v, (dict, list)):
                continue
            text_value = "" if v is None else ("true" if v is True else "false" if v is False else str(v))
            pairs.setdefault(str(k), text_value)
    return pairs


def _belongs(pod: Obj, group: Mapping) -> bool:
    """IsBelongResGroup of the group kind its object.key selects."""
    obj = as_map(group.get("object"))
    key, values = obj.get("key") or "", obj.get("value")
    if key == "namespace":
        return isinstance(values, list) and namespace_of(pod, "default") in values
    if key not in ("", "annotation"):
        return False
    annotations = annotations_of(pod)
    if any(annotations.get(k, "") == v for k, v in _annotation_pairs(values).items()):
        return True
    return key == "" and annotations.get(RESOURCE_GROUP_ANNOTATION) == group.get("resourceGroup")


def _affinity(value: Any) -> dict | None:
    """The group's affinity: a JSON object (Volcano's config holds it as a JSON string)."""
    if isinstance(value, dict):
        return copy.deepcopy(value) if value else None
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None  # Volcano logs the error and leaves the affinity alone
    return parsed if isinstance(parsed, dict) else None


def pod_resource_group(request: AdmissionRequest, groups: Iterable[Mapping] = ()) -> Obj:
    """§3.3 mutate (resource groups; CREATE): the first group the pod belongs to merges its
    labels into nodeSelector, sets its affinity if the pod has none, appends its tolerations
    and sets its schedulerName."""
    pod = request.obj
    if request.operation != "CREATE" or not isinstance(pod, dict):
        return pod
    spec = pod.get("spec")
    if spec is not None and not isinstance(spec, dict):
        return pod
    for group in groups:
        if not isinstance(group, Mapping) or not _belongs(pod, group):
            continue
        spec = dict(spec or {})
        labels = group.get("labels")
        if isinstance(labels, Mapping) and labels:
            spec["nodeSelector"] = {**as_map(spec.get("nodeSelector")), **labels}
        affinity = _affinity(group.get("affinity"))
        if affinity is not None and spec.get("affinity") is None:
            spec["affinity"] = affinity
        tolerations = group.get("tolerations")
        if isinstance(tolerations, list) and tolerations:
            own = spec.get("tolerations") if isinstance(spec.get("tolerations"), list) else []
            spec["tolerations"] = [*own, *copy.deepcopy(tolerations)]
        scheduler = group.get("schedulerName")
        if isinstance(scheduler, str) and scheduler:
            spec["schedulerName"] = scheduler
        return dict(pod, spec=spec)
    return pod


# --- The chain ------------------------------------------------------------------------------

def _bind(rule: Callable, **kwargs: Any) -> Callable:
    """`rule` with its configuration bound, keeping its name for logs."""
    return functools.update_wrapper(functools.partial(rule, **kwargs), rule)


def feature_enabled(conf: Any, name: str = FEATURE_GATE) -> bool:
    """Whether AdmissionConf.feature_gates (the names of the gates that are on) turns on a
    gate; absent means Volcano's default (off for SchedulingGatesQueueAdmission, an Alpha
    gate)."""
    return name in conf.feature_gates


def mutators(conf: Any) -> list:
    """Volcano's /pods/mutate (CREATE): the queue-allocation gate when its feature gate is on,
    then the resource groups when any are configured."""
    rules: list = []
    if feature_enabled(conf):
        rules.append(pod_queue_allocation_gate)
    groups = tuple(getattr(conf, "resource_groups", ()) or ())
    if groups:
        rules.append(_bind(pod_resource_group, groups=groups))
    return rules


def validators(conf: Any) -> list:
    """Volcano's /pods/validate (CREATE), for pods of Volcano's schedulers."""
    names = tuple(getattr(conf, "scheduler_names", ("volcano",)) or ())
    return [_bind(pod_jdb_annotations, scheduler_names=names)]
