"""Volcano's per-task Job rules of CREATE (reference §3.1; python/volcanic/admission/
job_task_rules.py) and the lifecycle-policy rules (job_policies.py), unit and through
volcanic.Cluster().apply. Builders in admission_job_helpers.py."""

from __future__ import annotations

import pytest

# c is a pytest fixture, taken by name.
from admission_job_helpers import c, container, defaulted, denied, job, task
from volcanic.admission import job_policies as JP
from volcanic.admission import job_task_rules as JT
from volcanic.admission import pod_template as PT

# --- CREATE: per task ---------------------------------------------------------------------------------

# Task replicas and minAvailable >= 0 and the task name's pattern are the CRD schema's (see
# test_crd_schema.py), as in Volcano v1.15.1.


def test_validate_task_min_available(c):
    """reference §3.1: task.minAvailable <= replicas."""
    j = job("j", task("a", 2, minAvailable=2))
    assert JT.validate_task_min_available(j, 0, j["spec"]["tasks"][0]) is None
    j = job("j", task("a", 2, minAvailable=3))
    assert JT.validate_task_min_available(j, 0, j["spec"]["tasks"][0]) == (
        "'minAvailable' is greater than 'replicas' in task: a, job: j")
    assert "'minAvailable' is greater than 'replicas' in task: a, job: bad" in str(
        denied(c, job("bad", task("a", 2, minAvailable=3), minAvailable=1)))


@pytest.mark.parametrize("partition, replicas, min_available, message", [
    ({"totalPartitions": 2, "partitionSize": 4}, 8, None, None),
    ({"totalPartitions": 2, "partitionSize": 4, "minPartitions": 1}, 8, None, None),
    ({"totalPartitions": 4, "partitionSize": 2, "minPartitions": 2}, 8, 4, None),
    ({"totalPartitions": 2, "partitionSize": 3}, 8, None, "'Replicas' are not equal to TotalPartitions*PartitionSize"),
    ({"totalPartitions": 4, "partitionSize": 2, "minPartitions": 1}, 8, 4,
     "'MinAvailable' is not equal to MinPartitions*PartitionSize"),
])
def test_validate_task_partition_policy(partition, replicas, min_available, message):
    """reference §3.1 partitionPolicy: replicas == totalPartitions*partitionSize,
    minAvailable == minPartitions*partitionSize (totalPartitions, partitionSize >= 1 are the
    CRD's: test_crd_schema.py)."""
    extra = {} if min_available is None else {"minAvailable": min_available}
    j = defaulted(job("j", task("a", replicas, partitionPolicy=partition, **extra)))
    got = JT.validate_task_partition_policy(j, 0, j["spec"]["tasks"][0])
    assert got == (None if message is None else f"{message} in task: a, job: j")


def test_validate_task_name_unique(c):
    """reference §3.1: task names are unique ("duplicated task name")."""
    j = job("j", task("a"), task("b"), task("a"))
    assert JT.validate_task_name_unique(j, 1, j["spec"]["tasks"][1]) is None
    assert JT.validate_task_name_unique(j, 2, j["spec"]["tasks"][2]) == "duplicated task name a"
    assert "duplicated task name a" in str(denied(c, job("bad", task("a"), task("a"))))


def test_validate_task_policies():
    """reference §3.1: a task's policies follow the policy rules (path spec.tasks[i].policies)."""
    j = job("j", task("a", policies=[{"event": "PodEvicted", "action": "RestartTask"}]))
    assert JT.validate_task_policies(j, 0, j["spec"]["tasks"][0]) is None
    j = job("j", task("a", policies=[{"event": "OutOfSync", "action": "RestartTask"}]))
    assert JT.validate_task_policies(j, 0, j["spec"]["tasks"][0]).startswith(
        'spec.tasks[0].policies: Invalid value: "OutOfSync": invalid policy event; valid events are [')


def test_validate_pod_name():
    """reference §3.1: the pod name <job>-<task>-<index> is a qualified name (<= 63 characters)."""
    j = job("j" * 30, task("t" * 30))
    assert JT.validate_pod_name(j, 0, j["spec"]["tasks"][0]) is None
    j = job("j" * 31, task("t" * 30))
    assert JT.validate_pod_name(j, 0, j["spec"]["tasks"][0]) == (
        f"create pod with name {'j' * 31}-{'t' * 30}-0 validate failed [name part must be no more than 63 characters]")


