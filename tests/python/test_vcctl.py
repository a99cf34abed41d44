"""vcctl (volcanic.vcctl): the command line of Volcano v1.15.1's vcctl and one-command tools.

Expected texts come from Volcano's code and tests: pkg/cli/*/..._test.go (tables, durations),
test/e2e/vcctl/vcctl.go (help), cmd/cli (errors and exit codes, as cobra and component-base
print them). Commands run on a fake API where Volcano's tests fake the server, and on the
embedded cluster through Cluster.vcctl."""

from __future__ import annotations

import io
import json
import time

import pytest
import yaml

import volcanic
from volcanic.kube.clock import rfc3339
from volcanic.kube.errors import AlreadyExists, NotFound
from volcanic.kube.kinds import KINDS
from volcanic.vcctl import Command, VcctlError, run
from volcanic.vcctl import format as fmt
from volcanic.vcctl.api import NotServed, matches
from volcanic.vcctl.queues import queue_table

NOW = 1_800_000_000.0
JOB_API = KINDS["Job"].api_version


class FakeApi:
    """Volcano's unit tests' fake server: objects by kind, answered as given (any kind but
    those `unserved`, whose CRDs it lacks)."""

    def __init__(self, *objs: dict, unserved: tuple[str, ...] = ()) -> None:
        self.objs = list(objs)
        self.unserved = unserved
        self.created: list[dict] = []
        self.patched: list[tuple] = []
        self.deleted: list[tuple] = []

    def _check(self, kind: str) -> None:
        if kind in self.unserved:
            raise NotServed(KINDS[kind])

    def now(self) -> float:
        return NOW

    def list(self, kind, namespace=None, labels=None):
        self._check(kind)
        return [o for o in self.objs if o["kind"] == kind and matches(o, labels)
                and (namespace is None or o["metadata"].get("namespace") in (None, namespace))]

    def get(self, kind, name, namespace=None):
        self._check(kind)
        for o in self.list(kind, namespace):
            if o["metadata"]["name"] == name:
                return o
        k = KINDS[kind]
        raise NotFound(kind, namespace or "", name, k.not_found(name))

    def create(self, obj):
        self._check(obj["kind"])
        if any(o["kind"] == obj["kind"] and o["metadata"]["name"] == obj["metadata"].get("name") for o in self.objs):
            raise AlreadyExists(obj["kind"], "", obj["metadata"]["name"], f'"{obj["metadata"]["name"]}" already exists')
        self.created.append(obj)
        return dict(obj, metadata=dict(obj["metadata"], name=obj["metadata"].get("name") or "generated"))

    def patch(self, kind, name, namespace, patch):
        self.patched.append((kind, name, namespace, patch))
        return self.get(kind, name, namespace)

    def delete(self, kind, name, namespace=None):
        self.get(kind, name, namespace)
        self.deleted.append((kind, name, namespace))


def vc(api, *argv: str, prog: str = "vcctl", extra=()) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), lambda master, kubeconfig: api, prog, out, err, extra)
    return code, out.getvalue(), err.getvalue()


def job(name: str, namespace: str = "default", queue: str = "default", scheduler: str = "", **status) -> dict:
    return {"apiVersion": JOB_API, "kind": "Job", "metadata": {"name": name, "namespace": namespace},
            "spec": {"queue": queue, "schedulerName": scheduler}, "status": status}


# Tables, from Volcano's *_test.go.
LIST_HEADER = ("Name       Creation       Phase       JobType     Replicas    Min   Pending   Running   Succeeded   "
               "Failed    Unknown     RetryCount")


