"""Volcano's Job admission (reference §3.1 validate, §3.2 mutate): python/volcanic/admission/jobs.py
(entry points, defaults, the rules on the whole job) and the shared helpers in admission/common.py;
the schema, per-task and UPDATE rules are tested in test_admission_job_schema.py,
test_admission_job_tasks.py and test_admission_job_updates.py.

Unit tests call each rule function directly on a job already defaulted by the mutator (as
the webhook sees it); end-to-end tests go through volcanic.Cluster().apply, where a denial is
a volcanic.AdmissionError naming the object and nothing is stored.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

# c is a pytest fixture, taken by name.
from admission_job_helpers import DEFAULT, Lister, c, defaulted, denied, job, open_queue, queue, task
import volcanic
from volcanic.admission import AdmissionConf, common, volcano_chain
from volcanic.admission import jobs as J
from volcanic.admission.chain import AdmissionRequest

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


# --- CREATE: the rules that end the check -------------------------------------------------------

# Job minAvailable, maxRetry and ttlSecondsAfterFinished >= 0 are the CRD schema's (see
# test_crd_schema.py), as in Volcano v1.15.1.


def test_validate_has_tasks(c):
    """reference §3.1: at least one task ("No task specified in job spec")."""
    assert J.validate_has_tasks(job()) is None
    assert J.validate_has_tasks(dict(job(), spec={"tasks": []})) == "No task specified in job spec"
    assert J.validate_has_tasks(dict(job(), spec={})) == "No task specified in job spec"
    # A Go client omits an empty task list (omitempty): the webhook answers (admission e2e
    # "Should reject job creation with no tasks specified"); an explicit [] is the CRD's
    # (minItems 1), refused by the API server before admission.
    assert str(denied(c, dict(job("bad"), spec={}))) == "No task specified in job spec"
    with pytest.raises(volcanic.InvalidObject, match=r'^Job.batch.volcano.sh "bad" is invalid: spec.tasks: '
                                                     r"Invalid value: 0: spec.tasks in body should have at least 1 items$"):
        c.apply(dict(job("bad"), spec={"tasks": []}))


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
    """reference §3.1 (validateJobCreate): no task and the mpi master are answered alone; the
    other rules' messages are joined."""
    j = defaulted(job("j", task("a", 1, minAvailable=2), plugins={"mpi": []}))
    assert J.validate_job_create(j, DEFAULT) == "The specified mpi master task was not found"
    j = defaulted(job("j", task("a", 1, minAvailable=2), task("a", 1), queue="nope"))
    assert J.validate_job_create(j, DEFAULT) == (
        "'minAvailable' is greater than 'replicas' in task: a, job: j; duplicated task name a; "
        "job 'minAvailable' should not be greater than total replicas in tasks; "
        'unable to find job queue: queues.scheduling.volcano.sh "nope" not found')
    assert J.validate_job_create(defaulted(job()), DEFAULT) is None


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


def test_plugin_arguments_are_not_validated(c):
    """reference §3.1: as Volcano's webhook, only plugin names are checked; the plugins read
    their arguments leniently (admission e2e "Should not override existing plugins": svc
    with --enable-networking, which Volcano's svc plugin does not know)."""
    j = job("j", plugins={"tensorflow": [], "svc": ["--enable-networking"], "ssh": ["--no-root"],
                          "pytorch": ["--port=abc"]})
    stored = c.apply(j)
    assert stored["spec"]["plugins"]["svc"] == ["--enable-networking"]
    assert stored["spec"]["plugins"]["ssh"] == ["--no-root"] and "tensorflow" in stored["spec"]["plugins"]


@pytest.mark.parametrize("volumes, message", [
    ([{"mountPath": "/a", "volumeClaimName": "pvc-1"}, {"mountPath": "/b", "volumeClaim": {}}], None),
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
    """reference §3.1 volumes: mountPath unique; volumeClaim xor volumeClaimName;
    volumeClaimName a valid PVC name (mountPath required and non-empty is the CRD's)."""
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
