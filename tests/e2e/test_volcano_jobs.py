"""Volcano Jobs through `volcanic up` on a real API server: the examples, queue capability,
preemption, the garbage collector, admission, and a crash of `up` (reference §2 controllers,
§4 scheduler actions, §3 admission)."""

from __future__ import annotations

from pathlib import Path

import yaml

from volcanic.real.devcluster.cluster import KWOK_TOLERATION

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def on_kwok(job: dict, duration: str | None = "3s") -> dict:
    """A Volcano Job made to run on kwok nodes (toleration and nodeSelector), its simulated
    containers running `duration` (None: until deleted)."""
    for task in job["spec"]["tasks"]:
        template = task["template"]
        template.setdefault("metadata", {}).setdefault("annotations", {}).pop("volcanic/sim-duration", None)
        if duration:
            template["metadata"]["annotations"]["volcanic/sim-duration"] = duration
        spec = template["spec"]
        spec["tolerations"] = [KWOK_TOLERATION]
        spec["nodeSelector"] = {"type": "kwok"}
    return job


def vcjob(name: str, replicas: int, cpu: str = "1", min_available: int | None = None, queue: str = "default",
          duration: str | None = "3s", **spec) -> dict:
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
           "spec": {"schedulerName": "volcano", "queue": queue, "minAvailable": min_available or replicas, **spec,
                    "tasks": [{"name": "task", "replicas": replicas, "template": {"spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "busybox",
                                        "resources": {"requests": {"cpu": cpu}}}]}}}]}}
    return on_kwok(job, duration)


def phase(env, name, namespace):
    job = env.store.get("Job", name, namespace) or {}
    return ((job.get("status") or {}).get("state") or {}).get("phase")


def pods_of(env, job, namespace):
    return [p for p in env.store.list("Pod", namespace)
            if (p["metadata"].get("labels") or {}).get("volcano.sh/job-name") == job]


def _stuck(env, up, jobs, namespace, killed=None) -> str:
    """What a test that waited in vain shows: each job's status, its PodGroup's, its pods'
    phases, and the end of `up`'s log (and of the `up` it killed, if any)."""
    lines = []
    for n in jobs:
        job = env.store.get("Job", n, namespace) or {}
        pg = next((g for g in env.store.list("PodGroup", namespace)
                   if any(o.get("name") == n for o in g["metadata"].get("ownerReferences") or [])), None)
        pods = sorted((p["metadata"]["name"], (p.get("status") or {}).get("phase"), bool(p["spec"].get("nodeName")))
                      for p in pods_of(env, n, namespace))
        lines.append(f"{n}: status {job.get('status')} podgroup {pg and (pg['metadata']['name'], pg.get('status'))} "
                     f"pods {pods}")
    for name, proc in (("killed volcanic up", killed), ("volcanic up", up.proc)):
        if proc is not None:
            lines += [f"--- {name}:"] + proc.log_path.read_text(errors="replace").splitlines()[-60:]
    return "\n".join(lines)


