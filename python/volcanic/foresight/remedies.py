"""What single change would start a waiting job now? Each candidate is applied to a copy of the
state and verified by running the same engine and configuration on a fork for a few sessions
(forecast with a short horizon): only the changes under which the job's gang starts are given.

The candidates, the smallest of each kind found by a binary search over forks:
- a lower minAvailable (the largest that starts);
- a smaller request of a resource the reasons name (the largest per pod that starts);
- a raised capability of the job's queue (by the job's request), else none at all;
- another open leaf queue that has room (up to MAX_QUEUES of them);
- the lower-priority running jobs whose preemption it needs (the fewest, lowest priority and
  newest first, as Volcano picks victims), and whether the configuration's actions would do it.
"""

from __future__ import annotations

from fractions import Fraction
import json
import re
from typing import Any, Callable

from volcanic.foresight.forecast import forecast
from volcanic.kube.clock import seconds_of
from volcanic.kube.keys import GROUP_NAME
from volcanic.kube.objects import Obj, annotation, clone, meta_of, spec_of, status_of
from volcanic.kube.quantity import format_quantity, parse_quantity, pod_requests
from volcanic.scheduler.conf import load_conf

SOON = 10.0  # seconds of the fork: a job whose gang starts within them starts "now"
MAX_QUEUES = 3  # other queues given at most
_SEARCH_STEPS = 20  # forks per binary search at most (a million values: exact)
_DEFAULT_ACTIONS = ("enqueue", "allocate", "backfill")  # Volcano's default configuration's


def remedies(objects: list[Obj], conf: Any, now: float, key: str, reasons: list[str]) -> list[str]:
    """The verified changes that would start the PodGroup `key` ("ns/name") of the state
    `objects` (at Unix time `now`) under `conf`, most direct first; none when it starts soon
    without a change."""
    fork = _Fork(objects, conf, now, key)
    if fork.starts(objects):
        return []
    found = [_lower_min_available(fork), *_smaller_requests(fork, reasons), _raised_capability(fork),
             *_other_queues(fork), _preemption(fork, conf)]
    return [r for r in found if r]


class _Fork:
    """The state, the job's objects in it, and whether a changed state starts the job soon."""

    def __init__(self, objects: list[Obj], conf: Any, now: float, key: str) -> None:
        self.objects, self.conf, self.now, self.key = objects, conf, now, key
        self.group = next(o for o in objects if o.get("kind") == "PodGroup" and _key(o) == key)
        self.queue = spec_of(self.group).get("queue") or "default"
        self.mine = _members(objects, self.group)

    def owns(self, obj: Obj) -> bool:
        """obj is the job's PodGroup, its Volcano Job or one of its pods."""
        return id(obj) in self.mine

    def changed(self, change: Callable[[Obj], None], which: Callable[[Obj], bool] | None = None) -> list[Obj]:
        """The state with `change` applied to copies of the objects `which` selects (the job's)."""
        which = which or self.owns
        out = []
        for obj in self.objects:
            if which(obj):
                obj = clone(obj)
                change(obj)
            out.append(obj)
        return out

    def starts(self, objects: list[Obj]) -> bool:
        job = forecast(objects, self.conf, self.now, horizon=SOON, watch=[self.key]).jobs.get(self.key)
        return job is not None and job.estimated_start is not None

    def largest(self, low: int, high: int, starts_with: Callable[[int], bool]) -> int | None:
        """The largest value in [low, high] whose change starts the job, where the values that
        start it are those up to some bound (the smallest change is the largest value), in at
        most _SEARCH_STEPS forks after checking `low`; None if `low` does not start it."""
        if high < low or not starts_with(low):
            return None
        for _ in range(_SEARCH_STEPS):
            if low >= high:
                break
            mid = (low + high + 1) // 2
            low, high = (mid, high) if starts_with(mid) else (low, mid - 1)
        return low


def _lower_min_available(fork: _Fork) -> str | None:
    current = int(spec_of(fork.group).get("minMember") or 1)

    def with_min(m: int) -> Callable[[Obj], None]:
        def change(obj: Obj) -> None:
            if obj["kind"] == "PodGroup":
                spec = obj["spec"]
                spec["minMember"] = m
                spec.pop("minTaskMember", None)
                for name, q in list((spec.get("minResources") or {}).items()):
                    value, fmt = parse_quantity(q, f"minResources.{name}")
                    spec["minResources"][name] = format_quantity((value * m / current, fmt))
            elif obj["kind"] == "Job":
                obj["spec"]["minAvailable"] = m
                for task in obj["spec"].get("tasks") or []:
                    task.pop("minAvailable", None)
        return change

    best = fork.largest(1, current - 1, lambda m: fork.starts(fork.changed(with_min(m))))
    return None if best is None else f"lower minAvailable from {current} to {best}"


