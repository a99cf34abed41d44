"""Tenancy on a real API server through `volcanic up` (docs/queues.md): a QueueBinding denies
an unbound namespace at admission and caps a bound one's pending jobs at enqueue, with the
usage in its status; a queue's own job order (fifo) decides which waiting job runs next where
the tiers would take the other."""

from __future__ import annotations

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


def test_a_fifo_queue_runs_the_earlier_job_next(env, up, namespace, queue):
    env.apply(*[{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n},
                 "value": v} for n, v in (("volcanic-e2e-low", 1), ("volcanic-e2e-high", 1000))])
    env.kubectl("annotate", "queue", queue, "scheduling.volcanic.dev/job-order=fifo")
    running(env, namespace, vcjob("blocker", 1, queue=queue, duration=None))
    env.apply(vcjob("early-low", 1, queue=queue, duration=None, priorityClassName="volcanic-e2e-low"),
              namespace=namespace)
    env.apply(vcjob("late-high", 1, queue=queue, duration=None, priorityClassName="volcanic-e2e-high"),
              namespace=namespace)
    # both wait behind the blocker, their PodGroups made (Volcano names them <job>-<uid>)
    assert env.wait(lambda: len(env.store.list("PodGroup", namespace)) == 3, timeout=30)
    env.kubectl("delete", "job.batch.volcano.sh", "blocker", "-n", namespace)
    assert env.wait(lambda: phase(env, "early-low", namespace) == "Running", timeout=60), \
        (phase(env, "early-low", namespace), phase(env, "late-high", namespace))
    assert phase(env, "late-high", namespace) != "Running"
