"""Objects stored past what the API server would refuse today are reported on the object
(issue 33, "Faults on a real API server" 4: a Job with `replicas: -1` written past admission
was reported nowhere, Pending forever).

How an object gets there: the embedded store's CRD schemas switched off
(`c.api.check_schemas = False`), as on a cluster whose CRDs are older than Volcano v1.15's
(an operator upgrading from an older Volcano), while Volcano v1.15's webhook, which leaves
replicas >= 0 and the like to the CRD (pkg/webhooks/admission/jobs/validate/admit_job.go,
validateJobCreate, against config/crd/volcano/bases/batch.volcano.sh_jobs.yaml), admits it.

- The job controller holds a Job whose spec the Job CRD's schema refuses: a Warning Event
  JobSpecError with the API server's message, status.state reason and message, the Pending
  phase and condition, no PodGroup, no pods, no controller error; fixed, it runs.
- The scheduler's loop puts a Warning Event on an object its engine refuses as malformed
  (InvalidObject on a PodGroup or Queue, FailedScheduling on a Pod), once per message and
  version, beside the error line it logs.
"""

from __future__ import annotations

from typing import Any

import pytest

from job_helpers import NS, cluster, command, job, node, phase, podgroup, pods, status, task, wait
import volcanic
from volcanic.admission.chain import AdmissionChain

JOB_INVALID = 'Job.batch.volcano.sh "j" is invalid: '


def past_the_schema(*nodes: dict) -> volcanic.Cluster:
    """A cluster with Volcano's admission whose store no longer checks the CRD schemas."""
    c = cluster(*nodes)
    c.api.check_schemas = False
    return c


def job_events(c: volcanic.Cluster, reason: str) -> list[dict]:
    return [e for e in c.list("Event", NS) if e["reason"] == reason and e["involvedObject"]["kind"] == "Job"]


def held_message(c: volcanic.Cluster) -> str | None:
    state = status(c).get("state") or {}
    return state.get("message") if state.get("reason") == "JobSpecError" else None


def edited(c: volcanic.Cluster, change: Any) -> None:
    """Updates job j as `kubectl edit` does: the stored object, changed by `change`."""
    j = c.get("Job", "j", NS)
    change(j["spec"])
    c.apply(j)


def test_a_job_with_negative_replicas_is_held_and_reported_then_runs_once_fixed() -> None:
    """Task b's replicas -1 (and the minAvailable -1 Volcano's mutating webhook copies from
    it) pass Volcano v1.15's webhook; the CRD schema would refuse both. One Warning Event
    with the API server's message, the same message in status.state, the Pending condition;
    no PodGroup, no pods, nothing retried. Fixed by an update the schema passes, it runs."""
    c = past_the_schema(node("n1"))
    c.apply(job("j", task("a", 2), task("b", -1), min_available=1))
    c.run(60)
    message = (JOB_INVALID + "[spec.tasks[1].replicas: Invalid value: -1: spec.tasks[1].replicas in body "
               "should be greater than or equal to 0, spec.tasks[1].minAvailable: Invalid value: -1: "
               "spec.tasks[1].minAvailable in body should be greater than or equal to 0]")
    warnings = job_events(c, "JobSpecError")
    assert [(e["type"], e["message"]) for e in warnings] == [("Warning", message)]
    assert warnings[0]["involvedObject"]["name"] == "j"
    st = status(c)
    assert st["state"]["phase"] == "Pending" and held_message(c) == message
    assert [cond["status"] for cond in st["conditions"]] == ["Pending"]
    assert pods(c) == {} and podgroup(c) is None and c.list("PodGroup", NS) == []
    assert c.errors == []

    # A status-only change, a pod event or a Command brings the job up again: no new problem
    # Event, and the Command's action is said not to have run.
    command(c, "RestartJob")
    c.run(30)
    assert len(job_events(c, "JobSpecError")) == 2
    assert job_events(c, "JobSpecError")[1]["message"].startswith("action RestartJob not executed")
    assert status(c).get("retryCount") is None and pods(c) == {}

    c.api.check_schemas = True  # the CRDs upgraded: the fix passes them
    edited(c, lambda spec: spec["tasks"][1].update(replicas=1, minAvailable=1))
    assert wait(c, lambda: phase(c) == "Running", 10)
    assert sorted(pods(c)) == ["j-a-0", "j-a-1", "j-b-0"] and podgroup(c) is not None
    assert held_message(c) is None and "reason" not in status(c)["state"]
    assert len(job_events(c, "JobSpecError")) == 2
    assert c.errors == []


