"""volcanic.Cluster: the embedded control plane (DESIGN.md "Public Python API", "Simulated
kubelets"; reference §4.1 for what the scheduler writes back)."""

from __future__ import annotations

import json

import pytest

import volcanic
from volcanic.admission.chain import AdmissionChain


def node(name, cpu="4", **annotations):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "annotations": annotations},
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}],
                       "addresses": [{"type": "InternalIP", "address": f"192.168.0.{len(name)}"}]}}


def pod(name, cpu="1", duration=None, exit_code=None, restart="Never", **spec):
    ann = {}
    if duration is not None:
        ann["volcanic/sim-duration"] = duration
    if exit_code is not None:
        ann["volcanic/sim-exit-code"] = str(exit_code)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": ann},
            "spec": {"schedulerName": "volcano", "restartPolicy": restart,
                     "containers": [{"name": "main", "image": "busybox",
                                     "resources": {"requests": {"cpu": cpu}}}], **spec}}


def job(name, replicas=2, duration="60s", cpu="1", **spec):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
            "spec": {"minAvailable": replicas, **spec, "tasks": [{
                "name": "worker", "replicas": replicas, "template": {
                    "metadata": {"annotations": {"volcanic/sim-duration": duration}},
                    "spec": {"restartPolicy": "Never", "containers": [
                        {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}]}}}]}}


def phase(c, name):
    return c.get("Pod", name)["status"]["phase"]


@pytest.fixture
def cluster():
    c = volcanic.Cluster()
    yield c
    assert c.errors == []


def test_default_queues_are_open_at_time_zero_and_new_queues_after_a_sync(cluster):
    """DESIGN.md: queues root and default exist and are Open from time 0."""
    assert cluster.now == 0
    assert cluster.get("Queue", "root")["status"]["state"] == "Open"
    assert cluster.get("Queue", "default")["status"]["state"] == "Open"
    cluster.apply({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"},
                   "spec": {"weight": 2}})
    assert "status" not in cluster.get("Queue", "q")  # the status subresource is not written by apply
    cluster.run(0)
    q = cluster.get("Queue", "q")
    assert q["status"]["state"] == "Open" and q["spec"]["parent"] == "root"
    assert cluster.now == 0


def test_apply_takes_dicts_lists_and_multi_document_yaml(cluster):
    stored = cluster.apply("---\n" + json.dumps(node("n1")) + "\n---\n" + json.dumps(node("n2")) + "\n")
    assert [n["metadata"]["name"] for n in stored] == ["n1", "n2"]
    assert cluster.apply(node("n3"))["metadata"]["uid"]
    assert len(cluster.apply([node("n4"), node("n5")])) == 2
    assert [n["metadata"]["name"] for n in cluster.list("Node")] == ["n1", "n2", "n3", "n4", "n5"]
    again = cluster.apply(dict(node("n1"), metadata={"name": "n1", "labels": {"x": "y"}}))
    assert again["metadata"]["labels"] == {"x": "y"}  # apply replaces an existing object
    assert again["metadata"]["uid"] == stored[0]["metadata"]["uid"]


def test_an_unknown_kind_or_a_bad_object_stores_nothing_of_the_call(cluster):
    with pytest.raises(volcanic.InvalidObject, match="unknown kind 'Deployment'; known kinds: .*Job"):
        cluster.apply([node("n1"), {"kind": "Deployment", "metadata": {"name": "d"}}])
    with pytest.raises(volcanic.InvalidObject, match="metadata.name: is required"):
        cluster.apply([node("n1"), {"kind": "Pod", "metadata": {}}])
    with pytest.raises(volcanic.InvalidObject, match="YAML"):
        cluster.apply("kind: [unclosed")
    assert cluster.list("Node") == []


def test_an_admission_denial_raises_and_stores_nothing():
    """DESIGN.md: apply runs mutating then validating admission; a denial stores nothing."""
    chain = AdmissionChain()
    chain.add_mutator("Node", lambda r: dict(r.obj, metadata=dict(r.obj["metadata"], labels={"mutated": "yes"})))
    chain.add_validator("Node", lambda r: "no GPUs here" if "gpu" in r.obj["metadata"]["name"] else None)
    c = volcanic.Cluster(admission=chain)
    assert c.apply(node("n1"))["metadata"]["labels"] == {"mutated": "yes"}
    with pytest.raises(volcanic.AdmissionError, match="no GPUs here") as e:
        c.apply([node("n2"), node("gpu-1")])
    assert (e.value.kind, e.value.name) == ("Node", "gpu-1")
    assert [n["metadata"]["name"] for n in c.list("Node")] == ["n1"]