@pytest.mark.parametrize("argv, jobs, expected", [
    # pkg/cli/job/list_test.go TestListJob "Normal Case"
    ((), [job("test-job")],
     LIST_HEADER + "\ntest-job   0001-01-01                 Batch       0           0     0         0         0           "
     "0         0           0"),
    # "Normal Case with queueName filter"
    (("-q", "test-queue"), [job("test-job"), job("test-queue", queue="test-queue")],
     "Name         Creation       Phase       JobType     Replicas    Min   Pending   Running   Succeeded   Failed    "
     "Unknown     RetryCount\ntest-queue   0001-01-01                 Batch       0           0     0         0         "
     "0           0         0           0"),
    # "Normal Case with namespace filter"
    (("-n", "default"), [job("test-job"), job("test-queue", queue="test-queue")],
     "Name         Creation       Phase       JobType     Replicas    Min   Pending   Running   Succeeded   Failed    "
     "Unknown     RetryCount\ntest-job     0001-01-01                 Batch       0           0     0         0         "
     "0           0         0           0         \ntest-queue   0001-01-01                 Batch       0           0  "
     "   0         0         0           0         0           0"),
    # "Normal Case with all namespace filter"
    (("--all-namespaces",), [job("test-job", "kube-sysyem"), job("test-queue", queue="test-queue")],
     "Namespace     Name         Creation       Phase       JobType     Replicas    Min   Pending   Running   "
     "Succeeded   Failed    Unknown     RetryCount\nkube-sysyem   test-job     0001-01-01                 Batch       "
     "0           0     0         0         0           0         0           0         \ndefault       test-queue   "
     "0001-01-01                 Batch       0           0     0         0         0           0         0           0"),
    # "Normal Case with scheduler filter"
    (("-S", "volcano", "--all-namespaces=false"),
     [job("test-job", scheduler="test-scheduler"), job("test-queue", queue="test-queue", scheduler="volcano")],
     "Name         Creation       Phase       JobType     Replicas    Min   Pending   Running   Succeeded   Failed    "
     "Unknown     RetryCount\ntest-queue   0001-01-01                 Batch       0           0     0         0         "
     "0           0         0           0"),
    # "Normal Case with selector filter"
    (("--selector", "test-job"), [job("test-job", scheduler="test-scheduler"), job("test-queue", scheduler="volcano")],
     LIST_HEADER + "\ntest-job   0001-01-01                 Batch       0           0     0         0         0           "
     "0         0           0"),
])
def test_job_list_prints_volcanos_table(argv, jobs, expected):
    code, out, err = vc(FakeApi(*jobs), "job", "list", *argv)
    assert (code, out.strip(), err) == (0, expected, "")


def test_job_list_counts_and_no_resources():
    j = job("j", phase=None)
    j["metadata"]["creationTimestamp"] = rfc3339(NOW)
    j["metadata"]["labels"] = {"volcano.sh/job-type": "MPI"}
    j["spec"]["tasks"] = [{"replicas": 2}, {"replicas": 3}]
    j["status"] = {"state": {"phase": "Running"}, "minAvailable": 4, "pending": 1, "running": 3, "succeeded": 5,
                   "failed": 6, "unknown": 7, "retryCount": 8}
    _, out, _ = vc(FakeApi(j), "job", "list")
    date = time.strftime("%Y-%m-%d", time.localtime(NOW))
    assert out.splitlines()[1] == (f"j      {date}     Running     MPI         5           4     1         3         5"
                                   "           6         7           8         ")
    assert vc(FakeApi(), "job", "list") == (0, "No resources found\n", "")


def test_queue_tables_are_volcanos():
    # pkg/cli/queue/queue_test.go TestListQueue "Single queue with formatting"
    q = {"kind": "Queue", "metadata": {"name": "test-queue"}, "spec": {"weight": 1, "parent": "root"},
         "status": {"state": "Open"}}
    counts = {"test-queue": {"Inqueue": 1, "Pending": 2, "Running": 3, "Unknown": 4, "Completed": 5}}
    assert queue_table([q], counts, False) == (
        "Name                     Weight  State   Parent  Inqueue Pending Running Unknown Completed\n"
        "test-queue               1       Open    root    1       2       3       4       5       \n")
    # TestListQueue_residualPg: PodGroups of a queue that does not exist are not counted
    queues = [{"kind": "Queue", "metadata": {"name": n}} for n in ("testQueue1", "testQueue2")]
    pgs = [{"kind": "PodGroup", "metadata": {"name": f"pg{i}", "namespace": "default"}, "spec": {"queue": q}}
           for i, q in enumerate(("testQueue1", "testQueue2", "testQueue3"))]
    _, out, _ = vc(FakeApi(*queues, *pgs), "queue", "list")
    assert out.strip() == ("Name                     Weight  State   Parent  Inqueue Pending Running Unknown Completed\n"
                           "testQueue1               0                       0       0       0       0       0       \n"
                           "testQueue2               0                       0       0       0       0       0")