def test_a_status_write_refused_for_the_spec_still_leaves_the_event(monkeypatch: pytest.MonkeyPatch) -> None:
    """An API server without validation ratcheting (Kubernetes before 1.30) checks the whole
    Job on a status write and refuses the held job's: the Event is there, nothing raises, no
    controller error, nothing created, and the job is not tried again and again."""
    c = past_the_schema(node("n1"))
    writes = []

    def refuse_jobs(obj: dict) -> dict:
        if obj["kind"] == "Job":
            writes.append(obj)
            raise volcanic.InvalidObject(JOB_INVALID + "spec.tasks[1].replicas: ...")
        return type(c.api).update_status(c.api, obj)
    monkeypatch.setattr(c.api, "update_status", refuse_jobs)
    c.apply(job("j", task("a", 2), task("b", -1), min_available=1))
    c.run(60)
    assert len(job_events(c, "JobSpecError")) == 1 and len(writes) == 1
    assert pods(c) == {} and c.list("PodGroup", NS) == []
    assert c.errors == []


@pytest.mark.parametrize(("spec", "error"), [
    ({"minAvailable": -1}, "spec.minAvailable: Invalid value: -1: spec.minAvailable in body should be greater "
                           "than or equal to 0"),
    ({"maxRetry": -1}, "spec.maxRetry: Invalid value: -1: spec.maxRetry in body should be greater than or equal to 0"),
    ({"ttlSecondsAfterFinished": -5}, "spec.ttlSecondsAfterFinished: Invalid value: -5: "
                                      "spec.ttlSecondsAfterFinished in body should be greater than or equal to 0"),
    ({"queue": "Not_A_Name"}, 'spec.queue: Invalid value: "Not_A_Name": spec.queue in body should match '
                              "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'"),
    ({"volumes": [{"mountPath": "a:b"}]}, 'spec.volumes[0].mountPath: Invalid value: "a:b": '
                                          "spec.volumes[0].mountPath in body should match '^[^:]+$'"),
], ids=["minAvailable", "maxRetry", "ttlSecondsAfterFinished", "queue", "mountPath"])
def test_every_field_the_job_crd_constrains_holds_the_job(spec: dict[str, Any], error: str) -> None:
    """Any field the Job CRD's schema refuses (config/crd/volcano/bases/batch.volcano.sh_jobs.yaml),
    not only replicas: the API server's message names the field and the rule."""
    c = past_the_schema(node("n1"))
    j = job("j", task("t", 1))
    j["spec"].update(spec)
    c.api.admission = AdmissionChain()  # the webhook refuses some of these itself: down
    c.apply(j)
    c.run(10)
    assert [e["message"] for e in job_events(c, "JobSpecError")] == [JOB_INVALID + error]
    assert held_message(c) == JOB_INVALID + error
    assert pods(c) == {} and c.list("PodGroup", NS) == []
    assert c.errors == []


def test_a_running_job_updated_past_the_schema_is_held_where_it_is_and_resumes() -> None:
    """A running job whose spec is changed to one the schema refuses keeps its phase, pods and
    PodGroup (nothing is created or deleted for it) and says why; the next valid update
    scales it as asked."""
    c = cluster(node("n1"))
    c.apply(job("j", task("t", 2)))
    assert wait(c, lambda: phase(c) == "Running", 10)
    c.api.check_schemas = False
    edited(c, lambda spec: spec["tasks"][0].update(replicas=3, minAvailable=-1))
    c.run(10)
    assert phase(c) == "Running" and sorted(pods(c)) == ["j-t-0", "j-t-1"]
    assert held_message(c) == (JOB_INVALID + "spec.tasks[0].minAvailable: Invalid value: -1: "
                               "spec.tasks[0].minAvailable in body should be greater than or equal to 0")
    assert len(job_events(c, "JobSpecError")) == 1
    c.api.check_schemas = True
    edited(c, lambda spec: spec["tasks"][0].update(minAvailable=3))
    assert wait(c, lambda: len(pods(c)) == 3 and held_message(c) is None, 10)
    assert phase(c) == "Running"
    assert c.errors == []


def test_a_held_job_can_still_be_aborted() -> None:
    """A Command that only deletes (AbortJob, CompleteJob, TerminateJob) still runs on a held
    job, and its phase moving on drops the hold's reason."""
    c = past_the_schema(node("n1"))
    c.apply(job("j", task("a", 2), task("b", -1), min_available=1))
    c.run(5)
    assert held_message(c) is not None
    command(c, "AbortJob")
    assert wait(c, lambda: phase(c) == "Aborted", 10)
    assert held_message(c) is None
    assert c.errors == []