def test_admission_rules_run_only_for_the_operations_they_are_registered_for():
    """As a webhook's registration limits the operations it is called for, so does the chain's
    `operations`; Volcano's chain has its chart's (installer/helm/.../webhooks.yaml), the
    table volcanic registers its webhooks from."""
    chain = AdmissionChain(operations={("Node", "validate"): ("CREATE",)})
    chain.add_validator("Node", lambda r: "no GPUs here" if "gpu" in str(r.obj["metadata"].get("labels")) else None)
    c = volcanic.Cluster(admission=chain)
    with pytest.raises(volcanic.AdmissionError, match="no GPUs here"):
        c.apply(dict(node("n2"), metadata={"name": "n2", "labels": {"gpu": "yes"}}))
    c.apply(node("n1"))
    updated = c.apply(dict(node("n1"), metadata={"name": "n1", "labels": {"gpu": "yes"}}))  # an UPDATE: not called
    assert updated["metadata"]["labels"] == {"gpu": "yes"}
    from volcanic.admission import OPERATIONS, volcano_chain
    assert volcano_chain().operations == OPERATIONS and OPERATIONS[("PodGroup", "validate")] == ("CREATE",)


def test_pods_get_priority_from_their_priority_class(cluster):
    """DESIGN.md: the embedded cluster fills spec.priority as the API server's priority admission."""
    cluster.apply([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                    "value": 1000},
                   dict(pod("p1"), spec=dict(pod("p1")["spec"], priorityClassName="high")), pod("p2")])
    assert cluster.get("Pod", "p1")["spec"]["priority"] == 1000
    assert cluster.get("Pod", "p2")["spec"]["priority"] == 0
    with pytest.raises(volcanic.AdmissionError, match="no PriorityClass with name missing was found"):
        cluster.apply(dict(pod("p3"), spec=dict(pod("p3")["spec"], priorityClassName="missing")))


def test_a_pod_is_bound_then_runs_for_its_duration_after_the_start_delay(cluster):
    """DESIGN.md "Simulated kubelets": start delay, duration, exit code 0 -> Succeeded."""
    cluster.apply([node("n1", **{"volcanic/sim-start-delay": "5s"}), pod("p", duration="90s")])
    cluster.run(0)  # the PodGroup controller groups the pod, the first cycle binds it
    p = cluster.get("Pod", "p")
    assert p["metadata"]["annotations"]["scheduling.k8s.io/group-name"].startswith("podgroup-")
    assert p["spec"]["nodeName"] == "n1" and p["status"]["phase"] == "Pending"
    assert {"type": "PodScheduled", "status": "True"}.items() <= p["status"]["conditions"][0].items()
    cluster.run(4.5)
    assert phase(cluster, "p") == "Pending"
    cluster.run(0.5)  # bound at 0 s, starts at 5 s
    p = cluster.get("Pod", "p")
    assert p["status"]["phase"] == "Running" and p["status"]["startTime"] == "2024-01-01T00:00:05Z"
    assert p["status"]["podIP"].startswith("10.") and p["status"]["hostIP"] == "192.168.0.2"
    assert p["status"]["containerStatuses"][0]["state"] == {"running": {"startedAt": "2024-01-01T00:00:05Z"}}
    cluster.run(89)
    assert phase(cluster, "p") == "Running"
    cluster.run(1)
    p = cluster.get("Pod", "p")
    assert p["status"]["phase"] == "Succeeded"
    assert p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0


