"""The schemas of Volcano's custom resources, once: `volcanic install` puts them into the
CRDs it applies (volcanic.real.manifests), and the embedded cluster validates and defaults
Jobs, PodGroups, Queues, Commands, HyperNodes, Numatopologies, JobFlows, JobTemplates, CronJobs and
volcanic's own QueueBindings against them on create and update, as a real API server does with
the CRDs (volcanic.cluster.api).

    SCHEMAS["Job"]                    the Job CRD's openAPIV3Schema (a plain dict)
    obj = defaulted(obj)              nulls dropped, defaults filled (a kind without a schema
                                      is returned as it is)
    obj = validated(obj, old)         defaulted, then checked; InvalidObject with the API
                                      server's message, e.g. 'Job.batch.volcano.sh "j" is
                                      invalid: spec.minAvailable: Invalid value: -1:
                                      spec.minAvailable in body should be greater than or
                                      equal to 0'

The constraints are Volcano v1.15.1's CRDs' (config/crd/volcano/bases/*.yaml, and
config/crd/jobflow/bases/*.yaml for the flow.volcano.sh kinds): every
minimum, maximum, pattern, length, enum, required list and default of the spec. The schemas
type what Volcano's do at the spec level but keep objects open
(x-kubernetes-preserve-unknown-fields) and leave pod templates, claim specs and the status
untyped (but a HyperNode's, which is small), so every object Volcano stores is stored as sent;
the status is written by volcanic's own controllers, and Volcano's status constraints are not
repeated here. CEL rules (x-kubernetes-validations) go into the CRDs for a real API server;
the embedded cluster's schema check skips them, and admission holds the same rules.
The admission webhook holds Volcano's other rules.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from volcanic.kube.errors import InvalidObject
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj, meta_of
from volcanic.kube.openapi import (
    SchemaNode,
    compile_schema,
    schema_errors,
    with_defaults,
)

DNS1123_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
DNS1123_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")
POLICY_EVENTS = ["*", "PodPending", "PodRunning", "PodFailed", "PodEvicted", "Unknown", "TaskCompleted",
                 "OutOfSync", "CommandIssued", "JobUpdated", "TaskFailed"]

STRING: Obj = {"type": "string"}
BOOLEAN: Obj = {"type": "boolean"}
OPEN: Obj = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
QUANTITY: Obj = {"anyOf": [{"type": "integer"}, {"type": "string"}], "pattern": QUANTITY_PATTERN,
                 "x-kubernetes-int-or-string": True}
RESOURCES: Obj = {"type": "object", "additionalProperties": QUANTITY}


def int32(**constraints: Any) -> Obj:
    return {"type": "integer", "format": "int32", **constraints}


def string(**constraints: Any) -> Obj:
    return {"type": "string", **constraints}


def array(items: Obj, **constraints: Any) -> Obj:
    return {"type": "array", "items": items, **constraints}


def obj(required: list[str] | None = None, **properties: Obj) -> Obj:
    """An object with typed properties that keeps fields it does not list."""
    schema: Obj = {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _root(spec: Obj | None = None, status: bool | Obj = True, **extra: Obj) -> Obj:
    """A kind's schema: `status` True for an untyped status, or its own schema."""
    properties: Obj = {"apiVersion": STRING, "kind": STRING, "metadata": {"type": "object"}}
    if spec is not None:
        properties["spec"] = spec
    if status:
        properties["status"] = OPEN if status is True else status
    properties.update(extra)
    return {"type": "object", "properties": properties}


NETWORK_TOPOLOGY = obj(mode=string(enum=["hard", "soft"], default="hard"),
                       highestTierAllowed={"type": "integer", "minimum": 0},
                       highestTierName=string(maxLength=253))
POLICY = obj(action=STRING, event=string(enum=POLICY_EVENTS), events=array(string(enum=POLICY_EVENTS)),
             exitCode=int32(), timeout=STRING)
