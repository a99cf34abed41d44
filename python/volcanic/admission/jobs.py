"""Volcano Job admission (reference §3.1 validate, §3.2 mutate).

Validation is the union of Volcano's webhook (jobs/validate/admit_job.go, util.go) and of the
CRD schema and ValidatingAdmissionPolicy (policy/jobs-validating.yaml), checked in the order
the API server applies them:

1. admit_job_schema (CREATE, UPDATE): the CRD schema. Types first (check_job_shape: a wrong
   type anywhere is denied naming the field, e.g. "spec.tasks[0].replicas: must be an
   integer, got string"), then the CRD's value constraints (patterns, enums, minimums).
2. admit_job_create (CREATE): validateJobCreate. The first five rules end the check at once,
   as in Volcano; the others are all run and their messages joined with "; ".
3. admit_job_update (UPDATE): validateJobUpdate against request.old; first denial wins.
DELETE is not validated.

Every rule is a plain function returning None (allowed) or a message, in Volcano's words
where Volcano has them. Rules after the schema check may assume well-typed input.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

from volcanic.admission.common import (
    MapOf, check_shape, deny, dns1123_label_errors, dns1123_subdomain_errors, expect,
    go_list, invalid, not_supported, qualified_name_errors, quantity, required)
from volcanic.admission.job_policies import validate_policies
from volcanic.admission.pod_template import pod_spec, pod_template_errors
from volcanic.cluster.admission import AdmissionRequest
from volcanic.controllers.duration import parse_duration
from volcanic.controllers.job.plugins import PLUGINS, PluginError

Obj = dict[str, Any]
DISTRIBUTED_PLUGINS = ("tensorflow", "mpi", "pytorch", "ray")

# Volcano's registered job plugins (pkg/controllers/job/plugins/factory.go). The webhook
# accepts all of them; volcanic's job controller implements env, svc, ssh, tensorflow,
# pytorch and mpi only (PLUGINS), so a job naming hcclrank or ray is admitted, as in
# Volcano, and then fails in the controller with an "unknown plugin" PluginError.
VOLCANO_PLUGINS = ("ssh", "env", "svc", "tensorflow", "mpi", "pytorch", "hcclrank", "ray")

TOPOLOGY_POLICIES = ("none", "best-effort", "restricted", "single-numa-node")   # CRD enum
NETWORK_TOPOLOGY_MODES = ("hard", "soft")                                       # CRD enum
DEPENDS_ON_ITERATIONS = ("any", "all")                                          # CRD enum
SCHEDULER_NAME_MAX = 63
DNS1123_SUBDOMAIN_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"

UPDATE_FIELDS_MESSAGE = ("job updates may not change fields other than `minAvailable`, "
                         "`tasks[*].replicas under spec` and `PriorityClassName`")


# --- Mutation (reference §3.2) -------------------------------------------------------------

def mutators(conf: Any) -> list[Callable[[AdmissionRequest], Obj]]:
    """Volcano's job defaults, applied on CREATE only (reference §3.2)."""

    def mutate(request: AdmissionRequest) -> Obj:
        if request.operation != "CREATE" or not isinstance(request.obj, dict) \
                or not isinstance(request.obj.get("spec"), dict):
            return request.obj
        return default_job(request.obj, conf.scheduler_names[0])

    return [mutate]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _unset(value: Any) -> bool:
    """Go's zero value for a string or int32 field: absent, null, "" or 0."""
    return value is None or value == "" or (_is_int(value) and value == 0)


def default_job(job: Obj, scheduler_name: str = "volcano") -> Obj:
    """A copy of `job` with Volcano's defaults filled in (reference §3.2). A field of the
    wrong type is left as it is, for the validator to deny; this never raises."""
    job = copy.deepcopy(job)
    spec = job.get("spec")
    if not isinstance(spec, dict):
        return job
    if _unset(spec.get("queue")):
        spec["queue"] = "default"
    if _unset(spec.get("schedulerName")):
        spec["schedulerName"] = scheduler_name
    if _unset(spec.get("maxRetry")):
        spec["maxRetry"] = 3
    tasks = spec.get("tasks") if isinstance(spec.get("tasks"), list) else []
    for i, task in enumerate(tasks):
        if isinstance(task, dict):
            _default_task(task, i)
    if _unset(spec.get("minAvailable")):
        values = [t.get("minAvailable") for t in tasks if isinstance(t, dict)]
        if all(_is_int(v) for v in values) and all(isinstance(t, dict) for t in tasks):
            spec["minAvailable"] = sum(values)
    plugins = spec.get("plugins")
    if isinstance(plugins, dict):
        if any(p in plugins for p in DISTRIBUTED_PLUGINS):
            plugins.setdefault("svc", [])
        if "mpi" in plugins:
            plugins.setdefault("ssh", [])
    return job


