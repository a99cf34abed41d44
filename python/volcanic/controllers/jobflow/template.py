"""Volcano's jobtemplate-controller (pkg/controllers/jobtemplate/): a JobTemplate's
status.jobDependsOnList names the Jobs made from it.

Requests are (namespace, name) of a JobTemplate: one added, or the template a Job added names
in its `volcano.sh/createdByJobTemplate` label (`<namespace>.<name>`; a value that does not
split in two at the dots is ignored, as Volcano ignores it). A sync lists the Jobs of the
template's namespace with that label and, when there are any, writes their names; with none,
the status is left as it is (Volcano never empties it: a deleted Job stays listed until the
next Job made from the template).

Failures (a conflict on the status) are retried with client-go's back-off up to
--max-requeue-num (15) times, then dropped with a Warning Event on the JobTemplate. Volcano's
request for a JobTemplate carries no action, so its Event has an empty reason; volcanic's
says SyncJobTemplate, the action flow/v1alpha1 defines for it.
"""

from __future__ import annotations

from typing import Hashable

from volcanic.controllers.events import controller_manager_recorder
from volcanic.controllers.jobflow.naming import CREATED_BY_JOB_TEMPLATE, object_string
from volcanic.controllers.runtime import Context, Controller
from volcanic.kube.errors import StoreError
from volcanic.kube.informers import Handler
from volcanic.kube.objects import Obj, label, meta_of, status_of

MAX_REQUEUE = 15  # --max-requeue-num
SYNC_JOBTEMPLATE = "SyncJobTemplate"


class JobTemplateController(Controller):
    name = "jobtemplate-controller"

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._recorder = controller_manager_recorder(ctx)

    # Event handlers (jobtemplate_controller_handler.go).
    def handlers(self) -> dict[str, Handler]:
        return {"JobTemplate": Handler(on_add=self.add_jobtemplate), "Job": Handler(on_add=self.add_job)}

    def add_jobtemplate(self, template: Obj) -> None:
        meta = meta_of(template)
        self.queue.add((meta.get("namespace") or "default", meta["name"]))

    def add_job(self, job: Obj) -> None:
        mark = label(job, CREATED_BY_JOB_TEMPLATE)
        if not isinstance(mark, str) or not mark:
            return
        parts = mark.split(".")
        if len(parts) == 2:
            self.queue.add((parts[0], parts[1]))

    # Requests (jobtemplate_controller.go, _action.go).
    def process(self, request: Hashable) -> None:
        assert isinstance(request, tuple)
        namespace, name = request
        template = self.ctx.lister.get("JobTemplate", name, namespace)
        if template is None:
            return  # deleted
        try:
            self.sync(template)
        except StoreError as e:
            self._failed(request, template, f"sync jobTemplate {name} failed for {e}")
            return
        self.forget(request)

    def _failed(self, request: Hashable, template: Obj, message: str) -> None:
        if self.retry_later(request, limit=MAX_REQUEUE) is None:
            self._recorder.event(template, "Warning", SYNC_JOBTEMPLATE, f"{SYNC_JOBTEMPLATE} JobTemplate failed for "
                                                                         f"{message}")

    def sync(self, template: Obj) -> None:
        """syncJobTemplate: the names of the Jobs made from the template, when there are any."""
        meta = meta_of(template)
        mark = object_string(meta["namespace"], meta["name"])
        names = [job["metadata"]["name"] for job in self.ctx.lister.list("Job", meta["namespace"])
                 if label(job, CREATED_BY_JOB_TEMPLATE) == mark]
        if not names or status_of(template).get("jobDependsOnList") == names:
            return  # nothing to say, or said already (the API server would store nothing new)
        self.ctx.store.update_status(dict(template, status=dict(status_of(template), jobDependsOnList=names)))