TASK = obj(
    name=string(maxLength=63, pattern=DNS1123_LABEL),
    replicas=int32(minimum=0),
    minAvailable=int32(minimum=0),
    maxRetry=int32(minimum=0),
    template=OPEN,
    policies=array(POLICY),
    topologyPolicy=string(enum=["none", "best-effort", "restricted", "single-numa-node"]),
    dependsOn=obj(name=array(STRING), iteration=STRING),
    partitionPolicy=obj(["partitionSize", "totalPartitions"],
                        totalPartitions=int32(minimum=1), partitionSize=int32(minimum=1),
                        minPartitions=int32(minimum=0, default=0), networkTopology=NETWORK_TOPOLOGY),
)
JOB_SPEC = obj(
    schedulerName=string(maxLength=63),
    minAvailable=int32(minimum=0),
    volumes=array(obj(["mountPath"], mountPath=string(minLength=1, pattern="^[^:]+$"),
                      volumeClaimName=string(maxLength=253), volumeClaim=OPEN)),
    tasks=array(TASK, minItems=1),
    policies=array(POLICY),
    plugins={"type": "object", "additionalProperties": array(STRING)},
    runningEstimate=STRING,
    queue=string(maxLength=253, pattern=DNS1123_SUBDOMAIN, default="default"),
    maxRetry=int32(minimum=0, default=3),
    ttlSecondsAfterFinished=int32(minimum=0),
    priorityClassName=string(maxLength=253, pattern=DNS1123_SUBDOMAIN),
    minSuccess=int32(minimum=1),
    networkTopology=NETWORK_TOPOLOGY,
)
LABEL_SELECTOR = obj(matchLabels={"type": "object", "additionalProperties": STRING},
                     matchExpressions=array(obj(["key", "operator"], key=STRING, operator=STRING,
                                                values=array(STRING))))
PODGROUP_SPEC = obj(
    minMember=int32(minimum=0),
    minTaskMember={"type": "object", "additionalProperties": int32()},
    queue=string(maxLength=253, pattern=DNS1123_SUBDOMAIN, default="default"),
    priorityClassName=string(maxLength=253),
    minResources=RESOURCES,
    networkTopology=NETWORK_TOPOLOGY,
    subGroupPolicy=array(obj(name=string(maxLength=253), subGroupSize=int32(minimum=1, default=1),
                             minSubGroups=int32(minimum=0, default=0), labelSelector=LABEL_SELECTOR,
                             matchLabelKeys=array(STRING), networkTopology=NETWORK_TOPOLOGY)),
)
NODE_GROUP_TERMS = obj(requiredDuringSchedulingIgnoredDuringExecution=array(STRING),
                       preferredDuringSchedulingIgnoredDuringExecution=array(STRING))
QUEUE_SPEC = obj(
    weight=int32(minimum=1, maximum=65535, default=1),
    capability=RESOURCES,
    deserved=RESOURCES,
    guarantee=obj(resource=RESOURCES),
    reclaimable=BOOLEAN,
    extendClusters=array(obj(name=STRING, weight=int32(), capacity=RESOURCES)),
    affinity=obj(nodeGroupAffinity=NODE_GROUP_TERMS, nodeGroupAntiAffinity=NODE_GROUP_TERMS),
    type=string(maxLength=253),
    parent=string(maxLength=253, pattern=DNS1123_SUBDOMAIN),
    priority=int32(minimum=0),
    dequeueStrategy=string(enum=["fifo", "traverse"], default="traverse"),
)
# A HyperNode's member selector: exactly one of the three (the CRD's CEL rules, which a real API
# server checks; the embedded cluster's admission checks the same, volcanic.admission.hypernodes).
MEMBER_SELECTOR = obj(
    exactMatch=obj(["name"], name=string(minLength=1, maxLength=253, pattern=DNS1123_SUBDOMAIN)),
    regexMatch=obj(["pattern"], pattern=string(minLength=1)),
    labelMatch=LABEL_SELECTOR,
)
MEMBER_SELECTOR["x-kubernetes-validations"] = [
    {"rule": "has(self.exactMatch) || has(self.regexMatch) || has(self.labelMatch)",
     "message": "Either ExactMatch or RegexMatch or LabelMatch must be specified"},
    {"rule": "(has(self.exactMatch) ? 1 : 0) + (has(self.regexMatch) ? 1 : 0) + (has(self.labelMatch) ? 1 : 0) <= 1",
     "message": "Only one of ExactMatch, RegexMatch, or LabelMatch can be specified"}]
