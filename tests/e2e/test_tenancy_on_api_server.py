"""Tenancy on a real API server through `volcanic up` (docs/queues.md): a QueueBinding denies
an unbound namespace at admission and caps a bound one's pending jobs at enqueue, with the
usage in its status, and holds a job that would pass its maxRunningPods; a queue's own job order
(fifo, priority, sjf, fair) decides which waiting job runs next, where the tiers would take the
other (fifo, sjf, fair)."""

from __future__ import annotations

import time

import pytest

from test_vcctl_on_api_server import running
from test_volcano_jobs import phase, vcjob

BINDING_API = "scheduling.volcanic.dev/v1alpha1"


def binding(name: str, queue: str, namespaces: list[str], **limits) -> dict:
    return {"apiVersion": BINDING_API, "kind": "QueueBinding", "metadata": {"name": name},
            "spec": {"queue": queue, "namespaces": namespaces, **({"limits": limits} if limits else {})}}


@pytest.fixture
def queue(env, namespace):
    """A queue of this test's own (deleted after), 1 CPU at most."""
    name = namespace[:40] + "-q"
    env.apply_queue(name, weight=1, capability={"cpu": "1"})
    yield name
    env.kubectl("delete", "queuebinding", "--all", "--wait=false", check=False)
    env.kubectl("delete", "job.batch.volcano.sh,podgroup", "--all", "-n", namespace, check=False)
    env.kubectl("delete", "queue", name, "--wait=false", check=False)


def test_a_binding_denies_other_namespaces_and_caps_pending_jobs(env, up, namespace, queue):
    env.apply(binding(namespace, queue, [namespace], maxPendingJobs=1))
    denied = env.kubectl("apply", "-n", "default", "-f", "-", check=False,
                         input=f"apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: x}}\n"
                               f"spec: {{queue: {queue}, tasks: [{{name: t, replicas: 1, template: {{spec: "
                               f"{{containers: [{{name: c, image: busybox}}]}}}}}}]}}\n")
    assert denied.returncode != 0
    assert "namespace default may not submit to it" in denied.stderr, denied.stderr
    # two PodGroups without pods: the first is enqueued (and stays Inqueue), the second is held
    for name in ("first", "second"):
        env.apply({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                   "metadata": {"name": name}, "spec": {"queue": queue, "minMember": 1}}, namespace=namespace)

    def group(name):
        return (env.store.get("PodGroup", name, namespace) or {}).get("status") or {}
    assert env.wait(lambda: group("first").get("phase") == "Inqueue", timeout=30), group("first")
    limit = (f"queuebinding: maxPendingJobs 1 of QueueBinding {namespace} reached: namespace {namespace} has 1 "
             f"job(s) pending in queue {queue}")
    assert env.wait(lambda: any(limit in (c.get("message") or "") for c in group("second").get("conditions") or []),
                    timeout=30), group("second")
    assert group("second").get("phase") == "Pending"
    usage = lambda: ((env.store.get("QueueBinding", namespace) or {}).get("status") or {}).get("namespaces")  # noqa: E731
    assert env.wait(lambda: usage() == {namespace: {"runningPods": 0, "pendingJobs": 1}}, timeout=30), usage()


def test_max_running_pods_holds_the_job_that_would_pass_it(env, up, namespace, queue):
    env.apply(binding(namespace, queue, [namespace], maxRunningPods=1))
    running(env, namespace, vcjob("first", 1, cpu="100m", queue=queue, duration=None))
    env.apply(vcjob("second", 1, cpu="100m", queue=queue, duration=None), namespace=namespace)
    limit = (f"queuebinding: maxRunningPods 1 of QueueBinding {namespace}: namespace {namespace} holds 1 pod(s) "
             f"in queue {queue}; this job needs 1")
    groups = lambda: env.store.list("PodGroup", namespace)  # noqa: E731
    held = lambda: [g for g in groups() if any(limit in (c.get("message") or "")  # noqa: E731
                                               for c in (g.get("status") or {}).get("conditions") or [])]
    assert env.wait(lambda: len(held()) == 1, timeout=30), groups()
    assert phase(env, "second", namespace) != "Running"  # 200m of the queue's 1 CPU would fit
    usage = lambda: ((env.store.get("QueueBinding", namespace) or {}).get("status") or {}).get("namespaces")  # noqa: E731
    assert env.wait(lambda: usage() == {namespace: {"runningPods": 1, "pendingJobs": 0}}, timeout=30), usage()


