"""Volcano's jobflow-controller (pkg/controllers/jobflow/: jobflow_controller.go, _handler.go,
_action.go, state/).

Requests (FlowRequest, de-duplicated while waiting): a JobFlow added; a JobFlow updated to a
new version that is Succeed with jobRetainPolicy delete; a Job controlled by a JobFlow updated
to a new version (its phase may have moved).

A sync of a JobFlow (syncJobFlow), unless it is Failed or Terminating:
- Succeed with jobRetainPolicy delete: the Jobs it created are deleted, and nothing else;
- otherwise each flow whose Job does not exist yet gets it (`<jobflow>-<flow>`, from the
  JobTemplate `<flow>` of the JobFlow's namespace, volcanic.controllers.jobflow.naming) once
  every dependsOn target's Job is Completed (a flow without targets at once), with a Normal
  Event Created; then the status is written (volcanic.controllers.jobflow.status), with the
  phase the JobFlow's state gives it; a Running JobFlow made Succeed and a Pending one made
  Failed are counted in Context.extra["jobflow_metrics"] (volcanic.controllers.metrics).
What the Job's pods, PodGroup and phase become is the job controller's, as for any Job.

Failures (a missing JobTemplate, a Job refused by admission, a conflict on the status, an
invalid phase) are retried with client-go's back-off up to --max-requeue-num (15) times, then
dropped with a Warning Event `SyncJobFlow` on the JobFlow, as handleJobFlowErr does; the
JobFlow then waits for its next event (a JobTemplate created later does not wake it, as in
Volcano). `dependsOn.probe` and `patch` are stored but, as in Volcano v1.15.1, not acted on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable

from volcanic.controllers.events import controller_manager_recorder
from volcanic.controllers.jobflow import status as flow_state
from volcanic.controllers.jobflow.naming import (
    CREATED_BY_JOB_FLOW,
    CREATED_BY_JOB_TEMPLATE,
    JOBFLOW_API_VERSION,
    controlled_by_jobflow,
    job_name,
    jobflow_of,
    object_string,
)
from volcanic.controllers.runtime import Context, Controller
from volcanic.kube.errors import AdmissionError, AlreadyExists, InvalidObject, NotFound, StoreError
from volcanic.kube.informers import Handler
from volcanic.kube.keys import JOB_API_VERSION
from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj, clone, dig, label, meta_of, spec_of, status_of

MAX_REQUEUE = 15  # --max-requeue-num
SYNC_JOBFLOW, OUT_OF_SYNC = "SyncJobFlow", "OutOfSync"  # flow/v1alpha1 Action and Event
# What a sync may fail with and a retry may cure.
SYNC_ERRORS = (StoreError, AdmissionError, InvalidObject)


@dataclass(frozen=True)
class FlowRequest:
    """apis.FlowRequest for a JobFlow."""

    namespace: str
    jobflow: str
    action: str = SYNC_JOBFLOW
    event: str = OUT_OF_SYNC


class FlowError(Exception):
    """A failed request (handleJobFlow's error), with Volcano's wording."""


def job_from_template(jobflow: Obj, flow: str, template: Obj) -> Obj:
    """loadJobTemplateAndSetJob: the Job of `flow`, the template's spec under the names and
    the controller reference Volcano gives it."""
    meta = meta_of(jobflow)
    namespace = meta["namespace"]
    marks = {CREATED_BY_JOB_TEMPLATE: object_string(namespace, flow),
             CREATED_BY_JOB_FLOW: object_string(namespace, meta["name"])}
    owner = {"apiVersion": JOBFLOW_API_VERSION, "kind": "JobFlow", "name": meta["name"], "uid": meta.get("uid", ""),
             "controller": True, "blockOwnerDeletion": True}
    return {"apiVersion": JOB_API_VERSION, "kind": "Job",
            "metadata": {"name": job_name(meta["name"], flow), "namespace": namespace, "labels": dict(marks),
                         "annotations": dict(marks), "ownerReferences": [owner]},
            "spec": clone(spec_of(template))}


class JobFlowController(Controller):
    name = "jobflow-controller"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._recorder = controller_manager_recorder(ctx)

    # Event handlers (jobflow_controller_handler.go).
    def handlers(self) -> dict[str, Handler]:
        return {"JobFlow": Handler(on_add=self.add_jobflow, on_update=self.update_jobflow),
                "Job": Handler(on_update=self.update_job)}

    def add_jobflow(self, jobflow: Obj) -> None:
        meta = meta_of(jobflow)
        self.queue.add(FlowRequest(meta.get("namespace") or "default", meta["name"]))

    def update_jobflow(self, old: Obj, new: Obj) -> None:
        """Only a Succeed JobFlow whose Jobs are to be deleted is synced again on an update."""
        if meta_of(new).get("resourceVersion") == meta_of(old).get("resourceVersion"):
            return
        if flow_state.phase_of(new) != flow_state.SUCCEED or spec_of(new).get("jobRetainPolicy") != "delete":
            return
        self.add_jobflow(new)

    def update_job(self, old: Obj, new: Obj) -> None:
        if not controlled_by_jobflow(new) or meta_of(new).get("resourceVersion") == meta_of(old).get("resourceVersion"):
            return
        jobflow = jobflow_of(new)
        if jobflow:
            self.queue.add(FlowRequest(meta_of(new).get("namespace") or "default", jobflow))

    # Requests (jobflow_controller.go).
    def process(self, request: Hashable) -> None:
        assert isinstance(request, FlowRequest)
        try:
            self._handle(request)
        except FlowError as e:
            self._failed(request, str(e))
            return
        self.forget(request)

    def _handle(self, request: FlowRequest) -> None:
        """handleJobFlow: the JobFlow's state runs the request's action."""
        jobflow = self.ctx.lister.get("JobFlow", request.jobflow, request.namespace)
        if jobflow is None:
            return  # deleted
        phase = flow_state.phase_of(jobflow)
        if phase in flow_state.NOT_SYNCED:
            return
        if phase not in flow_state.SYNCED:
            raise FlowError(f"jobflow {request.jobflow} state {{{phase}}} is invalid")
        try:
            self.sync(clone(jobflow))
        except SYNC_ERRORS as e:
            raise FlowError(f"sync jobflow {request.jobflow} failed for {e}, event is {request.event}, "
                            f"action is {request.action}") from e

    def _failed(self, request: FlowRequest, message: str) -> None:
        """handleJobFlowErr: requeued with back-off, then dropped with a Warning Event."""
        if self.retry_later(request, limit=MAX_REQUEUE) is not None:
            return
        jobflow = self.ctx.lister.get("JobFlow", request.jobflow, request.namespace)
        if jobflow is not None:
            self._recorder.event(jobflow, "Warning", request.action, f"{request.action} JobFlow failed for {message}")

    # The sync (jobflow_controller_action.go).
    def sync(self, jobflow: Obj) -> None:
        """syncJobFlow on a JobFlow of ours (a copy)."""
        phase = flow_state.phase_of(jobflow)
        if spec_of(jobflow).get("jobRetainPolicy") == "delete" and phase == flow_state.SUCCEED:
            self.delete_jobs(jobflow)
            return
        self.deploy_jobs(jobflow)
        status = flow_state.flow_status(jobflow, self.jobs_of(jobflow), self.ctx.clock.now())
        status["state"]["phase"] = flow_state.next_phase(jobflow, status)
        if status != status_of(jobflow):  # the API server would not store an unchanged status either
            self.ctx.store.update_status(dict(jobflow, status=status))
            self.count_outcome(jobflow, status["state"]["phase"])

    def count_outcome(self, jobflow: Obj, phase: str) -> None:
        """UpdateJobFlowSucceed / UpdateJobFlowFailed, once the status write that makes the move
        has landed. Volcano counts when the phase is decided, before writing, so a write that
        conflicts (a sync on a stale cache) and is retried counts twice there; here a stale
        write conflicts and counts nothing: each move is counted once."""
        metrics = self.ctx.extra.get("jobflow_metrics")
        if metrics is not None and (flow_state.phase_of(jobflow), phase) in flow_state.COUNTED:
            metrics.count(meta_of(jobflow)["namespace"], phase)

    def deploy_jobs(self, jobflow: Obj) -> None:
        """deployJob: each flow's Job, in the order of the flows, once its targets completed."""
        meta = meta_of(jobflow)
        for flow in spec_of(jobflow).get("flows") or ():
            name = job_name(meta["name"], flow["name"])
            if self.ctx.lister.get("Job", name, meta["namespace"]) is not None:
                continue
            targets = dig(flow, "dependsOn", "targets") or ()
            if all(self._completed(jobflow, target) for target in targets):
                self.create_job(jobflow, flow["name"])

    def _completed(self, jobflow: Obj, target: str) -> bool:
        """judge, for one target: its Job exists and is Completed."""
        meta = meta_of(jobflow)
        job = self.ctx.lister.get("Job", job_name(meta["name"], target), meta["namespace"])
        return job is not None and flow_state.job_phase(job) == "Completed"

    def create_job(self, jobflow: Obj, flow: str) -> None:
        """createJob: from the JobTemplate named after the flow; one that exists already is
        left as it is."""
        namespace = meta_of(jobflow)["namespace"]
        template = self.ctx.lister.get("JobTemplate", flow, namespace)
        if template is None:
            raise NotFound("JobTemplate", namespace, flow, KINDS["JobTemplate"].not_found(flow, plural=False))
        job = job_from_template(jobflow, flow, template)
        try:
            self.ctx.store.create(job)
        except AlreadyExists:
            return
        self._recorder.event(jobflow, "Normal", "Created", f"create a job named {job['metadata']['name']}!")

    def jobs_of(self, jobflow: Obj) -> list[Obj]:
        """getAllJobsCreatedByJobFlow: the Jobs labelled as the JobFlow's, by name."""
        meta = meta_of(jobflow)
        mark = object_string(meta["namespace"], meta["name"])
        return [job for job in self.ctx.lister.list("Job", meta["namespace"])
                if label(job, CREATED_BY_JOB_FLOW) == mark]

    def delete_jobs(self, jobflow: Obj) -> None:
        """deleteAllJobsCreatedByJobFlow (their pods and PodGroups follow by ownerReference).
        A Job gone already is done with (Volcano fails the sync on it and retries until its
        lister has caught up)."""
        for job in self.jobs_of(jobflow):
            try:
                self.ctx.store.delete("Job", job["metadata"]["name"], job["metadata"]["namespace"])
            except NotFound:
                continue