def _default_task(task: Obj, index: int) -> None:
    """A task's defaults: name, dnsPolicy with hostNetwork, minAvailable, maxRetry."""
    if _unset(task.get("name")):
        task["name"] = f"default{index}"
    template = task.get("template")
    pod_spec = template.get("spec") if isinstance(template, dict) else None
    if isinstance(pod_spec, dict) and pod_spec.get("hostNetwork") is True and _unset(pod_spec.get("dnsPolicy")):
        pod_spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    if task.get("minAvailable") is None:
        partition = task.get("partitionPolicy")
        replicas = task["replicas"] if task.get("replicas") is not None else 0
        min_partitions = partition.get("minPartitions") if isinstance(partition, dict) else None
        size = partition.get("partitionSize") if isinstance(partition, dict) else None
        if _is_int(min_partitions) and min_partitions > 0:
            if _is_int(size) or size is None:
                task["minAvailable"] = min_partitions * (size or 0)
        elif _is_int(replicas):
            task["minAvailable"] = replicas
    if _unset(task.get("maxRetry")):
        task["maxRetry"] = 3


# --- The validators (reference §3.1) -------------------------------------------------------

def validators(conf: Any) -> list[Callable[[AdmissionRequest], "str | None"]]:
    """Volcano's job validation (reference §3.1), in the API server's order: the CRD schema
    (CREATE and UPDATE), then the webhook and VAP rules of CREATE or of UPDATE."""
    return [admit_job_schema, admit_job_create, admit_job_update]


def admit_job_schema(request: AdmissionRequest) -> str | None:
    """reference §3.1 "CRD/VAP-level rules": the CRD's types and value constraints, on
    CREATE and UPDATE."""
    if request.operation not in ("CREATE", "UPDATE") or request.obj is None:
        return None
    job = request.obj
    message = check_job_shape(job)
    if message:
        return message
    for rule in (validate_queue_name, validate_priority_class_name, validate_scheduler_name,
                 validate_min_success, validate_network_topology_fields, validate_task_crd_fields):
        message = rule(job)
        if message:
            return message
    return None


def admit_job_create(request: AdmissionRequest) -> str | None:
    """reference §3.1 CREATE: validateJobCreate."""
    if request.operation != "CREATE" or request.obj is None:
        return None
    return validate_job_create(request.obj, request.lister)


def admit_job_update(request: AdmissionRequest) -> str | None:
    """reference §3.1 UPDATE: validateJobUpdate, comparing the job with request.old."""
    if request.operation != "UPDATE" or request.obj is None or request.old is None:
        return None
    return validate_job_update(request.old, request.obj)


# --- Small readers (the schema check has run: values are of the right type or None) --------

def _spec(job: Obj) -> Obj:
    spec = job.get("spec") if isinstance(job, dict) else None
    return spec if isinstance(spec, dict) else {}


def _tasks(job: Obj) -> list[Obj]:
    tasks = _spec(job).get("tasks")
    return [t for t in tasks if isinstance(t, dict)] if isinstance(tasks, list) else []