@pytest.mark.parametrize("edit, message", [
    (lambda j: None, None),
    (lambda j: j["spec"]["tasks"][0]["template"]["spec"].update(containers=[]),
     "spec.task[0].template.spec.containers: Required value."),
    (lambda j: container(j).pop("name"), "spec.task[0].template.spec.containers[0].name: Required value."),
    (lambda j: container(j).update(name="Main"),
     'spec.task[0].template.spec.containers[0].name: Invalid value: "Main": a lowercase RFC 1123 label'),
    (lambda j: j["spec"]["tasks"][0]["template"]["spec"]["containers"].append({"name": "main", "image": "x"}),
     'spec.task[0].template.spec.containers[1].name: Duplicate value: "main".'),
    (lambda j: j["spec"]["tasks"][0]["template"]["spec"].update(initContainers=[{"name": "main", "image": "x"}]),
     'spec.task[0].template.spec.containers[0].name: Duplicate value: "main".'),
    (lambda j: container(j).pop("image"), "spec.task[0].template.spec.containers[0].image: Required value."),
    (lambda j: j["spec"]["tasks"][0]["template"]["spec"].update(initContainers=[{"name": "init"}]),
     "spec.task[0].template.spec.initContainers[0].image: Required value."),
    (lambda j: container(j)["resources"].update(limits={"cpu": "500m"}),
     'spec.task[0].template.spec.containers[0].resources.requests: Invalid value: "1": '
     "must be less than or equal to cpu limit of 500m."),
    (lambda j: container(j)["resources"]["requests"].update(cpu="-1"),
     'spec.task[0].template.spec.containers[0].resources.requests[cpu]: Invalid value: "-1": '
     "must be greater than or equal to 0."),
    (lambda j: container(j)["resources"]["requests"].update(gpu="1"),
     'spec.task[0].template.spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": '
     "must be a standard resource for containers."),
    (lambda j: container(j)["resources"]["requests"].update({"nvidia.com/gpu": "1"}),
     "spec.task[0].template.spec.containers[0].resources.limits: Required value: "
     "Limit must be set for non overcommitable resources."),
    (lambda j: container(j)["resources"].update(limits={"nvidia.com/gpu": "2"}, requests={"nvidia.com/gpu": "1"}),
     'spec.task[0].template.spec.containers[0].resources.requests: Invalid value: "1": '
     "must be equal to nvidia.com/gpu limit of 2."),
    (lambda j: container(j)["resources"].update(limits={"nvidia.com/gpu": "2", "cpu": "2"}), None),
    (lambda j: j["spec"]["tasks"][0]["template"]["spec"].update(restartPolicy="Sometimes"),
     'spec.task[0].template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: '
     '"Always", "OnFailure", "Never".'),
    (lambda j: j["spec"]["tasks"][0]["template"]["spec"].update(restartPolicy=""), None),
])
def test_validate_task_template(edit, message):
    """reference §3.1: the pod template passes (a subset of) Kubernetes' ValidatePodTemplate:
    containers, names, images, resources, restartPolicy, with Kubernetes' messages."""
    j = job("j", task("a"))
    edit(j)
    got = JT.validate_task_template(j, 0, j["spec"]["tasks"][0])
    if message is None:
        assert got is None
    else:
        assert got.startswith(message)


def test_validate_task_template_reports_every_error_as_volcano_does():
    """reference §3.1: all the template's errors, after "spec.task[<i>].", each ending "."."""
    j = job("j", task("a"))
    container(j).update(name="", image="")
    assert JT.validate_task_template(j, 0, j["spec"]["tasks"][0]) == (
        "spec.task[0].template.spec.containers[0].name: Required value. "
        "template.spec.containers[0].image: Required value.")


def test_template_containers_errors():
    """reference §3.1 ValidatePodTemplate subset: containers is required and not empty."""
    assert PT.template_containers_errors({"containers": [{"name": "a", "image": "x"}]}) == []
    assert PT.template_containers_errors({}) == ["template.spec.containers: Required value"]


def test_container_name_errors():
    """reference §3.1 ValidatePodTemplate subset: container names required, RFC 1123 labels, unique."""
    seen: set[str] = set()
    assert PT.container_name_errors({"name": "a"}, "p[0]", seen) == [] and seen == {"a"}
    assert PT.container_name_errors({"name": "a"}, "p[1]", seen) == ['p[1].name: Duplicate value: "a"']
    assert PT.container_name_errors({}, "p[2]", seen) == ["p[2].name: Required value"]
    assert PT.container_name_errors({"name": "A"}, "p[3]", seen)[0].startswith(
        'p[3].name: Invalid value: "A": a lowercase RFC 1123 label')