HYPERNODE_SPEC = obj(
    ["tier"],
    tier={"type": "integer", "minimum": 0},
    tierName=string(maxLength=253),
    members=array(obj(["type"], type=string(enum=["Node", "HyperNode"]), selector=MEMBER_SELECTOR), minItems=1),
)
# Typed as Volcano's CRD types it (the hyperNode-controller writes nodeCount); conditions stay open.
HYPERNODE_STATUS = obj(conditions=array(OPEN), nodeCount={"type": "integer", "format": "int64", "minimum": 0})
NON_NEGATIVE: Obj = {"type": "integer", "minimum": 0}


def map_of(values: Obj) -> Obj:
    return {"type": "object", "additionalProperties": values}


NUMATOPO_SPEC = obj(
    policies=map_of(STRING),
    resReserved=map_of(STRING),
    numares=map_of(obj(allocatable=STRING, capacity={"type": "integer"})),
    cpuDetail=map_of(obj(numa=NON_NEGATIVE, socket=NON_NEGATIVE, core=NON_NEGATIVE)),
)
COMMAND_TARGET = obj(["apiVersion", "kind", "name", "uid"], apiVersion=STRING, kind=STRING, name=STRING,
                     uid=STRING, controller=BOOLEAN, blockOwnerDeletion=BOOLEAN)
# A JobFlow's flows (config/crd/jobflow/bases/flow.volcano.sh_jobflows.yaml): a JobTemplate's
# name, the flows it waits for, probes, and a patch of the template's JobSpec.
PORT: Obj = {"type": "integer", "minimum": 0, "maximum": 65535}
PROBE = obj(
    httpGetList=array(obj(taskName=string(maxLength=253), path=STRING, port=PORT,
                          httpHeader=obj(["name", "value"], name=STRING, value=STRING))),
    tcpSocketList=array(obj(["port"], taskName=string(maxLength=253), port=PORT)),
    taskStatusList=array(obj(taskName=string(maxLength=253), phase=string(maxLength=63))),
)
JOBFLOW_SPEC = obj(
    flows=array(obj(["name"], name=string(minLength=1), dependsOn=obj(targets=array(STRING), probe=PROBE),
                    patch=obj(jobSpec=JOB_SPEC))),
    jobRetainPolicy=string(enum=["retain", "delete"]),
)
# A CronJob (config/crd/volcano/bases/batch.volcano.sh_cronjobs.yaml): the schedule and how its
# Jobs run, and the template of its Jobs, whose spec is a Job's. The cron syntax and the time
# zone are the webhook's to check (volcanic.admission.cronjobs), as in Volcano.
CRONJOB_SPEC = obj(
    ["jobTemplate", "schedule"],
    schedule=STRING,
    timeZone=STRING,
    startingDeadlineSeconds={"type": "integer", "format": "int64", "minimum": 0},
    concurrencyPolicy=string(enum=["Allow", "Forbid", "Replace"], default="Allow"),
    suspend={"type": "boolean", "default": False},
    jobTemplate=obj(metadata=obj(annotations=map_of(STRING), labels=map_of(STRING), finalizers=array(STRING),
                                 name=STRING, namespace=STRING),
                    spec=JOB_SPEC),
    successfulJobsHistoryLimit=int32(minimum=0, default=3),
    failedJobsHistoryLimit=int32(minimum=0, default=1),
)
# volcanic's own QueueBinding (volcanic.admission.queuebindings): the queue it binds, the
# namespaces it binds it to (by name and/or by label), optional limits per namespace, and the
# usage per bound namespace its controller writes.
QUEUEBINDING_SPEC = obj(
    ["queue"],
    queue=string(minLength=1, maxLength=253, pattern=DNS1123_SUBDOMAIN),
    namespaces=array(string(minLength=1, maxLength=63, pattern=DNS1123_LABEL)),
    namespaceSelector=LABEL_SELECTOR,
    limits=obj(maxRunningPods={"type": "integer", "format": "int64", "minimum": 0},
               maxPendingJobs={"type": "integer", "format": "int64", "minimum": 0}),
)
QUEUEBINDING_STATUS = obj(namespaces=map_of(obj(runningPods={"type": "integer", "minimum": 0},
                                                pendingJobs={"type": "integer", "minimum": 0})))