def bound(pods):
    return [p for p in pods if p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp")]


def test_tensorflow_and_mindspore_examples_complete_as_in_the_embedded_cluster(env, up, namespace):
    """The examples reach Completed, as `volcanic run` shows for them (tests/python/test_cli.py):
    TensorFlow's job completes when its workers do, though its parameter server never ends."""
    env.apply_queue("research", weight=1)
    tf = on_kwok(yaml.safe_load((EXAMPLES / "tensorflow.yaml").read_text()))
    for task in tf["spec"]["tasks"]:  # the ps runs until stopped; the workers 3 s
        if task["name"] == "ps":
            task["template"]["metadata"]["annotations"].pop("volcanic/sim-duration")
    ms = on_kwok(next(d for d in yaml.safe_load_all((EXAMPLES / "mindspore.yaml").read_text()) if d))
    env.apply(tf, ms, namespace=namespace)
    names = [tf["metadata"]["name"], ms["metadata"]["name"]]
    assert env.wait(lambda: all(phase(env, n, namespace) == "Completed" for n in names), timeout=60), \
        [env.store.get("Job", n, namespace).get("status") for n in names]
    assert len(pods_of(env, "mindspore-cpu", namespace)) == 8


def test_queue_capability_holds(env, up, namespace):
    """A queue capped at 4 CPUs runs at most two 2-CPU pods at a time, and still finishes its job."""
    env.apply_queue(namespace, weight=1, capability={"cpu": "4"})
    env.apply(vcjob("capped", 6, cpu="2", min_available=1, queue=namespace, duration="2s"), namespace=namespace)
    most = 0
    while phase(env, "capped", namespace) != "Completed":
        running = [p for p in bound(pods_of(env, "capped", namespace))
                   if p["status"].get("phase") in (None, "Pending", "Running")]
        most = max(most, len(running))
        assert most <= 2, [(p["metadata"]["name"], p["status"].get("phase")) for p in running]
        env.wait(lambda: False, timeout=0.2)
    assert most == 2


def test_higher_priority_job_preempts_once_preempt_is_configured(env, up, namespace):
    """With `preempt` added to the configuration file (reloaded while running), a
    high-priority job evicts a low-priority pod to run."""
    conf = up.conf.read_text()
    up.conf.write_text(conf.replace('actions: "enqueue, allocate, backfill"',
                                    'actions: "enqueue, allocate, preempt, backfill"'))
    try:
        env.wait_logged(up.proc, "reloaded")
        env.apply(*[{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n},
                     "value": v} for n, v in ((f"{namespace}-low", 1), (f"{namespace}-high", 1000))])
        nodes = len(env.store.list("Node"))
        env.apply(vcjob("low", nodes, cpu="30", min_available=1, duration=None,
                        priorityClassName=f"{namespace}-low"), namespace=namespace)
        assert env.wait(lambda: len(bound(pods_of(env, "low", namespace))) == nodes, timeout=30)
        env.apply(vcjob("high", 1, cpu="30", duration=None, priorityClassName=f"{namespace}-high"),
                  namespace=namespace)
        assert env.wait(lambda: len(bound(pods_of(env, "high", namespace))) == 1, timeout=60), \
            env.store.get("PodGroup", pods_of(env, "high", namespace)[0]["metadata"]["annotations"]
                          ["scheduling.k8s.io/group-name"], namespace)
        assert len(bound(pods_of(env, "low", namespace))) == nodes - 1
    finally:
        up.conf.write_text(conf)
        env.kubectl("delete", "job.batch.volcano.sh", "--all", "-n", namespace, "--wait=false")


def test_deleting_a_job_removes_its_pods_and_podgroup(env, up, namespace):
    """Pods and PodGroup carry the Job as controller owner, so the API server's garbage
    collector removes them with it."""
    env.apply(vcjob("doomed", 3, duration=None), namespace=namespace)
    assert env.wait(lambda: phase(env, "doomed", namespace) == "Running", timeout=30)
    assert env.store.list("PodGroup", namespace)
    env.kubectl("delete", "job.batch.volcano.sh", "doomed", "-n", namespace)
    assert env.wait(lambda: not env.store.list("Pod", namespace) and not env.store.list("PodGroup", namespace),
                    timeout=60)


def test_admission_denies_an_invalid_job_with_volcanos_message_and_stores_nothing(env, up, namespace):
    job = vcjob("invalid", 2, min_available=3)
    r = env.kubectl("apply", "-n", namespace, "-f", "-", input=yaml.safe_dump(job), check=False)
    assert r.returncode != 0
    assert ('admission webhook "validatejob.volcano.sh" denied the request: '
            "job 'minAvailable' should not be greater than total replicas in tasks") in r.stderr
    assert env.store.get("Job", "invalid", namespace) is None


def test_killing_up_mid_run_loses_no_job_and_binds_no_pod_twice(env, up, namespace):
    """`up` is SIGKILLed while the jobs' pods are being created and bound; a new `up` picks
    the work up from the API server: every job completes with exactly its pods, each bound
    once (a second bind of a pod would fail and count as a bind error)."""
    jobs = [f"j{i}" for i in range(6)]
    env.apply(*[vcjob(n, 10, duration="3s") for n in jobs], namespace=namespace)
    env.wait(lambda: any(pods_of(env, n, namespace) for n in jobs), timeout=20, step=0.05)
    killed = up.proc
    up.kill()
    up.start()
    assert env.wait(lambda: all(phase(env, n, namespace) == "Completed" for n in jobs), timeout=90), \
        _stuck(env, up, jobs, namespace, killed)
    for n in jobs:
        pods = pods_of(env, n, namespace)
        assert sorted(p["metadata"]["name"] for p in pods) == [f"{n}-task-{i}" for i in range(10)]
        assert all(p["spec"].get("nodeName") for p in pods)
    assert up.metric("volcano_schedule_attempts_total", 'result="error"') == 0
