"""Volcano's jobtemplate-controller (pkg/controllers/jobtemplate/) on a MemoryStore with a virtual
clock: status.jobDependsOnList names the Jobs made from a JobTemplate. Each of Volcano's cases
is named in its docstring by file (in pkg/controllers/jobtemplate/ of Volcano v1.15.1), test
and case."""

from __future__ import annotations

from controller_helpers import Harness
from volcanic.controllers.jobflow import JobFlowController, JobTemplateController
from volcanic.controllers.jobflow.naming import CREATED_BY_JOB_TEMPLATE, object_string
from volcanic.kube.kinds import KINDS

FLOW_API = KINDS["JobFlow"].api_version


def template(name, ns="test"):
    return {"apiVersion": FLOW_API, "kind": "JobTemplate", "metadata": {"name": name, "namespace": ns},
            "spec": {"tasks": [{"name": "t", "replicas": 1, "template": {}}]}}


def job(name, ns="test", mark=None):
    meta = {"name": name, "namespace": ns}
    if mark is not None:
        meta["labels"] = {CREATED_BY_JOB_TEMPLATE: mark}
        meta["annotations"] = {CREATED_BY_JOB_TEMPLATE: mark}
    return {"apiVersion": KINDS["Job"].api_version, "kind": "Job", "metadata": meta, "spec": {}}


class Templates(Harness):
    def __init__(self, *more):
        super().__init__(JobTemplateController, *more)
        self.controller = self.controllers[0]

    def depends_on(self, name, ns="test"):
        return (self.store.get("JobTemplate", name, ns).get("status") or {}).get("jobDependsOnList")


def test_sync_lists_the_jobs_made_from_the_template():
    """jobtemplate_controller_action_test.go TestSyncJobTemplateFunc "SyncJobTemplate success case"."""
    h = Templates()
    h.store.create(job("job1", mark=object_string("test", "jobtemplate")))
    h.store.create(template("jobtemplate"))
    h.settle()
    assert h.depends_on("jobtemplate") == ["job1"]
    assert h.runner.errors == []


def test_an_added_template_is_one_request():
    """jobtemplate_controller_handler_test.go TestAddJobTemplateFunc "AddJobTemplate Success"."""
    h = Templates()
    h.controller.add_jobtemplate(template("jobtemplate1"))
    assert len(h.controller.queue) == 1


def test_an_added_job_with_a_two_part_mark_is_one_request():
    """jobtemplate_controller_handler_test.go TestAddJob "AddJob Success": the label's value split
    at the dots gives two parts (here "volcano" and "sh/createdByJobTemplate"), so it is a request,
    whatever it names."""
    h = Templates()
    h.controller.add_job(job("job1", mark="volcano.sh/createdByJobTemplate"))
    assert list(h.controller.queue._items) == [("volcano", "sh/createdByJobTemplate")]


def test_other_added_jobs_are_not_requests():
    """addJob: no label, an empty one, or one that does not split in two."""
    h = Templates()
    for mark in (None, "", "test", "test.a.b"):
        h.controller.add_job(job("j", mark=mark))
    assert len(h.controller.queue) == 0


def test_equal_requests_wait_once():
    """jobtemplate_controller_handler_test.go TestEnqueueJobTemplate "de-duplicate" and "no-deduplicate"."""
    h = Templates()
    h.controller.queue.add(("test", "name1"))
    h.controller.queue.add(("test", "name1"))
    assert len(h.controller.queue) == 1
    h.controller.queue.add(("test", "name2"))
    assert len(h.controller.queue) == 2


def test_the_template_string():
    """jobTemplate_controller_util_test.go TestGetConnectionOfJobAndJobTemplate "TestGetJobTemplateString"."""
    assert object_string("default", "flow") == "default.flow"


def test_without_jobs_the_status_is_not_written():
    """syncJobTemplate writes nothing when no Job is made from the template."""
    h = Templates()
    stored = h.store.create(template("lonely"))
    h.settle()
    assert h.store.get("JobTemplate", "lonely", "test")["metadata"]["resourceVersion"] == \
        stored["metadata"]["resourceVersion"]


def test_jobs_the_jobflow_controller_makes_are_listed():
    """Both controllers: each template used by two JobFlows lists both flows' Jobs, and only its own."""
    h = Templates(JobFlowController)
    for name in ("a", "b"):
        h.store.create(template(name, ns="default"))
    for flow in ("one", "two"):
        h.store.create({"apiVersion": FLOW_API, "kind": "JobFlow", "metadata": {"name": flow, "namespace": "default"},
                        "spec": {"flows": [{"name": "a"}, {"name": "b"}]}})
    h.settle()
    assert h.depends_on("a", "default") == ["one-a", "two-a"]
    assert h.depends_on("b", "default") == ["one-b", "two-b"]
    assert h.runner.errors == []
