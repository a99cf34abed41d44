"""Builders, a queue lister, the cluster fixture `c` and `denied` for the Job admission tests
(test_admission_jobs.py, test_admission_job_schema.py, test_admission_job_tasks.py,
test_admission_job_updates.py)."""

from __future__ import annotations

from typing import Any

import pytest

import volcanic
from volcanic.admission.job_defaults import default_job

NS = "default"


# --- Builders -------------------------------------------------------------------------------

def task(name: str = "t", replicas: int = 1, **extra: Any) -> dict[str, Any]:
    return {"name": name, "replicas": replicas,
            "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "main", "image": "busybox", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}},
            **extra}


def job(name: str = "j", *tasks: dict, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"tasks": list(tasks) or [task()], **spec}}


def defaulted(j: dict) -> dict:
    """The job as the validating webhook sees it: after Volcano's mutation (§3.2)."""
    return default_job(j)


def container(j: dict, task_index: int = 0, index: int = 0) -> dict:
    return j["spec"]["tasks"][task_index]["template"]["spec"]["containers"][index]


def queue(name: str, **spec: Any) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"weight": 1, **spec}}


class Lister:
    """A lister over fixed queues (get(kind, name, namespace) / list(kind, namespace))."""

    def __init__(self, *queues: dict) -> None:
        self.queues = {q["metadata"]["name"]: q for q in queues}

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        return self.queues.get(name) if kind == "Queue" else None

    def list(self, kind: str, namespace: str | None = None) -> list[dict]:
        return list(self.queues.values()) if kind == "Queue" else []


def open_queue(name: str, **spec: Any) -> dict:
    return dict(queue(name, **spec), status={"state": "Open"})


DEFAULT = Lister(open_queue("default", parent="root"), open_queue("root"))


@pytest.fixture
def c() -> volcanic.Cluster:
    cluster = volcanic.Cluster()
    yield cluster
    assert cluster.errors == []


def denied(c: volcanic.Cluster, obj: dict) -> volcanic.AdmissionError:
    """Applies `obj`, expecting a denial; checks the error names it and nothing was stored."""
    kind, meta = obj.get("kind"), obj.get("metadata") or {}
    before = c.get(kind, meta.get("name"), meta.get("namespace") or NS)
    with pytest.raises(volcanic.AdmissionError) as e:
        c.apply(obj)
    assert (e.value.kind, e.value.namespace, e.value.name) == (kind, meta.get("namespace"), meta.get("name"))
    assert c.get(kind, meta.get("name"), meta.get("namespace") or NS) == before
    return e.value