def _smaller_requests(fork: _Fork, reasons: list[str]) -> list[str]:
    """For each resource the reasons name that the job's largest pod requests."""
    pods = [o for o in fork.objects if o.get("kind") == "Pod" and fork.owns(o)]
    specs = [spec_of(p) for p in pods] or [(t.get("template") or {}).get("spec") or {}
                                           for j in fork.objects if j.get("kind") == "Job" and fork.owns(j)
                                           for t in spec_of(j).get("tasks") or []]
    requests = [pod_requests(s) for s in specs]
    text = " ".join(reasons)
    found = []
    for resource in sorted({r for req in requests for r in req if r != "pods"}):
        if not re.search(rf"(?<![\w./-]){re.escape(resource)}(?![\w./-])", text):
            continue
        largest = max(req.get(resource, (Fraction(0), ""))[0] for req in requests)
        fmt = next(req[resource][1] for req in requests if resource in req)
        unit = _unit(resource, largest)
        steps = int(largest / unit)
        best = fork.largest(1, steps - 1, lambda n: fork.starts(fork.changed(_scaled(resource, Fraction(n) * unit
                                                                                       / largest))))
        if best is not None:
            found.append(f"request {resource} {format_quantity((best * unit, fmt))} per pod at most "
                         f"(now {format_quantity((largest, fmt))})")
    return found


def _unit(resource: str, largest: Fraction) -> Fraction:
    """The step a smaller request is searched in: millicores, mebibytes, else whole units."""
    if resource == "cpu":
        return Fraction(1, 1000)
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return Fraction(1 << 20) if largest >= 1 << 20 else Fraction(1)
    return Fraction(1)


def _scaled(resource: str, factor: Fraction) -> Callable[[Obj], None]:
    """Scales the job's requests (and limits) of `resource` by factor: its pods', its Job's
    templates' and its PodGroup's minResources."""
    def scale(values: dict | None, where: str) -> None:
        if values and resource in values:
            value, fmt = parse_quantity(values[resource], where)
            values[resource] = format_quantity((value * factor, fmt))

    def containers(spec: dict) -> None:
        for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            res = c.get("resources") or {}
            scale(res.get("requests"), "requests")
            scale(res.get("limits"), "limits")

    def change(obj: Obj) -> None:
        if obj["kind"] == "Pod":
            containers(obj["spec"])
        elif obj["kind"] == "Job":
            for task in obj["spec"].get("tasks") or []:
                containers((task.get("template") or {}).get("spec") or {})
        else:
            scale(obj["spec"].get("minResources"), "minResources")
    return change


def _raised_capability(fork: _Fork) -> str | None:
    queue = next((q for q in fork.objects if q.get("kind") == "Queue" and meta_of(q).get("name") == fork.queue), None)
    capability = dict(spec_of(queue).get("capability") or {}) if queue else {}
    if not capability:
        return None
    raised = dict(capability)
    for name, asked in _asked(fork).items():
        if name in capability:
            value, fmt = parse_quantity(capability[name], f"capability.{name}")
            raised[name] = format_quantity((value + asked, fmt))

    def with_capability(cap: dict | None) -> list[Obj]:
        def change(obj: Obj) -> None:
            if cap is None:
                obj["spec"].pop("capability", None)
            else:
                obj["spec"]["capability"] = cap
        return fork.changed(change, lambda o: o is queue)

    now = ", ".join(f"{k} {v}" for k, v in sorted(capability.items()))
    if raised != capability and fork.starts(with_capability(raised)):
        to = ", ".join(f"{k} {v}" for k, v in sorted(raised.items()))
        return f"raise queue {fork.queue}'s capability to {to} (now {now})"
    if fork.starts(with_capability(None)):
        return f"remove queue {fork.queue}'s capability ({now})"
    return None


def _asked(fork: _Fork) -> dict[str, Fraction]:
    """What the job asks of its queue: its minResources, else its pending pods' requests."""
    min_resources = spec_of(fork.group).get("minResources") or {}
    if min_resources:
        return {name: parse_quantity(q, f"minResources.{name}")[0] for name, q in min_resources.items()}
    asked: dict[str, Fraction] = {}
    for pod in fork.objects:
        if pod.get("kind") == "Pod" and fork.owns(pod) and status_of(pod).get("phase", "Pending") == "Pending":
            for name, (value, _) in pod_requests(spec_of(pod)).items():
                asked[name] = asked.get(name, Fraction(0)) + value
    return asked


