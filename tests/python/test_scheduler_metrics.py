"""Volcano v1.15's scheduler and queue metrics (volcanic.scheduler.metrics,
volcanic.controllers.metrics), read from an embedded Cluster(metrics=True) as Prometheus
scrapes them. Names, labels and units are Volcano's: pkg/scheduler/metrics/{metrics,queue,
job}.go, pkg/controllers/metrics/queue.go; what each plugin reports is where Volcano's
updates it (proportion.go, capacity.go, drf.go, gang.go, preempt.go)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families
import pytest

from builders import node, pod, podgroup, queue
import volcanic
from volcanic.real.manifests.deployments import DEFAULT_CONF


def samples(c: volcanic.Cluster) -> dict[tuple[str, tuple], float]:
    """(sample name, sorted labels) -> value of everything the cluster exports."""
    out = {}
    for family in text_string_to_metric_families(c.metrics()):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(c: volcanic.Cluster, name: str, **labels: str) -> float:
    return samples(c)[(name, tuple(sorted(labels.items())))]


def names(c: volcanic.Cluster) -> set[str]:
    return {name for name, _ in samples(c)}


def gpu_pod(name, group, **kw):
    p = pod(name, group, **kw)
    p["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "1"
    return p


@pytest.fixture
def cluster():
    c = volcanic.Cluster(metrics=True)
    c.apply([node("n1", cpu="8", memory="64Gi", **{"nvidia.com/gpu": "4"}), queue("q1", 1), queue("q3", 3)])
    c.run(1)
    c.apply([podgroup("a", 2, queue="q1"), gpu_pod("a1", "a"), pod("a2", "a"),
             podgroup("b", 2, queue="q3"), *[pod(f"b{i}", "b") for i in range(10)]])
    c.run(3)
    yield c
    assert c.errors == []


def test_proportion_queue_gauges_are_volcanos(cluster):
    """proportion.go: allocated and request per queue in milli-CPU and bytes, scalars by name
    (GPUs in milli-units, Volcano's), weight, deserved by water-filling (q3 deserves 3x q1
    but q1 asks for only 2 CPUs: q1 2, q3 6), share = allocated/deserved, overused."""
    c = cluster
    assert value(c, "volcano_queue_allocated_milli_cpu", queue_name="q1") == 2000
    assert value(c, "volcano_queue_allocated_memory_bytes", queue_name="q1") == 2 * 2**30
    assert value(c, "volcano_queue_allocated_scalar_resources", queue_name="q1", resource="nvidia.com/gpu") == 1000
    assert value(c, "volcano_queue_request_milli_cpu", queue_name="q3") == 10000
    assert value(c, "volcano_queue_weight", queue_name="q3") == 3
    assert value(c, "volcano_queue_deserved_milli_cpu", queue_name="q1") == 2000
    assert value(c, "volcano_queue_deserved_milli_cpu", queue_name="q3") == 6000
    assert value(c, "volcano_queue_allocated_milli_cpu", queue_name="q3") == 6000
    assert value(c, "volcano_queue_share", queue_name="q3") == 1.0
    # Overused: deserved <= allocated in every dimension. q1 holds all it deserves; q3's
    # deserved memory is its 10 pods' (10Gi), of which it holds 6Gi.
    assert value(c, "volcano_queue_overused", queue_name="q1") == 1
    assert value(c, "volcano_queue_overused", queue_name="q3") == 0
    # A queue without jobs allocates and requests nothing (Volcano's "no jobs" fix, #3463).
    assert value(c, "volcano_queue_allocated_milli_cpu", queue_name="default") == 0
    assert value(c, "volcano_queue_request_milli_cpu", queue_name="default") == 0


def test_workload_counts_per_queue(cluster):
    """volcano#5826: PodGroups by phase and tasks by status per queue as the session opened,
    zeros included; the controller-manager's volcano_queue_pod_group_*_count from the queue
    controller's counts (pkg/controllers/metrics/queue.go)."""
    c = cluster
    assert value(c, "volcano_queue_pod_group_count", queue_name="q3", phase="Running") == 1
    assert value(c, "volcano_queue_pod_group_count", queue_name="q3", phase="Pending") == 0
    assert value(c, "volcano_queue_task_count", queue_name="q3", status="Pending") == 4
    assert value(c, "volcano_queue_task_count", queue_name="q3", status="Running") == 6
    assert value(c, "volcano_queue_pod_group_running_count", queue_name="q1") == 1
    assert value(c, "volcano_queue_pod_group_inqueue_count", queue_name="q1") == 0


