"""vcctl (volcanic.vcctl, the console scripts of volcanic.cli.vcctl) on a real API server with
`volcanic up`: every command and its errors, run as a user runs them (a subprocess with
KUBECONFIG), output checked column by column against the objects the server holds. Where
Volcano's Go vcctl has been built (tools/volcano-e2e/build.sh), its output is the reference,
byte for byte."""

from __future__ import annotations

from datetime import datetime
import json
import os
from pathlib import Path
import subprocess
import sys

import pytest
import yaml

from test_volcano_jobs import phase, pods_of, vcjob
from volcanic.kube.kinds import KINDS
from volcanic.real.client import KubeClient
from volcanic.real.store import KubeStore

GO_VCCTL = Path(os.environ.get("VOLCANO_E2E_BIN", Path.home() / ".cache/volcanic/volcano-e2e")) / "vcctl"
JOB_HEADER = ["Name", "Creation", "Phase", "JobType", "Replicas", "Min", "Pending", "Running", "Succeeded", "Failed",
              "Unknown", "RetryCount"]


def vcctl(env, *args: str, prog: str = "vcctl", kubeconfig: str | None = None,
          extra_env: dict | None = None) -> subprocess.CompletedProcess:
    """A console script as a user runs it: its entry point through the interpreter, from the
    installed package like every e2e process (a script directory may not be on PATH)."""
    code = f"import sys; from volcanic.cli.vcctl import main; sys.exit(main(prog={prog!r}))"
    environ = dict(os.environ, KUBECONFIG=kubeconfig or env.kubeconfig, **(extra_env or {}))
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=environ,
                          timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def ok(env, *args: str, **kw) -> str:
    done = vcctl(env, *args, **kw)
    assert (done.returncode, done.stderr) == (0, ""), (args, done.stdout, done.stderr)
    return done.stdout


