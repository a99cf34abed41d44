"""The Alibaba GPU trace of 2023 ("openb", alibaba/clusterdata cluster-trace-gpu-v2023) as a
Trace. The mapping onto Kubernetes objects is in docs/simulation.md.

Nodes: `sn,cpu_milli,memory_mib,gpu,model`. Pods: `name,cpu_milli,memory_mib,num_gpu,
gpu_milli,gpu_spec,...,creation_time,deletion_time,...`; a pod arrives at creation_time and
runs deletion_time - creation_time seconds once started. Files without the time columns
(openb_pod_list_multigpu50.csv) arrive in file order, one a second, and run forever: they
are for `fill` mode.
"""

from __future__ import annotations

import csv
import os

from volcanic.errors import InvalidObject
from volcanic.sim.trace import VGPU_CORES, VGPU_MEMORY, VGPU_NUMBER, VGPU_REGISTER, Arrival, Obj, Trace, line_of

MODEL_LABEL = "gpu-model"
# Each GPU is a vGPU card (deviceshare): shared by pods while their cores fit its 100.
# The trace has no GPU memory, so every card has the same nominal memory and a pod asks for
# the share of it that it asks of the cores; SHARERS bounds no pod of the trace.
CARD_MEMORY_MIB, SHARERS = 16000, 100
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")


TRACE_DIR = "alibaba-gpu-v2023"
NODES_CSV = "openb_node_list_all_node.csv"
DEFAULT_PODS_CSV = "openb_pod_list_default.csv"


def find_openb() -> str | None:
    """The trace's folder: $VOLCANIC_TRACES/alibaba-gpu-v2023, else ../shared/traces/... from
    the working directory (a checkout beside the shared folder); None when absent."""
    for root in (os.environ.get("VOLCANIC_TRACES"), os.path.join("..", "shared", "traces")):
        if root and os.path.isfile(os.path.join(root, TRACE_DIR, NODES_CSV)):
            return os.path.join(root, TRACE_DIR)
    return None


def read_openb(nodes_csv: str, pods_csv: str, namespace: str = "default") -> Trace:
    nodes = [_node(row, line_of(nodes_csv, i)) for i, row in _rows(nodes_csv, NODE_COLUMNS)]
    arrivals = [_pod(row, line_of(pods_csv, i), i, namespace) for i, row in _rows(pods_csv, POD_COLUMNS)]
    arrivals.sort(key=lambda a: a.time)  # stable: ties keep the file's order
    return Trace(os.path.basename(pods_csv), nodes, arrivals)


def _rows(path: str, required: tuple[str, ...]):
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in required if c not in (reader.fieldnames or ())]
        if missing:
            raise InvalidObject(f"{path}: missing columns {', '.join(missing)} (has {reader.fieldnames})")
        yield from enumerate(reader, start=2)  # line numbers: the header is line 1


def _int(row: dict, column: str, where: str, default: int | None = None) -> int:
    text = (row.get(column) or "").strip()
    if not text and default is not None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise InvalidObject(f"{where}: {column}: must be a whole number, got {text!r}") from None
    if value < 0:
        raise InvalidObject(f"{where}: {column}: must be >= 0, got {value}")
    return value


def _node(row: dict, where: str) -> Obj:
    gpus = _int(row, "gpu", where)
    allocatable = {"cpu": f"{_int(row, 'cpu_milli', where)}m", "memory": f"{_int(row, 'memory_mib', where)}Mi",
                   "pods": "110"}
    model = (row.get("model") or "").strip()
    labels = {MODEL_LABEL: model} if model else {}
    name = (row.get("sn") or "").strip()
    if not name:
        raise InvalidObject(f"{where}: sn: is required")
    annotations = {}
    if gpus:
        allocatable.update({VGPU_NUMBER: str(SHARERS * gpus), VGPU_CORES: str(100 * gpus),
                            VGPU_MEMORY: str(CARD_MEMORY_MIB * gpus)})
        annotations[VGPU_REGISTER] = "".join(
            f"GPU-{name}-{i},{SHARERS},{CARD_MEMORY_MIB},NVIDIA-{model},true,hami-core:" for i in range(gpus))
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels, "annotations": annotations},
            "status": {"allocatable": allocatable, "capacity": dict(allocatable)}}


def _pod(row: dict, where: str, line: int, namespace: str) -> Arrival:
    num_gpu, gpu_milli = _int(row, "num_gpu", where), _int(row, "gpu_milli", where, default=0)
    if gpu_milli > 1000 or (num_gpu > 1 and gpu_milli not in (0, 1000)):
        raise InvalidObject(f"{where}: gpu_milli: must be 0..1000, and 1000 for several GPUs, got {gpu_milli}")
    timed = "creation_time" in row
    created = _int(row, "creation_time", where) if timed else line - 2
    requests = {"cpu": f"{_int(row, 'cpu_milli', where)}m", "memory": f"{_int(row, 'memory_mib', where)}Mi"}
    per_gpu = gpu_milli or 1000
    if num_gpu:  # cores in whole percent, rounded up; memory the same share of a card
        requests.update({VGPU_NUMBER: str(num_gpu), VGPU_CORES: str(-(-per_gpu // 10)),
                         VGPU_MEMORY: str(CARD_MEMORY_MIB * per_gpu // 1000)})
    annotations = {}
    if timed:
        deleted = _int(row, "deletion_time", where)
        if deleted < created:
            raise InvalidObject(f"{where}: deletion_time: before creation_time ({deleted} < {created})")
        annotations["volcanic/sim-duration"] = str(deleted - created)
    spec: Obj = {"schedulerName": "volcano", "restartPolicy": "Never",
                 "containers": [{"name": "main", "image": "trace", "resources": {"requests": requests,
                                                                                 "limits": dict(requests)}}]}
    models = [m for m in (row.get("gpu_spec") or "").split("|") if m]
    if models:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": MODEL_LABEL, "operator": "In", "values": models}]}]}}}
    name = (row.get("name") or "").strip()
    if not name:
        raise InvalidObject(f"{where}: name: is required")
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace,
                                                          "annotations": annotations}, "spec": spec}
    return Arrival(float(created), (pod,), 1, num_gpu * per_gpu / 1000)