def test_gang_drf_and_job_scheduling_gauges(cluster):
    """gang.go: unschedule_task_count per job (by PodGroup name; 0 for a ready job) and
    unschedule_job_count; drf.go: job_share; allocate.go: e2e_job_scheduling_duration per job
    in milliseconds from its creation, and the latency histogram once per task bound."""
    c = cluster
    c.apply(podgroup("big", 3, queue="q1"))
    c.apply([pod(f"big{i}", "big", cpu="8") for i in range(3)])
    c.run(2)
    assert value(c, "volcano_unschedule_task_count", job_id="big") == 3
    assert value(c, "volcano_unschedule_task_count", job_id="a") == 0
    assert value(c, "volcano_unschedule_job_count") == 1
    assert value(c, "volcano_job_retry_counts", job_id="big") >= 1  # Volcano's name, no _total
    assert value(c, "volcano_job_share", job_ns="ns", job_id="a") == pytest.approx(0.25)  # 1 of 4 GPUs
    duration = value(c, "volcano_e2e_job_scheduling_duration", job_name="a", queue="q1", job_namespace="ns")
    assert 0 <= duration <= 1000  # bound within the second after its creation
    assert value(c, "volcano_e2e_job_scheduling_latency_milliseconds_count") == 8  # 2 + 6 pods bound


def test_session_and_plugin_latencies(cluster):
    names_ = names(cluster)
    for name in ("volcano_e2e_scheduling_latency_milliseconds_count", "volcano_open_session_duration_milliseconds_count",
                 "volcano_action_scheduling_latency_milliseconds_count",
                 "volcano_plugin_scheduling_latency_milliseconds_count", "volcano_schedule_attempts_total"):
        assert name in names_, name
    assert value(cluster, "volcano_plugin_scheduling_latency_milliseconds_count", plugin="gang",
                 OnSession="OnSessionOpen") >= 1
    assert value(cluster, "volcano_schedule_attempts_total", result="scheduled") == 8


def test_deleted_queue_leaves_no_gauges(cluster):
    c = cluster
    c.apply(queue("gone", 1))
    c.run(2)
    assert ("volcano_queue_weight", (("queue_name", "gone"),)) not in samples(c)  # no jobs: no weight
    assert value(c, "volcano_queue_allocated_milli_cpu", queue_name="gone") == 0
    c.delete("Queue", "gone")
    c.run(2)
    assert not [k for k in samples(c) if ("queue_name", "gone") in k[1]]


HIERARCHY = """
actions: "enqueue, allocate, backfill, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: capacity
    enableHierarchy: true
  - name: nodeorder
"""


def test_capacity_hierarchy_reports_every_queue():
    """volcano#4458: with enableHierarchy, capacity and real capacity of every queue, inner
    ones included; an inner queue's request is its leaves' (capacity.go, hierarchical build)."""
    c = volcanic.Cluster(conf=HIERARCHY, metrics=True)
    c.apply([node("n1", cpu="8", memory="64Gi"),
             queue("p", parent="root", capability={"cpu": "6"}, deserved={"cpu": "6"}),
             queue("c1", parent="p", capability={"cpu": "4"}, deserved={"cpu": "3"}),
             queue("c2", parent="p", deserved={"cpu": "3"})])
    c.run(1)
    c.apply([podgroup("j1", 1, queue="c1"), *[pod(f"x{i}", "j1") for i in range(5)],
             podgroup("j2", 1, queue="c2"), pod("y", "j2")])
    c.run(3)
    assert c.errors == []
    assert value(c, "volcano_queue_capacity_milli_cpu", queue_name="p") == 6000
    assert value(c, "volcano_queue_capacity_milli_cpu", queue_name="c1") == 4000
    assert value(c, "volcano_queue_real_capacity_milli_cpu", queue_name="c1") == 4000
    assert value(c, "volcano_queue_request_milli_cpu", queue_name="p") == 6000  # 5 + 1
    assert value(c, "volcano_queue_allocated_milli_cpu", queue_name="p") == 5000  # c1 capped at 4, c2 1
    assert value(c, "volcano_queue_deserved_milli_cpu", queue_name="c2") == 3000
    assert value(c, "volcano_queue_inqueue_milli_cpu", queue_name="c1") == 0