def test_container_image_errors():
    """reference §3.1 ValidatePodTemplate subset: every container has an image."""
    assert PT.container_image_errors({"image": "busybox"}, "p") == []
    assert PT.container_image_errors({"image": ""}, "p") == ["p.image: Required value"]


def test_container_resources_errors():
    """reference §3.1 ValidatePodTemplate subset: resource names, quantities >= 0, requests <=
    limits, limits == requests for resources that cannot be overcommitted."""
    ok = {"resources": {"requests": {"cpu": "500m", "memory": "1Gi", "hugepages-2Mi": "2Mi", "x.io/dev": "1"},
                        "limits": {"cpu": "1", "hugepages-2Mi": "2Mi", "x.io/dev": "1"}}}
    assert PT.container_resources_errors(ok, "p") == []
    bad = {"resources": {"requests": {"cpu": "2", "memory": "-1"}, "limits": {"cpu": "1000m", "disk": "1"}}}
    assert PT.container_resources_errors(bad, "p") == [
        'p.resources.limits[disk]: Invalid value: "disk": must be a standard resource for containers',
        'p.resources.requests[memory]: Invalid value: "-1": must be greater than or equal to 0',
        'p.resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1']


def test_restart_policy_errors():
    """reference §3.1 ValidatePodTemplate subset: restartPolicy Always, OnFailure or Never ("" defaults)."""
    assert [PT.restart_policy_errors({"restartPolicy": p}) for p in ("Always", "OnFailure", "Never", "")] == [[]] * 4
    assert PT.restart_policy_errors({"restartPolicy": "always"}) == [
        'template.spec.restartPolicy: Unsupported value: "always": supported values: "Always", "OnFailure", "Never"']


def _guaranteed(cpu: str = "2", memory: str = "1Gi") -> dict:
    return {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu, "memory": memory}}


@pytest.mark.parametrize("policy, resources, message", [
    ("none", {"requests": {"cpu": "500m"}}, None),
    ("best-effort", _guaranteed(), None),
    ("single-numa-node", {"limits": {"cpu": "2", "memory": "1Gi"}}, None),  # requests from limits
    ("restricted", {"requests": {"cpu": "2", "memory": "1Gi"}}, "spec.task[0] isn't Guaranteed pod, kind=Burstable"),
    ("restricted", {}, "spec.task[0] isn't Guaranteed pod, kind=BestEffort"),
    ("best-effort", _guaranteed(cpu="1500m"), "the cpu request isn't  an integer in spec.task[0] container[0]."),
])
def test_validate_task_topology_policy(policy, resources, message):
    """reference §3.1: with a topologyPolicy other than none the pod is Guaranteed and every
    CPU request is a whole number."""
    j = job("j", task("a", topologyPolicy=policy))
    container(j)["resources"] = resources
    assert JT.validate_task_topology_policy(j, 0, j["spec"]["tasks"][0]) == message


def test_validate_task_topology_policy_checks_init_containers():
    """reference §3.1: init containers count too (container index after the containers)."""
    j = job("j", task("a", topologyPolicy="best-effort"))
    container(j)["resources"] = _guaranteed()
    j["spec"]["tasks"][0]["template"]["spec"]["initContainers"] = [
        {"name": "init", "image": "x", "resources": _guaranteed(cpu="250m")}]
    assert JT.validate_task_topology_policy(j, 0, j["spec"]["tasks"][0]) == (
        "the cpu request isn't  an integer in spec.task[0] container[1].")


def test_pod_qos():
    """Kubernetes' GetPodQOS as the topology rule uses it."""
    assert JT.pod_qos([({}, {})]) == "BestEffort"
    g = _guaranteed()
    assert JT.pod_qos([(g["requests"], g["limits"])]) == "Guaranteed"
    assert JT.pod_qos([(g["requests"], g["limits"]), ({"cpu": "1"}, {})]) == "Burstable"
    assert JT.pod_qos([({"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"})]) == "Burstable"


# --- Policies rules -------------------------------------------------------------------------------------

def test_policy_event_and_exit_code_exclusive():
    """reference §3.1 policies: event (or events) and exitCode not both."""
    assert JP.policy_event_and_exit_code_exclusive({"event": "PodFailed"}) is None
    assert JP.policy_event_and_exit_code_exclusive({"event": "PodFailed", "exitCode": 1}) == (
        "must not specify event and exitCode simultaneously")
    assert JP.policy_event_and_exit_code_exclusive({"events": ["PodFailed"], "exitCode": 1}) == (
        "must not specify event and exitCode simultaneously")


