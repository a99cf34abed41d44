"""A scheduler configuration naming a plugin nobody provides: the scheduler daemon runs
without it, as Volcano's does (pkg/scheduler/framework/framework.go OpenSession logs "Failed
to get plugin <name>." and goes on), and says so: a log line at error level and the gauge
volcanic_scheduler_skipped_plugins. The library (volcanic.Scheduler, volcanic.Cluster) keeps
refusing it with a ConfigError, so a typo in an experiment is caught (docs/scheduler.md).

Volcano's CI configuration (installer/helm/chart/volcano/config/volcano-scheduler-ci.conf)
names network-topology-aware; Volcano's e2e suites run with it.
"""

from __future__ import annotations

import logging

from prometheus_client import CollectorRegistry, generate_latest
import pytest

from job_helpers import job, node, task
import volcanic
from volcanic.scheduler.conf import load_conf
from volcanic.scheduler.loop import SchedulerLoop
from volcanic.scheduler.metrics import SchedulerMetrics
from volcanic.scheduler.plugins import plugin_names_in, without_unknown_plugins

VOLCANO_CI_CONF = """
actions: "enqueue, allocate, backfill, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: sla
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
    arguments:
      predicate.DynamicResourceAllocationEnable: true
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: no-such-plugin
"""


def test_the_library_refuses_an_unknown_plugin():
    with pytest.raises(volcanic.ConfigError, match="no-such-plugin"):
        volcanic.Scheduler(VOLCANO_CI_CONF)


def test_unknown_plugins_are_taken_out_of_their_tier_and_named():
    conf, skipped = without_unknown_plugins(load_conf(VOLCANO_CI_CONF))
    assert skipped == ["no-such-plugin"]
    assert plugin_names_in(conf) == ["priority", "gang", "conformance", "sla", "overcommit", "drf", "predicates",
                                     "proportion", "nodeorder", "binpack"]
    assert without_unknown_plugins(conf) == (conf, [])


def test_a_loop_that_skips_unknown_plugins_schedules_without_them():
    c = volcanic.Cluster()
    c.scheduler.cadence.step_aside()  # the cluster's own loop steps aside for the daemon's
    logged: list[logging.LogRecord] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = logged.append  # whatever the logging set-up of other tests
    logger = logging.getLogger("volcanic.scheduler.loop")
    disabled, logger.disabled = logger.disabled, False  # a dictConfig of another test may have disabled it
    logger.addHandler(handler)
    try:
        loop = SchedulerLoop(c.api, c.informers, c._clock, VOLCANO_CI_CONF, skip_unknown_plugins=True)
    finally:
        logger.removeHandler(handler)
        logger.disabled = disabled
    assert [(r.levelno, r.getMessage()) for r in logged] == [(logging.ERROR, "Failed to get plugin no-such-plugin.")]
    assert loop.skipped_plugins == ["no-such-plugin"]
    c.apply([node("n1"), job("j", task(replicas=2, min_available=2))])
    c.run(5)
    assert c.get("Job", "j")["status"]["state"]["phase"] == "Running"
    loop.reconfigure(VOLCANO_CI_CONF.replace("no-such-plugin", "binpack"))
    assert loop.skipped_plugins == []


def test_the_skipped_plugins_are_a_metric():
    registry = CollectorRegistry()
    metrics = SchedulerMetrics(registry)
    metrics.skipped(["no-such-plugin"])
    assert 'volcanic_scheduler_skipped_plugins{plugin="no-such-plugin"} 1.0' in generate_latest(registry).decode()
    metrics.skipped([])
    assert "no-such-plugin" not in generate_latest(registry).decode()
