"""The controllers of Volcano's controller-manager, in one list: `volcanic controller-manager`
runs them on an API server, and the embedded cluster runs them beside the Kubernetes
controllers it plays itself (the PersistentVolume controller, the kubelets)."""

from __future__ import annotations

from volcanic.controllers.cronjob import CronJobController
from volcanic.controllers.gc import GarbageCollector
from volcanic.controllers.hypernode import HyperNodeController
from volcanic.controllers.job.controller import JobController
from volcanic.controllers.jobflow import JobFlowController, JobTemplateController
from volcanic.controllers.podgroup import PodGroupController
from volcanic.controllers.queue import QueueController
from volcanic.controllers.queuebinding import QueueBindingController
from volcanic.controllers.runtime import Context, Controller


def volcano_controllers(ctx: Context) -> list[Controller]:
    """Volcano's job, PodGroup, queue, garbage-collector, hyperNode, jobflow, jobtemplate and
    cronjob controllers, and volcanic's own queuebinding controller."""
    return [JobController(ctx), PodGroupController(ctx), QueueController(ctx), GarbageCollector(ctx),
            HyperNodeController(ctx), JobFlowController(ctx), JobTemplateController(ctx), CronJobController(ctx),
            QueueBindingController(ctx)]