def test_policy_has_event_or_exit_code():
    """reference §3.1 policies: one of event, events, exitCode."""
    assert JP.policy_has_event_or_exit_code({"exitCode": 3}) is None
    assert JP.policy_has_event_or_exit_code({"events": ["PodFailed"]}) is None
    assert JP.policy_has_event_or_exit_code({"action": "AbortJob"}) == "either event and exitCode should be specified"


@pytest.mark.parametrize("event", JP.POLICY_EVENTS)
def test_policy_event_allowed_accepts_user_events(event):
    """reference §3.1 policies: *, PodFailed, PodEvicted, PodPending, Unknown, TaskCompleted,
    TaskFailed, JobUpdated are allowed."""
    assert JP.policy_event_allowed(event, "spec.policies") is None


@pytest.mark.parametrize("event", ["OutOfSync", "CommandIssued", "PodRunning", "Nope"])
def test_policy_event_allowed_rejects_internal_events(event):
    """reference §3.1 policies: OutOfSync, CommandIssued and PodRunning are rejected."""
    assert JP.policy_event_allowed(event, "spec.policies") == (
        f'spec.policies: Invalid value: "{event}": invalid policy event')


@pytest.mark.parametrize("action", JP.POLICY_ACTIONS)
def test_policy_action_allowed_accepts_user_actions(action):
    """reference §3.1 policies: the eight user actions, RestartPod and RestartPartition included."""
    assert JP.policy_action_allowed(action, "spec.policies") is None


@pytest.mark.parametrize("action", ["SyncJob", "EnqueueJob", "SyncQueue", "OpenQueue", "CloseQueue", None])
def test_policy_action_allowed_rejects_internal_actions(action):
    """reference §3.1 policies: SyncJob, EnqueueJob, SyncQueue, OpenQueue, CloseQueue (and no
    action) are rejected."""
    assert JP.policy_action_allowed(action, "spec.policies") == (
        f'spec.policies: Invalid value: "{action or ""}": invalid policy action')


def test_policy_exit_code_nonzero():
    """reference §3.1 policies: exitCode != 0."""
    assert JP.policy_exit_code_nonzero({"exitCode": -1}) is None
    assert JP.policy_exit_code_nonzero({"exitCode": 0}) == "0 is not a valid error code"


def test_policy_any_event_alone():
    """reference §3.1 policies: with "*" no other event policy."""
    assert JP.policy_any_event_alone(["*"]) is None
    assert JP.policy_any_event_alone(["*", "PodFailed"]) == "if there's * here, no other policy should be here"


VALID = ("; valid events are [* PodFailed PodEvicted PodPending Unknown TaskCompleted TaskFailed JobUpdated], "
         "valid actions are [AbortJob RestartJob RestartTask RestartPod RestartPartition TerminateJob CompleteJob "
         "ResumeJob]")


@pytest.mark.parametrize("policies, message", [
    ([{"event": "PodFailed", "action": "RestartJob"}, {"events": ["PodEvicted", "TaskFailed"], "action": "AbortJob"},
      {"exitCode": 3, "action": "TerminateJob"}, {"exitCode": -1, "action": "RestartTask"}], None),
    ([{"event": "PodFailed", "events": ["PodFailed"], "action": "RestartJob"}], None),  # one policy, repeats merged
    ([{"event": "PodFailed", "action": "AbortJob"}, {"event": "PodFailed", "action": "RestartJob"}],
     "duplicate event PodFailed  across different policy"),
    ([{"exitCode": 2, "action": "AbortJob"}, {"exitCode": 2, "action": "RestartJob"}], "duplicate exitCode 2"),
    ([{"exitCode": 0, "action": "AbortJob"}], "0 is not a valid error code"),
    ([{"exitCode": 1, "action": "SyncQueue"}], 'spec.policies: Invalid value: "SyncQueue": invalid policy action'),
    ([{"event": "*", "action": "AbortJob"}, {"event": "PodFailed", "action": "RestartJob"}],
     "if there's * here, no other policy should be here"),
    ([{"event": "PodFailed", "exitCode": 1, "action": "AbortJob"}],
     "must not specify event and exitCode simultaneously"),
    ([{"action": "AbortJob"}], "either event and exitCode should be specified"),
])
def test_validate_policies(policies, message):
    """reference §3.1 "Policies rules": the first failing policy, then the "*" rule; a denial
    lists the valid events and actions."""
    assert JP.validate_policies(policies, "spec.policies") == (None if message is None else message + VALID)