def failed(env, *args: str, code: int = 255, **kw) -> str:
    """The one line a failing command prints on stderr (nothing on stdout)."""
    done = vcctl(env, *args, **kw)
    assert (done.returncode, done.stdout) == (code, ""), (args, done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1, done.stderr
    return done.stderr.rstrip("\n")


def table(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


def local_date(obj: dict) -> str:
    """The creation date in the local zone, as Go prints a metav1.Time."""
    stamp = obj["metadata"]["creationTimestamp"].replace("Z", "+00:00")
    return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d")


def job_row(job: dict) -> list[str]:
    s = job.get("status") or {}
    return [job["metadata"]["name"], local_date(job), s["state"]["phase"], "Batch",
            str(sum(t["replicas"] for t in job["spec"]["tasks"])), str(s.get("minAvailable", 0))] + [
        str(s.get(k, 0)) for k in ("pending", "running", "succeeded", "failed", "unknown", "retryCount")]


def running(env, namespace: str, *jobs: dict) -> None:
    env.apply(*jobs, namespace=namespace)
    names = [j["metadata"]["name"] for j in jobs]
    assert env.wait(lambda: all(phase(env, n, namespace) == "Running" for n in names), timeout=60)


def commands_issued(env, action):
    """Runs action() and returns the Commands created meanwhile (the controllers delete them at
    once: a watch of our own sees them come)."""
    store = KubeStore(KubeClient(env.kubeconfig))
    watch = store.watch(["Command"])
    try:
        assert watch.synced.wait(30)
        watch.drain()
        action()
        seen: list[dict] = []
        env.wait(lambda: seen.extend(o for t, o in watch.drain() if t == "ADDED") or seen, timeout=30)
        return seen
    finally:
        store.close()


def test_job_commands(env, up, namespace):
    # run: Volcano's Job from the flags (its pods wait: the dev cluster's nodes are tainted for kwok)
    assert ok(env, "job", "run", "-N", "flags", "-n", namespace, "-r", "2", "-m", "2", "-R", "cpu=100m,memory=10Mi",
              "-L", "cpu=100m,memory=10Mi") == "run job flags successfully\n"
    made = env.store.get("Job", "flags", namespace)
    container = made["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    assert (made["spec"]["minAvailable"], made["spec"]["tasks"][0]["replicas"], container["image"],
            container["resources"]) == (2, 2, "busybox", {"limits": {"cpu": "100m", "memory": "10Mi"},
                                                          "requests": {"cpu": "100m", "memory": "10Mi"}})
    running(env, namespace, vcjob("worker", 2, cpu="1", duration=None))
    # list: Volcano's columns, each value from the server's objects
    out = ok(env, "job", "list", "-n", namespace)
    jobs = sorted(env.store.list("Job", namespace), key=lambda j: j["metadata"]["name"])
    assert table(out) == [JOB_HEADER] + [job_row(j) for j in jobs]
    assert out.splitlines()[0] == "".join(f"{h:<{w}}" for h, w in zip(JOB_HEADER, [9, 15, 12, 12, 12, 6, 10, 10, 12,
                                                                                     10, 12, 10]))
    assert table(ok(env, "job", "list", "-n", namespace, "--selector", "work"))[1:] == [job_row(jobs[1])]
    everywhere = table(ok(env, "job", "list", "--all-namespaces"))
    assert everywhere[0] == ["Namespace"] + JOB_HEADER and [namespace] + job_row(jobs[1]) in everywhere
    assert ok(env, "job", "list", "-n", namespace, "-q", "nope") == "No resources found\n"
    # -o: the objects as the server returns them; wide: three more columns
    listed = json.loads(ok(env, "job", "list", "-n", namespace, "-o", "json"))
    assert (listed["kind"], [j["metadata"]["uid"] for j in listed["items"]]) == (
        "List", [j["metadata"]["uid"] for j in jobs])
    assert yaml.safe_load(ok(env, "job", "view", "-N", "worker", "-n", namespace, "-o", "yaml"))["spec"] == \
        jobs[1]["spec"]
    wide = table(ok(env, "job", "list", "-n", namespace, "-o", "wide"))
    assert wide[0][-3:] == ["Queue", "Scheduler", "Age"] and wide[2][-3:-1] == ["default", "volcano"]
    # view: Volcano's details
    view = ok(env, "job", "view", "-N", "worker", "-n", namespace).splitlines()
    assert view[:2] == ["Name:       \tworker", f"Namespace:  \t{namespace}"]
    assert f"  UID:               \t{jobs[1]['metadata']['uid']}" in view and "    Phase:\tRunning" in view
    # suspend and resume: Volcano's Commands
    commands = commands_issued(env, lambda: ok(env, "job", "suspend", "-N", "worker", "-n", namespace))
    ref = {"apiVersion": KINDS["Job"].api_version, "kind": "Job", "name": "worker",
           "uid": jobs[1]["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    assert [(c["metadata"]["generateName"], c["metadata"]["namespace"], c["metadata"]["ownerReferences"], c["target"],
             c["action"]) for c in commands] == [("worker-abortjob-", namespace, [ref], ref, "AbortJob")]
    assert env.wait(lambda: phase(env, "worker", namespace) == "Aborted", timeout=60)
    commands = commands_issued(env, lambda: ok(env, "job", "resume", "--name", "worker", "--namespace", namespace))
    assert [c["action"] for c in commands] == ["ResumeJob"]
    assert env.wait(lambda: phase(env, "worker", namespace) == "Running", timeout=60)
    # delete
    assert ok(env, "job", "delete", "-N", "flags", "-n", namespace) == "delete job flags successfully\n"
    assert env.wait(lambda: env.store.get("Job", "flags", namespace) is None)


def test_job_run_from_a_file_and_the_one_command_tools(env, up, namespace, tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(vcjob("filed", 1, cpu="1", duration=None)))
    assert ok(env, "job", "run", "-f", str(path), "-n", namespace) == "run job filed successfully\n"
    assert env.wait(lambda: phase(env, "filed", namespace) == "Running", timeout=60)
    assert ok(env, "-n", "subbed", "-N", namespace, "-c", "sleep 1", "-R", "cpu=100m,memory=10Mi",
              "-L", "cpu=100m,memory=10Mi", prog="vsub", extra_env={"VOLCANO_DEFAULT_IMAGE": "alpine"}) == \
        "run job subbed successfully\n"
    container = env.store.get("Job", "subbed", namespace)["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    assert (container["image"], container["command"]) == ("alpine", ["sleep", "1"])
    assert [r[0] for r in table(ok(env, "-N", namespace, prog="vjobs"))] == ["Name", "filed", "subbed"]
    assert ok(env, "-N", namespace, "-n", "filed", prog="vjobs").startswith("Name:       \tfiled\n")
    assert table(ok(env, "-n", "default", prog="vqueues"))[1][:3] == ["default", "1", "Open"]
    assert ok(env, "-N", namespace, "-n", "filed", prog="vsuspend") == ""
    assert env.wait(lambda: phase(env, "filed", namespace) == "Aborted", timeout=60)
    assert ok(env, "-N", namespace, "-n", "filed", prog="vresume") == ""
    assert env.wait(lambda: phase(env, "filed", namespace) == "Running", timeout=60)
    assert ok(env, "-N", namespace, "-n", "filed", prog="vcancel") == "cancel job filed successfully\n"
    assert failed(env, prog="vsub") == "Failed to: job name cannot be left blank"


def test_queue_commands(env, up, namespace):
    name = namespace[:40] + "-q"
    assert ok(env, "queue", "create", "-n", name, "-w", "3") == ""
    assert env.wait(lambda: ((env.store.get("Queue", name) or {}).get("status") or {}).get("state") == "Open")
    running(env, namespace, vcjob("in-q", 1, cpu="1", queue=name, duration=None))
    assert table(ok(env, "queue", "get", "-n", name)) == [
        ["Name", "Weight", "State", "Parent", "Inqueue", "Pending", "Running", "Unknown", "Completed"],
        [name, "3", "Open", "root", "0", "0", "1", "0", "0"]]
    assert [name, "3", "Open", "root", "0", "0", "1", "0", "0"] in table(ok(env, "queue", "list"))
    wide = table(ok(env, "queue", "get", "-n", name, "-o", "wide"))
    assert wide[0][-3:] == ["Reclaimable", "Capability", "Allocated"] and wide[1][-1].startswith("cpu=1,")
    assert json.loads(ok(env, "queue", "get", "-n", name, "-o", "json"))["metadata"]["uid"] == \
        env.store.get("Queue", name)["metadata"]["uid"]
    uid = env.store.get("Queue", name)["metadata"]["uid"]
    commands = commands_issued(env, lambda: ok(env, "queue", "operate", "-n", name, "-a", "close"))
    ref = {"apiVersion": KINDS["Queue"].api_version, "kind": "Queue", "name": name, "uid": uid, "controller": True,
           "blockOwnerDeletion": True}
    assert [(c["metadata"]["generateName"], c["metadata"]["namespace"], c["metadata"]["ownerReferences"], c["target"],
             c["action"]) for c in commands] == [(f"{name}-closequeue-", "default", [ref], ref, "CloseQueue")]
    assert env.wait(lambda: env.store.get("Queue", name)["status"]["state"] in ("Closing", "Closed"))
    ok(env, "queue", "operate", "-n", name, "-a", "open")
    assert env.wait(lambda: env.store.get("Queue", name)["status"]["state"] == "Open")
    assert ok(env, "queue", "operate", "-n", name, "-a", "update", "-w", "5") == ""
    assert env.store.get("Queue", name)["spec"]["weight"] == 5
    env.kubectl("delete", "job.batch.volcano.sh", "in-q", "-n", namespace)
    ok(env, "queue", "operate", "-n", name, "-a", "close")
    assert env.wait(lambda: env.store.get("Queue", name)["status"]["state"] == "Closed", timeout=60)
    assert ok(env, "queue", "delete", "-n", name) == ""
    assert env.wait(lambda: env.store.get("Queue", name) is None)


def test_queuebinding_commands(env, up, namespace):
    """volcanic's own QueueBindings (hidden commands, docs/vcctl.md): list, get with the usage
    the queuebinding-controller writes, -o json and the not-found line."""
    queue, name = namespace[:40] + "-q", namespace[:40] + "-qb"
    env.apply_queue(queue)
    env.kubectl("label", "namespace", namespace, "vcctl-e2e=bound")
    env.apply({"apiVersion": KINDS["QueueBinding"].api_version, "kind": "QueueBinding", "metadata": {"name": name},
               "spec": {"queue": queue, "namespaces": [namespace],
                        "namespaceSelector": {"matchLabels": {"vcctl-e2e": "bound"}},
                        "limits": {"maxRunningPods": 4, "maxPendingJobs": 2}}})
    try:
        running(env, namespace, vcjob("bound", 1, cpu="1", queue=queue, duration=None))
        usage = lambda: ((env.store.get("QueueBinding", name) or {}).get("status") or {}).get("namespaces")
        assert env.wait(lambda: usage() == {namespace: {"runningPods": 1, "pendingJobs": 0}}, timeout=30), usage()
        row = [name, queue, f"{namespace},vcctl-e2e=bound", "maxRunningPods=4,maxPendingJobs=2"]
        listed = table(ok(env, "queuebinding", "list"))
        assert listed[0] == ["Name", "Queue", "Namespaces", "Limits", "Age"] and row in [r[:4] for r in listed[1:]]
        got = ok(env, "queuebinding", "get", "-N", name).splitlines()
        width = max(len("Namespace"), len(namespace)) + 3
        assert (got[0].split(), got[1].split()[:4], got[2:]) == (listed[0], row, [
            "", f"{'Namespace':<{width}}Running pods   Max running pods   Pending jobs   Max pending jobs   ",
            f"{namespace:<{width}}{'1':<15}{'4':<19}{'0':<15}{'2':<19}"])
        assert json.loads(ok(env, "queuebinding", "get", "-N", name, "-o", "json"))["metadata"]["uid"] == \
            env.store.get("QueueBinding", name)["metadata"]["uid"]
        assert failed(env, "queuebinding", "get", "-N", "nope") == \
            'Failed to get queuebinding: queuebindings.scheduling.volcanic.dev "nope" not found'
    finally:
        env.kubectl("delete", "queuebinding", name, "--wait=false", check=False)
        env.kubectl("delete", "job.batch.volcano.sh,podgroup", "--all", "-n", namespace, check=False)
        env.kubectl("delete", "queue", queue, "--wait=false", check=False)


def test_pod_list(env, up, namespace):
    running(env, namespace, vcjob("podded", 2, cpu="1", duration=None))
    pods = sorted(pods_of(env, "podded", namespace), key=lambda p: p["metadata"]["name"])
    rows = table(ok(env, "pod", "list", "-n", namespace))
    assert rows[0] == ["Name", "Ready", "Status", "Restart", "Age"]
    assert [r[:4] for r in rows[1:]] == [[p["metadata"]["name"], "1/1", "Running", "0"] for p in pods]
    assert [r[:4] for r in table(ok(env, "pod", "list", "-n", namespace, "-j", "podded"))[1:]] == [
        r[:4] for r in rows[1:]]
    wide = table(ok(env, "pod", "list", "-n", namespace, "-o", "wide"))
    assert [r[5:8] for r in wide[1:]] == [[namespace, p["spec"]["nodeName"], p["status"].get("podIP", "<none>")]
                                          for p in pods]
    assert [p["metadata"]["name"] for p in json.loads(ok(env, "pod", "list", "-n", namespace, "-o", "json"))[
        "items"]] == [p["metadata"]["name"] for p in pods]
    assert ok(env, "pod", "list", "-n", namespace, "-j", "nope") == "No resources found\n"


def test_version_and_completion(env, up):
    assert ok(env, "version").splitlines()[0] == "API Version: v1alpha1"
    assert "complete -F _vcctl_complete vcctl" in ok(env, "completion", "bash")
    assert ok(env, "__complete", "queue", "get", "-n", "def") == "default\tQueue\n"


def test_errors_are_one_line_with_volcanos_exit_codes(env, up, namespace, tmp_path):
    assert failed(env, "job", "view", "-N", "nope", "-n", namespace) == \
        'Failed to view job: jobs.batch.volcano.sh "nope" not found'
    assert failed(env, "job", "list", "-s", "http://127.0.0.1:1").startswith("Failed to list job: GET /apis/")
    assert failed(env, "job", "list", "--kubeconfig", str(tmp_path / "none")).startswith("Failed to list job: ")
    assert failed(env, "job", "list", "-o", "xml", code=1) == \
        'Error: invalid argument "xml" for "-o, --output" flag: must be one of json, yaml, wide'
    assert failed(env, "job", "run", "-N", "x", "-m", "two", code=1) == \
        'Error: invalid argument "two" for "-m, --min" flag: strconv.ParseInt: parsing "two": invalid syntax'
    assert failed(env, "job", "run", "-N", "bad", "-m", "3", "-r", "1", "-n", namespace) == (
        "Failed to run job: admission webhook denied the request: job 'minAvailable' should not be greater than "
        "total replicas in tasks")
    # forbidden: a service account's token, without any role
    env.kubectl("create", "serviceaccount", "nobody", "-n", namespace)
    token = env.kubectl("create", "token", "nobody", "-n", namespace).stdout.strip()
    config = yaml.safe_load(Path(env.kubeconfig).read_text())
    config["users"] = [{"name": u["name"], "user": {"token": token}} for u in config["users"]]
    restricted = tmp_path / "nobody.kubeconfig"
    restricted.write_text(yaml.safe_dump(config))
    line = failed(env, "job", "list", "-n", namespace, kubeconfig=str(restricted))
    assert line == (f'Failed to list job: jobs.batch.volcano.sh is forbidden: User "system:serviceaccount:{namespace}:'
                    f'nobody" cannot list resource "jobs" in API group "batch.volcano.sh" in the namespace '
                    f'"{namespace}"'), line


@pytest.mark.skipif(not GO_VCCTL.exists(), reason="Volcano's vcctl is not built (tools/volcano-e2e/build.sh)")
def test_output_is_volcanos_byte_for_byte(env, up, namespace):
    """The read-only commands print what Volcano's Go vcctl prints for the same objects."""
    running(env, namespace, vcjob("same", 2, cpu="1", duration=None), vcjob("twin", 1, cpu="1", duration=None))
    # The other tests' namespaces go away in the background, their jobs and PodGroups with them:
    # the all-namespace tables compare once they are gone.
    env.wait(lambda: all((n.get("status") or {}).get("phase") != "Terminating" for n in env.store.list("Namespace")),
             timeout=120)
    environ = dict(os.environ, KUBECONFIG=env.kubeconfig)
    for args in (["job", "list", "-n", namespace], ["job", "list", "--all-namespaces"], ["queue", "list"],
                 ["queue", "get", "-n", "default"], ["job", "view", "-N", "same", "-n", namespace],
                 ["pod", "list", "-n", namespace], ["job", "list", "-n", namespace, "--selector", "tw"],
                 ["job", "view", "-N", "nope", "-n", namespace], ["job", "list", "-m"], ["job", "run", "--help"],
                 ["queue", "operate", "--help"], ["nope"]):
        for _ in range(5):  # again when an age ticked over between the two
            go = subprocess.run([str(GO_VCCTL), *args], capture_output=True, text=True, env=environ, timeout=60)
            ours = vcctl(env, *args)
            # Volcano prints its failures on stdout, volcanic on stderr
            if (ours.returncode, ours.stdout + ours.stderr) == (go.returncode, go.stdout + go.stderr):
                break
        assert (ours.returncode, ours.stdout + ours.stderr) == (go.returncode, go.stdout + go.stderr), args
