"""Volcano Job admission (reference §3.1 validate, §3.2 mutate).

Validation is the union of Volcano's webhook (jobs/validate/admit_job.go, util.go) and of the
CRD schema and ValidatingAdmissionPolicy (policy/jobs-validating.yaml), checked in the order
the API server applies them:

0. The CRD schema (volcanic.kube.crds), which the API server checks between mutating and
   validating admission: every minimum, maximum, pattern, enum, length and required field
   of Volcano's CRD (job minAvailable, maxRetry, ttlSecondsAfterFinished >= 0, task
   replicas and minAvailable >= 0, the task name pattern, volume mountPath, ...), worded
   as the API server words them. Not repeated here, as Volcano v1.15.1's webhook does not.
1. admit_job_schema (CREATE, UPDATE): the job's shape (check_job_shape: a wrong type
   anywhere, pod templates included, is denied naming the field, e.g.
   "spec.tasks[0].template.spec.containers: must be an array, got string"), so that no rule
   below meets a value of the wrong type; then dependsOn.iteration.
2. admit_job_create (CREATE): validateJobCreate. The first two rules end the check at once,
   as in Volcano; the others are all run and their messages joined with "; ".
3. admit_job_update (UPDATE): validateJobUpdate against request.old; first denial wins.
DELETE is not validated.

Every rule is a plain function returning None (allowed) or a message, in Volcano's words
where Volcano has them. Rules after the schema check may assume well-typed input. This module
holds the entry points, the rules on the whole job and the order they run in; the defaults
are in job_defaults, the schema in job_schema, the per-task rules in job_task_rules and the
UPDATE rules in job_update_rules.
"""

from __future__ import annotations

from typing import Any, Callable

from volcanic.admission.chain import AdmissionRequest
from volcanic.admission.common import (
    dns1123_subdomain_errors,
    go_list,
    qualified_name_errors,
)
from volcanic.admission.job_defaults import default_job
from volcanic.admission.job_policies import validate_policies
from volcanic.admission.job_schema import (
    as_int,
    check_job_shape,
    job_name,
    plugins_of_job,
    task_name,
    tasks_of,
    validate_depends_on_iteration,
)
from volcanic.admission.job_task_rules import (
    validate_pod_name,
    validate_task_min_available,
    validate_task_name_unique,
    validate_task_partition_policy,
    validate_task_policies,
    validate_task_template,
    validate_task_topology_policy,
)
from volcanic.admission.job_update_rules import (
    validate_update_immutable_fields,
    validate_update_job_min_available,
    validate_update_partition_policy,
    validate_update_task_count,
    validate_update_task_min_available,
)
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj, as_map, spec_of, status_of

# Volcano's registered job plugins (pkg/controllers/job/plugins/factory.go), all of which
# volcanic's job controller implements (volcanic.controllers.job.plugins.PLUGINS). As in
# Volcano, only the name is checked: the plugins read their arguments leniently (an
# unknown or malformed flag is logged and the defaults kept), so any argument list passes.
VOLCANO_PLUGINS = ("ssh", "env", "svc", "tensorflow", "mpi", "pytorch", "hcclrank", "ray")


# --- Mutation (reference §3.2) -------------------------------------------------------------

def mutators(conf: Any) -> list[Callable[[AdmissionRequest], Obj]]:
    """Volcano's job defaults, applied on CREATE only (reference §3.2)."""

    def mutate(request: AdmissionRequest) -> Obj:
        if request.operation != "CREATE" or not isinstance(request.obj, dict) \
                or not isinstance(request.obj.get("spec"), dict):
            return request.obj
        return default_job(request.obj, conf.scheduler_names[0])

    return [mutate]


# --- The validators (reference §3.1) -------------------------------------------------------

def validators(conf: Any) -> list[Callable[[AdmissionRequest], "str | None"]]:
    """Volcano's job validation (reference §3.1), in the API server's order: the CRD schema
    (CREATE and UPDATE), then the webhook and VAP rules of CREATE or of UPDATE."""
    return [admit_job_schema, admit_job_create, admit_job_update]


def admit_job_schema(request: AdmissionRequest) -> str | None:
    """reference §3.1 "CRD/VAP-level rules": the job's types (what the rules read), on
    CREATE and UPDATE."""
    if request.operation not in ("CREATE", "UPDATE") or request.obj is None:
        return None
    job = request.obj
    message = check_job_shape(job)
    if message:
        return message
    return validate_depends_on_iteration(job)


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


# --- CREATE: the rules that end the check at once ----------------------------------------
# Job minAvailable, maxRetry and ttlSecondsAfterFinished >= 0 are the CRD schema's
# (volcanic.kube.crds, checked by the API server before admission), as in Volcano v1.15.1,
# whose webhook dropped them (jobs/validate/admit_job.go, validateJobCreate).

def validate_has_tasks(job: Obj) -> str | None:
    """reference §3.1: at least one task."""
    if not tasks_of(job):
        return "No task specified in job spec"
    return None


