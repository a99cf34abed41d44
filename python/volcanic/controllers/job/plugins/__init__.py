"""Volcano's job plugins (reference §2.4): hooks that adapt a job's pods and create companion
objects when the job controller builds pods and initialises, updates or kills a job.

    plugins = plugins_of(job)            # from job.spec.plugins: {name: [arguments]}
    for p in plugins: p.on_pod_create(pod, job)   # before creating each pod
    for p in plugins: p.on_job_add(job, store)    # initiating a Pending job
    for p in plugins: p.on_job_update(job, store) # syncing a job past Pending
    for p in plugins: p.on_job_delete(job, store) # killing a job

The job hooks record job.status.controlledResources["plugin-<name>"]; the caller writes the
status. Volcano walks job.spec.plugins as a Go map, in random order; plugins_of() returns the
plugins sorted by name so runs are reproducible (the order only shows where two plugins touch
the same field, e.g. which env entries come first), hcclrank last: it reads the RANK env
another plugin (pytorch) may set, which in Volcano it sees or not depending on the draw.

As in Volcano, a plugin reads its arguments leniently: an unknown flag or a bad value is
logged and the flags read before it are kept (see common.parse_flags); only an unknown
plugin name, or arguments that are not a list of strings, is an error.
"""

from __future__ import annotations

from volcanic.controllers.job.plugins.common import JobPlugin, PluginError, job_key
from volcanic.controllers.job.plugins.env import EnvPlugin
from volcanic.controllers.job.plugins.hcclrank import HcclrankPlugin
from volcanic.controllers.job.plugins.mpi import MpiPlugin
from volcanic.controllers.job.plugins.pytorch import PytorchPlugin
from volcanic.controllers.job.plugins.ray import RayPlugin
from volcanic.controllers.job.plugins.ssh import SshPlugin
from volcanic.controllers.job.plugins.svc import SvcPlugin
from volcanic.controllers.job.plugins.tensorflow import TensorflowPlugin
from volcanic.kube.objects import Obj, spec_of

__all__ = ["JobPlugin", "PluginError", "PLUGINS", "plugins_of"]

# Volcano's registered job plugins (pkg/controllers/job/plugins/factory.go).
PLUGINS: dict[str, type[JobPlugin]] = {p.name: p for p in (
    EnvPlugin, SvcPlugin, SshPlugin, TensorflowPlugin, PytorchPlugin, MpiPlugin, HcclrankPlugin, RayPlugin)}
RUN_LAST = ("hcclrank",)   # plugins that read what the others write into a pod


def plugins_of(job: Obj) -> list[JobPlugin]:
    """The job's plugins, built from job.spec.plugins and sorted by name (RUN_LAST last). An
    unknown plugin name, or arguments that are not a list of strings, is a PluginError
    naming the job."""
    configured = spec_of(job).get("plugins") or {}
    if not isinstance(configured, dict):
        raise PluginError(f"job {job_key(job)}: spec.plugins must map plugin names to argument "
                          f"lists, got {configured!r}")
    unknown = sorted(str(name) for name in configured if name not in PLUGINS)
    if unknown:
        raise PluginError(f'job {job_key(job)}: unknown plugin "{unknown[0]}"; known plugins: '
                          f"{', '.join(sorted(PLUGINS))}")
    plugins = []
    for name in sorted(configured, key=lambda n: (n in RUN_LAST, n)):
        try:
            plugins.append(PLUGINS[name](configured[name] or []))
        except PluginError as e:
            raise PluginError(f"job {job_key(job)}: {e}") from None
    return plugins
