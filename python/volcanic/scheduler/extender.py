"""The extender plugin: Volcano's pkg/scheduler/plugins/extender (v1.15.1), extension points
answered by an HTTP service (docs/extender.md: arguments, protocol, payloads).

Each configured verb turns on one hook; a hook POSTs JSON to `<urlPrefix>/<verb>` and reads
the answer as Volcano's extender.go does, errors included: a transport error, a status other
than 200, an answer over 10 MB or one that does not decode is answered as Volcano answers it,
with or without `extender.ignorable`, and logged once per session and verb. Nothing the
extender does fails the session. The payloads are the subset of Volcano's Go structs that
volcanic's views carry, under the Go field names (extender_wire.py).
"""

from __future__ import annotations

from dataclasses import dataclass
import http.client
import json
import logging
import time
from typing import Any, Mapping, Sequence
import urllib.parse

from volcanic import _core
from volcanic.scheduler.extender_wire import (
    decode,
    payload_job,
    payload_node,
    payload_queue,
    payload_session,
    payload_task,
)
from volcanic.scheduler.plugins import (
    JobView,
    NodeView,
    Plugin,
    QueueView,
    SessionView,
    TaskView,
    Unresolvable,
)

log = logging.getLogger(__name__)

# Answers are read up to this many bytes (extender.go maxBodySize).
MAX_BODY = 10 << 20
# Volcano's message when an answer is longer (net/http's MaxBytesReader).
TOO_LARGE = "http: request body too large"
DEFAULT_TIMEOUT = 1.0

# The verb arguments and the hooks they turn on.
VERBS = {
    "extender.onSessionOpenVerb": "on_session_open",
    "extender.onSessionCloseVerb": "on_session_close",
    "extender.predicateVerb": "predicate",
    "extender.prioritizeVerb": "batch_node_order",
    "extender.preemptableVerb": "preemptable",
    "extender.reclaimableVerb": "reclaimable",
    "extender.queueOverusedVerb": "overused",
    "extender.jobEnqueueableVerb": "job_enqueueable",
    "extender.jobReadyVerb": "job_ready",
    "extender.allocateFuncVerb": "on_allocate",
    "extender.deallocateFuncVerb": "on_deallocate",
}
ARGUMENTS = ("extender.urlPrefix", "extender.httpTimeout", *VERBS, "extender.ignorable",
             "extender.managedResources")

# Volcano's api.Status codes a predicate answers with (pkg/scheduler/api/types.go).
SUCCESS, ERROR, UNSCHEDULABLE, UNRESOLVABLE, WAIT, SKIP = range(6)


class ExtenderError(Exception):
    """A call that did not give an answer (Volcano's send returning an error)."""


# Configuration.

@dataclass(frozen=True)
class Config:
    url_prefix: str
    timeout: float | None  # seconds; None: no limit (Go's http.Client with Timeout <= 0)
    verbs: dict[str, str]  # hook -> verb, for the verbs set
    ignorable: bool
    managed: frozenset[str]


def parse_config(arguments: Mapping[str, Any]) -> Config:
    """The plugin's arguments; ValueError naming the argument for a bad one. Volcano falls back
    to defaults (or, for managedResources, exits); volcanic refuses (docs/extender.md)."""
    for key in arguments:
        if key not in ARGUMENTS:
            raise ValueError(f'unknown argument "{key}"; known arguments: {", ".join(ARGUMENTS)}')
    verbs = {}
    for key, hook in VERBS.items():
        verb = arguments.get(key, "")
        if not isinstance(verb, str):
            raise ValueError(f"argument {key} must be a string (the verb: the last part of the URL), got {verb!r}")
        if verb:
            verbs[hook] = verb
    prefix = arguments.get("extender.urlPrefix", "")
    if not isinstance(prefix, str):
        raise ValueError(f"argument extender.urlPrefix must be a string, got {prefix!r}")
    if prefix:
        if not _http_url(prefix):
            raise ValueError(f'argument extender.urlPrefix must be an http:// or https:// URL, got "{prefix}"')
    elif verbs:
        raise ValueError(f"argument extender.urlPrefix is missing: the verbs ({', '.join(verbs.values())}) "
                         "need the extender's address")
    return Config(prefix.rstrip("/"), _timeout(arguments.get("extender.httpTimeout", "")), verbs,
                  _go_bool(arguments.get("extender.ignorable", False)),
                  _names(arguments.get("extender.managedResources")))


