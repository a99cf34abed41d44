"""QueueBinding, volcanic's own API (scheduling.volcanic.dev/v1alpha1), in the embedded cluster
(volcanic.Cluster): with a binding for a queue, only its namespaces (listed, or whose labels
match its selector; several bindings of one queue bind their union) may submit Jobs and
PodGroups to the queue; without one, anyone may, as in Volcano. A malformed binding is refused
naming its field; the queuebinding controller writes the usage per bound namespace. Also its
CRD, RBAC, webhook path and controller registration."""

from __future__ import annotations

import pytest

import volcanic
from volcanic.cli.volcano import VOLCANIC_CONTROLLERS
from volcanic.controllers.queuebinding import QueueBindingController
from volcanic.kube.errors import AdmissionError, InvalidObject
from volcanic.kube.kinds import KINDS, VOLCANIC
from volcanic.real.manifests.accounts import RULES
from volcanic.real.manifests.definitions import crds
from volcanic.real.manifests.webhooks import DEFAULT_ADMISSIONS, WEBHOOKS
from volcanic.real.operator import BINDING_KINDS
from volcanic.real.webhook import WEBHOOK_KINDS
from volcanic.webhook import PATHS

BINDING_API = KINDS["QueueBinding"].api_version
QUEUE_API = KINDS["Queue"].api_version


def binding(name: str, queue: str = "team-a", **spec) -> dict:
    return {"apiVersion": BINDING_API, "kind": "QueueBinding", "metadata": {"name": name},
            "spec": dict(spec, queue=queue) if queue is not None else spec}


def podgroup(namespace: str, name: str = "pg", queue: str = "team-a", **spec) -> dict:
    return {"apiVersion": QUEUE_API, "kind": "PodGroup", "metadata": {"name": name, "namespace": namespace},
            "spec": dict({"queue": queue, "minMember": 1}, **spec)}


def job(namespace: str, name: str = "job", queue: str = "team-a", replicas: int = 1) -> dict:
    return {"apiVersion": KINDS["Job"].api_version, "kind": "Job", "metadata": {"name": name, "namespace": namespace},
            "spec": {"minAvailable": replicas, "schedulerName": "volcano", "queue": queue, "tasks": [{
                "name": "work", "replicas": replicas, "template": {
                    "metadata": {"annotations": {"volcanic/sim-duration": "1000s"}},
                    "spec": {"containers": [{"name": "c", "image": "busybox",
                                             "resources": {"requests": {"cpu": "1"}}}],
                             "restartPolicy": "Never"}}}]}}


@pytest.fixture
def cluster() -> volcanic.Cluster:
    """Two queues (team-a, team-b), open; namespaces lab (team=a, tier=gpu), batch (team=b)."""
    c = volcanic.Cluster()
    c.apply({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
             "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
    for name, labels in (("lab", {"team": "a", "tier": "gpu"}), ("batch", {"team": "b"})):
        c.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})
    for q in ("team-a", "team-b"):
        c.apply({"apiVersion": QUEUE_API, "kind": "Queue", "metadata": {"name": q}, "spec": {"weight": 1}})
    c.run(1)  # the queue controller opens the queues
    return c


def denied(c: volcanic.Cluster, obj: dict) -> str:
    with pytest.raises(AdmissionError) as e:
        c.apply(obj)
    return str(e.value)


# --- Admission of Jobs and PodGroups -------------------------------------------------------------

def test_without_a_binding_any_namespace_submits(cluster):
    """No QueueBinding for team-a: Volcano's behaviour, whoever submits."""
    cluster.apply(binding("b-binding", queue="team-b", namespaces=["batch"]))
    cluster.apply(podgroup("other"))
    cluster.apply(job("other"))


def test_a_listed_namespace_submits_and_another_is_denied_naming_queue_and_namespace(cluster):
    cluster.apply(binding("team-a-binding", namespaces=["ml-research", "ml-prod"],
                          namespaceSelector={"matchLabels": {"team": "a"}}))
    cluster.apply(podgroup("ml-prod"))
    cluster.apply(job("ml-research"))
    expected = ("queue team-a is bound to namespaces [ml-prod ml-research] and namespaces labelled team=a "
                "(QueueBinding team-a-binding): namespace other may not submit to it")
    assert expected in denied(cluster, podgroup("other"))
    assert expected in denied(cluster, job("other"))
    assert cluster.get("PodGroup", "pg", "other") is None and cluster.get("Job", "job", "other") is None


def test_a_namespace_whose_labels_match_the_selector_submits(cluster):
    cluster.apply(binding("team-a-binding", namespaceSelector={"matchLabels": {"team": "a"}}))
    cluster.apply(podgroup("lab"))
    cluster.apply(job("lab"))
    assert "namespace batch may not submit" in denied(cluster, job("batch"))


def test_selector_match_expressions(cluster):
    """In, NotIn, Exists and DoesNotExist, all of them required."""
    cluster.apply(binding("gpu-teams", namespaceSelector={"matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["gpu", "tpu"]},
        {"key": "team", "operator": "NotIn", "values": ["b"]},
        {"key": "team", "operator": "Exists"},
        {"key": "frozen", "operator": "DoesNotExist"}]}))
    cluster.apply(podgroup("lab"))
    message = denied(cluster, podgroup("batch"))
    assert message.endswith("namespace batch may not submit to it")
    assert "namespaces labelled tier In (gpu,tpu),team NotIn (b),team Exists,frozen DoesNotExist" in message


