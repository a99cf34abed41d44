"""The console scripts vcctl, vsub, vjobs, vqueues, vcancel, vsuspend and vresume on a real API
server (the commands: volcanic.vcctl). `python -m volcanic.cli.vcctl ARGS` is vcctl.

The kubeconfig is found as kubectl finds it (--kubeconfig/-k, then $KUBECONFIG, then
~/.kube/config, then in-cluster credentials), --master/-s overrides its server, as Volcano's
BuildConfig does. Requests go through volcanic's client (volcanic.real.client) in JSON, so
`-o json|yaml` print the objects as the server returns them.
"""

from __future__ import annotations

from contextlib import contextmanager
import os
import sys
import time
from typing import Iterator, Sequence

from volcanic.kube.errors import NotFound, StoreError
from volcanic.kube.kinds import Kind
from volcanic.kube.objects import Obj
from volcanic.real.client import KubeClient
from volcanic.real.foresight_http import ForesightClient, plain_request, scheduler_address
from volcanic.real.manifests.names import NAMESPACE, SCHEDULER_SERVICE
from volcanic.real.store import KubeStore, received
from volcanic.vcctl import Command, StoreApi, run
from volcanic.vcctl.api import Labels, NotServed, kind_of, matches, selector

MERGE_PATCH = "application/merge-patch+json"


class KubeApi(StoreApi):
    """vcctl's API on a real API server: the Store's requests, a real merge PATCH and label
    selectors sent to the server. A 404 from a server that lacks the kind's group version is
    NotServed."""

    def __init__(self, client: KubeClient) -> None:
        super().__init__(KubeStore(client), now=time.time, generates_names=True, foresight=scheduler_foresight(client))
        self.client = client

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj:
        k = kind_of(kind)
        with self._served(k):
            obj = self.store.get(k.name, name, namespace)
            if obj is None:
                self._check_served(k)
                raise NotFound(k.name, namespace or "", name, k.not_found(name))
            return obj

    def list(self, kind: str, namespace: str | None = None, labels: Labels | None = None) -> list[Obj]:
        k = kind_of(kind)
        with self._served(k):
            if not labels:
                return self.store.list(k.name, namespace)
            answer = self.client.request("GET", k.path(namespace), query={"labelSelector": selector(labels)})
            return [received(k, o) for o in answer.get("items") or [] if matches(o, labels)]

    def create(self, obj: Obj) -> Obj:
        k = kind_of(obj["kind"])
        with self._served(k):
            return self.store.create(obj)

    def patch(self, kind: str, name: str, namespace: str | None, patch: Obj) -> Obj:
        k = kind_of(kind)
        with self._served(k):
            path = k.path((namespace or "default") if k.namespaced else None, name)
            return received(k, self.client.request("PATCH", path, patch, content_type=MERGE_PATCH))

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        k = kind_of(kind)
        with self._served(k):
            self.store.delete(k.name, name, namespace)

    @contextmanager
    def _served(self, k: Kind) -> Iterator[None]:
        """A 404 is NotServed when the server lacks the kind's group version."""
        try:
            yield
        except NotFound:
            self._check_served(k)
            raise

    def _check_served(self, k: Kind) -> None:
        try:
            self.client.request("GET", f"/apis/{k.api_version}" if k.group else f"/api/{k.api_version}")
        except NotFound:
            raise NotServed(k) from None


def scheduler_foresight(client: KubeClient) -> ForesightClient:
    """volcanic's scheduler's foresight answers: at $VOLCANIC_SCHEDULER_ADDRESS (a URL), else
    through the API server's proxy to the scheduler's Service."""
    address = scheduler_address()
    if address:
        return ForesightClient(address, plain_request)

    def proxied(method: str, url: str, body: bytes | None) -> tuple[int, bytes]:
        def finish(status: int, answer: bytes, error: str | None) -> tuple[int, bytes]:
            if error is not None:
                raise OSError(f"{method} {url}: {error}")
            return status, answer
        return client.connections.submit(method, url, body, client.headers("application/yaml"), 120.0, finish,
                                         True).result()
    return ForesightClient(f"/api/v1/namespaces/{NAMESPACE}/services/{SCHEDULER_SERVICE}:metrics/proxy", proxied)


def connect(master: str, kubeconfig: str) -> KubeApi:
    """Volcano's BuildConfig: --kubeconfig (else $KUBECONFIG, ~/.kube/config, in-cluster) with
    --master over its server."""
    if kubeconfig and not os.path.exists(kubeconfig):
        raise StoreError("", "", "", f"stat {kubeconfig}: no such file or directory")
    try:
        return KubeApi(KubeClient(kubeconfig or None, master=master or None, protobuf=False))
    except StoreError:
        raise
    except Exception as e:  # noqa: BLE001 - the kubernetes client's config errors, as one line
        raise StoreError("", "", "", f"kubeconfig: {' '.join(str(e).split()) or type(e).__name__}") from None


# Commands of other modules that join vcctl's tree: (parent's path, Command) pairs, as
# volcanic.vcctl.tree.vcctl takes them (e.g. ("job", Command("why", ...))).
EXTRA: tuple[tuple[str, Command], ...] = ()


def main(argv: Sequence[str] | None = None, prog: str = "vcctl") -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        code = run(args, connect, prog, extra=EXTRA)
        sys.stdout.flush()
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `vcctl job list | head -1`: the reader went away
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return code


def _script(prog: str):
    def entry() -> None:
        sys.exit(main(prog=prog))
    entry.__name__ = prog
    return entry


vcctl, vsub, vjobs, vqueues = _script("vcctl"), _script("vsub"), _script("vjobs"), _script("vqueues")
vcancel, vsuspend, vresume = _script("vcancel"), _script("vsuspend"), _script("vresume")

if __name__ == "__main__":
    sys.exit(main())