def _other_queues(fork: _Fork) -> list[str]:
    queues = [q for q in fork.objects if q.get("kind") == "Queue"]
    parents = {spec_of(q).get("parent") for q in queues}
    candidates = sorted(meta_of(q)["name"] for q in queues
                        if status_of(q).get("state", "Open") == "Open" and meta_of(q)["name"] not in parents
                        and meta_of(q)["name"] not in (fork.queue, "root"))

    def moved(queue: str) -> list[Obj]:
        def change(obj: Obj) -> None:
            if obj["kind"] in ("PodGroup", "Job"):
                obj["spec"]["queue"] = queue
        return fork.changed(change)

    found: list[str] = []
    for queue in candidates:
        if len(found) == MAX_QUEUES:
            break
        if fork.starts(moved(queue)):
            found.append(f"submit it to queue {queue}, which has room")
    return found


def _preemption(fork: _Fork, conf: Any) -> str | None:
    priorities = {meta_of(p)["name"]: int(p.get("value") or 0)
                  for p in fork.objects if p.get("kind") == "PriorityClass"}
    mine = _priority(fork.group, priorities)
    running = [g for g in fork.objects if g.get("kind") == "PodGroup" and g is not fork.group
               and status_of(g).get("phase") == "Running" and _priority(g, priorities) < mine]
    # Volcano's victim order: the lowest priority first, then the newest.
    running.sort(key=lambda g: (_priority(g, priorities), -_created(g)))
    members = [_members(fork.objects, g) for g in running]

    def without(count: int) -> list[Obj]:
        gone = set().union(*members[:count])
        return [o for o in fork.objects if id(o) not in gone]

    fewest = _fewest(len(running), lambda n: fork.starts(without(n)))
    if fewest is None:
        return None
    chosen = running[:fewest]
    names = ", ".join(_job_key(g) for g in chosen[:5]) + (f" and {fewest - 5} more" if fewest > 5 else "")
    queues = {spec_of(g).get("queue") or "default" for g in chosen}
    return (f"preempt {fewest} lower-priority job(s) ({names}; priority {mine} above theirs): "
            f"{_policy_allows(conf, queues - {fork.queue}, fork.queue in queues)}")


def _fewest(count: int, starts_without: Callable[[int], bool]) -> int | None:
    """The fewest victims (a prefix of the victim order) whose removal starts the job."""
    if count == 0 or not starts_without(count):
        return None
    low, high = 1, count
    for _ in range(_SEARCH_STEPS):
        if low >= high:
            break
        mid = (low + high) // 2
        low, high = (low, mid) if starts_without(mid) else (mid + 1, high)
    return high


def _policy_allows(conf: Any, other_queues: set[str], same_queue: bool) -> str:
    text = load_conf(conf)
    actions = _DEFAULT_ACTIONS if text is None else tuple(
        a.strip() for a in str(json.loads(text).get("actions") or "").split(",") if a.strip())
    needed = (["preempt"] if same_queue else []) + (["reclaim"] if other_queues else [])
    missing = [a for a in needed if a not in actions]
    if missing:
        return f"the configuration does not ({', '.join(missing)} is not among its actions)"
    return f"the configuration's {' and '.join(needed)} action{'s' if len(needed) > 1 else ''} would do it"


def _priority(group: Obj, priorities: dict[str, int]) -> int:
    name = spec_of(group).get("priorityClassName")
    return priorities.get(name, 0) if name else 0


def _created(obj: Obj) -> float:
    return seconds_of(meta_of(obj).get("creationTimestamp")) or 0.0


def _key(obj: Obj) -> str:
    return f"{meta_of(obj).get('namespace') or 'default'}/{meta_of(obj)['name']}"


def _job_key(group: Obj) -> str:
    """ "ns/name" of the Volcano Job that owns a PodGroup, else of the PodGroup."""
    job = next((r.get("name") for r in meta_of(group).get("ownerReferences") or [] if r.get("kind") == "Job"), None)
    return f"{meta_of(group).get('namespace') or 'default'}/{job}" if job else _key(group)


def _members(objects: list[Obj], group: Obj) -> set[int]:
    """The ids of a PodGroup, its pods and the Volcano Job that owns it, in objects."""
    ns, name = meta_of(group).get("namespace") or "default", meta_of(group)["name"]
    jobs = {r.get("name") for r in meta_of(group).get("ownerReferences") or [] if r.get("kind") == "Job"}
    return {id(o) for o in objects if o is group or (meta_of(o).get("namespace") or "default") == ns and (
        o.get("kind") == "Pod" and annotation(o, GROUP_NAME) == name
        or o.get("kind") == "Job" and meta_of(o).get("name") in jobs)}