def test_two_bindings_of_one_queue_bind_their_union(cluster):
    cluster.apply([binding("a-by-name", namespaces=["ml-prod"]),
                   binding("a-by-label", namespaceSelector={"matchLabels": {"team": "b"}})])
    cluster.apply(podgroup("ml-prod"))
    cluster.apply(podgroup("batch"))
    message = denied(cluster, podgroup("lab"))
    assert message.endswith("queue team-a is bound to namespaces labelled team=b (QueueBinding a-by-label); "
                            "namespaces [ml-prod] (QueueBinding a-by-name): namespace lab may not submit to it")


def test_a_binding_of_another_queue_changes_nothing_for_this_one(cluster):
    cluster.apply(binding("b-binding", queue="team-b", namespaces=["batch"]))
    cluster.apply(podgroup("lab", queue="team-a"))
    assert "namespace lab may not submit" in denied(cluster, podgroup("lab", name="pg2", queue="team-b"))


def test_deleting_the_last_binding_opens_the_queue_again(cluster):
    cluster.apply(binding("team-a-binding", namespaces=["ml-prod"]))
    denied(cluster, podgroup("other"))
    cluster.delete("QueueBinding", "team-a-binding")
    cluster.apply(podgroup("other"))


# --- A QueueBinding's own validation ---------------------------------------------------------------

def test_a_binding_without_a_queue_is_refused_naming_the_field(cluster):
    with pytest.raises(InvalidObject, match="spec.queue: Required value"):
        cluster.apply(binding("bad", queue=None, namespaces=["x"]))


def test_a_selector_that_does_not_parse_is_refused_naming_the_field(cluster):
    bad = binding("bad", namespaceSelector={"matchExpressions": [{"key": "team", "operator": "Bogus"}]})
    assert "QueueBinding bad: spec.namespaceSelector.matchExpressions[0].operator: 'Bogus' is not a valid" \
        in denied(cluster, bad)
    bad = binding("bad", namespaceSelector={"matchExpressions": [{"key": "team", "operator": "In"}]})
    assert "spec.namespaceSelector.matchExpressions[0].values: must be non-empty for operator In" \
        in denied(cluster, bad)


def test_a_binding_that_binds_nothing_is_refused(cluster):
    assert "QueueBinding bad: spec: namespaces or namespaceSelector is required" in denied(cluster, binding("bad"))


def test_negative_limits_are_refused_by_the_schema(cluster):
    with pytest.raises(InvalidObject, match="spec.limits.maxPendingJobs"):
        cluster.apply(binding("bad", namespaces=["x"], limits={"maxPendingJobs": -1}))
    cluster.apply(binding("good", namespaces=["x"], limits={"maxRunningPods": 100, "maxPendingJobs": 10}))


# --- Status ------------------------------------------------------------------------------------------

def usage(c: volcanic.Cluster, name: str = "team-a-binding") -> dict:
    return (c.get("QueueBinding", name) or {}).get("status", {}).get("namespaces")


def test_status_counts_running_pods_and_pending_jobs_per_bound_namespace(cluster):
    """lab: a 2-pod Job running in team-a, a PodGroup enqueued without pods yet (Inqueue: pending)
    and one too big to enqueue (Pending: not counted); batch is not bound; ml-prod is listed but
    has nothing. A Job of team-b in lab is not team-a's usage."""
    cluster.apply(binding("team-a-binding", namespaces=["ml-prod"], namespaceSelector={"matchLabels": {"team": "a"}}))
    cluster.apply(binding("b-binding", queue="team-b", namespaces=["lab", "batch"]))
    cluster.apply(job("lab", name="train", replicas=2))
    cluster.apply(job("lab", name="other-queue", queue="team-b"))
    cluster.apply(podgroup("lab", name="waiting"))
    cluster.apply(podgroup("lab", name="too-big", minResources={"cpu": "64"}))
    cluster.run(5)
    assert phases(cluster, "lab", "waiting", "too-big") == ["Inqueue", "Pending"]
    assert usage(cluster) == {"lab": {"runningPods": 2, "pendingJobs": 1},
                              "ml-prod": {"runningPods": 0, "pendingJobs": 0}}
    assert usage(cluster, "b-binding") == {"batch": {"runningPods": 0, "pendingJobs": 0},
                                           "lab": {"runningPods": 1, "pendingJobs": 0}}
    assert cluster.errors == []


def test_status_follows_namespace_labels_and_finished_pods(cluster):
    cluster.apply(binding("team-a-binding", namespaceSelector={"matchLabels": {"team": "a"}}))
    cluster.apply(job("lab", name="train"))
    cluster.run(5)
    assert usage(cluster) == {"lab": {"runningPods": 1, "pendingJobs": 0}}
    cluster.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "batch", "labels": {"team": "a"}}})
    cluster.run(1)
    assert set(usage(cluster)) == {"lab", "batch"}
    cluster.run(1100)  # the pod's 1000 s are over
    assert usage(cluster)["lab"] == {"runningPods": 0, "pendingJobs": 0}