def _http_url(text: str) -> bool:
    url = urllib.parse.urlsplit(text)
    try:
        url.port  # noqa: B018 - raises ValueError for a port that is not one
    except ValueError:
        return False
    return url.scheme in ("http", "https") and bool(url.hostname)


def _timeout(value: Any) -> float | None:
    """Go's time.ParseDuration; "" is the default, 1s; zero or less is no timeout."""
    if not isinstance(value, str):
        raise ValueError(f'argument extender.httpTimeout must be a Go duration ("500ms", "2s"), got {value!r}')
    if not value:
        return DEFAULT_TIMEOUT
    try:
        nanos = _core.parse_go_duration(value)
    except ValueError:
        raise ValueError(f'argument extender.httpTimeout must be a Go duration ("500ms", "2s"), got "{value}"') \
            from None
    return nanos / 1e9 if nanos > 0 else None


def _go_bool(value: Any) -> bool:
    """Volcano's Arguments.GetBool: a bool, or a string strconv.ParseBool reads."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if isinstance(value, str) and value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise ValueError(f"argument extender.ignorable must be a boolean, got {value!r}")


def _names(value: Any) -> frozenset[str]:
    if value is None:
        return frozenset()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"argument extender.managedResources must be a list of resource names, got {value!r}")
    return frozenset(value)


# HTTP.

class Client:
    """POSTs JSON to `<prefix>/<verb>`, keeping one connection alive between calls (as Go's
    http.Client does), each call bounded by the timeout from connecting to the last byte."""

    def __init__(self, prefix: str, timeout: float | None) -> None:
        self.prefix = prefix
        self.timeout = timeout
        url = urllib.parse.urlsplit(prefix)
        self._https = url.scheme == "https"
        self._host, self._port = url.hostname or "", url.port
        self._path = url.path
        self._conn: http.client.HTTPConnection | None = None

    def url(self, verb: str) -> str:
        return f"{self.prefix}/{verb}"

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def post(self, verb: str, payload: Any, read: bool = True) -> bytes:
        """The answer's body (b"" unless `read`); ExtenderError when there is none."""
        body = json.dumps(payload, separators=(",", ":"), allow_nan=False).encode()
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        url = self.url(verb)
        for attempt in (0, 1):
            reused = self._conn is not None
            try:
                return self._exchange(verb, url, body, read, deadline)
            except ExtenderError:
                self.close()
                raise
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
                self.close()
                if not reused or attempt:  # a kept connection the server had closed: once more on a new one
                    raise ExtenderError(f'Post "{url}": {_describe(e)}') from None
            except (OSError, http.client.HTTPException) as e:
                self.close()
                raise ExtenderError(f'Post "{url}": {_describe(e)}') from None
        raise AssertionError("unreachable")

    def _exchange(self, verb: str, url: str, body: bytes, read: bool, deadline: float | None) -> bytes:
        if self._conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            self._conn = cls(self._host, self._port, timeout=_left(deadline))
            self._conn.connect()
        conn = self._conn
        _arm(conn, deadline)
        path = urllib.parse.quote(f"{self._path}/{verb}", safe="/%:@!$&'()*+,;=~?")
        conn.request("POST", path, body, {"Content-Type": "application/json"})
        _arm(conn, deadline)
        resp = conn.getresponse()
        if resp.status != 200:
            self.close()
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {resp.status}")
        chunks, size = [], 0
        while not resp.isclosed():  # read() closes the answer at its end, freeing the connection
            _arm(conn, deadline)
            chunk = resp.read(1 << 16)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_BODY:
                self.close()
                if not read:
                    return b""  # Volcano does not read an answer it does not need
                raise ExtenderError(TOO_LARGE)
            if read:
                chunks.append(chunk)
        if resp.will_close:
            self.close()
        return b"".join(chunks)


