"""Volcano's Job admission (reference §3.1 validate, §3.2 mutate): python/volcanic/admission/jobs.py
and the shared helpers in admission/common.py.

Unit tests call each rule function directly on a job already defaulted by the mutator (as
the webhook sees it); end-to-end tests go through volcanic.Cluster().apply, where a denial is
a volcanic.AdmissionError naming the object and nothing is stored.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest
from volcanic.admission import AdmissionConf, common
from volcanic.admission import job_policies as JP
from volcanic.admission import jobs as J
from volcanic.admission import pod_template as PT
from volcanic.admission import volcano_chain
from volcanic.admission.chain import AdmissionRequest

import volcanic

NS = "default"


# --- Builders -------------------------------------------------------------------------------

def task(name: str = "t", replicas: int = 1, **extra: Any) -> dict[str, Any]:
    return {"name": name, "replicas": replicas,
            "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}},
            **extra}


def job(name: str = "j", *tasks: dict, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"tasks": list(tasks) or [task()], **spec}}


def defaulted(j: dict) -> dict:
    """The job as the validating webhook sees it: after Volcano's mutation (§3.2)."""
    return J.default_job(j)


def container(j: dict, task_index: int = 0, index: int = 0) -> dict:
    return j["spec"]["tasks"][task_index]["template"]["spec"]["containers"][index]


def queue(name: str, **spec: Any) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"weight": 1, **spec}}


class Lister:
    """A lister over fixed queues (get(kind, name, namespace) / list(kind, namespace))."""

    def __init__(self, *queues: dict) -> None:
        self.queues = {q["metadata"]["name"]: q for q in queues}

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        return self.queues.get(name) if kind == "Queue" else None

    def list(self, kind: str, namespace: str | None = None) -> list[dict]:
        return list(self.queues.values()) if kind == "Queue" else []


def open_queue(name: str, **spec: Any) -> dict:
    return dict(queue(name, **spec), status={"state": "Open"})


DEFAULT = Lister(open_queue("default", parent="root"), open_queue("root"))


@pytest.fixture
def c() -> volcanic.Cluster:
    cluster = volcanic.Cluster()
    yield cluster
    assert cluster.errors == []


def denied(c: volcanic.Cluster, obj: dict) -> volcanic.AdmissionError:
    """Applies `obj`, expecting a denial; checks the error names it and nothing was stored."""
    kind, meta = obj.get("kind"), obj.get("metadata") or {}
    before = c.get(kind, meta.get("name"), meta.get("namespace") or NS)
    with pytest.raises(volcanic.AdmissionError) as e:
        c.apply(obj)
    assert (e.value.kind, e.value.namespace, e.value.name) == (kind, meta.get("namespace"), meta.get("name"))
    assert c.get(kind, meta.get("name"), meta.get("namespace") or NS) == before
    return e.value


# --- common.py --------------------------------------------------------------------------------

def test_common_names_follow_kubernetes_validation():
    """common.py: IsDNS1123Label / IsDNS1123Subdomain / IsQualifiedName, Kubernetes' messages."""
    assert common.dns1123_label_errors("my-task") == []
    assert common.dns1123_label_errors("My_Task")[0].startswith(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
        "and end with an alphanumeric character (e.g. 'my-name', or '123-abc', regex used for validation is")
    assert common.dns1123_label_errors("a" * 64) == ["must be no more than 63 characters"]
    assert common.dns1123_subdomain_errors("a.b-c") == [] and common.dns1123_subdomain_errors("a_b")
    assert common.qualified_name_errors("My.Job_1") == []
    assert common.qualified_name_errors("example.com/x") == []
    assert common.qualified_name_errors("x" * 64) == ["name part must be no more than 63 characters"]
    assert common.qualified_name_errors("/x") == ["prefix part must be non-empty"]
    assert common.qualified_name_errors("a/b/c")[0].startswith("a qualified name must consist of")
    assert common.dns1123_label_errors(5) == ["must be a string, got integer"]


def test_common_messages_and_values():
    """common.py: field-error wording, JSON type names, quantities and check_shape."""
    assert common.invalid("spec.x", "v", "bad") == 'spec.x: Invalid value: "v": bad'
    assert common.invalid("spec.x", 3, "bad") == "spec.x: Invalid value: 3: bad"
    assert common.required("spec.x") == "spec.x: Required value"
    assert common.duplicate("spec.x", "a") == 'spec.x: Duplicate value: "a"'
    assert common.not_supported("f", "x", ["a", "b"]) == 'f: Unsupported value: "x": supported values: "a", "b"'
    assert common.go_list(["a b", "c"]) == "[a b c]"
    assert [common.type_name(v) for v in ({}, [], "", 1, 1.5, True, None)] == [
        "object", "array", "string", "integer", "number", "boolean", "null"]
    assert common.expect("2", "integer", "spec.replicas") == "spec.replicas: must be an integer, got string"
    assert common.expect(True, "integer", "f") == "f: must be an integer, got boolean"
    assert common.expect(2, "integer", "f") is None
    assert common.quantity("500m") == common.quantity(0.5) and common.quantity("2Gi") == 2 * 1024 ** 3
    assert common.quantity("1.2.3") is None and common.quantity([1]) is None and common.quantity(None) is None
    assert common.quantity_error("r.cpu", "lots").startswith("r.cpu: quantities must match the regular expression")
    schema = {"a": [{"b": "integer"}], "m": common.MapOf("string"), "q": "quantity"}
    assert common.check_shape({"a": [{"b": 1}], "m": {"k": "v"}, "q": "1"}, schema, "spec") is None
    assert common.check_shape({"a": [{"b": "1"}]}, schema, "spec") == "spec.a[0].b: must be an integer, got string"
    assert common.check_shape({"a": {}}, schema, "spec") == "spec.a: must be an array, got object"
    assert common.check_shape({"a": [None]}, schema, "spec") == "spec.a[0]: must not be null"
    assert common.check_shape({"m": {"k": 1}}, schema, "spec") == "spec.m.k: must be a string, got integer"
    assert common.check_shape({"a": None, "m": None}, schema, "spec") is None  # null is absent
    assert common.check_shape({"q": "x"}, schema, "spec").startswith("spec.q: quantities must match")


# --- Mutation (§3.2) ----------------------------------------------------------------------------

