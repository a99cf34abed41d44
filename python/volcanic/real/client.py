"""The connection to a real API server: credentials found as kubectl finds them, and raw
requests over libcurl's pool of keep-alive connections (volcanic.real.connection): JSON, and
protobuf for pods, bindings and nodes (volcanic.real.protobuf), which cost the API server
less.

Beneath is the official `kubernetes` client, for what it does well and we should not redo:
kubeconfig loading and merging (exec and auth-provider plugins included), in-cluster
service-account credentials and the TLS and proxy settings. Requests bypass its generated
models and its urllib3 pool: objects stay plain dicts
(volcanic's form everywhere), and a bind is a plain POST (the generated
`create_namespaced_pod_binding` fails on the Status the server returns,
kubernetes-client/python#825).
"""

from __future__ import annotations

from concurrent.futures import Future
import logging
import os
from pathlib import Path
import time
from typing import Any, Callable
from urllib.parse import urlencode

import orjson

from volcanic.kube.errors import (
    AdmissionError,
    AlreadyExists,
    Conflict,
    InvalidObject,
    NotFound,
    StoreError,
    Unavailable,
)
from volcanic.kube.objects import as_map
from volcanic.real import protobuf
from volcanic.real.connection import Connections, TokenBucket

AUTH_REFRESH_SECONDS = 60.0
JSON = "application/json"
PROTOBUF_OR_JSON = f"{protobuf.CONTENT_TYPE}, {JSON}"

log = logging.getLogger("volcanic.real")


class Unreadable(Unavailable):
    """A protobuf answer with a field the schema lacks: asked again, it comes as JSON."""


def kubeconfig_path(flag: str | None = None) -> str | None:
    """kubectl's order: --kubeconfig, then $KUBECONFIG, then ~/.kube/config; None means
    in-cluster credentials."""
    if flag:
        return flag
    if os.environ.get("KUBECONFIG"):
        return os.environ["KUBECONFIG"]
    default = Path.home() / ".kube" / "config"
    return str(default) if default.exists() else None