def test_preemption_victims_and_attempts():
    """preempt.go: pod_preemption_victims (the last preemption's victims) and
    total_preemption_attempts."""
    conf = DEFAULT_CONF.replace('backfill"', 'backfill, preempt"')
    c = volcanic.Cluster(conf=conf, metrics=True)
    c.apply([node("n1", cpu="4", memory="64Gi"),
             {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
              "value": 1000}])
    c.run(1)
    c.apply([podgroup("low", 1), *[pod(f"l{i}", "low") for i in range(4)]])
    c.run(2)
    high = podgroup("high", 2, priorityClassName="high")
    c.apply([high, *[with_priority(pod(f"h{i}", "high"), "high") for i in range(2)]])
    c.run(3)
    assert value(c, "volcano_total_preemption_attempts") >= 2
    assert value(c, "volcano_pod_preemption_victims") >= 1


def with_priority(p, name):
    p["spec"]["priorityClassName"] = name
    return p


def test_metrics_are_opt_in():
    with pytest.raises(ValueError, match="Cluster\\(metrics=True\\)"):
        volcanic.Cluster().metrics()


# Volcano v1.15.1's scheduler metric names (pkg/scheduler/metrics/metrics.go, queue.go, job.go;
# the Go client exports a name as given, a counter's with no _total added), and the
# controller-manager's (pkg/controllers/metrics/queue.go). Histograms by their _count.
VOLCANO_NAMES = [
    "volcano_e2e_scheduling_latency_milliseconds_count", "volcano_open_session_duration_milliseconds_count",
    "volcano_e2e_job_scheduling_latency_milliseconds_count", "volcano_e2e_job_scheduling_duration",
    "volcano_e2e_job_scheduling_start_time", "volcano_e2e_job_scheduling_last_time",
    "volcano_plugin_scheduling_latency_milliseconds_count", "volcano_action_scheduling_latency_milliseconds_count",
    "volcano_schedule_attempts_total", "volcano_pod_preemption_victims", "volcano_total_preemption_attempts",
    "volcano_unschedule_task_count", "volcano_unschedule_job_count", "volcano_job_share", "volcano_job_retry_counts",
    *[f"volcano_queue_{what}_{unit}" for what in ("allocated", "request", "deserved")
      for unit in ("milli_cpu", "memory_bytes")],
    "volcano_queue_share", "volcano_queue_weight", "volcano_queue_overused",
    *[f"volcano_queue_pod_group_{phase}_count" for phase in ("inqueue", "pending", "running", "unknown", "completed")],
]


def test_volcanos_metric_names_are_exported_as_volcano_spells_them(cluster):
    c = cluster
    c.apply([podgroup("big", 3, queue="q1"), *[pod(f"big{i}", "big", cpu="8") for i in range(3)]])
    c.run(2)
    missing = set(VOLCANO_NAMES) - names(c)
    assert not missing, sorted(missing)


def test_a_deleted_jobs_scheduling_series_are_removed(cluster):
    """Volcano's DeleteJobMetrics: a job gone from the cluster leaves no
    e2e_job_scheduling_* series."""
    c = cluster
    labels = dict(job_name="a", queue="q1", job_namespace="ns")
    assert value(c, "volcano_e2e_job_scheduling_duration", **labels) >= 0
    for name in ("a1", "a2"):
        c.delete("Pod", name, "ns")
    c.delete("PodGroup", "a", "ns")
    c.run(2)
    assert ("volcano_e2e_job_scheduling_duration", tuple(sorted(labels.items()))) not in samples(c)