def pod(name: str, labels: dict | None = None, annotations: dict | None = None, **status) -> dict:
    """pkg/cli/pod/pod_test.go's buildPod: one container, Running and Ready, three days old."""
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": labels or {},
                                        "annotations": annotations or {}, "creationTimestamp": rfc3339(NOW - 3 * 86400)},
            "spec": {"containers": [{"name": "my-container", "image": "nginx"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}], **status}}


POD_HEADER = "Name          Ready      Status         Restart  Age       "


@pytest.mark.parametrize("argv, pods, expected", [
    ((), [pod("my-pod", {"volcano.sh/job-name": "my-job1"})], POD_HEADER + "\nmy-pod        0/1        Running        0        3d"),
    (("-j", "my-job1"), [pod("my-pod", {"volcano.sh/job-name": "my-job1"})],
     POD_HEADER + "\nmy-pod        0/1        Running        0        3d"),
    (("-q", "my-queue1"), [pod("my-pod1", {"volcano.sh/queue-name": "my-queue1"}),
                           pod("my-pod2", {"volcano.sh/job-name": "my-job2", "volcano.sh/queue-name": "my-queue1"}),
                           pod("my-pod3", {}, {"scheduling.volcano.sh/queue-name": "my-queue1"})],
     "Name           Ready      Status         Restart  Age       \nmy-pod1        0/1        Running        0        3d"
     "        \nmy-pod2        0/1        Running        0        3d        \nmy-pod3        0/1        Running        0"
     "        3d"),
    (("-q", "my-queue1", "-j", "my-job1"),
     [pod("my-pod1", {"volcano.sh/job-name": "my-job1", "volcano.sh/queue-name": "my-queue1"})],
     "Name           Ready      Status         Restart  Age       \nmy-pod1        0/1        Running        0        3d"),
])
def test_pod_list_prints_volcanos_table(argv, pods, expected):
    """pkg/cli/pod/pod_test.go TestListPod."""
    code, out, err = vc(FakeApi(*pods), "pod", "list", *argv)
    assert (code, out.strip(), err) == (0, expected, "")


def test_pod_list_refuses_a_job_of_another_queue():
    """TestListPod "... and does not match": Volcano's error, exit 255."""
    p = pod("my-pod1", {"volcano.sh/job-name": "my-job1", "volcano.sh/queue-name": "my-queue1"})
    assert vc(FakeApi(p), "pod", "list", "-q", "my-queue2", "-j", "my-job1") == (
        255, "", "Failed to list pod: the input vcjob my-job1 does not match the queue my-queue2\n")


