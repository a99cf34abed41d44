"""Volcano's jobflow-controller (pkg/controllers/jobflow/) on a MemoryStore with a virtual clock
and no job controller: the tests write the Jobs' phases themselves, as Volcano's unit tests put
Jobs in the informer. Each of Volcano's cases is named in its docstring by file (in
pkg/controllers/jobflow/ of Volcano v1.15.1), test and case; the other tests are scenarios of
the same code (state/*.go, handleJobFlowErr)."""

from __future__ import annotations

from controller_helpers import Harness
from volcanic.controllers.jobflow import JobFlowController
from volcanic.controllers.jobflow.controller import MAX_REQUEUE, FlowRequest, job_from_template
from volcanic.controllers.jobflow.naming import (
    CREATED_BY_JOB_FLOW,
    CREATED_BY_JOB_TEMPLATE,
    job_name,
    jobflow_of,
    object_string,
)
from volcanic.controllers.jobflow.status import flow_status, running_histories
from volcanic.kube.clock import rfc3339
from volcanic.kube.kinds import KINDS

FLOW_API = KINDS["JobFlow"].api_version
JOB_API = KINDS["Job"].api_version


def jobflow(name="jobflow", flows=("jobtemplate",), policy="retain", ns="default", depends=None):
    """A JobFlow of `flows`; depends: flow -> its targets."""
    depends = depends or {}
    spec_flows = [dict({"name": f}, **({"dependsOn": {"targets": depends[f]}} if f in depends else {}))
                  for f in flows]
    return {"apiVersion": FLOW_API, "kind": "JobFlow", "metadata": {"name": name, "namespace": ns},
            "spec": {"flows": spec_flows, "jobRetainPolicy": policy}}