def test_a_podgroup_the_engine_refuses_gets_a_warning_once_per_version() -> None:
    """A PodGroup with minMember -1 (Volcano's CRD: minimum 0) stored past the schema: the
    scheduler logs the engine's refusal, as before, and puts it on the PodGroup as a Warning
    Event; not again for the same version, again for a new one."""
    c = volcanic.Cluster(admission=AdmissionChain())
    c.api.check_schemas = False
    c.apply(node("n1"))
    c.apply({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "pg", "namespace": NS}, "spec": {"minMember": -1, "queue": "default"}})
    c.run(5)
    message = "PodGroup default/pg: spec.minMember: must be >= 0"

    def warnings() -> list[tuple[str, str, str]]:
        return [(e["type"], e["reason"], e["message"]) for e in c.list("Event", NS)
                if e["involvedObject"]["kind"] == "PodGroup" and e["involvedObject"]["name"] == "pg"]
    assert warnings() == [("Warning", "InvalidObject", message)]
    assert c.errors == [f"scheduler: {message}"]
    c.scheduler.reconfigure(None)  # the same version upserted again
    c.run(5)
    assert len(warnings()) == 1
    pg = c.get("PodGroup", "pg", NS)
    pg["metadata"]["labels"] = {"touched": "yes"}
    c.apply(pg)
    c.run(1)
    assert warnings() == [("Warning", "InvalidObject", message)] * 2
    pg = c.get("PodGroup", "pg", NS)
    pg["spec"]["minMember"] = 1
    c.apply(pg)
    c.run(5)
    assert [w for w in warnings() if w[1] == "InvalidObject"] == [("Warning", "InvalidObject", message)] * 2
    assert len(c.errors) == 2  # the engine took the fixed version


def test_a_pod_and_a_queue_the_engine_refuses_get_warnings() -> None:
    """A pod requesting -1 CPU gets FailedScheduling with the engine's message naming the
    field; a Queue of weight -1 (Volcano's CRD: minimum 1), InvalidObject (in namespace
    default, as Kubernetes files Events of cluster-scoped objects)."""
    c = volcanic.Cluster(admission=AdmissionChain())
    c.api.check_schemas = False
    c.apply(node("n1"))
    c.apply({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"},
             "spec": {"weight": -1}})
    c.apply({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "pg", "namespace": NS}, "spec": {"minMember": 1, "queue": "default"}})
    c.apply({"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "p", "namespace": NS, "annotations": {"scheduling.k8s.io/group-name": "pg"}},
             "spec": {"schedulerName": "volcano", "containers": [
                 {"name": "c", "image": "x", "resources": {"requests": {"cpu": "-1"}}}]}})
    c.run(5)
    got = {(e["involvedObject"]["kind"], e["involvedObject"]["name"]): (e["type"], e["reason"], e["message"])
           for e in c.list("Event", NS) if e["type"] == "Warning"}
    assert got[("Pod", "p")] == ("Warning", "FailedScheduling", 'Pod default/p: spec.containers[0].resources'
                                 '.requests.cpu: quantity "-1" must not be negative')
    assert got[("Queue", "q")] == ("Warning", "InvalidObject", "Queue q: spec.weight: must be in [1, 65535]")
    assert (c.get("Pod", "p", NS).get("spec") or {}).get("nodeName") is None


def test_a_bare_pod_the_podgroup_controller_cannot_size_is_told_so() -> None:
    """Without a group, the PodGroup controller sizes the pod's PodGroup from its requests; a
    negative one is a Warning PodGroupError on the pod, not a controller error."""
    c = volcanic.Cluster(admission=AdmissionChain())
    c.api.check_schemas = False
    c.apply(node("n1"))
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS},
             "spec": {"schedulerName": "volcano", "containers": [
                 {"name": "c", "image": "x", "resources": {"requests": {"cpu": "-1"}}}]}})
    c.run(5)
    reasons = [(e["reason"], e["message"]) for e in c.list("Event", NS) if e["involvedObject"]["name"] == "p"]
    assert ("PodGroupError", 'no PodGroup made for the pod: spec.containers[0].resources.requests.cpu: '
            'quantity "-1" must not be negative') in reasons
    assert c.list("PodGroup", NS) == []
    assert not [e for e in c.errors if e.startswith("pg-controller")]
