"""Volcano's workflow controllers (JobFlow and JobTemplate, v1alpha1): the jobflow-controller runs a
JobFlow's flows as Jobs made from JobTemplates, each once the flows it depends on completed
(controller.py; the status and phases in status.py, the names and marks of its Jobs in
naming.py), and the jobtemplate-controller lists the Jobs made from each JobTemplate
(template.py). Admission: volcanic.admission.jobflows. Docs: docs/workflows.md."""

from volcanic.controllers.jobflow.controller import JobFlowController
from volcanic.controllers.jobflow.template import JobTemplateController

__all__ = ["JobFlowController", "JobTemplateController"]
