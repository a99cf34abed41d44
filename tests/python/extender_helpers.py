"""A local extender for the extender plugin's tests (test_extender.py, test_extender_wire.py):
an http.server on 127.0.0.1:0 answering each verb as a test sets, and the configurations and
objects those tests schedule."""

from __future__ import annotations

from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import threading
import time
from typing import Any

import pytest

from builders import node, pod, podgroup
from pyplugin_helpers import NOW
import volcanic


@dataclass
class Reply:
    """An answer other than 200 with a JSON body: a status, raw bytes, a delay first."""
    status: int = 200
    body: bytes = b"{}"
    delay: float = 0.0


class Fake:
    """A local extender. `answers[verb]` is the answer to POST /<verb>: a JSON-able value, a
    Reply, or a function of the request's JSON returning either ({} when not set). Every call
    is recorded as (verb, request JSON), and the client port of each connection."""

    def __init__(self, protocol: str = "HTTP/1.1") -> None:
        self.answers: dict[str, Any] = {}
        self.calls: list[tuple[str, Any]] = []
        self.ports: set[int] = set()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = protocol

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                verb = self.path.removeprefix("/")
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.calls.append((verb, request))
                fake.ports.add(self.client_address[1])
                answer = fake.answers.get(verb, {})
                if callable(answer):
                    answer = answer(request)
                reply = answer if isinstance(answer, Reply) else Reply(body=json.dumps(answer).encode())
                time.sleep(reply.delay)
                self.send_response(reply.status)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.handle_error = lambda request, address: None  # a client that gave up (timeouts)
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def verbs(self) -> list[str]:
        return [verb for verb, _ in self.calls]

    def requests(self, verb: str) -> list[Any]:
        return [request for v, request in self.calls if v == verb]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake():
    f = Fake()
    yield f
    f.close()


def extender(fake: Fake | None = None, **arguments: Any) -> dict[str, Any]:
    """The extender's tier entry: `arguments` without their "extender." prefix."""
    args = {"extender.urlPrefix": fake.url} if fake else {}
    args.update({f"extender.{k}": v for k, v in arguments.items()})
    return {"name": "extender", "arguments": args}


def conf(entry: dict[str, Any], actions: str = "allocate", first: tuple[str, ...] = ("priority", "gang"),
         second: tuple[str, ...] | None = ("predicates",)) -> dict[str, Any]:
    """Two tiers, the extender last in the second; with second=None, one tier, the extender last."""
    if second is None:
        return {"actions": actions, "tiers": [{"plugins": [*({"name": n} for n in first), entry]}]}
    return {"actions": actions, "tiers": [{"plugins": [{"name": n} for n in first]},
                                          {"plugins": [*({"name": n} for n in second), entry]}]}


def schedule(objs: list[dict], configuration: dict[str, Any]) -> volcanic.Decisions:
    return volcanic.schedule(objs, configuration, now=NOW)


def three_nodes_one_pod(**pod_meta: Any) -> list[dict]:
    return [node("n1"), node("n2"), node("n3"), podgroup("pg"), pod("p", "pg", **pod_meta)]