def test_mutation_defaults_queue_scheduler_name_and_max_retry():
    """reference §3.2: queue "" -> default, schedulerName "" -> the first --scheduler-name,
    maxRetry 0 -> 3; set values stay."""
    out = J.default_job(job(queue="", maxRetry=0), "my-scheduler")
    assert (out["spec"]["queue"], out["spec"]["schedulerName"], out["spec"]["maxRetry"]) == (
        "default", "my-scheduler", 3)
    out = J.default_job(job(queue="q", schedulerName="s", maxRetry=5))
    assert (out["spec"]["queue"], out["spec"]["schedulerName"], out["spec"]["maxRetry"]) == ("q", "s", 5)


def test_mutation_defaults_tasks():
    """reference §3.2 per task: name -> default<index>, minAvailable -> replicas (or
    minPartitions*partitionSize), maxRetry -> 3, hostNetwork -> dnsPolicy ClusterFirstWithHostNet."""
    t0 = task("", 3)
    t1 = task("named", 4, minAvailable=1, maxRetry=7)
    t2 = task("", 6, partitionPolicy={"totalPartitions": 3, "partitionSize": 2, "minPartitions": 2})
    t3 = task("net", 1)
    t3["template"]["spec"]["hostNetwork"] = True
    out = J.default_job(job("j", t0, t1, t2, t3))
    tasks = out["spec"]["tasks"]
    assert [t["name"] for t in tasks] == ["default0", "named", "default2", "net"]
    assert [t["minAvailable"] for t in tasks] == [3, 1, 4, 1]
    assert [t["maxRetry"] for t in tasks] == [3, 7, 3, 3]
    assert tasks[3]["template"]["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert "dnsPolicy" not in tasks[0]["template"]["spec"]


def test_mutation_defaults_job_min_available_to_the_sum_of_task_minimums():
    """reference §3.2: job minAvailable 0 -> sum of task minAvailable (replicas when unset)."""
    assert J.default_job(job("j", task("a", 3), task("b", 4, minAvailable=1)))["spec"]["minAvailable"] == 4
    assert J.default_job(job("j", task("a", 3), minAvailable=2))["spec"]["minAvailable"] == 2


@pytest.mark.parametrize("plugins, added", [
    ({"tensorflow": []}, {"svc": []}),
    ({"pytorch": ["--port=1"]}, {"svc": []}),
    ({"ray": []}, {"svc": []}),
    ({"mpi": []}, {"svc": [], "ssh": []}),
    ({"mpi": [], "svc": ["--disable-network-policy"]}, {"ssh": []}),
    ({"env": []}, {}),
])
def test_mutation_adds_svc_and_ssh_plugins(plugins, added):
    """reference §3.2: svc is added for tensorflow, mpi, pytorch and ray; ssh for mpi; given
    arguments stay."""
    out = J.default_job(job(plugins=copy.deepcopy(plugins)))
    assert out["spec"]["plugins"] == {**plugins, **added}


def test_mutation_runs_on_create_only(c):
    """reference §3.2: the mutating webhook is registered for CREATE only."""
    (mutate,) = J.mutators(AdmissionConf(scheduler_names=("vc2", "volcano")))
    j = job(maxRetry=0)
    assert mutate(AdmissionRequest("CREATE", j, None, None))["spec"]["schedulerName"] == "vc2"
    assert mutate(AdmissionRequest("UPDATE", j, j, None)) is j
    stored = c.apply(job("j", task("", 2)))
    assert stored["spec"]["tasks"][0]["name"] == "default0" and stored["spec"]["minAvailable"] == 2
    assert stored["spec"]["schedulerName"] == "volcano" and stored["spec"]["queue"] == "default"


@pytest.mark.parametrize("spec", [
    {"tasks": "abc"}, {"tasks": [1, None, "x"]}, {"tasks": [{"replicas": "2"}]},
    {"tasks": [{"name": 3, "replicas": 1, "template": []}]}, {"tasks": [{"template": {"spec": "x"}}]},
    {"tasks": [{"replicas": 2, "partitionPolicy": "x"}]},
    {"tasks": [{"replicas": 2, "partitionPolicy": {"minPartitions": "2", "partitionSize": 2}}]},
    {"tasks": [{"replicas": 2, "partitionPolicy": {"minPartitions": 2, "partitionSize": "2"}}]},
    {"tasks": [{"replicas": 2, "minAvailable": "1"}]}, {"plugins": ["mpi"]}, {"plugins": "mpi"},
    {"queue": 5, "schedulerName": [], "maxRetry": "3", "minAvailable": {}},
])
def test_mutation_never_raises_and_leaves_wrong_types_alone(spec):
    """reference §3.2: the mutator does not raise on malformed jobs; a wrong-typed field stays
    as it is for the validator to deny."""
    j = {"kind": "Job", "metadata": {"name": "j"}, "spec": copy.deepcopy(spec)}
    out = J.default_job(j)
    for key, value in spec.items():
        if key != "tasks" or not isinstance(value, list):
            if not (key == "plugins" and isinstance(value, dict)):
                assert out["spec"][key] == value
    assert J.default_job({"kind": "Job", "spec": "x"}) == {"kind": "Job", "spec": "x"}
    assert J.default_job({"kind": "Job"}) == {"kind": "Job"}


# --- The validator list --------------------------------------------------------------------------

def test_validators_are_schema_then_create_then_update():
    """reference §3.1: the CRD schema (CREATE, UPDATE), then validateJobCreate or
    validateJobUpdate; DELETE is not validated."""
    assert J.validators(AdmissionConf()) == [J.admit_job_schema, J.admit_job_create, J.admit_job_update]
    j = defaulted(job(minAvailable=-1))
    assert J.admit_job_create(AdmissionRequest("DELETE", None, j, DEFAULT)) is None
    assert J.admit_job_update(AdmissionRequest("CREATE", j, None, DEFAULT)) is None
    assert J.admit_job_create(AdmissionRequest("UPDATE", j, j, DEFAULT)) is None


def test_delete_is_not_validated(c):
    """reference §3.1: no DELETE rule."""
    c.apply(job())
    c.delete("Job", "j")
    assert c.get("Job", "j") is None


# --- CRD schema: types ---------------------------------------------------------------------------

def test_check_job_shape_accepts_a_full_job():
    """reference §1.1 / §3.1 CRD schema: a job using every checked field passes."""
    t = task("a", 2, minAvailable=1, maxRetry=2, topologyPolicy="none", dependsOn={"name": [], "iteration": "all"},
             policies=[{"event": "PodEvicted", "action": "RestartJob", "timeout": "10s"}],
             partitionPolicy={"totalPartitions": 1, "partitionSize": 2, "minPartitions": 0,
                              "networkTopology": {"mode": "soft", "highestTierAllowed": 1}})
    c0 = container({"spec": {"tasks": [t]}})
    c0.update(env=[{"name": "A", "value": "1"}], ports=[{"name": "p", "containerPort": 80}], command=["x"],
              volumeMounts=[{"name": "v", "mountPath": "/v"}])
    t["template"]["spec"].update(volumes=[{"name": "v", "emptyDir": {}}], hostname="h", nodeSelector={"a": "b"})
    j = job("j", t, minAvailable=1, queue="default", maxRetry=1, ttlSecondsAfterFinished=0, minSuccess=1,
            priorityClassName="high", schedulerName="volcano", runningEstimate="1h",
            networkTopology={"mode": "hard", "highestTierName": "tier1"}, plugins={"svc": None, "env": []},
            volumes=[{"mountPath": "/data", "volumeClaimName": "pvc"}],
            policies=[{"exitCode": 3, "action": "AbortJob"}])
    assert J.check_job_shape(j) is None
    assert J.admit_job_schema(AdmissionRequest("CREATE", j, None, DEFAULT)) is None


MALFORMED: list[tuple[Callable[[dict], Any], str]] = [
    (lambda j: j.update(spec="x"), "spec: must be an object, got string"),
    (lambda j: j["spec"].update(tasks="abc"), "spec.tasks: must be an array, got string"),
    (lambda j: j["spec"].update(tasks={"a": 1}), "spec.tasks: must be an array, got object"),
    (lambda j: j["spec"]["tasks"].append("x"), "spec.tasks[1]: must be an object, got string"),
    (lambda j: j["spec"]["tasks"].append(None), "spec.tasks[1]: must not be null"),
    (lambda j: j["spec"]["tasks"][0].update(replicas="2"), "spec.tasks[0].replicas: must be an integer, got string"),
    (lambda j: j["spec"]["tasks"][0].update(replicas=1.5), "spec.tasks[0].replicas: must be an integer, got number"),
    (lambda j: j["spec"]["tasks"][0].update(replicas=True), "spec.tasks[0].replicas: must be an integer, got boolean"),
    (lambda j: j["spec"]["tasks"][0].update(minAvailable="1"),
     "spec.tasks[0].minAvailable: must be an integer, got string"),
    (lambda j: j["spec"]["tasks"][0].update(name=["a"]), "spec.tasks[0].name: must be a string, got array"),
    (lambda j: j["spec"]["tasks"][0].update(template=[]), "spec.tasks[0].template: must be an object, got array"),
    (lambda j: j["spec"]["tasks"][0]["template"].update(spec="x"),
     "spec.tasks[0].template.spec: must be an object, got string"),
    (lambda j: j["spec"]["tasks"][0]["template"]["spec"].update(containers={}),
     "spec.tasks[0].template.spec.containers: must be an array, got object"),
    (lambda j: container(j).update(image=5), "spec.tasks[0].template.spec.containers[0].image: must be a string"),
    (lambda j: container(j).update(ports="80"),
     "spec.tasks[0].template.spec.containers[0].ports: must be an array, got string"),
    (lambda j: container(j).update(env=[{"name": "A", "value": 1}]),
     "spec.tasks[0].template.spec.containers[0].env[0].value: must be a string, got integer"),
    (lambda j: container(j)["resources"]["requests"].update(cpu="lots"),
     "spec.tasks[0].template.spec.containers[0].resources.requests.cpu: quantities must match"),
    (lambda j: container(j)["resources"].update(limits=["1"]),
     "spec.tasks[0].template.spec.containers[0].resources.limits: must be an object, got array"),
    (lambda j: j["spec"]["tasks"][0]["template"].update(metadata={"annotations": {"x": 1}}),
     "spec.tasks[0].template.metadata.annotations.x: must be a string, got integer"),
    (lambda j: j["spec"]["tasks"][0]["template"]["spec"].update(hostNetwork="yes"),
     "spec.tasks[0].template.spec.hostNetwork: must be a boolean, got string"),
    (lambda j: j["spec"].update(policies={"event": "PodFailed"}), "spec.policies: must be an array, got object"),
    (lambda j: j["spec"].update(policies=["PodFailed"]), "spec.policies[0]: must be an object, got string"),
    (lambda j: j["spec"].update(policies=[{"events": [1], "action": "AbortJob"}]),
     "spec.policies[0].events[0]: must be a string, got integer"),
    (lambda j: j["spec"].update(policies=[{"events": "PodFailed", "action": "AbortJob"}]),
     "spec.policies[0].events: must be an array, got string"),
    (lambda j: j["spec"].update(policies=[{"exitCode": "1", "action": "AbortJob"}]),
     "spec.policies[0].exitCode: must be an integer, got string"),
    (lambda j: j["spec"].update(policies=[{"event": "PodFailed", "action": "AbortJob", "timeout": "abc"}]),
     'spec.policies[0].timeout: invalid duration "abc"'),
    (lambda j: j["spec"].update(policies=[{"event": "PodFailed", "action": "AbortJob", "timeout": [1]}]),
     "spec.policies[0].timeout: must be a string, got array"),
    (lambda j: j["spec"]["tasks"][0].update(policies=[{"event": 3, "action": "AbortJob"}]),
     "spec.tasks[0].policies[0].event: must be a string, got integer"),
    (lambda j: j["spec"].update(plugins=["svc"]), "spec.plugins: must be an object, got array"),
    (lambda j: j["spec"].update(plugins={"svc": "--x"}), "spec.plugins.svc: must be an array, got string"),
    (lambda j: j["spec"].update(plugins={"svc": [1]}), "spec.plugins.svc[0]: must be a string, got integer"),
    (lambda j: j["spec"].update(minAvailable="1"), "spec.minAvailable: must be an integer, got string"),
    (lambda j: j["spec"].update(maxRetry=[3]), "spec.maxRetry: must be an integer, got array"),
    (lambda j: j["spec"].update(queue=5), "spec.queue: must be a string, got integer"),
    (lambda j: j["spec"].update(ttlSecondsAfterFinished="10"),
     "spec.ttlSecondsAfterFinished: must be an integer, got string"),
    (lambda j: j["spec"].update(minSuccess=1.0), "spec.minSuccess: must be an integer, got number"),
    (lambda j: j["spec"].update(volumes={"mountPath": "/x"}), "spec.volumes: must be an array, got object"),
    (lambda j: j["spec"].update(volumes=[{"mountPath": 1}]), "spec.volumes[0].mountPath: must be a string"),
    (lambda j: j["spec"].update(volumes=[{"mountPath": "/x", "volumeClaim": "x"}]),
     "spec.volumes[0].volumeClaim: must be an object, got string"),
    (lambda j: j["spec"].update(networkTopology="hard"), "spec.networkTopology: must be an object, got string"),
    (lambda j: j["spec"]["tasks"][0].update(dependsOn={"name": "a"}),
     "spec.tasks[0].dependsOn.name: must be an array, got string"),
    (lambda j: j["spec"]["tasks"][0].update(partitionPolicy={"totalPartitions": "1"}),
     "spec.tasks[0].partitionPolicy.totalPartitions: must be an integer, got string"),
    (lambda j: j["metadata"].update(labels=["x"]), "metadata.labels: must be an object, got array"),
    (lambda j: j["metadata"].update(annotations={"a": None, "b": 2}), "metadata.annotations.b: must be a string"),
]


@pytest.mark.parametrize("mutate, message", MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_jobs_are_denied_naming_the_field(c, mutate, message):
    """reference §3.1 CRD schema: a wrong type anywhere is an AdmissionError naming the Job and
    the field; nothing is stored and nothing raises out of admission."""
    j = job("bad")
    mutate(j)
    e = denied(c, j)
    assert str(e).startswith(message)
    assert c.list("Job") == []


def test_malformed_updates_are_denied_naming_the_field(c):
    """reference §3.1 CRD schema: the types are checked on UPDATE too."""
    stored = c.apply(job("j"))
    bad = copy.deepcopy(stored)
    bad["spec"]["tasks"][0]["replicas"] = "3"
    with pytest.raises(volcanic.AdmissionError, match=r"^spec.tasks\[0\].replicas: must be an integer"):
        c.api.update(bad)
    assert c.get("Job", "j")["spec"]["tasks"][0]["replicas"] == 1


def test_check_job_shape_requires_a_name():
    """reference §3.1: the job has a metadata.name (the job name rule needs one)."""
    assert J.check_job_shape({"kind": "Job", "spec": {}}) == "metadata.name: Required value"
    assert J.check_job_shape("x") == "Job: must be an object, got string"


# --- CRD schema: values ---------------------------------------------------------------------------

def test_validate_queue_name():
    """reference §3.1 CRD: queue matches the DNS-1123 subdomain pattern (maxLength 253)."""
    assert J.validate_queue_name(job(queue="team-a.prod")) is None
    assert J.validate_queue_name(job(queue="Team_A")) == (
        'spec.queue: Invalid value: "Team_A": spec.queue in body should match '
        "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'")
    assert J.validate_queue_name(job(queue="a" * 254)) == "spec.queue: Too long: may not be longer than 253"


def test_validate_priority_class_name():
    """reference §3.1 CRD: priorityClassName matches the DNS-1123 subdomain pattern."""
    assert J.validate_priority_class_name(job(priorityClassName="high")) is None
    assert J.validate_priority_class_name(job(priorityClassName="High")).startswith(
        'spec.priorityClassName: Invalid value: "High": spec.priorityClassName in body should match')


def test_validate_scheduler_name():
    """reference §1.1 CRD: schedulerName maxLength 63."""
    assert J.validate_scheduler_name(job(schedulerName="s" * 63)) is None
    assert J.validate_scheduler_name(job(schedulerName="s" * 64)) == (
        "spec.schedulerName: Too long: may not be longer than 63")


def test_validate_min_success():
    """reference §1.1 CRD: minSuccess >= 1 when set."""
    assert J.validate_min_success(job(minSuccess=1)) is None and J.validate_min_success(job()) is None
    assert J.validate_min_success(job(minSuccess=0)) == (
        "spec.minSuccess: Invalid value: 0: spec.minSuccess in body should be greater than or equal to 1")


def test_validate_network_topology_fields():
    """reference §1.1 CRD: networkTopology.mode is hard|soft, highestTierAllowed >= 0 (job and
    partitionPolicy)."""
    assert J.validate_network_topology_fields(job(networkTopology={"mode": "soft", "highestTierAllowed": 0})) is None
    assert J.validate_network_topology_fields(job(networkTopology={"mode": "strict"})) == (
        'spec.networkTopology.mode: Unsupported value: "strict": supported values: "hard", "soft"')
    t = task("t", 2, partitionPolicy={"totalPartitions": 1, "partitionSize": 2,
                                      "networkTopology": {"highestTierAllowed": -1}})
    assert J.validate_network_topology_fields(job("j", t)).startswith(
        "spec.tasks[0].partitionPolicy.networkTopology.highestTierAllowed: Invalid value: -1:")


def test_validate_task_crd_fields():
    """reference §1.1 CRD: topologyPolicy, dependsOn.iteration enums; minPartitions >= 0."""
    assert J.validate_task_crd_fields(job("j", task(topologyPolicy="single-numa-node",
                                                    dependsOn={"iteration": "any"}))) is None
    assert J.validate_task_crd_fields(job("j", task(topologyPolicy="numa"))) == (
        'spec.tasks[0].topologyPolicy: Unsupported value: "numa": supported values: "none", "best-effort", '
        '"restricted", "single-numa-node"')
    assert J.validate_task_crd_fields(job("j", task(dependsOn={"iteration": "some"}))).startswith(
        'spec.tasks[0].dependsOn.iteration: Unsupported value: "some"')
    assert J.validate_task_crd_fields(job("j", task(partitionPolicy={"minPartitions": -1}))).startswith(
        "spec.tasks[0].partitionPolicy.minPartitions: Invalid value: -1:")


def test_crd_value_rules_run_in_the_schema_validator(c):
    """reference §3.1: the CRD's value rules deny through admission on CREATE."""
    e = denied(c, job("bad", queue="Bad"))
    assert str(e).startswith('spec.queue: Invalid value: "Bad"')


# --- CREATE: the rules that end the check -------------------------------------------------------

def test_validate_job_min_available():
    """reference §3.1 CRD/VAP: job minAvailable >= 0."""
    assert J.validate_job_min_available(defaulted(job(minAvailable=0))) is None
    assert J.validate_job_min_available(job(minAvailable=-1)) == "job 'minAvailable' must be >= 0"


def test_validate_max_retry():
    """reference §3.1 CRD/VAP: maxRetry >= 0."""
    assert J.validate_max_retry(job(maxRetry=0)) is None
    assert J.validate_max_retry(job(maxRetry=-1)) == "'maxRetry' cannot be less than zero"


def test_validate_ttl_seconds_after_finished():
    """reference §3.1 CRD/VAP: ttlSecondsAfterFinished >= 0."""
    assert J.validate_ttl_seconds_after_finished(job(ttlSecondsAfterFinished=0)) is None
    assert J.validate_ttl_seconds_after_finished(job(ttlSecondsAfterFinished=-5)) == (
        "'ttlSecondsAfterFinished' cannot be less than zero")


def test_validate_has_tasks(c):
    """reference §3.1: at least one task ("No task specified in job spec")."""
    assert J.validate_has_tasks(job()) is None
    assert J.validate_has_tasks(dict(job(), spec={"tasks": []})) == "No task specified in job spec"
    assert J.validate_has_tasks(dict(job(), spec={})) == "No task specified in job spec"
    assert str(denied(c, dict(job("bad"), spec={"tasks": []}))) == "No task specified in job spec"


def test_validate_mpi_master_task():
    """reference §3.1: with the mpi plugin its master task (--master, default "master") exists."""
    assert J.validate_mpi_master_task(job("j", task("master"), task("worker"), plugins={"mpi": []})) is None
    assert J.validate_mpi_master_task(job("j", task("launcher"), plugins={"mpi": ["--master=launcher"]})) is None
    assert J.validate_mpi_master_task(job("j", task("launcher"), plugins={"mpi": ["--master", "launcher"]})) is None
    assert J.validate_mpi_master_task(job("j", task("worker"), plugins={"mpi": []})) == (
        "The specified mpi master task was not found")
    assert J.validate_mpi_master_task(job("j", task("worker"), plugins={"mpi": ["--master=launcher"]})) == (
        "The specified mpi master task was not found")
    assert J.validate_mpi_master_task(job("j", task("worker"))) is None


def test_first_rules_end_the_check_at_once():
    """reference §3.1 (validateJobCreate): minAvailable, maxRetry, ttl, no task and the mpi
    master are answered alone; the other rules' messages are joined."""
    j = defaulted(job("j", task("a", 1, minAvailable=2), maxRetry=-1))
    assert J.validate_job_create(j, DEFAULT) == "'maxRetry' cannot be less than zero"
    j = defaulted(job("j", task("a", 1, minAvailable=2), task("a", 1), queue="nope"))
    assert J.validate_job_create(j, DEFAULT) == (
        "'minAvailable' is greater than 'replicas' in task: a, job: j; duplicated task name a; "
        "job 'minAvailable' should not be greater than total replicas in tasks; "
        'unable to find job queue: queues.scheduling.volcano.sh "nope" not found')
    assert J.validate_job_create(defaulted(job()), DEFAULT) is None


# --- CREATE: per task ---------------------------------------------------------------------------------

def test_validate_task_replicas():
    """reference §3.1 CRD/VAP: task replicas >= 0."""
    j = job("j", task("a", 0))
    assert J.validate_task_replicas(j, 0, j["spec"]["tasks"][0]) is None
    j = job("j", task("a", -1))
    assert J.validate_task_replicas(j, 0, j["spec"]["tasks"][0]) == "'replicas' < 0 in task: a, job: j"


def test_validate_task_min_available(c):
    """reference §3.1: task.minAvailable <= replicas, and >= 0."""
    j = job("j", task("a", 2, minAvailable=2))
    assert J.validate_task_min_available(j, 0, j["spec"]["tasks"][0]) is None
    j = job("j", task("a", 2, minAvailable=3))
    assert J.validate_task_min_available(j, 0, j["spec"]["tasks"][0]) == (
        "'minAvailable' is greater than 'replicas' in task: a, job: j")
    j = job("j", task("a", 2, minAvailable=-1))
    assert J.validate_task_min_available(j, 0, j["spec"]["tasks"][0]) == "'minAvailable' < 0 in task: a, job: j"
    assert "'minAvailable' is greater than 'replicas' in task: a, job: bad" in str(
        denied(c, job("bad", task("a", 2, minAvailable=3), minAvailable=1)))


@pytest.mark.parametrize("partition, replicas, min_available, message", [
    ({"totalPartitions": 2, "partitionSize": 4}, 8, None, None),
    ({"totalPartitions": 2, "partitionSize": 4, "minPartitions": 1}, 8, None, None),
    ({"totalPartitions": 4, "partitionSize": 2, "minPartitions": 2}, 8, 4, None),
    ({"totalPartitions": 0, "partitionSize": 8}, 8, None, "'TotalPartitions' must be greater than 0"),
    ({"totalPartitions": 8, "partitionSize": -1}, 8, None, "'PartitionSize' must be greater than 0"),
    ({"totalPartitions": 2, "partitionSize": 3}, 8, None, "'Replicas' are not equal to TotalPartitions*PartitionSize"),
    ({"totalPartitions": 4, "partitionSize": 2, "minPartitions": 1}, 8, 4,
     "'MinAvailable' is not equal to MinPartitions*PartitionSize"),
])
def test_validate_task_partition_policy(partition, replicas, min_available, message):
    """reference §3.1 partitionPolicy: totalPartitions > 0, partitionSize > 0, replicas ==
    totalPartitions*partitionSize, minAvailable == minPartitions*partitionSize."""
    extra = {} if min_available is None else {"minAvailable": min_available}
    j = defaulted(job("j", task("a", replicas, partitionPolicy=partition, **extra)))
    got = J.validate_task_partition_policy(j, 0, j["spec"]["tasks"][0])
    assert got == (None if message is None else f"{message} in task: a, job: j")


def test_validate_task_name(c):
    """reference §3.1 (webhook, CRD): the task name is an RFC 1123 label of at most 63 characters."""
    j = job("j", task("ok-1"))
    assert J.validate_task_name(j, 0, j["spec"]["tasks"][0]) is None
    j = job("j", task("Bad_Name"))
    assert J.validate_task_name(j, 0, j["spec"]["tasks"][0]).startswith(
        'spec.tasks[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of')
    j = job("j", task("a" * 64))
    assert "must be no more than 63 characters" in J.validate_task_name(j, 0, j["spec"]["tasks"][0])
    assert "a lowercase RFC 1123 label" in str(denied(c, job("bad", task("Bad"))))


def test_validate_task_name_unique(c):
    """reference §3.1: task names are unique ("duplicated task name")."""
    j = job("j", task("a"), task("b"), task("a"))
    assert J.validate_task_name_unique(j, 1, j["spec"]["tasks"][1]) is None
    assert J.validate_task_name_unique(j, 2, j["spec"]["tasks"][2]) == "duplicated task name a"
    assert "duplicated task name a" in str(denied(c, job("bad", task("a"), task("a"))))


def test_validate_task_policies():
    """reference §3.1: a task's policies follow the policy rules (path spec.tasks[i].policies)."""
    j = job("j", task("a", policies=[{"event": "PodEvicted", "action": "RestartTask"}]))
    assert J.validate_task_policies(j, 0, j["spec"]["tasks"][0]) is None
    j = job("j", task("a", policies=[{"event": "OutOfSync", "action": "RestartTask"}]))
    assert J.validate_task_policies(j, 0, j["spec"]["tasks"][0]).startswith(
        'spec.tasks[0].policies: Invalid value: "OutOfSync": invalid policy event; valid events are [')


def test_validate_pod_name():
    """reference §3.1: the pod name <job>-<task>-<index> is a qualified name (<= 63 characters)."""
    j = job("j" * 30, task("t" * 30))
    assert J.validate_pod_name(j, 0, j["spec"]["tasks"][0]) is None
    j = job("j" * 31, task("t" * 30))
    assert J.validate_pod_name(j, 0, j["spec"]["tasks"][0]) == (
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
    got = J.validate_task_template(j, 0, j["spec"]["tasks"][0])
    if message is None:
        assert got is None
    else:
        assert got.startswith(message)


def test_validate_task_template_reports_every_error_as_volcano_does():
    """reference §3.1: all the template's errors, after "spec.task[<i>].", each ending "."."""
    j = job("j", task("a"))
    container(j).update(name="", image="")
    assert J.validate_task_template(j, 0, j["spec"]["tasks"][0]) == (
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
    assert J.validate_task_topology_policy(j, 0, j["spec"]["tasks"][0]) == message


def test_validate_task_topology_policy_checks_init_containers():
    """reference §3.1: init containers count too (container index after the containers)."""
    j = job("j", task("a", topologyPolicy="best-effort"))
    container(j)["resources"] = _guaranteed()
    j["spec"]["tasks"][0]["template"]["spec"]["initContainers"] = [
        {"name": "init", "image": "x", "resources": _guaranteed(cpu="250m")}]
    assert J.validate_task_topology_policy(j, 0, j["spec"]["tasks"][0]) == (
        "the cpu request isn't  an integer in spec.task[0] container[1].")


def test_pod_qos():
    """Kubernetes' GetPodQOS as the topology rule uses it."""
    assert J.pod_qos([({}, {})]) == "BestEffort"
    g = _guaranteed()
    assert J.pod_qos([(g["requests"], g["limits"])]) == "Guaranteed"
    assert J.pod_qos([(g["requests"], g["limits"]), ({"cpu": "1"}, {})]) == "Burstable"
    assert J.pod_qos([({"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"})]) == "Burstable"


# --- CREATE: the job ----------------------------------------------------------------------------------

def test_validate_network_topology(c):
    """reference §3.1: highestTierAllowed and highestTierName are not both set (job, and each
    task's partitionPolicy)."""
    assert J.validate_network_topology(job(networkTopology={"mode": "hard", "highestTierName": "x"})) is None
    assert J.validate_network_topology(job(networkTopology={"highestTierAllowed": 1, "highestTierName": "x"})) == (
        "must not specify 'highestTierAllowed' and 'highestTierName' in networkTopology simultaneously")
    t = task("a", 2, partitionPolicy={"totalPartitions": 1, "partitionSize": 2,
                                      "networkTopology": {"highestTierAllowed": 1, "highestTierName": "x"}})
    assert J.validate_network_topology(job("j", t)) == (
        "in task 'a' partitionPolicy: must not specify 'highestTierAllowed' and 'highestTierName' in "
        "networkTopology simultaneously")
    assert "in networkTopology simultaneously" in str(
        denied(c, job("bad", networkTopology={"highestTierAllowed": 1, "highestTierName": "x"})))


def test_validate_job_name():
    """reference §3.1: the job name is a qualified name."""
    assert J.validate_job_name(job("My.job_1")) is None
    assert J.validate_job_name(job("-bad")).startswith(
        "create job with name -bad validate failed [name part must consist of alphanumeric characters")


def test_validate_total_replicas(c):
    """reference §3.1: sum(replicas) >= job.minAvailable."""
    assert J.validate_total_replicas(job("j", task("a", 2), task("b", 1), minAvailable=3)) is None
    assert J.validate_total_replicas(job("j", task("a", 2), minAvailable=3)) == (
        "job 'minAvailable' should not be greater than total replicas in tasks")
    assert str(denied(c, job("bad", task("a", 2), minAvailable=3))) == (
        "job 'minAvailable' should not be greater than total replicas in tasks")


def test_validate_job_policies(c):
    """reference §3.1: the job's policies follow the policy rules (path spec.policies)."""
    assert J.validate_job_policies(job(policies=[{"event": "PodFailed", "action": "RestartJob"}])) is None
    message = J.validate_job_policies(job(policies=[{"event": "PodFailed", "action": "SyncJob"}]))
    assert message.startswith('spec.policies: Invalid value: "SyncJob": invalid policy action; valid events are [')
    assert "invalid policy action" in str(denied(c, job("bad", policies=[{"event": "PodFailed",
                                                                           "action": "EnqueueJob"}])))


@pytest.mark.parametrize("name", J.VOLCANO_PLUGINS)
def test_validate_plugins_registered_accepts_volcanos_plugins(name):
    """reference §3.1: every plugin Volcano registers is accepted (hcclrank and ray too,
    although volcanic's controller does not implement them)."""
    assert J.validate_plugins_registered(job(plugins={name: []})) is None


def test_validate_plugins_registered(c):
    """reference §3.1: an unknown plugin name is refused ("unable to find job plugin")."""
    assert J.validate_plugins_registered(job(plugins={"foo": [], "bar": [], "env": []})) == (
        "unable to find job plugin: bar; unable to find job plugin: foo")
    assert str(denied(c, job("bad", plugins={"foo": []}))) == "unable to find job plugin: foo"


def test_validate_plugin_arguments(c):
    """volcanic's addition to reference §3.1: arguments of an implemented plugin must parse
    (the controller would otherwise fail the job)."""
    assert J.validate_plugin_arguments(job(plugins={"svc": ["--disable-network-policy=true"], "ray": ["--x"]})) is None
    assert J.validate_plugin_arguments(job(plugins={"svc": ["--bogus"]})) == 'plugin "svc": unknown argument "--bogus"'
    assert str(denied(c, job("bad", plugins={"pytorch": ["--port=abc"]}))).startswith('plugin "pytorch": invalid value')


@pytest.mark.parametrize("volumes, message", [
    ([{"mountPath": "/a", "volumeClaimName": "pvc-1"}, {"mountPath": "/b", "volumeClaim": {}}], None),
    ([{"volumeClaimName": "pvc"}], "mountPath is required"),
    ([{"mountPath": "/a", "volumeClaimName": "p"}, {"mountPath": "/a", "volumeClaimName": "q"}],
     "duplicated mountPath: /a"),
    ([{"mountPath": "/a"}], "either VolumeClaim or VolumeClaimName must be specified"),
    ([{"mountPath": "/a", "volumeClaimName": "p", "volumeClaim": {}}],
     "conflict: If you want to use an existing PVC, just specify VolumeClaimName.If you want to create a new PVC, "
     "you do not need to specify VolumeClaimName"),
    ([{"mountPath": "/a", "volumeClaimName": "Bad_PVC"}],
     "invalid VolumeClaimName Bad_PVC : [a lowercase RFC 1123 subdomain must consist of"),
])
def test_validate_volumes(volumes, message):
    """reference §3.1 volumes: mountPath required and unique; volumeClaim xor volumeClaimName;
    volumeClaimName a valid PVC name."""
    got = J.validate_volumes(job(volumes=volumes))
    assert got == message if message is None else got.startswith(message)


def test_validate_queue_unit():
    """reference §3.1 queue: exists, Open, not root, a leaf."""
    lister = Lister(open_queue("root"), open_queue("parent", parent="root"), open_queue("child", parent="parent"),
                    dict(queue("closed", parent="root"), status={"state": "Closed"}), queue("new", parent="root"))
    assert J.validate_queue(job(queue="child"), lister) is None
    assert J.validate_queue(job(queue="nope"), lister) == (
        'unable to find job queue: queues.scheduling.volcano.sh "nope" not found')
    assert J.validate_queue(job(queue="closed"), lister) == (
        "can only submit job to queue with state `Open`, queue `closed` status is `Closed`")
    assert J.validate_queue(job(queue="new"), lister) == (
        "can only submit job to queue with state `Open`, queue `new` status is ``")
    assert J.validate_queue(job(queue="root"), lister) == "can not submit job to root queue"
    assert J.validate_queue(job(queue="parent"), lister) == (
        "can only submit job to leaf queue, queue `parent` has 1 child queues")
    assert J.validate_queue(job(queue="nope"), None) is None  # no lister: not checked


def test_validate_queue_in_the_cluster(c):
    """reference §3.1 queue, end to end: a new queue is Open only once the queue controller
    synced it (inside run()); root and non-leaf queues are refused."""
    c.apply([queue("parent"), queue("child", parent="parent")])
    assert str(denied(c, job("bad", queue="child"))) == (
        "can only submit job to queue with state `Open`, queue `child` status is ``")
    c.run(0)
    assert c.apply(job("ok", queue="child"))["spec"]["queue"] == "child"
    assert str(denied(c, job("bad", queue="parent"))) == (
        "can only submit job to leaf queue, queue `parent` has 1 child queues")
    assert str(denied(c, job("bad", queue="root"))) == "can not submit job to root queue"
    assert str(denied(c, job("bad", queue="ghost"))) == (
        'unable to find job queue: queues.scheduling.volcano.sh "ghost" not found')


def test_validate_task_dependencies(c):
    """reference §3.1: with dependsOn the tasks form a DAG; a missing dependency fails too."""
    assert J.validate_task_dependencies(job("j", task("a", dependsOn={"name": ["b"]}), task("b"))) is None
    assert J.validate_task_dependencies(job("j", task("a"), task("b"))) is None
    message = "job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG)"
    assert J.validate_task_dependencies(job("j", task("a", dependsOn={"name": ["b"]}),
                                            task("b", dependsOn={"name": ["a"]}))) == message
    assert J.validate_task_dependencies(job("j", task("a", dependsOn={"name": ["c"]}), task("b"))) == message
    assert J.validate_task_dependencies(job("j", task("a", dependsOn={"name": ["a"]}))) == message
    assert str(denied(c, job("bad", task("a", dependsOn={"name": ["a"]})))) == message


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


# --- UPDATE ---------------------------------------------------------------------------------------------

def _update(old: dict, edit: Callable[[dict], Any]) -> dict:
    new = copy.deepcopy(old)
    edit(new)
    return new


OLD = defaulted(job("j", task("a", 2), task("b", 2),
                    volumes=[{"mountPath": "/d", "volumeClaim": {"resources": {}}}]))


def test_validate_update_task_replicas():
    """reference §3.1 UPDATE: replicas >= 0."""
    assert J.validate_update_task_replicas(OLD) is None
    assert J.validate_update_task_replicas(_update(OLD, lambda j: j["spec"]["tasks"][1].update(replicas=-1))) == (
        "'replicas' must be >= 0 in task: b")


def test_validate_update_task_min_available():
    """reference §3.1 UPDATE: 0 <= task.minAvailable <= replicas."""
    assert J.validate_update_task_min_available(OLD) is None
    assert J.validate_update_task_min_available(
        _update(OLD, lambda j: j["spec"]["tasks"][0].update(minAvailable=3))) == (
        "'minAvailable' must be <= 'replicas' in task: a")
    assert J.validate_update_task_min_available(
        _update(OLD, lambda j: j["spec"]["tasks"][0].update(minAvailable=-1))) == (
        "'minAvailable' must be >= 0 in task: a")


def test_validate_update_partition_policy():
    """reference §3.1 UPDATE: partitionPolicy is re-checked."""
    old = defaulted(job("j", task("a", 4, partitionPolicy={"totalPartitions": 2, "partitionSize": 2})))
    assert J.validate_update_partition_policy(old) is None
    assert J.validate_update_partition_policy(_update(old, lambda j: j["spec"]["tasks"][0].update(replicas=6))) == (
        "'Replicas' are not equal to TotalPartitions*PartitionSize in task: a, job: j")


def test_validate_update_job_min_available():
    """reference §3.1 UPDATE: 0 <= job.minAvailable <= total replicas."""
    assert J.validate_update_job_min_available(OLD) is None
    assert J.validate_update_job_min_available(_update(OLD, lambda j: j["spec"].update(minAvailable=5))) == (
        "job 'minAvailable' must not be greater than total replicas")
    assert J.validate_update_job_min_available(_update(OLD, lambda j: j["spec"].update(minAvailable=-1))) == (
        "job 'minAvailable' must be >= 0")


def test_validate_update_task_count():
    """reference §3.1 UPDATE: the number of tasks cannot change."""
    assert J.validate_update_task_count(OLD, OLD) is None
    assert J.validate_update_task_count(OLD, _update(OLD, lambda j: j["spec"]["tasks"].pop())) == (
        "job updates may not add or remove tasks")


@pytest.mark.parametrize("edit, allowed", [
    (lambda j: j["spec"].update(minAvailable=3), True),
    (lambda j: j["spec"]["tasks"][0].update(replicas=5, minAvailable=4), True),
    (lambda j: j["spec"].update(priorityClassName="high"), True),
    (lambda j: j["spec"]["volumes"][0].update(volumeClaimName="j-pvc-abc"), True),  # the controller names it
    (lambda j: j["spec"].update(policies=[]), True),  # empty and unset are the same to Go
    (lambda j: j["spec"].update(queue="other"), False),
    (lambda j: j["spec"].update(maxRetry=5), False),
    (lambda j: j["spec"]["tasks"][0].update(maxRetry=5), False),
    (lambda j: j["spec"]["tasks"][0].update(name="c"), False),
    (lambda j: container(j, 1).update(image="other"), False),
    (lambda j: j["spec"].update(plugins={"env": []}), False),
    (lambda j: j["spec"]["volumes"][0].update(mountPath="/e"), False),
])
def test_validate_update_immutable_fields(edit, allowed):
    """reference §3.1 UPDATE: only minAvailable, tasks[*].replicas, tasks[*].minAvailable and
    priorityClassName may change; volumeClaimName is ignored where volumeClaim is set."""
    got = J.validate_update_immutable_fields(OLD, _update(OLD, edit))
    assert got == (None if allowed else J.UPDATE_FIELDS_MESSAGE)
    assert J.UPDATE_FIELDS_MESSAGE == ("job updates may not change fields other than `minAvailable`, "
                                       "`tasks[*].replicas under spec` and `PriorityClassName`")


def test_validate_job_update():
    """reference §3.1 UPDATE (validateJobUpdate): the value rules first, then the task count,
    then the fields that may not change; the first denial is the answer."""
    assert J.validate_job_update(OLD, copy.deepcopy(OLD)) is None
    new = _update(OLD, lambda j: (j["spec"]["tasks"].pop(), j["spec"].update(minAvailable=9)))
    assert J.validate_job_update(OLD, new) == "job 'minAvailable' must not be greater than total replicas"
    new = _update(OLD, lambda j: (j["spec"]["tasks"].pop(), j["spec"].update(queue="x", minAvailable=2)))
    assert J.validate_job_update(OLD, new) == "job updates may not add or remove tasks"
    new = _update(OLD, lambda j: j["spec"].update(networkTopology={"highestTierAllowed": 1, "highestTierName": "x"}))
    assert J.validate_job_update(OLD, new).startswith("must not specify 'highestTierAllowed' and 'highestTierName'")


def test_job_updates_through_the_cluster(c):
    """reference §3.1 UPDATE end to end: scaling a stored job is admitted; changing its image,
    its tasks or a minAvailable above the replicas is refused and the stored job stays. (The
    mutator runs on CREATE only, so an update that drops a defaulted field such as a task's
    maxRetry changes it, as with Volcano.)"""
    c.apply(job("j", task("a", 2)))
    scaled = copy.deepcopy(c.get("Job", "j"))
    scaled["spec"]["tasks"][0].update(replicas=3, minAvailable=3)
    scaled["spec"]["minAvailable"] = 3
    assert c.api.update(scaled)["spec"]["tasks"][0]["replicas"] == 3
    for edit, message in [
            (lambda j: container(j).update(image="other"), J.UPDATE_FIELDS_MESSAGE),
            (lambda j: j["spec"]["tasks"][0].pop("maxRetry"), J.UPDATE_FIELDS_MESSAGE),
            (lambda j: j["spec"]["tasks"].append(task("b")), "job updates may not add or remove tasks"),
            (lambda j: j["spec"].update(minAvailable=4), "job 'minAvailable' must not be greater than total replicas")]:
        before = c.get("Job", "j")
        changed = copy.deepcopy(before)
        edit(changed)
        with pytest.raises(volcanic.AdmissionError) as e:
            c.api.update(changed)
        assert str(e.value) == message and (e.value.kind, e.value.namespace, e.value.name) == ("Job", NS, "j")
        assert c.get("Job", "j") == before


def test_the_controllers_pvc_name_update_is_admitted(c):
    """reference §3.1 UPDATE: the job controller writes volumeClaimName for a volumeClaim; the
    update is admitted (no controller error)."""
    c.apply({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
             "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    c.apply(job("j", task("a", 1), volumes=[{"mountPath": "/data", "volumeClaim": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]))
    c.run(2)
    assert c.get("Job", "j")["spec"]["volumes"][0].get("volumeClaimName")


def test_a_valid_job_runs(c):
    """reference §3.1 / §3.2: a job passing every rule is stored defaulted and runs."""
    c.apply({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
             "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    t = task("worker", 2, policies=[{"event": "PodEvicted", "action": "RestartJob", "timeout": "-5s"}])
    t["template"]["metadata"] = {"annotations": {"volcanic/sim-duration": "5s"}}
    c.apply(job("j", t, plugins={"env": [], "svc": []}, policies=[{"exitCode": 2, "action": "AbortJob"}]))
    assert c.run_until(lambda cl: ((cl.get("Job", "j").get("status") or {}).get("state") or {}).get("phase")
                       == "Completed", limit=60)


def test_admission_through_the_chain_never_raises_on_odd_objects():
    """reference §3.1: the Job rules deny or allow, never raise, whatever arrives."""
    chain = volcano_chain(AdmissionConf())
    lister = DEFAULT
    odd: list[Any] = [{"kind": "Job", "metadata": {"name": "j"}, "spec": v}
                      for v in (None, 1, [], {"tasks": [[]]}, {"tasks": [{"template": {"spec": {"containers": [1]}}}]},
                                {"tasks": [{"name": "t", "replicas": 1, "template": {"spec": {
                                    "containers": [{"name": "m", "image": "x", "resources": "x"}]}}}]})]
    for obj in odd:
        for op, old in (("CREATE", None), ("UPDATE", copy.deepcopy(obj))):
            try:
                chain.admit(op, copy.deepcopy(obj), old, lister)
            except volcanic.AdmissionError:
                pass