SCHEMAS: dict[str, Obj] = {
    "Job": _root(JOB_SPEC),
    "PodGroup": _root(PODGROUP_SPEC),
    "Queue": _root(QUEUE_SPEC),
    "Command": _root(status=False, action=STRING, reason=STRING, message=STRING, target=COMMAND_TARGET),
    "HyperNode": _root(HYPERNODE_SPEC, status=HYPERNODE_STATUS),
    "Numatopology": _root(NUMATOPO_SPEC, status=False),
    "JobFlow": _root(JOBFLOW_SPEC),
    "JobTemplate": _root(JOB_SPEC),  # a JobTemplate's spec is a Job's
    "CronJob": _root(CRONJOB_SPEC),
    "QueueBinding": _root(QUEUEBINDING_SPEC, status=QUEUEBINDING_STATUS),
}


@lru_cache(maxsize=None)
def _compiled(kind: str) -> SchemaNode:
    return compile_schema(SCHEMAS[kind])


def defaulted(o: Obj) -> Obj:
    """`o` with its kind's schema defaults (a copy where anything changes)."""
    kind = o.get("kind") if isinstance(o, dict) else None
    if kind not in SCHEMAS:
        return o
    return with_defaults(o, _compiled(kind))


def validated(o: Obj, old: Obj | None = None) -> Obj:
    """`o` defaulted and checked against its kind's schema, as the API server checks a
    custom object; an InvalidObject with the API server's message if it fails. On an update
    (`old` given) whose fields but metadata and status are the stored object's, nothing is
    checked again: they passed before (the API server's validation ratcheting), and the
    status is volcanic's controllers' (see the module docstring)."""
    kind = o.get("kind") if isinstance(o, dict) else None
    if kind not in SCHEMAS or (old is not None and _same_but_status(o, old)):
        return o
    o = with_defaults(o, _compiled(kind))
    errors = schema_errors(o, _compiled(kind))
    if errors:
        raise InvalidObject(invalid_message(o, errors))
    return o


def _same_but_status(o: Obj, old: Obj) -> bool:
    """Whether every field but metadata and status is the stored object's (the very value,
    as most writers send back what they read, or an equal one)."""
    for key in o.keys() | old.keys():
        if key not in ("metadata", "status"):
            mine, stored = o.get(key), old.get(key)
            if mine is not stored and mine != stored:
                return False
    return True


def invalid_message(o: Obj, errors: list[str]) -> str:
    """apierrors.NewInvalid's message: '<Kind>.<group> "<name>" is invalid: <errors>', the
    errors as an aggregate ("[e1, e2]" for more than one, duplicates dropped)."""
    kind = KINDS[o["kind"]]
    meta = meta_of(o)
    unique = list(dict.fromkeys(errors))
    shown = unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
    return f'{kind.name}.{kind.group} "{meta.get("name", "")}" is invalid: {shown}'
