"""Type stub of the private native module volcanic._core."""

from typing import Any, Callable, Iterable, Iterator, Mapping, final, overload

class Scheduler:
    def __init__(self, conf_json: str | None = None,
                 plugins: list[tuple[str, type, list[str], bool]] = ...,
                 python_hook_budget: float | None = None, bare_pods_as_groups: bool = False,
                 queue_allocation_gate: bool = False) -> None: ...
    def upsert(self, obj: dict[str, Any] | str | bytes) -> bool: ...
    def upsert_many(self, objs: Iterable[dict[str, Any] | str | bytes]) -> int: ...
    def delete(self, kind: str, name: str, namespace: str | None = None) -> None: ...
    def forget(self, key: str) -> None: ...
    def forget_status(self, kind: str, key: str) -> None: ...
    def set_node_usage(self, node: str, cpu: float, memory: float, metrics_ms: int) -> bool: ...
    def gangs_filled(self) -> int: ...
    def stats(self) -> dict[str, int]: ...
    def run_once(self, now_ms: int, changed_only: bool = False, timings: bool = True,
                 metrics: bool = False) -> dict[str, Any]:
        """The decisions as a dict: binds, bind_annotations, evictions, ungate, pipelined, podgroups, queues,
        unschedulable, deferred, action_seconds, plugin_timings (plugin -> extension point ->
        {"seconds": float, "calls": int}) and, with metrics, metrics (volcanic.Decisions.metrics)."""
        ...

def builtin_plugin_names() -> list[str]: ...
def action_names() -> list[str]: ...

# Kubernetes' own rules, as the engine applies them (volcanic.kube.quantity, .duration, .objects).
def parse_quantity(value: str | int | float) -> tuple[int, str]:
    """A Kubernetes quantity as (nano-units rounded up, format name)."""
def parse_go_duration(text: str) -> int:
    """Go's time.ParseDuration: nanoseconds."""
def pod_requests(spec: Any, where: str = "spec") -> dict[str, tuple[int, str]]:
    """A pod spec's resource requests as the engine computes them: name -> (milli-units, format)."""
def clone_json(obj: Any) -> Any:
    """A deep copy of JSON-shaped data (TypeError for anything else)."""

class ProtobufCodec:
    """Kubernetes objects between their protobuf wire form and the dicts of their JSON form."""
    def __init__(self, schema: str, json_loads: Callable[[bytes], Any], json_dumps: Callable[[Any], bytes],
                 strict: bool = True, omit: list[str] = ...) -> None: ...
    def encode(self, obj: Any) -> bytes: ...
    def decode(self, data: bytes) -> Any: ...
    def decode_watch_event(self, frame: bytes) -> Any: ...

# Python plugins (volcanic.scheduler.plugins; docs/plugins-python.md).
PLUGIN_HOOKS: tuple[str, ...]
EXTENSION_POINTS: tuple[tuple[str, str | None, bool], ...]

class HookBudgetExceeded(BaseException):
    """Raised inside a Python hook that runs past its Scheduler's python_hook_budget."""

# Views: read-only, live, valid only while their session runs (RuntimeError after).
@final
class ResourceView(Mapping[str, int | float]):
    """name -> amount in engine units (cpu millicores, memory bytes, others milli-units); a
    missing name reads 0 (math.inf for a dimension a limit leaves unbounded)."""
    @property
    def cpu(self) -> int | float: ...
    @property
    def memory(self) -> int | float: ...
    def __getitem__(self, name: str, /) -> int | float: ...
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    @overload
    def get(self, name: str) -> int | float | None: ...
    @overload
    def get(self, name: str, default: Any) -> Any: ...

@final
class LabelsView(Mapping[str, str]):
    def __getitem__(self, key: str, /) -> str: ...
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...

@final
class TaskView:
    name: str
    namespace: str
    key: str
    uid: str
    role: str
    job: JobView | None
    resreq: ResourceView
    priority: int
    preemptable: bool
    labels: LabelsView
    annotations: LabelsView
    node: NodeView | None
    node_name: str | None
    status: str

@final
class NodeView:
    name: str
    labels: LabelsView
    annotations: LabelsView
    taints: list[dict[str, str]]
    allocatable: ResourceView
    idle: ResourceView
    used: ResourceView
    releasing: ResourceView
    pipelined: ResourceView
    tasks: list[TaskView]

@final
class JobView:
    key: str
    name: str
    namespace: str
    uid: str
    queue: str
    priority: int
    min_available: int
    creation_timestamp: float
    phase: str
    tasks: list[TaskView]
    allocated: ResourceView
    labels: LabelsView
    annotations: LabelsView

@final
class QueueView:
    name: str
    weight: int
    parent: str | None
    state: str
    reclaimable: bool
    capability: ResourceView
    deserved: ResourceView
    guarantee: ResourceView
    allocated: ResourceView

@final
class SessionView:
    jobs: list[JobView]
    nodes: list[NodeView]
    queues: list[QueueView]
    now: float
    uid: str
    def wake_at(self, t: float) -> None: ...