def validate_mpi_master_task(job: Obj) -> str | None:
    """reference §3.1: with the mpi plugin, its master task (--master, default "master")
    exists. (A worker task is not required.)"""
    plugins = plugins_of_job(job)
    if "mpi" not in plugins:
        return None
    master = _flag(plugins.get("mpi"), "master", "master")
    if not any(task_name(t) == master for t in tasks_of(job)):
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


# --- CREATE: the job ------------------------------------------------------------------------

def validate_job_name(job: Obj) -> str | None:
    """reference §3.1: the job name is a qualified name."""
    errs = qualified_name_errors(job_name(job))
    if errs:
        return f"create job with name {job_name(job)} validate failed {go_list(errs)}"
    return None


def validate_total_replicas(job: Obj) -> str | None:
    """reference §3.1: sum(replicas) >= job.minAvailable."""
    total = sum(as_int(t.get("replicas")) for t in tasks_of(job))
    if total < as_int(spec_of(job).get("minAvailable")):
        return "job 'minAvailable' should not be greater than total replicas in tasks"
    return None


def validate_job_policies(job: Obj) -> str | None:
    """reference §3.1: the job's lifecycle policies are valid (validate_policies)."""
    return validate_policies(spec_of(job).get("policies"), "spec.policies")


def validate_plugins_registered(job: Obj) -> str | None:
    """reference §3.1: every plugin name is one Volcano registers (VOLCANO_PLUGINS)."""
    unknown = [name for name in sorted(plugins_of_job(job)) if name not in VOLCANO_PLUGINS]
    if unknown:
        return "; ".join(f"unable to find job plugin: {name}" for name in unknown)
    return None


def validate_volumes(job: Obj) -> str | None:
    """reference §3.1 volumes: mountPath is unique; exactly one of volumeClaim and
    volumeClaimName; volumeClaimName is a valid PersistentVolumeClaim name. The first error
    only, as Volcano's validateIO. (A missing or empty mountPath is the CRD schema's:
    required, minLength 1.)"""
    seen: set[str] = set()
    volumes = spec_of(job).get("volumes")
    for volume in volumes if isinstance(volumes, list) else []:
        if not isinstance(volume, dict):
            continue
        path, claim = volume.get("mountPath") or "", volume.get("volumeClaim")
        claim_name = volume.get("volumeClaimName") or ""
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
    name = spec_of(job).get("queue")
    queue = lister.get("Queue", name) if isinstance(name, str) and name else None
    if queue is None:
        return f'unable to find job queue: {KINDS["Queue"].not_found(name)}'
    messages = []
    state = status_of(queue).get("state")
    if state != "Open":
        messages.append(f"can only submit job to queue with state `Open`, queue `{name}` status is `{state or ''}`")
    if name == "root":
        messages.append("can not submit job to root queue")
    else:
        children = [q for q in lister.list("Queue") if spec_of(q).get("parent") == name]
        if children:
            messages.append(f"can only submit job to leaf queue, queue `{name}` has {len(children)} child queues")
    return "; ".join(messages) or None


def validate_task_dependencies(job: Obj) -> str | None:
    """reference §3.1: with dependsOn, the tasks form a DAG (a dependency on a task that does
    not exist is never satisfied, so it fails too)."""
    tasks = tasks_of(job)
    if not any(t.get("dependsOn") is not None for t in tasks):
        return None
    names = [task_name(t) for t in tasks]
    in_degree = {n: 0 for n in names}
    edges: dict[str, list[str]] = {}
    for t in tasks:
        depends = as_map(t.get("dependsOn"))
        for dep in depends.get("name") or []:
            edges.setdefault(dep, []).append(task_name(t))
            in_degree[task_name(t)] += 1
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
    if _tiers_conflict(spec_of(job).get("networkTopology")):
        return _TIER_CONFLICT
    for task in tasks_of(job):
        partition = task.get("partitionPolicy")
        if isinstance(partition, dict) and _tiers_conflict(partition.get("networkTopology")):
            return f"in task '{task_name(task)}' partitionPolicy: {_TIER_CONFLICT}"
    return None


# --- CREATE: validateJobCreate --------------------------------------------------------------

FIRST_RULES = (validate_has_tasks, validate_mpi_master_task)
TASK_RULES = (validate_task_min_available, validate_task_partition_policy, validate_task_name_unique,
              validate_task_policies, validate_pod_name, validate_task_template, validate_task_topology_policy)
JOB_RULES = (validate_job_name, validate_total_replicas, validate_job_policies, validate_plugins_registered,
             validate_volumes)


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
    for i, task in enumerate(tasks_of(job)):
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

def validate_job_update(old: Obj, new: Obj) -> str | None:
    """reference §3.1 UPDATE, in Volcano's order; the first denial is the answer."""
    for rule in (validate_update_task_min_available,
                 validate_update_partition_policy, validate_update_job_min_available,
                 validate_network_topology):
        message = rule(new)
        if message:
            return message
    return validate_update_task_count(old, new) or validate_update_immutable_fields(old, new)