def template(name, ns="default"):
    return {"apiVersion": FLOW_API, "kind": "JobTemplate", "metadata": {"name": name, "namespace": ns},
            "spec": {"queue": "default", "minAvailable": 1,
                     "tasks": [{"name": "t", "replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}]}}


def flow_job(flow_name, flow, ns="default", phase=None, uid="", **status):
    """A Job as the controller makes it for `flow` of JobFlow `flow_name` (labels, annotations and
    controller reference), in `phase`."""
    marks = {CREATED_BY_JOB_TEMPLATE: object_string(ns, flow), CREATED_BY_JOB_FLOW: object_string(ns, flow_name)}
    job = {"apiVersion": JOB_API, "kind": "Job",
           "metadata": {"name": job_name(flow_name, flow), "namespace": ns, "labels": dict(marks),
                        "annotations": dict(marks),
                        "ownerReferences": [{"apiVersion": FLOW_API, "kind": "JobFlow", "name": flow_name, "uid": uid,
                                             "controller": True, "blockOwnerDeletion": True}]},
           "spec": {}}
    if phase is not None:
        job["status"] = {"state": {"phase": phase}, **status}
    return job


class Flows(Harness):
    """The harness with the jobflow-controller, and what its tests read and write."""

    def __init__(self):
        super().__init__(JobFlowController)
        self.controller = self.controllers[0]

    def create(self, obj):
        stored = self.store.create(obj)
        if obj.get("status"):
            stored = self.store.update_status(dict(stored, status=obj["status"]))
        return stored

    def set_phase(self, name, phase, ns="default", **status):
        job = self.store.get("Job", name, ns)
        return self.store.update_status(dict(job, status=dict(job.get("status") or {}, state={"phase": phase},
                                                                **status)))

    def flow(self, name="jobflow", ns="default"):
        return self.store.get("JobFlow", name, ns)

    def status(self, name="jobflow", ns="default"):
        return self.flow(name, ns).get("status") or {}

    def phase(self, name="jobflow", ns="default"):
        return self.status(name, ns).get("state", {}).get("phase")

    def jobs(self, ns="default"):
        return sorted(j["metadata"]["name"] for j in self.store.list("Job", ns))


# ---------------------------------------------------------------------------------------------
# Volcano's unit cases

def _synced_over_a_job_in(phase):
    h = Flows()
    f = h.create(jobflow())
    h.create(template("jobtemplate"))
    h.create(flow_job("jobflow", "jobtemplate", phase=phase, uid=f["metadata"]["uid"]))
    created = h.store.get("Job", "jobflow-jobtemplate", "default")["metadata"]["creationTimestamp"]
    h.settle()
    return h, created


def _expected_status(phase, listed, flow_phase, now):
    name = "jobflow-jobtemplate"
    status = {listed: [name], "jobStatusList": [{"name": name, "state": phase, "startTimestamp": now,
                                                  "runningHistories": [{"startTimestamp": now, "state": phase}]}],
              "conditions": {name: {"phase": phase, "createTime": now}}, "state": {"phase": flow_phase}}
    return status


def test_sync_writes_the_status_of_a_running_job():
    """jobflow_controller_action_test.go TestSyncJobFlowFunc "SyncJobFlow success case": a running Job
    makes the flow Running."""
    h, created = _synced_over_a_job_in("Running")
    assert h.status() == _expected_status("Running", "runningJobs", "Running", created)
    assert h.runner.errors == []


def test_sync_writes_the_status_of_a_failed_job():
    """jobflow_controller_action_test.go TestSyncJobFlowFunc "SyncJobFlow success case with vcjob
    Status Failed"."""
    h, created = _synced_over_a_job_in("Failed")
    assert h.status() == _expected_status("Failed", "failedJobs", "Failed", created)


def test_sync_writes_the_status_of_a_terminated_job():
    """jobflow_controller_action_test.go TestSyncJobFlowFunc "SyncJobFlow success case with vcjob
    Status Terminated": a terminated Job fails a Pending flow."""
    h, created = _synced_over_a_job_in("Terminated")
    assert h.status() == _expected_status("Terminated", "terminatedJobs", "Failed", created)


def test_running_histories_keep_an_unchanged_phase():
    """jobflow_controller_action_test.go TestGetRunningHistoriesFunc "GetRunningHistories success
    case": the Job is still Completed, so its history is the one the status has."""
    start, end = rfc3339(1_000), rfc3339(1_001)
    previous = [{"name": "vcJobA", "state": "Completed", "startTimestamp": start, "endTimestamp": end,
                 "runningHistories": [{"startTimestamp": start, "endTimestamp": end, "state": "Completed"}]}]
    job = {"metadata": {"name": "vcJobA"}, "status": {"state": {"phase": "Completed"}}}
    assert running_histories(previous, job, 5_000) == [{"startTimestamp": start, "endTimestamp": end,
                                                         "state": "Completed"}]


def test_running_histories_close_and_open_on_a_phase_change():
    """getRunningHistories: a new phase ends the last entry now and starts another; a Job
    without an entry gets its first once it has a phase."""
    previous = [{"name": "j", "runningHistories": [{"startTimestamp": rfc3339(10), "state": "Pending"}]}]
    running = {"metadata": {"name": "j"}, "status": {"state": {"phase": "Running"}}}
    assert running_histories(previous, running, 20) == [
        {"startTimestamp": rfc3339(10), "endTimestamp": rfc3339(20), "state": "Pending"},
        {"startTimestamp": rfc3339(20), "state": "Running"}]
    assert running_histories([], running, 30) == [{"startTimestamp": rfc3339(30), "state": "Running"}]
    assert running_histories([], {"metadata": {"name": "j"}}, 30) == []


def test_only_the_jobflows_own_jobs_are_its_jobs():
    """jobflow_controller_action_test.go TestGetAllJobsCreatedByJobFlow "GetAllJobsCreatedByJobFlow
    success case": another JobFlow reusing the same JobTemplates runs beside it; its Jobs are not
    this one's."""
    h = Flows()
    for flow_name in ("jobflowa", "jobflowb"):
        for flow in ("a", "b"):
            h.create(flow_job(flow_name, flow, phase="Completed" if flow == "a" else "Running", retryCount=1))
    h.settle()
    jobs = h.controller.jobs_of(jobflow("jobflowa", flows=("a", "b"), depends={"b": ["a"]}))
    assert sorted(j["metadata"]["name"] for j in jobs) == ["jobflowa-a", "jobflowa-b"]


def test_the_status_of_all_jobs():
    """jobflow_controller_action_test.go TestGetAllJobStatusFunc "GetAllJobStatus success case": lists
    by phase, an entry per Job (its creation, creation + running duration, retries, history) and its
    condition; the flow's phase is left as it was (none)."""
    a_created, b_created = 1_700_000_000, 1_700_000_001
    f = jobflow("jobflowa", flows=("a", "b"), depends={"b": ["a"]})
    a = flow_job("jobflowa", "a", phase="Completed", retryCount=1, runningDuration="1s")
    b = flow_job("jobflowa", "b", phase="Running")
    a["metadata"]["creationTimestamp"], b["metadata"]["creationTimestamp"] = rfc3339(a_created), rfc3339(b_created)
    now = 1_700_000_100
    assert flow_status(f, [a, b], now) == {
        "runningJobs": ["jobflowa-b"], "completedJobs": ["jobflowa-a"],
        "jobStatusList": [
            {"name": "jobflowa-a", "state": "Completed", "startTimestamp": rfc3339(a_created),
             "endTimestamp": rfc3339(a_created + 1), "restartCount": 1,
             "runningHistories": [{"startTimestamp": rfc3339(now), "state": "Completed"}]},
            {"name": "jobflowa-b", "state": "Running", "startTimestamp": rfc3339(b_created),
             "runningHistories": [{"startTimestamp": rfc3339(now), "state": "Running"}]}],
        "conditions": {"jobflowa-a": {"phase": "Completed", "createTime": rfc3339(a_created), "runningDuration": "1s"},
                       "jobflowa-b": {"phase": "Running", "createTime": rfc3339(b_created)}},
        "state": {}}


def test_a_job_from_its_template():
    """jobflow_controller_action_test.go TestLoadJobTemplateAndSetJobFunc "LoadJobTemplateAndSetJob
    success case": the JobFlow as controller and blocking owner, both createdBy labels and
    annotations, the template's spec."""
    f = dict(jobflow(), metadata={"name": "jobflow", "namespace": "default", "uid": "u-1"})
    job = job_from_template(f, "jobtemplate", template("jobtemplate"))
    marks = {CREATED_BY_JOB_TEMPLATE: "default.jobtemplate", CREATED_BY_JOB_FLOW: "default.jobflow"}
    assert job["metadata"] == {"name": "jobflow-jobtemplate", "namespace": "default", "labels": marks,
                               "annotations": marks,
                               "ownerReferences": [{"apiVersion": FLOW_API, "kind": "JobFlow", "name": "jobflow",
                                                    "uid": "u-1", "controller": True, "blockOwnerDeletion": True}]}
    assert job["spec"] == template("jobtemplate")["spec"] and job["kind"] == "Job"


def test_deploy_creates_a_flow_without_targets():
    """jobflow_controller_action_test.go TestDeployJobFunc "DeployJob success case": the flow's Job is
    created from its template, with a Normal Event Created."""
    h = Flows()
    h.create(template("jobtemplate"))
    h.create(jobflow())
    h.settle()
    assert h.jobs() == ["jobflow-jobtemplate"]
    assert h.store.get("Job", "jobflow-jobtemplate", "default")["spec"] == template("jobtemplate")["spec"]
    assert [e["message"] for e in h.events("Created", "jobflow")] == ["create a job named jobflow-jobtemplate!"]
    assert h.runner.errors == []


def test_delete_leaves_jobs_that_are_not_the_flows():
    """jobflow_controller_action_test.go TestDeleteAllJobsCreateByJobFlowFunc: a Job without the
    JobFlow's label is not deleted, and the deletion succeeds."""
    h = Flows()
    h.create({"apiVersion": JOB_API, "kind": "Job", "metadata": {"name": "jobtemplate", "namespace": "default"},
              "spec": {}})
    h.settle()
    h.controller.delete_jobs(jobflow())
    assert h.jobs() == ["jobtemplate"]


def test_an_added_jobflow_is_one_request():
    """jobflow_controller_handler_test.go TestAddJobFlowFunc "AddJobFlow Success"."""
    h = Flows()
    h.controller.add_jobflow(jobflow("jobflow1", ns="test"))
    assert len(h.controller.queue) == 1


def test_an_update_to_a_succeeded_jobflow_with_delete_is_a_request():
    """jobflow_controller_handler_test.go TestUpdateJobFlowFunc "UpdateJobFlow Success": Succeed,
    jobRetainPolicy delete, a new resourceVersion."""
    h = Flows()
    old = jobflow("jobflow1", flows=(), policy="delete", ns="test")
    old["metadata"]["resourceVersion"] = "1223"
    old["status"] = {"state": {"phase": "Succeed"}}
    new = dict(old, metadata={"name": "jobflow1", "namespace": "test"})
    h.controller.update_jobflow(old, new)
    assert len(h.controller.queue) == 1


def test_other_jobflow_updates_are_not_requests():
    """updateJobFlow: the same version, a flow not Succeed, or one that retains its Jobs."""
    h = Flows()
    old = jobflow("f", policy="delete")
    old["metadata"]["resourceVersion"], old["status"] = "1", {"state": {"phase": "Succeed"}}
    h.controller.update_jobflow(old, old)
    h.controller.update_jobflow(old, dict(old, metadata={**old["metadata"], "resourceVersion": "2"},
                                          status={"state": {"phase": "Running"}}))
    h.controller.update_jobflow(old, dict(old, metadata={**old["metadata"], "resourceVersion": "2"},
                                          spec={"jobRetainPolicy": "retain"}))
    assert len(h.controller.queue) == 0


def test_an_update_to_a_job_of_a_jobflow_is_a_request():
    """jobflow_controller_handler_test.go TestUpdateJobFunc "UpdateJob Success": a Job the JobFlow
    controls, at a new resourceVersion, asks for a sync of the JobFlow."""
    h = Flows()
    old = flow_job("jobflow1", "t", ns="test")
    old["metadata"]["resourceVersion"] = "1223"
    new = flow_job("jobflow1", "t", ns="test")
    h.controller.update_job(old, new)
    assert list(h.controller.queue._items) == [FlowRequest("test", "jobflow1")]


def test_updates_to_other_jobs_are_not_requests():
    """updateJob: a Job no JobFlow controls, or the same version."""
    h = Flows()
    mine = flow_job("f", "t")
    mine["metadata"]["resourceVersion"] = "1"
    h.controller.update_job(mine, mine)
    plain = {"kind": "Job", "metadata": {"name": "j", "namespace": "default", "resourceVersion": "2"}}
    h.controller.update_job(dict(plain, metadata={**plain["metadata"], "resourceVersion": "1"}), plain)
    assert len(h.controller.queue) == 0


def test_equal_requests_wait_once():
    """jobflow_controller_handler_test.go TestEnqueueJobFlow "de-duplicate" and "no-deduplicate"."""
    h = Flows()
    h.controller.queue.add(FlowRequest("test", "name1"))
    h.controller.queue.add(FlowRequest("test", "name1"))
    assert len(h.controller.queue) == 1
    h.controller.queue.add(FlowRequest("test", "name2"))
    assert len(h.controller.queue) == 2


def test_names_and_marks():
    """jobflow_controller_util_test.go TestGetJobNameFunc "GetJobName success case",
    TestGetConnectionOfJobAndJobTemplate, TestGetJobFlowNameByJob."""
    assert job_name("jobFlowA", "jobTemplateA") == "jobFlowA-jobTemplateA"
    assert object_string("default", "flow") == "default.flow"
    job = {"metadata": {"ownerReferences": [{"apiVersion": FLOW_API, "kind": "JobFlow", "name": "jobflowtest"}]}}
    assert jobflow_of(job) == "jobflowtest"
    assert jobflow_of({"metadata": {}}) == ""


# ---------------------------------------------------------------------------------------------
# Scenarios: dependencies, phases, retention, failures

def test_a_flow_waits_until_every_target_completed():
    """deployJob and judge: b waits for a Completed (a Running a is not enough), c for a and b."""
    h = Flows()
    for name in "abc":
        h.create(template(name))
    h.create(jobflow(flows=("a", "b", "c"), depends={"b": ["a"], "c": ["a", "b"]}))
    h.settle()
    assert h.jobs() == ["jobflow-a"] and h.phase() == "Pending"
    h.set_phase("jobflow-a", "Running")
    h.settle()
    assert h.jobs() == ["jobflow-a"] and h.phase() == "Running"
    h.set_phase("jobflow-a", "Completed")
    h.settle()
    assert h.jobs() == ["jobflow-a", "jobflow-b"]
    h.set_phase("jobflow-b", "Completing")  # not Completed yet
    h.settle()
    assert h.jobs() == ["jobflow-a", "jobflow-b"]
    h.set_phase("jobflow-b", "Completed")
    h.settle()
    assert h.jobs() == ["jobflow-a", "jobflow-b", "jobflow-c"]
    assert h.phase() == "Running"  # two of three completed
    h.set_phase("jobflow-c", "Completed")
    h.settle()
    assert h.phase() == "Succeed" and h.status()["completedJobs"] == ["jobflow-a", "jobflow-b", "jobflow-c"]
    assert h.jobs() == ["jobflow-a", "jobflow-b", "jobflow-c"]  # retain: the Jobs stay
    assert h.runner.errors == []


def test_delete_policy_deletes_the_jobs_once_succeeded_and_keeps_the_status():
    """syncJobFlow with jobRetainPolicy delete: the Succeed status is written, its update asks for
    another sync, which deletes the Jobs and writes nothing."""
    h = Flows()
    h.create(template("a"))
    h.create(jobflow(flows=("a",), policy="delete"))
    h.settle()
    h.set_phase("jobflow-a", "Running")
    h.settle()
    h.set_phase("jobflow-a", "Completed")
    h.settle()
    assert h.phase() == "Succeed" and h.jobs() == []
    assert h.status()["completedJobs"] == ["jobflow-a"] and h.status()["jobStatusList"][0]["state"] == "Completed"


def test_a_failed_job_fails_a_running_flow_and_failed_is_final():
    """state/running.go: a failed Job fails a Running flow; state/failed.go: nothing more is done."""
    h = Flows()
    for name in "ab":
        h.create(template(name))
    h.create(jobflow(flows=("a", "b"), depends={"b": ["a"]}))
    h.settle()
    h.set_phase("jobflow-a", "Running")
    h.settle()
    h.set_phase("jobflow-a", "Failed")
    h.settle()
    assert h.phase() == "Failed" and h.status()["failedJobs"] == ["jobflow-a"]
    written = h.flow()["metadata"]["resourceVersion"]
    h.set_phase("jobflow-a", "Running")
    h.settle()
    assert h.flow()["metadata"]["resourceVersion"] == written and h.jobs() == ["jobflow-a"]


def test_a_terminated_job_leaves_a_running_flow_running():
    """state/running.go fails a Running flow only for failed Jobs (state/pending.go also for
    terminated ones); the Job is listed in terminatedJobs."""
    h = Flows()
    for name in "ab":
        h.create(template(name))
    h.create(jobflow(flows=("a", "b"), depends={"b": ["a"]}))
    h.settle()
    h.set_phase("jobflow-a", "Running")
    h.settle()
    h.set_phase("jobflow-a", "Terminated")
    h.settle()
    assert h.phase() == "Running" and h.status()["terminatedJobs"] == ["jobflow-a"]


def test_unknown_phases_are_listed_as_unknown():
    """getAllJobStatus: Completing and Terminating Jobs are listed nowhere, others in unKnowJobs."""
    h = Flows()
    for name in "abc":
        h.create(template(name))
    h.create(jobflow(flows=("a", "b", "c")))
    h.settle()
    for name, phase in (("a", "Completing"), ("b", "Aborted"), ("c", "Restarting")):
        h.set_phase(f"jobflow-{name}", phase)
    h.settle()
    status = h.status()
    assert status["unKnowJobs"] == ["jobflow-b", "jobflow-c"] and "jobflow-a" in status["conditions"]
    assert not {"pendingJobs", "runningJobs", "completedJobs", "failedJobs", "terminatedJobs"} & set(status)
    assert status["state"] == {"phase": "Pending"}


def test_histories_follow_the_phases_on_the_clock():
    """getRunningHistories over time: each phase the controller saw, from the sync that saw it."""
    h = Flows()
    h.create(template("a"))
    h.create(jobflow(flows=("a",)))
    h.settle()
    start = h.clock.now()
    h.set_phase("jobflow-a", "Pending")
    h.settle()
    h.run(5)
    h.set_phase("jobflow-a", "Running")
    h.settle()
    h.run(7)
    h.set_phase("jobflow-a", "Completed", runningDuration="12s")
    h.settle()
    entry, = h.status()["jobStatusList"]
    assert entry["runningHistories"] == [
        {"startTimestamp": rfc3339(start), "endTimestamp": rfc3339(start + 5), "state": "Pending"},
        {"startTimestamp": rfc3339(start + 5), "endTimestamp": rfc3339(start + 12), "state": "Running"},
        {"startTimestamp": rfc3339(start + 12), "state": "Completed"}]
    assert entry["endTimestamp"] == rfc3339(start + 12)


def test_a_missing_template_is_retried_then_a_warning():
    """handleJobFlowErr: the JobTemplate's NotFound fails the sync, which is retried with back-off
    --max-requeue-num times and then dropped with a Warning Event SyncJobFlow."""
    h = Flows()
    h.create(jobflow(flows=("a",)))
    h.settle()
    assert h.jobs() == [] and h.events("SyncJobFlow") == []
    h.run(600)
    warning, = h.events("SyncJobFlow", "jobflow")
    assert warning["type"] == "Warning"
    assert warning["message"] == ('SyncJobFlow JobFlow failed for sync jobflow jobflow failed for '
                                  'jobtemplate.flow.volcano.sh "a" not found, event is OutOfSync, action is SyncJobFlow')
    assert h.controller._failures == {}  # forgotten
    assert "status" not in h.flow()  # no sync got as far as the status
    assert MAX_REQUEUE == 15


def test_a_template_created_while_retries_last_is_used():
    """The retries read the JobTemplate again: one created meanwhile starts the flow."""
    h = Flows()
    h.create(jobflow(flows=("a",)))
    h.settle()
    h.run(10)
    h.create(template("a"))
    h.run(120)
    assert h.jobs() == ["jobflow-a"] and h.events("SyncJobFlow") == []


def test_an_invalid_phase_is_retried_then_a_warning():
    """handleJobFlow: NewState has no state for the phase: "jobflow NAME state {PHASE} is invalid"."""
    h = Flows()
    h.create(template("a"))
    f = h.create(jobflow(flows=("a",)))
    h.store.update_status(dict(f, status={"state": {"phase": "Bogus"}}))
    h.run(600)
    warning, = h.events("SyncJobFlow", "jobflow")
    assert warning["message"] == "SyncJobFlow JobFlow failed for jobflow jobflow state {Bogus} is invalid"
    assert h.jobs() == []


def test_a_deleted_jobflow_is_no_request_failure():
    """handleJobFlow: a JobFlow gone by the time its request runs is done with."""
    h = Flows()
    h.controller.queue.add(FlowRequest("default", "gone"))
    h.settle()
    assert h.runner.errors == [] and h.controller._failures == {}
