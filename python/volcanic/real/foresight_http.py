"""Foresight over HTTP: `volcanic scheduler` answers vcctl's `job why`, `job forecast` and
`queue pending` (and `volcanic what-if`) beside /metrics, from its own cache, so asking costs
the API server nothing (docs/foresight.md).

    GET  /foresight/outlook[?namespace=NS][&queue=Q]   [Outlook, ...]
    GET  /foresight/explain?name=N[&namespace=NS]       Explanation
    POST /foresight/what-if   (body: a scheduler configuration, YAML)   WhatIf

as volcanic.foresight.Answers gives them (JSON-ready dicts): the routes are given one, the
client returns the same dicts.

A failure is a JSON {"error": message} (404 {"notFound": message} for no such job), which
tells it from the API server's own Status when asked through its proxy.

One answer is computed at a time (a forecast runs the engine on a fork): a request that comes
while another runs, or before the scheduler's caches have synced (a standby replica behind
the Service), is answered 503 with Retry-After, which the client below follows. The client
finds the scheduler at $VOLCANIC_SCHEDULER_ADDRESS (a URL), else through the API server's
proxy to the Service `volcano-scheduler-service` that `volcanic install` makes.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any, Callable
import urllib.error
import urllib.parse
import urllib.request

from volcanic.errors import ConfigError
from volcanic.httpd.wire import Request, Response

PREFIX = "/foresight/"
ADDRESS_ENV = "VOLCANIC_SCHEDULER_ADDRESS"
RETRIES = 20  # 503s followed, Retry-After apart (0.5 s): a busy or standby scheduler


class ForesightRoutes:
    """The routes above over what `answers` gives: a volcanic.foresight.Answers, None until
    the scheduler's caches have synced."""

    def __init__(self, answers: Callable[[], Any]) -> None:
        self._answers = answers
        self._busy = threading.Lock()

    def handle(self, request: Request) -> Response:
        answers = self._answers()
        if answers is None:
            return _busy("the scheduler's caches have not synced (or it is not the leader)")
        if not self._busy.acquire(blocking=False):
            return _busy("another foresight question is being answered")
        try:
            return self._answer(answers, request)
        finally:
            self._busy.release()

    def _answer(self, answers: Any, request: Request) -> Response:
        route = request.head.path[len(PREFIX):]
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(request.head.target.partition("?")[2]).items()}
        method = request.head.method
        if route == "outlook" and method == "GET":
            return _json(answers.outlook(query.get("namespace"), query.get("queue")))
        if route == "explain" and method == "GET":
            if not query.get("name"):
                return _json({"error": "explain: the query parameter name is required"}, 400)
            try:
                return _json(answers.explain(query["name"], query.get("namespace") or "default"))
            except KeyError as e:
                return _json({"notFound": str(e.args[0])}, 404)
        if route == "what-if" and method == "POST":
            try:
                return _json(answers.what_if(request.body.decode()))
            except (ConfigError, UnicodeDecodeError, ValueError) as e:
                return _json({"error": f"what-if: {e}"}, 400)
        return _json({"error": f"no foresight route {method} {request.head.path}"}, 404)


def _busy(why: str) -> Response:
    return Response(503, json.dumps({"error": why}).encode(), headers={"Retry-After": "1"})


def _json(value: Any, status: int = 200) -> Response:
    return Response(status, json.dumps(value).encode())


class ForesightClient:
    """The answers of a scheduler over HTTP, as volcanic.foresight.Answers gives them: `base`
    is its URL (ending before /foresight/), `request` sends (method, url, body) and returns
    (status, body). KeyError for an unknown job, OSError for a scheduler that does not answer."""

    def __init__(self, base: str, request: Callable[[str, str, bytes | None], tuple[int, bytes]]) -> None:
        self.base, self._request = base.rstrip("/"), request

    def outlook(self, namespace: str | None = None, queue: str | None = None) -> list[dict[str, Any]]:
        return self._ask("GET", "outlook", {k: v for k, v in (("namespace", namespace), ("queue", queue)) if v})

    def explain(self, name: str, namespace: str = "default") -> dict[str, Any]:
        return self._ask("GET", "explain", {"name": name, "namespace": namespace})

    def what_if(self, conf_text: str) -> dict[str, Any]:
        return self._ask("POST", "what-if", {}, conf_text.encode())

    def _ask(self, method: str, route: str, query: dict[str, str], body: bytes | None = None) -> Any:
        url = f"{self.base}{PREFIX}{route}" + (f"?{urllib.parse.urlencode(query)}" if query else "")
        for _ in range(RETRIES):
            status, answer = self._request(method, url, body)
            if status != 503:
                break
            time.sleep(0.5)
        try:
            value = json.loads(answer)
        except ValueError:
            value = None
        if status == 200 and value is not None:
            return value
        if isinstance(value, dict) and "notFound" in value:
            raise KeyError(value["notFound"])
        if isinstance(value, dict) and "error" in value:
            raise OSError(f"volcanic's scheduler: {value['error']}")
        why = value.get("message") if isinstance(value, dict) else answer.decode(errors="replace").strip()
        raise OSError(f"volcanic's scheduler at {self.base} did not answer ({status}: {why}); "
                      f"${ADDRESS_ENV} names its address")


def plain_request(method: str, url: str, body: bytes | None) -> tuple[int, bytes]:
    """One HTTP request to a scheduler address given as a URL."""
    req = urllib.request.Request(url, data=body, method=method)
    try:
        with urllib.request.urlopen(req, timeout=120) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except urllib.error.URLError as e:
        raise OSError(f"volcanic's scheduler at {url.split(PREFIX)[0]} does not answer: {e.reason} "
                      f"(${ADDRESS_ENV} names its address)") from None


def scheduler_address() -> str | None:
    """The scheduler's URL from the environment; None: through the API server's proxy."""
    return os.environ.get(ADDRESS_ENV) or None
