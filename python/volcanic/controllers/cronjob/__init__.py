"""Volcano's cronjob-controller (the batch group's v1alpha1 CronJob): Jobs made from a template
on a cron schedule (controller.py), when they are due (timing.py, over the cron grammar of
schedule.py) and how they are named and tracked (jobs.py). Admission:
volcanic.admission.cronjobs. Docs: docs/workflows.md."""

from volcanic.controllers.cronjob.controller import CronJobController

__all__ = ["CronJobController"]