def test_exit_codes_and_restart_policies(cluster):
    """DESIGN.md "Simulated kubelets": Never/OnFailure/Always, restartCount, exit codes."""
    cluster.apply([node("n1"), pod("never", duration="10s", exit_code=3),
                   pod("onfailure", duration="10s", exit_code=1, restart="OnFailure"),
                   pod("ok", duration="10s", exit_code=0, restart="OnFailure"),
                   pod("always", duration="10s", restart="Always")])
    cluster.run(11)  # bound and started at 0, exited at 10
    always = cluster.get("Pod", "always")["status"]  # Always restarts after a success too, backing off
    assert always["phase"] == "Running" and always["containerStatuses"][0]["restartCount"] == 0
    assert always["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] == 0
    never = cluster.get("Pod", "never")
    assert never["status"]["phase"] == "Failed"
    assert never["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 3
    assert phase(cluster, "ok") == "Succeeded"
    onfailure = cluster.get("Pod", "onfailure")["status"]
    assert onfailure["phase"] == "Running"
    assert onfailure["containerStatuses"][0]["state"] == {"waiting": {"reason": "CrashLoopBackOff"}}
    cluster.run(10)  # back-off 10 s, then running again with restartCount 1
    onfailure = cluster.get("Pod", "onfailure")["status"]
    assert onfailure["containerStatuses"][0]["restartCount"] == 1 and "running" in onfailure["containerStatuses"][0]["state"]
    always = cluster.get("Pod", "always")["status"]
    assert always["containerStatuses"][0]["restartCount"] == 1


def test_a_node_that_is_not_ready_fails_its_pods_and_gets_no_new_ones(cluster):
    """DESIGN.md: a Node whose Ready condition is set False has its pods failed."""
    cluster.apply([node("n1"), pod("p1")])
    cluster.run(2)
    assert phase(cluster, "p1") == "Running"
    cluster.set_node_ready("n1", False)
    cluster.run(0)
    p1 = cluster.get("Pod", "p1")
    assert p1["status"]["phase"] == "Failed" and p1["status"]["reason"] == "NodeLost"
    cluster.apply(pod("p2"))
    cluster.run(5)
    p2 = cluster.get("Pod", "p2")
    assert "nodeName" not in p2["spec"]
    # No Ready node: the gang is not even enqueued, and the pod's condition says so.
    assert "pod group is not ready" in p2["status"]["conditions"][-1]["message"]


def test_evict_sets_disruption_target_and_deletes(cluster):
    cluster.apply([node("n1"), pod("p")])
    cluster.run(2)
    w = cluster._store.watch(["Pod"])
    assert [e for e, _ in w.drain()] == ["ADDED"]  # a watch starts with what exists
    cluster.evict("p")
    events = w.drain()
    assert [e for e, _ in events] == ["MODIFIED", "DELETED"]
    assert events[0][1]["status"]["conditions"][-1]["type"] == "DisruptionTarget"
    assert cluster.get("Pod", "p") is None
    with pytest.raises(KeyError):
        cluster.evict("p")


def test_unschedulable_pods_say_why(cluster):
    """reference §4.1: the scheduler records why a pod is pending (PodScheduled False)."""
    cluster.apply([node("n1", cpu="1"), node("n2", cpu="1"), pod("big", cpu="2")])
    cluster.run(3)
    cond = [c for c in cluster.get("Pod", "big")["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert cond[0]["status"] == "False" and cond[0]["reason"] == "Unschedulable"
    assert "0/2 nodes are unavailable: 2 Insufficient cpu." in cond[0]["message"]


def test_scheduler_writes_podgroup_status_and_queue_allocation(cluster):
    """reference §4.1 CloseSession: PodGroup phase and Queue status.allocated up the chain."""
    cluster.apply([node("n1"), job("j", replicas=2, duration="100s")])
    cluster.run(3)
    pg = cluster.list("PodGroup")[0]
    assert pg["status"]["phase"] == "Running" and pg["status"]["running"] == 2
    assert cluster.get("Queue", "default")["status"]["allocated"]["cpu"] == "2"
    assert cluster.get("Queue", "root")["status"]["allocated"]["cpu"] == "2"
    cluster.run(100)
    assert cluster.get("Job", "j")["status"]["state"]["phase"] == "Completed"
    assert cluster.get("Queue", "default")["status"]["allocated"].get("cpu", "0") == "0"


def test_a_failed_bind_is_forgotten_and_retried(cluster):
    """A bind that fails is handled as Volcano's SchedulerCache.Bind (pkg/scheduler/cache/
    cache.go): a FailedScheduling Warning and PodScheduled=False/SchedulerError on the pod,
    the task resynced (forgotten), and placed again by a later session; a bind that succeeds
    is recorded as a Scheduled Event."""
    from volcanic.kube.errors import Conflict
    cluster.apply([node("n1"), pod("p")])
    real_bind, tries = cluster.api.bind, []

    def flaky_bind(namespace, name, node_name, annotations=None):
        tries.append(cluster.now)
        if len(tries) == 1:
            raise Conflict("Pod", namespace, name, "the API server said no")
        return real_bind(namespace, name, node_name, annotations)
    cluster.api.bind = flaky_bind
    cluster.run(0)
    p = cluster.get("Pod", "p")
    assert "nodeName" not in p["spec"]
    cond = next(c for c in p["status"]["conditions"] if c["type"] == "PodScheduled")
    assert (cond["status"], cond["reason"]) == ("False", "SchedulerError")
    assert cond["message"] == "failed to bind to node n1: the API server said no"
    events = lambda reason: [e["message"] for e in cluster.list("Event") if e["reason"] == reason]
    assert events("FailedScheduling") == ["failed to bind to node n1: the API server said no"]
    cluster.run(1)
    assert tries == [0, 1] and cluster.get("Pod", "p")["spec"]["nodeName"] == "n1"
    assert events("Scheduled") == ["Successfully assigned default/p to n1"]


def test_delete_cascades_to_owned_objects(cluster):
    cluster.apply([node("n1"), job("j", duration="1h")])
    cluster.run(3)
    assert len(cluster.list("Pod")) == 2 and len(cluster.list("PodGroup")) == 1
    cluster.delete("Job", "j")
    assert cluster.list("Pod") == [] and cluster.list("PodGroup") == []
    with pytest.raises(KeyError):
        cluster.delete("Job", "j")


def test_the_same_inputs_give_the_same_history():
    def history():
        c = volcanic.Cluster()
        c.apply([node("n1"), node("n2", cpu="2"), job("a", replicas=3, duration="50s"),
                 job("b", replicas=2, duration="30s", cpu="2")])
        c.run(300)
        return [(o["kind"], o["metadata"]["name"], o["metadata"]["resourceVersion"], o.get("status"))
                for kind in ("Job", "Pod", "PodGroup", "Event") for o in c.list(kind)]
    assert history() == history()


def test_conf_is_yaml_text_a_dict_or_a_path(tmp_path):
    conf = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n  - name: predicates\n"
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(conf)
    for c in (volcanic.Cluster(conf), volcanic.Cluster(str(path)),
              volcanic.Cluster({"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "gang"}]}]})):
        c.apply([node("n1"), pod("p")])
        c.run(2)
        assert phase(c, "p") == "Running"
    with pytest.raises(volcanic.ConfigError, match="unknown action"):
        volcanic.Cluster({"actions": "fly", "tiers": []})


def test_run_rejects_negative_time(cluster):
    with pytest.raises(ValueError, match="seconds"):
        cluster.run(-1)


def test_apply_merges_onto_the_stored_object(cluster):
    """Re-applying the same YAML keeps what admission and controllers filled in (kubectl
    apply semantics); a field sent as null is removed."""
    cluster.apply([node("n1"), job("j", duration="1h")])
    first = cluster.get("Job", "j")
    assert first["spec"]["queue"] == "default" and first["spec"]["maxRetry"] == 3  # reference §3.2
    again = cluster.apply(job("j", duration="1h"))
    assert again["spec"] == first["spec"] and again["metadata"]["generation"] == 1
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]  # a no-op write
    n1 = node("n1")
    n1["metadata"]["labels"] = {"a": "b"}
    labelled = cluster.apply(n1)
    assert labelled["status"]["allocatable"]["cpu"] == "4" and labelled["metadata"]["labels"] == {"a": "b"}
    assert "labels" not in cluster.apply(node("n1"))["metadata"]  # dropped from the YAML: removed
    cluster.api.create({"kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"k": "v"}})
    merged = cluster.apply({"kind": "ConfigMap", "metadata": {"name": "cm", "labels": {"x": "y"}}})
    assert merged["metadata"]["labels"] == {"x": "y"} and merged["data"] == {"k": "v"}  # never applied: merged


def test_a_stale_resource_version_is_a_conflict(cluster):
    from volcanic.kube.errors import Conflict
    stale = cluster.apply(node("n1"))
    cluster.apply(dict(node("n1"), metadata={"name": "n1", "labels": {"v": "2"}}))
    with pytest.raises(Conflict, match="the object has been modified"):
        cluster.apply(dict(stale, metadata=dict(stale["metadata"], labels={"v": "3"})))


def test_pod_updates_are_limited_as_in_kubernetes(cluster):
    cluster.apply([node("n1"), pod("p", duration="1h")])
    cluster.run(1)
    again = cluster.apply(pod("p", duration="1h"))  # re-applied without nodeName: kept
    assert again["spec"]["nodeName"] == "n1"
    changed = pod("p", cpu="2", duration="1h")
    with pytest.raises(volcanic.InvalidObject, match="pod updates may not change fields"):
        cluster.apply(changed)
    image = pod("p", duration="1h")
    image["spec"]["containers"][0]["image"] = "busybox:2"
    assert cluster.apply(image)["spec"]["containers"][0]["image"] == "busybox:2"


def test_bad_input_is_refused_with_the_object_and_field(cluster):
    with pytest.raises(volcanic.InvalidObject, match="not a file name"):
        cluster.apply("examples/cluster.yaml")
    with pytest.raises(volcanic.InvalidObject, match=r"Job j: spec.ttlSecondsAfterFinished: must be a finite"):
        cluster.apply(dict(job("j"), spec=dict(job("j")["spec"], ttlSecondsAfterFinished=float("nan"))))
    with pytest.raises(volcanic.InvalidObject, match=r"metadata.annotations.volcanic/sim-duration: must be a string"):
        cluster.apply(dict(pod("p"), metadata={"name": "p", "annotations": {"volcanic/sim-duration": 90}}))
    with pytest.raises(volcanic.InvalidObject, match="metadata.labels: must be a map"):
        cluster.apply(dict(pod("p"), metadata={"name": "p", "labels": ["x"]}))
    # The CRD schema's answer, as the API server's (volcanic.kube.crds).
    with pytest.raises(volcanic.InvalidObject, match=r'^Queue.scheduling.volcano.sh "q" is invalid: spec: Invalid '
                                                     r'value: "string": spec in body must be of type object: "string"$'):
        cluster.apply({"kind": "Queue", "metadata": {"name": "q"}, "spec": "x"})
    with pytest.raises(ValueError, match="finite"):
        cluster.run(float("inf"))
    with pytest.raises(ValueError, match="step"):
        cluster.run_until(lambda c: False, step=0)
    assert cluster.list("Pod") == [] and cluster.list("Job") == []


def test_a_failed_apply_leaves_no_namespace_behind(cluster):
    bad = dict(pod("p"), metadata={"name": "p", "namespace": "fresh"})
    with pytest.raises(volcanic.InvalidObject):
        cluster.apply([bad, {"kind": "Pod", "metadata": {"name": "q", "namespace": "fresh"}, "spec": "x"}])
    assert cluster.get("Namespace", "fresh") is None


def test_objects_the_controllers_cannot_read_do_not_stop_the_cluster(cluster):
    """A malformed object is reported in errors; the others still run."""
    # Admission refuses such a queue (reference §3.5), so it is written past it, as a
    # cluster without Volcano's webhook would store it.
    cluster.api.store.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                              "metadata": {"name": "odd"}, "spec": {"parent": ["a"], "weight": "x"}})
    cluster.apply([node("n1"), pod("p", duration="5s")])
    cluster.run(10)
    assert phase(cluster, "p") == "Succeeded"
    assert any("odd" in e for e in cluster.errors)
    cluster.errors.clear()


def test_a_pod_that_exits_at_once_under_always_backs_off_instead_of_spinning(cluster):
    cluster.apply([node("n1"), pod("p", duration="0s", restart="Always")])
    cluster.run(100)  # exits at 0, 10, 30, 70: back-off 10, 20, 40 s
    assert cluster.get("Pod", "p")["status"]["containerStatuses"][0]["restartCount"] == 3


def test_every_timestamp_is_on_one_unix_clock(cluster):
    """One clock in Unix seconds: what the store, the controllers and the scheduler stamp
    (creation, the gang's Unschedulable condition written by the native engine: three pods
    that fit the cluster's CPU together but one a node) all read as the cluster's start plus
    virtual time, never 1970."""
    from volcanic.kube.clock import seconds_of
    cluster.run(5)
    cluster.apply([node("n1", cpu="1.5"), node("n2", cpu="1.5"), job("big", replicas=3)])
    cluster.run(3)
    created = seconds_of(cluster.get("Job", "big")["metadata"]["creationTimestamp"])
    assert created == cluster.started + 5
    conditions = cluster.list("PodGroup")[0]["status"]["conditions"]
    stamps = [seconds_of(c["lastTransitionTime"]) for c in conditions]
    assert stamps and all(cluster.started + 5 <= t <= cluster.started + cluster.now for t in stamps)
    assert cluster.started == 1704067200  # 2024-01-01T00:00:00Z: the same history on every run