def _name(job: Obj) -> str:
    meta = job.get("metadata") if isinstance(job, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""


def _int(value: Any, default: int = 0) -> int:
    return value if _is_int(value) else default


def _task_name(task: Obj) -> str:
    name = task.get("name")
    return name if isinstance(name, str) else ""


def _plugins(job: Obj) -> dict[str, Any]:
    plugins = _spec(job).get("plugins")
    return plugins if isinstance(plugins, dict) else {}


# --- CRD schema: types ----------------------------------------------------------------------

def _duration(value: Any, field: str) -> str | None:
    """A metav1.Duration: a Go duration string ("90s", "1h30m"; Go takes a sign, "-5s", and
    the controller runs a negative delay at once with a warning). volcanic's controller also
    reads a plain number of seconds."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return expect(value, "string", field)
    text = value.strip() if isinstance(value, str) else str(abs(value))
    if text[:1] in ("+", "-"):
        text = text[1:]
    try:
        parse_duration(text, field)
    except ValueError:
        shown = f'"{value}"' if isinstance(value, str) else repr(value)
        return deny(field, f'invalid duration {shown} (use e.g. "90s", "5m", "1h30m")')
    return None


# What the job controller and its plugins read of a pod template, and the resources.
_CONTAINER = {"name": "string", "image": "string", "command": ["string"], "args": ["string"],
              "env": [{"name": "string", "value": "string"}],
              "ports": [{"name": "string", "containerPort": "integer"}],
              "volumeMounts": [{"name": "string", "mountPath": "string"}],
              "resources": {"requests": MapOf("quantity"), "limits": MapOf("quantity")}}
_POD_TEMPLATE = {
    "metadata": {"labels": MapOf("string"), "annotations": MapOf("string")},
    "spec": {"containers": [_CONTAINER], "initContainers": [_CONTAINER], "restartPolicy": "string",
             "hostNetwork": "boolean", "dnsPolicy": "string", "schedulerName": "string",
             "priorityClassName": "string", "nodeSelector": MapOf("string"), "nodeName": "string",
             "hostname": "string", "subdomain": "string", "volumes": [{"name": "string"}],
             "tolerations": ["object"], "affinity": "object"},
}
_POLICY = {"action": "string", "event": "string", "events": ["string"], "exitCode": "integer",
           "timeout": _duration}
_NETWORK_TOPOLOGY = {"mode": "string", "highestTierAllowed": "integer", "highestTierName": "string"}
_TASK = {"name": "string", "replicas": "integer", "minAvailable": "integer", "maxRetry": "integer",
         "template": _POD_TEMPLATE, "policies": [_POLICY], "topologyPolicy": "string",
         "dependsOn": {"name": ["string"], "iteration": "string"},
         "partitionPolicy": {"totalPartitions": "integer", "partitionSize": "integer",
                             "minPartitions": "integer", "networkTopology": _NETWORK_TOPOLOGY}}
JOB_SCHEMA = {
    "metadata": {"name": "string", "namespace": "string", "labels": MapOf("string"),
                 "annotations": MapOf("string")},
    "spec": {"schedulerName": "string", "minAvailable": "integer", "queue": "string", "maxRetry": "integer",
             "ttlSecondsAfterFinished": "integer", "priorityClassName": "string", "minSuccess": "integer",
             "runningEstimate": _duration, "networkTopology": _NETWORK_TOPOLOGY,
             "volumes": [{"mountPath": "string", "volumeClaimName": "string", "volumeClaim": "object"}],
             "tasks": [_TASK], "policies": [_POLICY], "plugins": MapOf(["string"])},
}


def check_job_shape(job: Any) -> str | None:
    """reference §1.1 / §3.1 CRD schema: every field of a known type has that type
    (JOB_SCHEMA; a null counts as absent), e.g. "spec.tasks[0].replicas: must be an integer,
    got string". Fields volcanic does not read are not checked."""
    if not isinstance(job, dict):
        return expect(job, "object", "Job")
    message = check_shape(job, JOB_SCHEMA, "")
    if message:
        return message
    if not _name(job):
        return required("metadata.name")
    return None


# --- CRD schema: values ---------------------------------------------------------------------

def _crd_minimum(field: str, value: int, minimum: int) -> str:
    return invalid(field, value, f"{field} in body should be greater than or equal to {minimum}")


def _crd_pattern(field: str, value: str, pattern: str) -> str:
    return invalid(field, value, f"{field} in body should match '{pattern}'")


def validate_queue_name(job: Obj) -> str | None:
    """reference §1.1 / §3.1 CRD: spec.queue matches the DNS-1123 subdomain pattern and has at
    most 253 characters."""
    queue = _spec(job).get("queue")
    if not isinstance(queue, str) or queue == "":
        return None
    if len(queue) > 253:
        return deny("spec.queue", "Too long: may not be longer than 253")
    if dns1123_subdomain_errors(queue):
        return _crd_pattern("spec.queue", queue, DNS1123_SUBDOMAIN_PATTERN)
    return None


def validate_priority_class_name(job: Obj) -> str | None:
    """reference §3.1 CRD: spec.priorityClassName matches the DNS-1123 subdomain pattern."""
    name = _spec(job).get("priorityClassName")
    if not isinstance(name, str) or name == "":
        return None
    if dns1123_subdomain_errors(name):
        return _crd_pattern("spec.priorityClassName", name, DNS1123_SUBDOMAIN_PATTERN)
    return None


def validate_scheduler_name(job: Obj) -> str | None:
    """reference §1.1 CRD: spec.schedulerName has at most 63 characters."""
    name = _spec(job).get("schedulerName")
    if isinstance(name, str) and len(name) > SCHEDULER_NAME_MAX:
        return deny("spec.schedulerName", f"Too long: may not be longer than {SCHEDULER_NAME_MAX}")
    return None


def validate_min_success(job: Obj) -> str | None:
    """reference §1.1 CRD: spec.minSuccess, when set, is >= 1."""
    value = _spec(job).get("minSuccess")
    if _is_int(value) and value < 1:
        return _crd_minimum("spec.minSuccess", value, 1)
    return None


def _network_topology_field_error(topology: Any, field: str) -> str | None:
    if not isinstance(topology, dict):
        return None
    mode = topology.get("mode")
    if mode not in (None, "") and mode not in NETWORK_TOPOLOGY_MODES:
        return not_supported(f"{field}.mode", mode, NETWORK_TOPOLOGY_MODES)
    tier = topology.get("highestTierAllowed")
    if _is_int(tier) and tier < 0:
        return _crd_minimum(f"{field}.highestTierAllowed", tier, 0)
    return None


def validate_network_topology_fields(job: Obj) -> str | None:
    """reference §1.1 CRD: networkTopology.mode is hard or soft and highestTierAllowed >= 0,
    for the job and for every task's partitionPolicy."""
    message = _network_topology_field_error(_spec(job).get("networkTopology"), "spec.networkTopology")
    if message:
        return message
    for i, task in enumerate(_tasks(job)):
        partition = task.get("partitionPolicy")
        if isinstance(partition, dict):
            message = _network_topology_field_error(partition.get("networkTopology"),
                                                    f"spec.tasks[{i}].partitionPolicy.networkTopology")
            if message:
                return message
    return None


def validate_task_crd_fields(job: Obj) -> str | None:
    """reference §1.1 CRD: per task, topologyPolicy is one of none, best-effort, restricted,
    single-numa-node; dependsOn.iteration is any or all; partitionPolicy.minPartitions >= 0."""
    for i, task in enumerate(_tasks(job)):
        policy = task.get("topologyPolicy")
        if policy not in (None, "") and policy not in TOPOLOGY_POLICIES:
            return not_supported(f"spec.tasks[{i}].topologyPolicy", policy, TOPOLOGY_POLICIES)
        depends = task.get("dependsOn")
        iteration = depends.get("iteration") if isinstance(depends, dict) else None
        if iteration not in (None, "") and iteration not in DEPENDS_ON_ITERATIONS:
            return not_supported(f"spec.tasks[{i}].dependsOn.iteration", iteration, DEPENDS_ON_ITERATIONS)
        partition = task.get("partitionPolicy")
        min_partitions = partition.get("minPartitions") if isinstance(partition, dict) else None
        if _is_int(min_partitions) and min_partitions < 0:
            return _crd_minimum(f"spec.tasks[{i}].partitionPolicy.minPartitions", min_partitions, 0)
    return None


# --- CREATE: the rules that end the check at once ----------------------------------------

def validate_job_min_available(job: Obj) -> str | None:
    """reference §3.1 CRD/VAP: job minAvailable >= 0."""
    if _int(_spec(job).get("minAvailable")) < 0:
        return "job 'minAvailable' must be >= 0"
    return None


def validate_max_retry(job: Obj) -> str | None:
    """reference §3.1 CRD/VAP: maxRetry >= 0."""
    if _int(_spec(job).get("maxRetry")) < 0:
        return "'maxRetry' cannot be less than zero"
    return None


def validate_ttl_seconds_after_finished(job: Obj) -> str | None:
    """reference §3.1 CRD/VAP: ttlSecondsAfterFinished >= 0."""
    if _int(_spec(job).get("ttlSecondsAfterFinished")) < 0:
        return "'ttlSecondsAfterFinished' cannot be less than zero"
    return None


def validate_has_tasks(job: Obj) -> str | None:
    """reference §3.1: at least one task."""
    if not _tasks(job):
        return "No task specified in job spec"
    return None


def validate_mpi_master_task(job: Obj) -> str | None:
    """reference §3.1: with the mpi plugin, its master task (--master, default "master")
    exists. (A worker task is not required.)"""
    plugins = _plugins(job)
    if "mpi" not in plugins:
        return None
    master = _flag(plugins.get("mpi"), "master", "master")
    if not any(_task_name(t) == master for t in _tasks(job)):
        return "The specified mpi master task was not found"
    return None


def _flag(arguments: Any, name: str, default: str) -> str:
    """A string flag's value in Go flag syntax ("--name=v", "--name v", "-name v"); the
    default when absent or unreadable (Volcano ignores flag parse errors here)."""
    if not isinstance(arguments, list):
        return default
    value = default
    i = 0
    while i < len(arguments):
        arg = arguments[i]
        i += 1
        if not isinstance(arg, str) or arg == "--" or len(arg) < 2 or not arg.startswith("-"):
            break
        key, has_value, text = arg.lstrip("-").partition("=")
        if key != name:
            continue
        if has_value:
            value = text
        elif i < len(arguments) and isinstance(arguments[i], str):
            value, i = arguments[i], i + 1
    return value


# --- CREATE: per task -----------------------------------------------------------------------

def _in_task(task: Obj, job: Obj) -> str:
    return f"in task: {_task_name(task)}, job: {_name(job)}"


def validate_task_replicas(job: Obj, index: int, task: Obj) -> str | None:
    """reference §3.1 CRD/VAP: task replicas >= 0."""
    if _int(task.get("replicas")) < 0:
        return f"'replicas' < 0 {_in_task(task, job)}"
    return None


def validate_task_min_available(job: Obj, index: int, task: Obj) -> str | None:
    """reference §3.1: 0 <= task.minAvailable <= replicas (when minAvailable is set)."""
    value = task.get("minAvailable")
    if not _is_int(value):
        return None
    if value < 0:
        return f"'minAvailable' < 0 {_in_task(task, job)}"
    if value > _int(task.get("replicas")):
        return f"'minAvailable' is greater than 'replicas' {_in_task(task, job)}"
    return None


def validate_task_partition_policy(job: Obj, index: int, task: Obj) -> str | None:
    """reference §3.1 partitionPolicy: totalPartitions > 0 and partitionSize > 0; replicas
    == totalPartitions*partitionSize; with minPartitions > 0 and minAvailable set,
    minAvailable == minPartitions*partitionSize."""
    partition = task.get("partitionPolicy")
    if not isinstance(partition, dict):
        return None
    total, size = _int(partition.get("totalPartitions")), _int(partition.get("partitionSize"))
    if total <= 0:
        return f"'TotalPartitions' must be greater than 0 {_in_task(task, job)}"
    if size <= 0:
        return f"'PartitionSize' must be greater than 0 {_in_task(task, job)}"
    if _int(task.get("replicas")) != total * size:
        return f"'Replicas' are not equal to TotalPartitions*PartitionSize {_in_task(task, job)}"
    min_partitions, min_available = _int(partition.get("minPartitions")), task.get("minAvailable")
    if min_partitions > 0 and _is_int(min_available) and min_available != min_partitions * size:
        return f"'MinAvailable' is not equal to MinPartitions*PartitionSize {_in_task(task, job)}"
    return None


def validate_task_name(job: Obj, index: int, task: Obj) -> str | None:
    """reference §3.1 CRD/webhook: the task name is an RFC 1123 label (at most 63 characters)."""
    name = task.get("name")
    errs = dns1123_label_errors(name if name is not None else "")
    return invalid(f"spec.tasks[{index}].name", name if name is not None else "", "; ".join(errs)) if errs else None


def validate_task_name_unique(job: Obj, index: int, task: Obj) -> str | None:
    """reference §3.1: task names are unique ("duplicated task name")."""
    name = _task_name(task)
    if any(_task_name(t) == name for t in _tasks(job)[:index]):
        return f"duplicated task name {name}"
    return None


def validate_task_policies(job: Obj, index: int, task: Obj) -> str | None:
    """reference §3.1: the task's lifecycle policies are valid (validate_policies)."""
    return validate_policies(task.get("policies"), f"spec.tasks[{index}].policies")


def validate_pod_name(job: Obj, index: int, task: Obj) -> str | None:
    """reference §3.1: the pod name "<job>-<task>-<task index>" is a qualified name (so at
    most 63 characters)."""
    pod = f"{_name(job)}-{_task_name(task)}-{index}"
    errs = qualified_name_errors(pod)
    if errs:
        return f"create pod with name {pod} validate failed {go_list(errs)}"
    return None


def validate_task_template(job: Obj, index: int, task: Obj) -> str | None:
    """reference §3.1: the pod template passes Kubernetes' ValidatePodTemplate (a subset, see
    pod_template_errors), reported as Volcano does: "spec.task[<i>]." then each error."""
    errs = pod_template_errors(task.get("template"))
    if errs:
        return f"spec.task[{index}]." + "".join(f"{e}. " for e in errs).rstrip()
    return None


def validate_task_topology_policy(job: Obj, index: int, task: Obj) -> str | None:
    """reference §3.1: with a topologyPolicy other than none, the pod is Guaranteed (as
    Volcano checks; requests taken from limits when a container has none) and every
    container's and init container's CPU request is a whole number of CPUs."""
    policy = task.get("topologyPolicy")
    if policy in (None, "", "none"):
        return None
    spec = pod_spec(task.get("template"))
    all_containers = []
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            if isinstance(c, dict):
                all_containers.append(c)
    resources = []
    for c in all_containers:
        res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
        limits = res.get("limits") if isinstance(res.get("limits"), dict) else {}
        requests = res.get("requests") if isinstance(res.get("requests"), dict) and res.get("requests") else limits
        resources.append((requests, limits))
    qos = pod_qos(resources)
    if qos != "Guaranteed":
        return f"spec.task[{index}] isn't Guaranteed pod, kind={qos}"
    for i, (requests, _) in enumerate(resources):
        cpu = quantity(requests.get("cpu", 0))
        if cpu is None or cpu == 0 or cpu.denominator != 1:
            return f"the cpu request isn't  an integer in spec.task[{index}] container[{i}]."
    return None


def pod_qos(resources: list[tuple[dict, dict]]) -> str:
    """Kubernetes' GetPodQOS over (requests, limits) of every container: BestEffort without
    cpu/memory requests and limits; Guaranteed when every container limits cpu and memory
    and the summed requests equal the summed limits; Burstable otherwise."""
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    guaranteed = True
    for reqs, lims in resources:
        for into, values in ((requests, reqs), (limits, lims)):
            for name in ("cpu", "memory"):
                q = quantity(values.get(name))
                if q is not None and q > 0:
                    into[name] = into.get(name, 0) + q
        if not all((quantity(lims.get(n)) or 0) > 0 for n in ("cpu", "memory")):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and requests == limits:
        return "Guaranteed"
    return "Burstable"


# --- CREATE: the job ------------------------------------------------------------------------

def validate_job_name(job: Obj) -> str | None:
    """reference §3.1: the job name is a qualified name."""
    errs = qualified_name_errors(_name(job))
    if errs:
        return f"create job with name {_name(job)} validate failed {go_list(errs)}"
    return None


def validate_total_replicas(job: Obj) -> str | None:
    """reference §3.1: sum(replicas) >= job.minAvailable."""
    total = sum(_int(t.get("replicas")) for t in _tasks(job))
    if total < _int(_spec(job).get("minAvailable")):
        return "job 'minAvailable' should not be greater than total replicas in tasks"
    return None


def validate_job_policies(job: Obj) -> str | None:
    """reference §3.1: the job's lifecycle policies are valid (validate_policies)."""
    return validate_policies(_spec(job).get("policies"), "spec.policies")


def validate_plugins_registered(job: Obj) -> str | None:
    """reference §3.1: every plugin name is one Volcano registers (VOLCANO_PLUGINS)."""
    unknown = [name for name in sorted(_plugins(job)) if name not in VOLCANO_PLUGINS]
    if unknown:
        return "; ".join(f"unable to find job plugin: {name}" for name in unknown)
    return None


def validate_plugin_arguments(job: Obj) -> str | None:
    """volcanic's addition to reference §3.1: the arguments of a plugin volcanic implements
    parse (Volcano's plugins log a bad flag and go on with defaults; volcanic's controller
    would fail the job on it, so it is refused here, with the plugin's message)."""
    for name, arguments in sorted(_plugins(job).items()):
        if name in PLUGINS:
            try:
                PLUGINS[name](arguments or [])
            except PluginError as e:
                return str(e)
    return None


def validate_volumes(job: Obj) -> str | None:
    """reference §3.1 volumes: mountPath is required and unique; exactly one of volumeClaim
    and volumeClaimName; volumeClaimName is a valid PersistentVolumeClaim name. The first
    error only, as Volcano's validateIO."""
    seen: set[str] = set()
    volumes = _spec(job).get("volumes")
    for volume in volumes if isinstance(volumes, list) else []:
        if not isinstance(volume, dict):
            continue
        path, claim = volume.get("mountPath") or "", volume.get("volumeClaim")
        claim_name = volume.get("volumeClaimName") or ""
        if not path:
            return "mountPath is required"
        if path in seen:
            return f"duplicated mountPath: {path}"
        if claim is None and not claim_name:
            return "either VolumeClaim or VolumeClaimName must be specified"
        if claim_name:
            if claim is not None:
                return ("conflict: If you want to use an existing PVC, just specify VolumeClaimName."
                        "If you want to create a new PVC, you do not need to specify VolumeClaimName")
            errs = dns1123_subdomain_errors(claim_name)
            if errs:
                return f"invalid VolumeClaimName {claim_name} : {go_list(errs)}"
        seen.add(path)
    return None


def validate_queue(job: Obj, lister: Any) -> str | None:
    """reference §3.1 queue: the queue exists and is Open (a queue the queue controller has
    not synced yet has no state and is refused, as in Volcano), is not root, and is a leaf
    (no queue names it as parent). Skipped without a lister."""
    if lister is None:
        return None
    name = _spec(job).get("queue")
    queue = lister.get("Queue", name) if isinstance(name, str) and name else None
    if queue is None:
        return f'unable to find job queue: queues.scheduling.volcano.sh "{name}" not found'
    messages = []
    state = (queue.get("status") or {}).get("state") if isinstance(queue.get("status"), dict) else None
    if state != "Open":
        messages.append(f"can only submit job to queue with state `Open`, queue `{name}` status is `{state or ''}`")
    if name == "root":
        messages.append("can not submit job to root queue")
    else:
        children = [q for q in lister.list("Queue")
                    if isinstance(q.get("spec"), dict) and q["spec"].get("parent") == name]
        if children:
            messages.append(f"can only submit job to leaf queue, queue `{name}` has {len(children)} child queues")
    return "; ".join(messages) or None


def validate_task_dependencies(job: Obj) -> str | None:
    """reference §3.1: with dependsOn, the tasks form a DAG (a dependency on a task that does
    not exist is never satisfied, so it fails too)."""
    tasks = _tasks(job)
    if not any(t.get("dependsOn") is not None for t in tasks):
        return None
    names = [_task_name(t) for t in tasks]
    in_degree = {n: 0 for n in names}
    edges: dict[str, list[str]] = {}
    for t in tasks:
        depends = t.get("dependsOn") if isinstance(t.get("dependsOn"), dict) else {}
        for dep in depends.get("name") or []:
            edges.setdefault(dep, []).append(_task_name(t))
            in_degree[_task_name(t)] += 1
    ready = [n for n, d in in_degree.items() if d == 0]
    done = 0
    while ready:
        n = ready.pop()
        done += 1
        for m in edges.pop(n, []):
            in_degree[m] -= 1
            if in_degree[m] == 0:
                ready.append(m)
    if done != len(in_degree):
        return "job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG)"
    return None


_TIER_CONFLICT = "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously"


def _tiers_conflict(topology: Any) -> bool:
    return isinstance(topology, dict) and topology.get("highestTierAllowed") is not None \
        and topology.get("highestTierName") not in (None, "")


def validate_network_topology(job: Obj) -> str | None:
    """reference §3.1: networkTopology has not both highestTierAllowed and highestTierName,
    for the job and for every task's partitionPolicy."""
    if _tiers_conflict(_spec(job).get("networkTopology")):
        return _TIER_CONFLICT
    for task in _tasks(job):
        partition = task.get("partitionPolicy")
        if isinstance(partition, dict) and _tiers_conflict(partition.get("networkTopology")):
            return f"in task '{_task_name(task)}' partitionPolicy: {_TIER_CONFLICT}"
    return None


# --- CREATE: validateJobCreate --------------------------------------------------------------

FIRST_RULES = (validate_job_min_available, validate_max_retry, validate_ttl_seconds_after_finished,
               validate_has_tasks, validate_mpi_master_task)
TASK_RULES = (validate_task_replicas, validate_task_min_available, validate_task_partition_policy,
              validate_task_name, validate_task_name_unique, validate_task_policies, validate_pod_name,
              validate_task_template, validate_task_topology_policy)
JOB_RULES = (validate_job_name, validate_total_replicas, validate_job_policies,
             validate_plugins_registered, validate_plugin_arguments, validate_volumes)


def validate_job_create(job: Obj, lister: Any = None) -> str | None:
    """reference §3.1 CREATE, in Volcano's order: FIRST_RULES (the first denial is the
    answer); then the network topology, TASK_RULES for each task (stopping at a duplicated
    task name, as Volcano does), JOB_RULES, the queue (validate_queue) and the task DAG, all
    their messages joined with "; "."""
    for rule in FIRST_RULES:
        message = rule(job)
        if message:
            return message
    messages: list[str] = []
    message = validate_network_topology(job)
    if message:
        messages.append(message)
    for i, task in enumerate(_tasks(job)):
        for task_rule in TASK_RULES:
            message = task_rule(job, i, task)
            if message:
                messages.append(message)
                if task_rule is validate_task_template:
                    break  # Volcano checks the topology policy of a valid template only
            if message and task_rule is validate_task_name_unique:
                break
        if validate_task_name_unique(job, i, task):
            break
    for rule in JOB_RULES:
        message = rule(job)
        if message:
            messages.append(message)
    for message in (validate_queue(job, lister), validate_task_dependencies(job)):
        if message:
            messages.append(message)
    return "; ".join(messages) or None


# --- UPDATE: validateJobUpdate --------------------------------------------------------------

def validate_update_task_replicas(job: Obj) -> str | None:
    """reference §3.1 UPDATE: every task's replicas >= 0."""
    for task in _tasks(job):
        if _int(task.get("replicas")) < 0:
            return f"'replicas' must be >= 0 in task: {_task_name(task)}"
    return None


def validate_update_task_min_available(job: Obj) -> str | None:
    """reference §3.1 UPDATE: 0 <= task.minAvailable <= replicas."""
    for task in _tasks(job):
        value = task.get("minAvailable")
        if not _is_int(value):
            continue
        if value < 0:
            return f"'minAvailable' must be >= 0 in task: {_task_name(task)}"
        if value > _int(task.get("replicas")):
            return f"'minAvailable' must be <= 'replicas' in task: {_task_name(task)}"
    return None


def validate_update_partition_policy(job: Obj) -> str | None:
    """reference §3.1 UPDATE: partitionPolicy is re-checked (validate_task_partition_policy)."""
    for i, task in enumerate(_tasks(job)):
        message = validate_task_partition_policy(job, i, task)
        if message:
            return message
    return None


def validate_update_job_min_available(job: Obj) -> str | None:
    """reference §3.1 UPDATE: 0 <= job.minAvailable <= the total replicas."""
    value = _int(_spec(job).get("minAvailable"))
    if value > sum(_int(t.get("replicas")) for t in _tasks(job)):
        return "job 'minAvailable' must not be greater than total replicas"
    if value < 0:
        return "job 'minAvailable' must be >= 0"
    return None


def validate_update_task_count(old: Obj, new: Obj) -> str | None:
    """reference §3.1 UPDATE: the number of tasks cannot change."""
    if len(_tasks(old)) != len(_tasks(new)):
        return "job updates may not add or remove tasks"
    return None


# Fields that are Go maps: an entry with an empty value is still an entry.
_MAP_FIELDS = frozenset({"plugins", "labels", "annotations", "nodeSelector", "requests", "limits"})


def _semantic(value: Any, is_map: bool = False) -> Any:
    """A spec as Go's typed comparison (apiequality.Semantic) sees it: a struct field that is
    null, "", [] or {} is unset; map entries are kept."""
    if isinstance(value, dict):
        out = {k: _semantic(v, k in _MAP_FIELDS) for k, v in value.items()}
        if is_map:
            return out
        return {k: v for k, v in out.items() if v not in (None, "", [], {})}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def _comparable_spec(job: Obj, allowed_from: Obj) -> Any:
    """job.spec with the fields an update may change taken from `allowed_from`, and
    volumeClaimName dropped where volumeClaim is set (the controller fills it in)."""
    spec = copy.deepcopy(_spec(job))
    source = _spec(allowed_from)
    for key in ("minAvailable", "priorityClassName"):
        spec.pop(key, None)
        if key in source:
            spec[key] = copy.deepcopy(source[key])
    tasks, source_tasks = spec.get("tasks"), source.get("tasks")
    if isinstance(tasks, list) and isinstance(source_tasks, list):
        for task, src in zip(tasks, source_tasks):
            if isinstance(task, dict) and isinstance(src, dict):
                for key in ("replicas", "minAvailable"):
                    task.pop(key, None)
                    if key in src:
                        task[key] = copy.deepcopy(src[key])
    volumes = spec.get("volumes")
    for v in volumes if isinstance(volumes, list) else []:
        if isinstance(v, dict) and v.get("volumeClaim") is not None:
            v.pop("volumeClaimName", None)
    return _semantic(spec)


def validate_update_immutable_fields(old: Obj, new: Obj) -> str | None:
    """reference §3.1 UPDATE: only minAvailable, tasks[*].replicas, tasks[*].minAvailable and
    priorityClassName may change (volumeClaimName is ignored where volumeClaim is set)."""
    if _comparable_spec(new, old) != _comparable_spec(old, old):
        return UPDATE_FIELDS_MESSAGE
    return None


def validate_job_update(old: Obj, new: Obj) -> str | None:
    """reference §3.1 UPDATE, in Volcano's order; the first denial is the answer."""
    for rule in (validate_update_task_replicas, validate_update_task_min_available,
                 validate_update_partition_policy, validate_update_job_min_available,
                 validate_network_topology):
        message = rule(new)
        if message:
            return message
    return validate_update_task_count(old, new) or validate_update_immutable_fields(old, new)