def test_pod_status_column_follows_kubectl():
    waiting = pod("w", {"volcano.sh/job-name": "j"}, containerStatuses=[
        {"name": "c", "ready": False, "restartCount": 2, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
         "lastState": {"terminated": {"exitCode": 1, "finishedAt": rfc3339(NOW - 90)}}}])
    done = pod("d", {"volcano.sh/job-name": "j"}, phase="Succeeded", containerStatuses=[
        {"name": "c", "ready": False, "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}])
    gated = pod("g", {"volcano.sh/job-name": "j"}, phase="Pending",
                conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}])
    init = pod("i", {"volcano.sh/job-name": "j"}, phase="Pending", initContainerStatuses=[
        {"name": "setup", "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}}])
    init["spec"]["initContainers"] = [{"name": "setup"}, {"name": "more"}]
    deleting = pod("x", {"volcano.sh/job-name": "j"}, containerStatuses=[
        {"name": "c", "ready": True, "restartCount": 0, "state": {"running": {}}}])
    deleting["metadata"]["deletionTimestamp"] = rfc3339(NOW)
    _, out, _ = vc(FakeApi(waiting, done, gated, init, deleting), "pod", "list")
    rows = [line.split()[:5] for line in out.splitlines()[1:]]
    assert rows == [["w", "0/1", "CrashLoopBackOff", "2", "(90s"], ["d", "0/1", "Completed", "0", "3d"],
                    ["g", "0/1", "SchedulingGated", "0", "3d"], ["i", "0/1", "Init:0/2", "0", "3d"],
                    ["x", "1/1", "Terminating", "0", "3d"]]
    assert "2 (90s ago)" in out


@pytest.mark.parametrize("seconds, expected", [
    # pkg/cli/util/util_test.go TestJobUtil (Volcano's HumanDuration)
    (-60, "<invalid>"), (-0.001, "0s"), (62, "62s"), (180, "3m"), (190, "3m10s"), (121 * 60 + 56, "121m"),
    (5 * 3600 + 9, "5h"), (5 * 3600 + 7 * 60 + 9, "5h7m"), (12 * 3600 + 7 * 60 + 9, "12h"),
    (5 * 86400 + 7 * 60 + 9, "5d"), (5 * 86400 + 9 * 3600, "5d9h"), (531 * 86400 + 7 * 60 + 9, "531d"),
    ((365 * 5 + 89) * 86400 + 7 * 60 + 9, "5y89d"), ((365 * 12 + 15) * 86400 + 7 * 60 + 9, "12y"),
])
def test_human_duration_is_volcanos(seconds, expected):
    assert fmt.human_duration(seconds, volcano=True) == expected


def test_apimachinerys_human_duration_drops_zero_days():
    assert fmt.human_duration(365 * 3 * 86400, volcano=True) == "3y0d"
    assert fmt.human_duration(365 * 3 * 86400) == "3y"


def flow(kind: str, name: str, **extra) -> dict:
    return {"apiVersion": KINDS[kind].api_version, "kind": kind,
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": rfc3339(NOW - 3 * 86400)}, **extra}


def test_jobflow_and_jobtemplate_tables_are_volcanos():
    """pkg/cli/jobflow/jobflow_test.go TestListJobFlow, TestGetJobFlow; jobtemplate's."""
    api = FakeApi(flow("JobFlow", "test-jobflow", status={"state": {"phase": "Succeed"}}),
                  flow("JobTemplate", "test-jobtemplate"))
    table = "Name            Namespace    Phase      Age    \ntest-jobflow    default      Succeed    3d"
    assert vc(api, "jobflow", "list")[1].strip() == table
    assert vc(api, "jobflow", "get", "-N", "test-jobflow")[1].strip() == table
    table = "Name                Namespace    \ntest-jobtemplate    default"
    assert vc(api, "jobtemplate", "list")[1].strip() == table
    assert vc(api, "jobtemplate", "get", "-N", "test-jobtemplate")[1].strip() == table


def test_describe_prints_volcanos_typed_objects():
    """TestDescribeJobFlow, TestDescribeJobTemplate: yaml (keys sorted) and json (struct order),
    an empty spec and status where the object has none."""
    api = FakeApi({"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
                   "metadata": {"name": "test-jobflow", "namespace": "default"}},
                  {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
                   "metadata": {"name": "test-jobtemplate", "namespace": "default"}})
    assert vc(api, "jobflow", "describe", "-N", "test-jobflow")[1].strip() == (
        "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata:\n  name: test-jobflow\n  namespace: default\n"
        "spec: {}\nstatus:\n  state: {}")
    assert vc(api, "jobflow", "describe", "-N", "test-jobflow", "-o", "json")[1].strip() == (
        '{\n  "kind": "JobFlow",\n  "apiVersion": "flow.volcano.sh/v1alpha1",\n  "metadata": {\n'
        '    "name": "test-jobflow",\n    "namespace": "default"\n  },\n  "spec": {},\n  "status": {\n'
        '    "state": {}\n  }\n}')
    assert vc(api, "jobtemplate", "describe", "-N", "test-jobtemplate")[1].strip() == (
        "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata:\n  name: test-jobtemplate\n"
        "  namespace: default\nspec: {}\nstatus: {}")
    assert vc(api, "jobtemplate", "describe", "-N", "test-jobtemplate", "-o", "json")[1].strip() == (
        '{\n  "kind": "JobTemplate",\n  "apiVersion": "flow.volcano.sh/v1alpha1",\n  "metadata": {\n'
        '    "name": "test-jobtemplate",\n    "namespace": "default"\n  },\n  "spec": {},\n  "status": {}\n}')
    both = vc(FakeApi(flow("JobFlow", "a"), flow("JobFlow", "b")), "jobflow", "describe")[1]
    assert both.count("kind: JobFlow") == 2 and "\n\n\napiVersion" in both


JOBFLOWS = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata:
  name: test-a
  namespace: default
spec:
  jobRetainPolicy: delete
  flows:
    - name: a
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata:
  name: test-b
spec:
  flows:
    - name: a
"""


def test_jobflow_create_and_delete_from_a_file(tmp_path):
    """TestCreateJobFlow, TestDeleteJobFlow: one line per document; a document that fails is
    said on stderr and the others go on (exit 0, as Volcano)."""
    path = tmp_path / "flows.yaml"
    path.write_text(JOBFLOWS)
    api = FakeApi(flow("JobFlow", "test-b"))
    assert vc(api, "jobflow", "create", "-f", str(path)) == (
        0, "Created JobFlow: default/test-a\n", "Failed to create JobFlow: \"test-b\" already exists\n")
    assert [o["metadata"]["name"] for o in api.created] == ["test-a"]
    assert api.created[0]["spec"]["jobRetainPolicy"] == "delete"
    assert vc(api, "jobflow", "delete", "-f", str(path)) == (
        0, "Deleted JobFlow: default/test-b\n", 'Failed to delete JobFlow: jobflows.flow.volcano.sh "test-a" not found\n')
    assert vc(api, "jobflow", "delete", "-N", "test-b") == (0, "Deleted JobFlow: default/test-b\n", "")
    assert vc(api, "jobflow", "delete") == (255, "", "Failed to delete jobflow: jobflow name must be specified\n")
    assert vc(api, "jobtemplate", "delete") == (
        255, "", "Failed to delete jobtemplate: job template name must be specified\n")
    assert vc(api, "jobflow", "create", "-f", str(tmp_path / "none.yaml")) == (
        255, "", f"Failed to create jobflow: open {tmp_path / 'none.yaml'}: no such file or directory\n")


def test_flow_kinds_not_served_are_one_line_naming_the_kind(tmp_path):
    path = tmp_path / "flows.yaml"
    path.write_text(JOBFLOWS)
    api = FakeApi(unserved=("JobFlow", "JobTemplate"))
    for argv in (("jobflow", "list"), ("jobflow", "get", "-N", "x"), ("jobflow", "create", "-f", str(path)),
                 ("jobflow", "describe"), ("jobtemplate", "list"), ("jobtemplate", "delete", "-N", "x")):
        code, out, err = vc(api, *argv)
        kind = "JobFlow" if argv[0] == "jobflow" else "JobTemplate"
        assert (code, out) == (255, ""), argv
        assert err.count("\n") == 1 and f'resource type "{kind.lower()}s" ({kind}, flow.volcano.sh/v1alpha1)' in err
        assert "is volcanic installed? (volcanic install)" in err


# Flags, help and errors as cobra and pflag print them.
def test_flag_spellings_are_pflags():
    api = FakeApi(job("jx"))
    for argv in (["-N", "jx"], ["--name", "jx"], ["--name=jx"], ["-Njx"], ["-N=jx"], ["-N", "jx", "-n", "default"],
                 ["--namespace", "default", "-N", "jx"], ["-N", "other", "--name", "jx"]):
        assert vc(api, "job", "view", *argv)[0] == 0, argv
    # klog's global flags are taken anywhere, and `_` spells `-`
    assert vc(api, "-v", "4", "job", "--log_flush_frequency=2s", "view", "-N", "jx", "--vmodule", "x=1")[0] == 0


@pytest.mark.parametrize("argv, message", [
    (("job", "run", "-m", "abc"), 'invalid argument "abc" for "-m, --min" flag: strconv.ParseInt: parsing "abc": '
                                  "invalid syntax"),
    (("queue", "create", "-w", "99999999999"), 'invalid argument "99999999999" for "-w, --weight" flag: '
                                               'strconv.ParseInt: parsing "99999999999": value out of range'),
    (("job", "list", "--all-namespaces=maybe"), 'invalid argument "maybe" for "--all-namespaces" flag: '
                                                'strconv.ParseBool: parsing "maybe": invalid syntax'),
    (("job", "list", "--bogus"), "unknown flag: --bogus"),
    (("job", "list", "-x"), "unknown shorthand flag: 'x' in -x"),
    (("job", "list", "-n"), "flag needs an argument: 'n' in -n"),
    (("job", "list", "--namespace"), "flag needs an argument: --namespace"),
    (("job", "list", "-o", "xml"), 'invalid argument "xml" for "-o, --output" flag: must be one of json, yaml, wide'),
    (("jobflow", "describe", "-o", "wide"), 'invalid argument "wide" for "-o, --format" flag: must be one of json, '
                                            "yaml"),
    (("-v", "x", "version"), 'invalid argument "x" for "-v, --v" flag: strconv.ParseInt: parsing "x": invalid syntax'),
    (("foo",), 'unknown command "foo" for "vcctl"\n\nDid you mean this?\n\tjob\n\tpod\n'),
    (("jbo", "list"), 'unknown command "jbo" for "vcctl"\n\nDid you mean this?\n\tjob\n'),
])
def test_command_line_errors_are_cobras(argv, message):
    assert vc(FakeApi(), *argv) == (1, "", f"Error: {message}\n")


@pytest.mark.parametrize("argv, message", [
    (("job", "run"), "Failed to run job: job name cannot be left blank"),
    (("job", "run", "-N", "j", "-R", "cpu"), "Failed to run job: invalid argument syntax cpu, expected "
                                             "<resource>=<value>"),
    (("job", "run", "-N", "j", "-L", "cpu=lots"), "Failed to run job: quantities must match the regular expression "
                                                  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    (("job", "run", "-f", "job.json"), "Failed to run job: only support yaml file"),
    (("job", "run", "-f", "/nonexistent/job.yaml"), "Failed to run job: failed to read file, err: open "
                                                    "/nonexistent/job.yaml: no such file or directory"),
    (("job", "view"), "Failed to view job: job name (specified by --name or -N) is mandatory to view a particular job"),
    (("job", "view", "-N", "nope"), 'Failed to view job: jobs.batch.volcano.sh "nope" not found'),
    (("job", "suspend"), "Failed to suspend job: job name is mandatory to suspend a particular job"),
    (("job", "resume"), "Failed to resume job: job name is mandatory to resume a particular job"),
    (("job", "delete"), "Failed to delete job: job name is mandatory to delete a particular job"),
    (("job", "delete", "-N", "nope", "-n", "ns"), 'Failed to delete job: jobs.batch.volcano.sh "nope" not found'),
    (("queue", "delete"), "Failed to delete queue: queue name must be specified"),
    (("queue", "get"), "Failed to get queue: name is mandatory to get the particular queue details"),
    (("queue", "operate"), "Failed to operate queue: queue name must be specified"),
    (("queue", "operate", "-n", "q"), "Failed to operate queue: action can not be null"),
    (("queue", "operate", "-n", "q", "-a", "invalid"), "Failed to operate queue: action invalid invalid, valid "
                                                       "actions are open, close and update"),
    (("queue", "operate", "-n", "abnormal-case-invalid-weight", "-a", "update"),
     "Failed to operate queue: when update queue abnormal-case-invalid-weight, weight must be specified, the value "
     "must be greater than 0"),
    (("jobflow", "get"), "Failed to get jobflow: name is mandatory to get the particular jobflow details"),
    (("jobtemplate", "get"), "Failed to get jobtemplate: name is mandatory to get the particular job template details"),
])
def test_failures_are_volcanos_checkerror(argv, message):
    """Volcano's messages (pkg/cli/*, operate_test.go, delete_test.go, queue_test.go), printed as
    its util.CheckError prints them, exit 255 (os.Exit(-1)); on stderr in volcanic."""
    assert vc(FakeApi(), *argv) == (255, "", message + "\n")


@pytest.mark.parametrize("prog, argv, message", [
    ("vsub", (), "Failed to: job name cannot be left blank"),  # a root command: no names after "Failed to"
    ("vcancel", (), "Failed to: job name is mandatory to cancel a particular job"),
    ("vsuspend", (), "Failed to: job name is mandatory to suspend a particular job"),
    ("vresume", (), "Failed to: job name is mandatory to resume a particular job"),
    ("vjobs", ("-n", "nope"), 'Failed to: jobs.batch.volcano.sh "nope" not found'),
    ("vqueues", ("-n", "nope"), 'Failed to: queues.scheduling.volcano.sh "nope" not found'),
])
def test_one_command_tools_fail_as_volcanos(prog, argv, message):
    assert vc(FakeApi(), *argv, prog=prog) == (255, "", message + "\n")


GLOBAL = """Global Flags:
      --log-flush-frequency duration   Maximum number of seconds between log flushes (default 5s)
  -v, --v Level                        number for the log level verbosity
      --vmodule moduleSpec             comma-separated list of pattern=N settings for file-filtered logging (only works for the default text log format)
"""


def named_job_help(about: str, name: str) -> str:
    """The help of `vcctl job suspend` and `resume` (test/e2e/vcctl/vcctl.go)."""
    return f"""{about}

Usage:
  vcctl job {name} [flags]

Flags:
  -h, --help                help for {name}
  -k, --kubeconfig string   (optional) absolute path to the kubeconfig file
  -s, --master string       the address of apiserver
  -N, --name string         the name of job
  -n, --namespace string    the namespace of job (default "default")

""" + GLOBAL


@pytest.mark.parametrize("argv, expected", [
    # test/e2e/vcctl/vcctl.go's expected help, byte for byte
    (("job", "--help"), """vcctl command line operation job

Usage:
  vcctl job [command]

Available Commands:
  delete      delete a job
  list        list job information
  resume      resume a job
  run         run job by parameters from the command line
  suspend     abort a job
  view        show job information

Flags:
  -h, --help   help for job

""" + GLOBAL + """
Use "vcctl job [command] --help" for more information about a command.
"""),
    (("job", "suspend", "-n", "job1", "--help"), named_job_help("abort a job", "suspend")),
    (("job", "resume", "-n", "job1", "--help"), named_job_help("resume a job", "resume")),
    (("job", "run", "--help"), """run job by parameters from the command line

Usage:
  vcctl job run [flags]

Flags:
  -f, --filename string     the yaml file of job
  -h, --help                help for run
  -i, --image string        the container image of job (default "busybox")
  -k, --kubeconfig string   (optional) absolute path to the kubeconfig file
  -L, --limits string       the resource limit of the task (default "cpu=1000m,memory=100Mi")
  -s, --master string       the address of apiserver
  -m, --min int             the minimal available tasks of job (default 1)
  -N, --name string         the name of job
  -n, --namespace string    the namespace of job (default "default")
  -r, --replicas int        the total tasks of job (default 1)
  -R, --requests string     the resource request of the task (default "cpu=1000m,memory=100Mi")
  -S, --scheduler string    the scheduler for this job (default "volcano")

""" + GLOBAL),
    # ... with volcanic's -o (the only difference from Volcano's)
    (("job", "list", "--help"), """list job information

Usage:
  vcctl job list [flags]

Flags:
      --all-namespaces      list jobs in all namespaces
  -h, --help                help for list
  -k, --kubeconfig string   (optional) absolute path to the kubeconfig file
  -s, --master string       the address of apiserver
  -n, --namespace string    the namespace of job (default "default")
  -q, --queue string        list job with specified queue name
  -S, --scheduler string    list job with specified scheduler name
      --selector string     fuzzy matching jobName

""" + GLOBAL),
    # ... and its completion command
    (("--help",), """Usage:
  vcctl [command]

Available Commands:
  help        Help about any command
  job         vcctl command line operation job
  jobflow     vcctl command line operation jobflow
  jobtemplate vcctl command line operation jobtemplate
  pod         vcctl command line operation pod
  queue       Queue Operations
  version     Print the version information

Flags:
  -h, --help                           help for vcctl
      --log-flush-frequency duration   Maximum number of seconds between log flushes (default 5s)
  -v, --v Level                        number for the log level verbosity
      --vmodule moduleSpec             comma-separated list of pattern=N settings for file-filtered logging (only works for the default text log format)

Use "vcctl [command] --help" for more information about a command.
"""),
])
def test_help_is_cobras(argv, expected):
    assert vc(FakeApi(), *argv) == (0, expected, "")


def test_groups_and_help_command_print_help():
    job_help = vc(FakeApi(), "job", "--help")[1]
    assert vc(FakeApi(), "job") == (0, job_help, "")
    assert vc(FakeApi(), "job", "nope") == (0, job_help, "")  # cobra: a group ignores what it does not know
    assert vc(FakeApi(), "help", "job") == (0, job_help, "")
    assert vc(FakeApi()) == vc(FakeApi(), "--help")
    code, out, err = vc(FakeApi(), "help", "nope")
    assert (code, out) == (0, "") and err.startswith("Unknown help topic [`nope`]\nUsage:\n  vcctl [command]")
    assert "Examples:\nvcctl version\n" in vc(FakeApi(), "version", "--help")[1]


def test_vsub_help_shows_its_environment_defaults():
    out = vc(FakeApi(), "--help", prog="vsub")[1]
    assert out.startswith("submit a job with specified name and arguments. yaml/json file is not accepted, you may "
                          "refer to kubectl.\n\nUsage:\n  vsub [flags]\n\nFlags:\n")
    assert "  -i, --image string                   the container image of job, overwrite the value of " \
           "'VOLCANO_DEFAULT_IMAGE' (default \"busybox\")\n" in out
    assert "  -n, --name string                    the name of job\n" in out and "Global Flags" not in out


def test_a_bug_is_one_line_and_a_traceback_on_request(monkeypatch):
    def broken(ctx):
        raise ZeroDivisionError("boom")
    extra = [("job", Command("broken", "a broken command", run=broken, needs_api=False))]
    code, out, err = vc(FakeApi(), "job", "broken", extra=extra)
    assert (code, out) == (255, "")
    assert err.count("\n") == 1 and err.startswith("Failed to broken job: unexpected ZeroDivisionError: boom")
    assert "Traceback" in vc(FakeApi(), "job", "broken", "-v", "1", extra=extra)[2]
    monkeypatch.setenv("VCCTL_TRACEBACK", "1")
    assert "Traceback" in vc(FakeApi(), "job", "broken", extra=extra)[2]


def test_commands_of_other_modules_join_the_tree():
    seen = []
    extra = [("job", Command("why", "why a job waits", run=lambda ctx: seen.append(ctx.flags.name),
                             flags=[volcanic.vcctl.Flag("name", "N")])),
             ("", Command("hello", "say hello", run=lambda ctx: ctx.write("hello\n"), needs_api=False))]
    assert vc(FakeApi(), "job", "why", "-N", "j", extra=extra)[0] == 0 and seen == ["j"]
    assert vc(FakeApi(), "hello", extra=extra)[1] == "hello\n"
    assert "  why         why a job waits" in vc(FakeApi(), "job", "--help", extra=extra)[1]
    with pytest.raises(ValueError, match="no command 'nope'"):
        vc(FakeApi(), "version", extra=[("nope", Command("x"))])