# --- Limits, enforced by the scheduler at enqueue -------------------------------------------------

def phases(c: volcanic.Cluster, namespace: str, *groups: str) -> list[str]:
    return [((c.get("PodGroup", g, namespace) or {}).get("status") or {}).get("phase") for g in groups]


def unschedulable(c: volcanic.Cluster, namespace: str, group: str) -> str:
    conditions = (c.get("PodGroup", group, namespace) or {}).get("status", {}).get("conditions") or []
    return next(x["message"] for x in conditions if x["type"] == "Unschedulable")


def test_max_pending_jobs_holds_the_next_job_pending_naming_the_limit(cluster):
    """A job enqueued and not yet running counts as pending: with maxPendingJobs 1, a second
    stays Pending until the first runs (docs/queues.md, QueueBinding limits)."""
    cluster.apply(binding("team-a-binding", namespaces=["lab"], limits={"maxPendingJobs": 1}))
    cluster.apply(podgroup("lab", name="first"))  # no pods yet: Inqueue for good
    cluster.run(1)
    cluster.apply(podgroup("lab", name="second"))
    cluster.run(3)
    assert phases(cluster, "lab", "first", "second") == ["Inqueue", "Pending"]
    assert unschedulable(cluster, "lab", "second").endswith(
        "queuebinding: maxPendingJobs 1 of QueueBinding team-a-binding reached: namespace lab has 1 job(s) pending "
        "in queue team-a")
    assert usage(cluster) == {"lab": {"runningPods": 0, "pendingJobs": 1}}
    cluster.delete("PodGroup", "first", "lab")
    cluster.run(3)
    assert phases(cluster, "lab", "second") == ["Inqueue"]


def test_max_running_pods_caps_allocation_and_holds_a_gang_that_would_pass_it(cluster):
    cluster.apply(binding("team-a-binding", namespaces=["lab"], limits={"maxRunningPods": 2}))
    wide = job("lab", name="wide", replicas=3)
    wide["spec"]["minAvailable"] = 1
    cluster.apply(wide)
    cluster.run(5)
    pods = {p["metadata"]["name"]: p for p in cluster.list("Pod", "lab")}
    assert sorted(p["status"].get("phase") for p in pods.values()) == ["Pending", "Running", "Running"]
    waiting = next(p for p in pods.values() if p["status"].get("phase") == "Pending")
    message = next(c["message"] for c in waiting["status"]["conditions"] if c["type"] == "PodScheduled")
    assert message == ("queuebinding: maxRunningPods 2 of QueueBinding team-a-binding reached: namespace lab holds "
                       "2 pod(s) in queue team-a")
    assert usage(cluster) == {"lab": {"runningPods": 2, "pendingJobs": 0}}
    cluster.apply(job("lab", name="gang", replicas=2))  # minAvailable 2 does not fit beside 2 under 2
    cluster.run(3)
    group = next(pg["metadata"]["name"] for pg in cluster.list("PodGroup", "lab")
                 if pg["metadata"]["name"].startswith("gang-"))  # Volcano names it <job>-<uid>
    assert phases(cluster, "lab", group) == ["Pending"]
    assert "maxRunningPods 2 of QueueBinding team-a-binding: namespace lab holds 2 pod(s) in queue team-a; " \
           "this job needs 2" in unschedulable(cluster, "lab", group)
    assert cluster.errors == []


# --- Installation ------------------------------------------------------------------------------------

def test_the_kind_is_volcanics_own_cluster_scoped_crd_with_rbac_webhook_and_controller():
    kind = KINDS["QueueBinding"]
    assert (kind.group, kind.version, kind.plural, kind.namespaced) == (VOLCANIC, "v1alpha1", "queuebindings", False)
    crd = next(c for c in crds() if c["spec"]["names"]["kind"] == "QueueBinding")
    assert crd["metadata"]["name"] == "queuebindings.scheduling.volcanic.dev"
    assert crd["spec"]["scope"] == "Cluster"
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert schema["required"] == ["queue"] and schema["properties"]["limits"]["properties"]["maxRunningPods"]["minimum"] == 0
    assert "/queuebindings/validate" in DEFAULT_ADMISSIONS and WEBHOOKS["/queuebindings/validate"][1] == VOLCANIC
    assert PATHS["/queuebindings/validate"] == ("QueueBinding", False)
    assert "QueueBinding" in WEBHOOK_KINDS and set(BINDING_KINDS) == {"QueueBinding", "Namespace"}
    assert QueueBindingController.name in VOLCANIC_CONTROLLERS

    def granted(component: str, resource: str, verb: str) -> bool:
        return any(VOLCANIC in r["apiGroups"] and resource in r["resources"] and verb in r["verbs"]
                   for r in RULES[component])
    assert granted("webhook", "queuebindings", "list")
    assert granted("controller-manager", "queuebindings", "watch")
    assert granted("controller-manager", "queuebindings/status", "update")
