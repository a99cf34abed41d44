"""The scheduler's writes in the background (volcanic.kube.status_writes, volcanic.scheduler.loop):
a session does not wait for its binds and status writes, as Volcano's binds and job updater do
not hold up its next session; the answers are handled when they come."""

from __future__ import annotations

from concurrent.futures import Future

from builders import node, pod
import volcanic
from volcanic.kube.errors import Conflict
from volcanic.kube.status_writes import StatusWrite, StatusWrites


def podgroup_at(version: str, phase: str) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": "pg", "namespace": "ns", "resourceVersion": version}, "status": {"phase": phase}}


class Answers:
    """update_status_async (and bind_async) whose answers the test gives."""

    def __init__(self) -> None:
        self.sent: list[tuple[tuple, Future]] = []

    def update_status_async(self, obj: dict) -> Future:
        return self._send(obj)

    def bind_async(self, namespace: str, name: str, node_name: str, annotations: dict | None = None) -> Future:
        return self._send(namespace, name, node_name)

    def _send(self, *what) -> Future:
        future: Future = _Answer()
        self.sent.append((what, future))
        return future


class _Answer(Future):
    def result(self, timeout=None):
        assert self.done(), "a write's answer was waited for"
        return super().result(timeout)


def test_a_status_for_an_object_whose_write_is_out_waits_and_the_latest_wins():
    store, woken = Answers(), []
    writes = StatusWrites(store, wake=lambda: woken.append(1))
    writes.write(StatusWrite(podgroup_at("5", "Inqueue")))
    writes.write(StatusWrite(podgroup_at("5", "Running")))  # waits for the first
    writes.write(StatusWrite(podgroup_at("5", "Completed")))  # replaces the waiting one
    other = dict(podgroup_at("3", "Inqueue"), metadata={"name": "other", "namespace": "ns", "resourceVersion": "3"})
    writes.write(StatusWrite(other))  # another object is not held up
    assert [what[0]["metadata"]["name"] for what, _ in store.sent] == ["pg", "other"]
    assert writes.collect() == []

    store.sent[0][1].set_result(podgroup_at("7", "Inqueue"))
    assert woken == [1]
    assert [(w.obj["status"]["phase"], answer["metadata"]["resourceVersion"]) for w, answer in writes.collect()] \
        == [("Inqueue", "7")]
    # The latest status went out over the writer's own answer: the cache still said 5.
    sent = store.sent[2][0][0]
    assert (sent["status"]["phase"], sent["metadata"]["resourceVersion"]) == ("Completed", "7")

    store.sent[2][1].set_exception(Conflict("PodGroup", "ns", "pg", "the object has been modified"))
    [(write, error)] = writes.collect()
    assert write.obj["status"]["phase"] == "Completed" and isinstance(error, Conflict)
    writes.write(StatusWrite(podgroup_at("9", "Completed")))  # the cache caught up: its version goes
    assert store.sent[3][0][0]["metadata"]["resourceVersion"] == "9"


def binding_a(monkeypatch) -> tuple[volcanic.Cluster, Answers]:
    """A cluster whose scheduler has sent pod a's bind, left unanswered."""
    c = volcanic.Cluster()
    c.apply(node("n1", cpu="8"))
    answers = Answers()
    monkeypatch.setattr(c.api, "bind_async", answers.bind_async)
    c.apply(pod("a", None, ns="default"))
    c.run(1)
    return c, answers


def test_a_session_does_not_wait_for_the_binds_of_the_one_before(monkeypatch):
    """Pod a's bind is out when pod b comes: the next session binds b. a's bind then fails:
    handled as Volcano's cache does (pkg/scheduler/cache/cache.go) once the answer is in: the
    placement forgotten, a FailedScheduling Warning, and the session that follows binds a again."""
    c, answers = binding_a(monkeypatch)
    c.apply(pod("b", None, ns="default"))
    c.run(1)
    assert [what[1] for what, _ in answers.sent] == ["a", "b"]  # b's bind went out with a's still out
    monkeypatch.undo()

    sessions = []
    c.scheduler.on_session = lambda d, seconds, bound, failed: sessions.append((len(d.binds), bound, failed))
    answers.sent[0][1].set_exception(Conflict("Pod", "default", "a", "the API server said no"))
    answers.sent[1][1].set_result(c.api.bind("default", "b", "n1"))
    c.run(1)  # the next session takes the answers, then places a again
    # Its own bind of a is answered at once; the metrics count answers, whichever session sent them.
    assert sessions[0] == (1, 2, 1)
    events = lambda reason: sorted(e["message"] for e in c.list("Event")
                                   if e["reason"] == reason and e["involvedObject"]["kind"] == "Pod")
    assert events("FailedScheduling") == ["failed to bind to node n1: the API server said no"]
    assert c.get("Pod", "a")["spec"]["nodeName"] == "n1" and c.get("Pod", "b")["spec"]["nodeName"] == "n1"
    assert events("Scheduled") == ["Successfully assigned default/a to n1", "Successfully assigned default/b to n1"]


def test_a_failed_bind_of_a_pod_deleted_meanwhile_is_only_logged(monkeypatch):
    c, answers = binding_a(monkeypatch)
    c.delete("Pod", "a", "default")
    answers.sent[0][1].set_exception(Conflict("Pod", "default", "a", "the pod is gone"))
    c.run(1)
    assert c.list("Pod") == [] and c.errors == []
    assert [e for e in c.list("Event") if e["reason"] == "FailedScheduling"] == []