def _left(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("timed out")
    return left


def _arm(conn: http.client.HTTPConnection, deadline: float | None) -> None:
    """The socket's timeout: what is left of the call's."""
    if conn.sock is not None:
        conn.sock.settimeout(_left(deadline))


def _describe(e: BaseException) -> str:
    if isinstance(e, TimeoutError):
        return "timeout exceeded (extender.httpTimeout)"
    return str(e) or type(e).__name__


# The plugin.

class Extender(Plugin):
    """Volcano's extender plugin; see the module's docstring."""

    name = "extender"
    node_local = False  # the extender may answer from anything

    def __init__(self, arguments: Mapping[str, Any]) -> None:
        super().__init__(arguments)
        self.config = parse_config(arguments)
        self.client = Client(self.config.url_prefix, self.config.timeout) if self.config.url_prefix else None
        # A hook whose verb is not set is left out (costs nothing, keeps node answers cacheable);
        # on_session_close stays, to close the connection.
        for hook in VERBS.values():
            if hook not in self.config.verbs and hook != "on_session_close":
                setattr(self, hook, None)
        self._off = False  # onSessionOpen failed and is not ignorable: no other verb this session
        self._interested: dict[str, bool] = {}
        self._logged: set[str] = set()

    # Calls.

    def _call(self, hook: str, payload: Any, fields: Mapping[str, str] | None) -> tuple[dict[str, Any], str | None]:
        """POSTs to the hook's verb; the answer's fields and the error, if any (logged once per
        session and verb)."""
        assert self.client is not None  # parse_config: a verb needs the prefix
        verb = self.config.verbs[hook]
        answer: dict[str, Any] = {}
        error: str | None = None
        try:
            body = self.client.post(verb, payload, read=fields is not None)
        except Exception as e:  # noqa: BLE001 - whatever the exchange raises is the extender's error
            self.client.close()
            error = str(e) if isinstance(e, ExtenderError) else f"{type(e).__name__}: {e}"
        else:
            if fields is not None:
                answer, error = decode(body, fields)
        if error is not None and verb not in self._logged:
            self._logged.add(verb)
            log.warning("extender %s (%s) failed: %s (logged once per session)", verb, self.client.url(verb), error)
        return answer, error

    def interested(self, task: TaskView) -> bool:
        """extender.go IsInterested: without managedResources every task; else a task requesting
        one of them (limits count: requests default to them)."""
        if not self.config.managed:
            return True
        known = self._interested.get(task.uid)
        if known is None:
            known = self._interested[task.uid] = requests_managed(task.resreq.keys(), self.config.managed)
        return known

    # Hooks (None in __init__ where the verb is not set).

    def on_session_open(self, session: SessionView) -> None:
        _, error = self._call("on_session_open", payload_session(session), None)
        self._off = error is not None and not self.config.ignorable

    def on_session_close(self, session: SessionView) -> None:
        if "on_session_close" in self.config.verbs:
            self._call("on_session_close", {}, None)
        if self.client is not None:
            self.client.close()

    def predicate(self, task: TaskView, node: NodeView) -> str | None:
        if self._off or not self.interested(task):
            return None
        answer, error = self._call("predicate", {"task": payload_task(task), "node": payload_node(node)},
                                   {"status": "string", "code": "int"})
        if error is not None:
            # api.NewFitError: code Error, which allocate and preempt both take as final
            return None if self.config.ignorable else Unresolvable(error)
        return predicate_verdict(answer.get("status", ""), answer.get("code", SUCCESS))

    def batch_node_order(self, task: TaskView, nodes: Sequence[NodeView]) -> list[float]:
        zeros = [0.0] * len(nodes)
        if self._off or not self.interested(task):
            return zeros
        answer, error = self._call("batch_node_order",
                                   {"task": payload_task(task), "nodes": [payload_node(n) for n in nodes]},
                                   {"nodeScore": "scores", "errorMessage": "string"})
        scores = answer.get("nodeScore")
        if error is not None or answer.get("errorMessage") or scores is None:
            # Volcano's PrioritizeNodes then has no score at all (docs/extender.md: a difference)
            return zeros
        return [scores.get(n.name, 0.0) for n in nodes]

    def preemptable(self, preemptor: TaskView, candidates: Sequence[TaskView]) -> list[TaskView] | None:
        return self._victims("preemptable", preemptor, candidates)

    def reclaimable(self, reclaimer: TaskView, candidates: Sequence[TaskView]) -> list[TaskView] | None:
        return self._victims("reclaimable", reclaimer, candidates)

    def _victims(self, hook: str, evictor: TaskView, candidates: Sequence[TaskView]) -> list[TaskView] | None:
        if self._off or not self.interested(evictor):
            return None  # util.Abstain
        answer, error = self._call(hook, {"evictor": payload_task(evictor),
                                          "evictees": [payload_task(c) for c in candidates]},
                                   {"status": "int", "victims": "victims"})
        if error is not None:
            return []  # (nil, Permit) or (nil, Reject): no victim in this tier either way
        if answer.get("status", 0) == 0:
            return None
        return victims_among(answer.get("victims") or [], candidates)

    def job_enqueueable(self, job: JobView) -> bool | None:
        if self._off:
            return None
        answer, error = self._call("job_enqueueable", {"job": payload_job(job)}, {"status": "int"})
        if error is not None:
            return self.config.ignorable  # Permit, else Reject
        return _vote(answer.get("status", 0))

    def overused(self, queue: QueueView) -> bool:
        if self._off:
            return False
        answer, error = self._call("overused", {"queue": payload_queue(queue)}, {"overused": "bool"})
        if error is not None:
            return not self.config.ignorable
        return bool(answer.get("overused", False))

    def job_ready(self, job: JobView) -> bool:
        if self._off:
            return True
        answer, error = self._call("job_ready", {"job": payload_job(job)}, {"status": "bool"})
        if error is not None:
            return not self.config.ignorable  # as extender.go has it: ignorable reads "not ready"
        return bool(answer.get("status", False))

    def on_allocate(self, task: TaskView) -> str | None:
        return self._event("on_allocate", task)

    def on_deallocate(self, task: TaskView) -> None:
        self._event("on_deallocate", task)  # Volcano's callers ignore a deallocation's error

    def _event(self, hook: str, task: TaskView) -> str | None:
        """addEventHandler: an error refuses unless ignorable; an errorMessage refuses anyway."""
        if self._off or not self.interested(task):
            return None
        answer, error = self._call(hook, {"task": payload_task(task)}, {"errorMessage": "string"})
        message = answer.get("errorMessage", "")
        if message:
            return str(message)
        return error if error is not None and not self.config.ignorable else None


def requests_managed(requested: Any, managed: frozenset[str]) -> bool:
    """Whether one of the resource names requested is managed (extender.go hasResourcesInList)."""
    return any(name in managed for name in requested)


def predicate_verdict(message: str, code: int) -> str | None:
    """A predicate answer as Volcano's allocate and preempt read it: no message fits; a message
    with code 0 is code Error (extender.go keeps old extenders working so); Unschedulable lets
    preempt evict there; Error, UnschedulableAndUnresolvable, Wait and Skip do not; any other
    code fits (PredicateForAllocateAction finds none of the codes it rejects)."""
    if not message:
        return None
    if code == SUCCESS:
        code = ERROR
    if code == UNSCHEDULABLE:
        return message
    if code in (ERROR, UNRESOLVABLE, WAIT, SKIP):
        return Unresolvable(message)
    return None


def victims_among(uids: Sequence[str], candidates: Sequence[TaskView]) -> list[TaskView]:
    """The candidates the extender names, by UID, in its order; other names are ignored."""
    by_uid = {c.uid: c for c in candidates}
    out: list[TaskView] = []
    for uid in uids:
        c = by_uid.pop(uid, None)
        if c is not None:
            out.append(c)
    return out


def _vote(status: int) -> bool | None:
    return True if status > 0 else False if status < 0 else None