def next_to_run(env, queue: str, order: str, holding: list[tuple[str, dict]],
                waiting: list[tuple[str, dict]]) -> list[str]:
    """Sets the queue's job order, runs the `holding` jobs ((namespace, job); the first is the
    blocker), submits the `waiting` ones a second apart (creation times have whole seconds),
    which wait; then deletes the blocker and returns the waiting jobs that run."""
    env.kubectl("annotate", "queue", queue, f"scheduling.volcanic.dev/job-order={order}")
    for ns, job in holding:
        running(env, ns, job)
    for ns, job in waiting:
        env.apply(job, namespace=ns)
        time.sleep(1.1)
    # each waits behind the blocker, its PodGroup made (Volcano names them <job>-<uid>)
    namespaces = {ns for ns, _ in holding + waiting}
    assert env.wait(lambda: sum(len(env.store.list("PodGroup", ns)) for ns in namespaces)
                    == len(holding) + len(waiting), timeout=30)
    blocker_ns, blocker = holding[0]
    env.kubectl("delete", "job.batch.volcano.sh", blocker["metadata"]["name"], "-n", blocker_ns)
    started = lambda: [job["metadata"]["name"] for ns, job in waiting  # noqa: E731
                       if phase(env, job["metadata"]["name"], ns) == "Running"]
    assert env.wait(lambda: started(), timeout=60)
    time.sleep(2)  # a session or two more: the other must still wait
    return started()


def job_of_class(name: str, queue: str, priority_class: str) -> dict:
    return vcjob(name, 1, queue=queue, duration=None, priorityClassName=priority_class)


@pytest.fixture
def classes(env):
    env.apply(*[{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n},
                 "value": v} for n, v in (("volcanic-e2e-low", 1), ("volcanic-e2e-high", 1000))])


def test_fifo_runs_the_earlier_job(env, up, namespace, queue, classes):
    assert early_low_or_late_high(env, namespace, queue, "fifo") == ["early-low"]


def test_priority_runs_the_higher_job(env, up, namespace, queue, classes):
    assert early_low_or_late_high(env, namespace, queue, "priority") == ["late-high"]


def early_low_or_late_high(env, namespace: str, queue: str, order: str) -> list[str]:
    waiting = [(namespace, job_of_class("early-low", queue, "volcanic-e2e-low")),
               (namespace, job_of_class("late-high", queue, "volcanic-e2e-high"))]
    return next_to_run(env, queue, order, [(namespace, vcjob("blocker", 1, queue=queue, duration=None))], waiting)


def test_sjf_runs_the_smaller_job_first(env, up, namespace, queue):
    """The tiers (and fifo) would run the earlier one: equal priorities, no share yet."""
    waiting = [(namespace, vcjob("early-big", 1, cpu="1", queue=queue, duration=None)),
               (namespace, vcjob("late-small", 1, cpu="500m", queue=queue, duration=None))]
    assert next_to_run(env, queue, "sjf", [(namespace, vcjob("blocker", 1, queue=queue, duration=None))],
                       waiting) == ["late-small"]


@pytest.fixture
def other_namespace(env, namespace):
    name = namespace[:45] + "-b"
    env.kubectl("create", "namespace", name)
    env.kubectl("create", "serviceaccount", "default", "-n", name, check=False)
    yield name
    env.kubectl("delete", "job.batch.volcano.sh,podgroup", "--all", "-n", name, check=False)
    env.kubectl("delete", "namespace", name, "--wait=false", check=False)


def test_fair_runs_the_job_of_the_namespace_holding_less(env, up, namespace, other_namespace, queue):
    """The first namespace keeps 1 CPU of the queue's 2 (`holder`): its earlier job waits for the
    other namespace's, which the tiers (and fifo) would run second."""
    env.apply_queue(queue, weight=1, capability={"cpu": "2"})
    holding = [(namespace, vcjob("blocker", 1, queue=queue, duration=None)),
               (namespace, vcjob("holder", 1, queue=queue, duration=None))]
    waiting = [(namespace, vcjob("early-heavy", 1, queue=queue, duration=None)),
               (other_namespace, vcjob("late-light", 1, queue=queue, duration=None))]
    assert next_to_run(env, queue, "fair", holding, waiting) == ["late-light"]