class KubeClient:
    """Raw requests to one API server, their answers decoded to dicts. Thread-safe. With `qps`,
    every request of the process (a retry's included) takes a token of a bucket filled `qps` a
    second and holding `burst` (client-go's rest.Config QPS and Burst); without it none waits.
    Answers 429 and 5xx with Retry-After are retried as client-go retries them
    (volcanic.real.connection). With `protobuf`, pods, bindings and nodes go as protobuf (until
    the server sends a field the schema lacks: JSON from then on)."""

    def __init__(self, kubeconfig: str | None = None, timeout: float = 30.0, qps: float | None = None,
                 burst: int | None = None, master: str | None = None, protobuf: bool = True) -> None:
        from kubernetes import client, config

        configuration = client.Configuration()
        path = kubeconfig_path(kubeconfig)
        if path is not None:
            config.load_kube_config(config_file=path, client_configuration=configuration)
        else:
            try:
                config.load_incluster_config(client_configuration=configuration)
            except config.ConfigException as e:
                raise StoreError("", "", "", f"no kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config) "
                                 f"and no in-cluster credentials: {e}") from None
        if master:  # --master: the API server's address over the kubeconfig's (clientcmd.BuildConfigFromFlags)
            configuration.host = master
        self.configuration = configuration
        self.kubeconfig = path
        self.host = configuration.host.rstrip("/")
        self._api = client.ApiClient(configuration)
        limiter = TokenBucket(qps, burst if burst is not None else max(1, int(qps))) if qps else None
        try:
            self.connections = Connections(configuration, limiter=limiter)
        except ValueError as e:
            raise StoreError("", "", "", f"kubeconfig {path or '(in-cluster)'}: {e}") from None
        self.timeout = timeout
        self.protobuf = protobuf
        self._auth_headers: dict[str, str] = {}
        self._auth_until = 0.0

    def headers(self, content_type: str = JSON, accept: str = JSON) -> dict[str, str]:
        return {"Accept": accept, "Content-Type": content_type, **self._auth()}

    def _auth(self) -> dict[str, str]:
        """The credentials' headers, asked of the kubernetes client at most once a minute, as
        client-go re-reads a rotating token: its refresh hook re-applies the whole kubeconfig,
        which took a third of each request's CPU when it ran per request."""
        now = time.monotonic()
        if now >= self._auth_until:
            auth: dict[str, str] = {}
            self._api.update_params_for_auth(auth, [], ["BearerToken"], "", "GET", None)
            self._auth_headers, self._auth_until = auth, now + AUTH_REFRESH_SECONDS
        return self._auth_headers

    def request(self, method: str, path: str, body: Any = None, query: dict[str, Any] | None = None,
                content_type: str = JSON, timeout: float | None = None) -> Any:
        """The decoded answer; a non-2xx answer raises the StoreError it stands for. Sent
        ahead of the background requests not sent yet: the caller waits for it."""
        try:
            return self.request_async(method, path, body, query, content_type, timeout, first=True).result()
        except Unreadable:  # protobuf is off now: the same read in JSON
            return self.request_async(method, path, body, query, content_type, timeout, first=True).result()

    def request_async(self, method: str, path: str, body: Any = None, query: dict[str, Any] | None = None,
                      content_type: str = JSON, timeout: float | None = None,
                      then: Callable[[Any], Any] | None = None, first: bool = False) -> Future:
        """request() without waiting: a future of the answer (passed through `then`, in the
        transfer thread) or of the StoreError it stands for. Background requests go in the
        order sent."""
        url = path + (("?" + urlencode(query)) if query else "")
        data, content_type = self._body(body, content_type)
        accept = PROTOBUF_OR_JSON if self.protobuf and protobuf.answers_protobuf(method, path) else JSON
        what = f"{method} {path}"

        def finish(status: int, answer: bytes, error: str | None) -> Any:
            if error is not None:
                raise Unavailable("", "", "", f"{what}: {error}")
            if status >= 300:
                if status == 401:  # a rotated token: ask for the credentials again next time
                    self._auth_until = 0.0
                raise api_error(status, _status_of(answer, what), what)
            payload = self._decode(answer, method == "GET", what) if answer else None
            return payload if then is None else then(payload)
        return self.connections.submit(method, url, data, self.headers(content_type, accept),
                                       timeout or self.timeout, finish, first)

    def _body(self, body: Any, content_type: str) -> tuple[bytes | None, str]:
        """The request's body and its content type: protobuf for a pod or a binding the schema
        carries exactly, JSON for the rest."""
        if body is None:
            return None, content_type
        if self.protobuf and content_type == JSON and isinstance(body, dict) and body.get("kind") in protobuf.KINDS:
            data = protobuf.encode(body)
            if data is not None:
                return data, protobuf.CONTENT_TYPE
        return orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS), content_type

    def _decode(self, answer: bytes, strict: bool, what: str) -> Any:
        """An answer in JSON or protobuf. Read strictly, a protobuf answer with a field the
        schema lacks turns protobuf off and raises Unreadable (protobuf.py says why)."""
        if not answer.startswith(protobuf.MAGIC):
            return orjson.loads(answer)
        try:
            return protobuf.decode(answer, strict)
        except ValueError as e:
            raise self._unreadable(e, what) from None

    def _unreadable(self, error: ValueError, what: str) -> Unreadable:
        if self.protobuf:
            self.protobuf = False
            log.warning("%s: %s; using JSON from now on", what, error)
        return Unreadable("", "", "", f"{what}: {error}")

    def stream(self, path: str, query: dict[str, Any], timeout: float, on_line: Callable[[dict], bool]) -> None:
        """Gives on_line each event of a watch, decoded, as it comes, until it returns False or
        the server ends the watch. An error answer raises the StoreError it stands for, a lost
        connection Unavailable, an event the protobuf schema cannot read Unreadable, and what
        on_line raises is raised here."""
        accept = PROTOBUF_OR_JSON if self.protobuf and protobuf.answers_protobuf("GET", path) else JSON
        reader: list[Callable[[bytes], list[dict]]] = []
        failure: list[BaseException] = []

        def on_chunk(status: int, chunk: bytes) -> bool:
            try:
                if not reader:  # the server's choice shows in the first byte: JSON is an object
                    reader.append(_Lines().feed if chunk[:1] == b"{" else protobuf.Frames().feed)
                try:
                    events = reader[0](chunk)
                except ValueError as e:
                    raise self._unreadable(e, f"watch {path}") from None
                return all(on_line(event) for event in events)
            except BaseException as e:  # noqa: BLE001 - raised again below, outside libcurl
                failure.append(e)
                return False
        status, error, error_body = self.connections.stream(path + "?" + urlencode(query),
                                                            self.headers(JSON, accept), timeout, on_chunk)
        if failure:
            raise failure[0]
        if error is not None:
            raise Unavailable("", "", "", f"watch {path}: {error}")
        if status >= 300:
            raise api_error(status, _status_of(error_body, f"watch {path}"), f"watch {path}")


class _Lines:
    """A JSON watch's stream cut into its lines: feed() answers the events the chunk completes."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> list[dict]:
        *lines, self._pending = (self._pending + chunk).split(b"\n")
        return [orjson.loads(line) for line in lines if line.strip()]


def _status_of(answer: bytes, what: str) -> Any:
    """An error answer's Status object (JSON or protobuf); an answer that is neither (a
    proxy's page, the API server's "404 page not found" for a group it does not serve) as a
    Status with its text."""
    try:
        if answer.startswith(protobuf.MAGIC):
            return protobuf.decode(answer, strict=False)
        return orjson.loads(answer) if answer else None
    except (orjson.JSONDecodeError, ValueError):
        return {"message": f"{what}: {answer[:200].decode(errors='replace').strip()}"}


def api_error(status: int, payload: Any, what: str) -> StoreError | AdmissionError | InvalidObject:
    """The error a Kubernetes Status answer stands for."""
    payload = as_map(payload)
    message = payload.get("message") or f"{what}: HTTP {status}"
    reason = payload.get("reason") or ""
    details = payload.get("details") or {}
    kind, name = details.get("kind") or "", details.get("name") or ""
    if "denied the request" in message:
        return AdmissionError(message.split("denied the request: ", 1)[-1], kind=kind, name=name)
    if status == 404:
        return NotFound(kind, "", name, message)
    if status == 409:
        return (AlreadyExists if reason == "AlreadyExists" else Conflict)(kind, "", name, message)
    if status == 422:
        return InvalidObject(message)
    if status == 429 or status >= 500:
        return Unavailable(kind, "", name, message)
    error = StoreError(kind, "", name, f"{what}: {message}")
    error.reason = reason or str(status)
    return error
