"""How Volcano names and marks the Jobs a JobFlow creates (pkg/controllers/jobflow/constant.go
and jobflow_controller_util.go; pkg/controllers/jobtemplate/constant.go): a Job
`<jobflow>-<flow>` from the JobTemplate named after the flow, labelled and annotated with
`<namespace>.<name>` of both, and controlled by the JobFlow."""

from __future__ import annotations

from volcanic.kube.kinds import KINDS
from volcanic.kube.objects import Obj, meta_of

CREATED_BY_JOB_TEMPLATE = "volcano.sh/createdByJobTemplate"
CREATED_BY_JOB_FLOW = "volcano.sh/createdByJobFlow"
JOBFLOW_API_VERSION = KINDS["JobFlow"].api_version


def job_name(jobflow: str, flow: str) -> str:
    """getJobName: the Job a flow of a JobFlow runs."""
    return f"{jobflow}-{flow}"


def object_string(namespace: str, name: str) -> str:
    """GenerateObjectString / GetTemplateString: the value of the createdBy labels."""
    return f"{namespace}.{name}"


def controlled_by_jobflow(job: Obj) -> bool:
    """isControlledBy(job, JobFlowKind): the Job's controller reference is a JobFlow of
    JobFlow's API version."""
    for ref in meta_of(job).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref.get("apiVersion") == JOBFLOW_API_VERSION and ref.get("kind") == "JobFlow"
    return False


def jobflow_of(job: Obj) -> str:
    """getJobFlowNameByJob: the name of the first JobFlow owner whose apiVersion mentions
    volcano; "" when none."""
    for ref in meta_of(job).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("kind") == "JobFlow" and "volcano" in (ref.get("apiVersion") or ""):
            return ref.get("name") or ""
    return ""
