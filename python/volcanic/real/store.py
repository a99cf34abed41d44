"""KubeStore: the Store protocol over a real API server.

Reads and writes are one REST call each (through KubeClient); the `_async` writes return at
once with a future of the answer, so a batch (a job's pods, a session's binds) is sent
concurrently. `watch()` starts one reflector thread per kind: it lists (in pages), offers
every object as ADDED, then watches from the list's resourceVersion with bookmarks. When the
watch ends it resumes from the last resourceVersion seen; when that is too old (410 Gone) it
lists again, offering what changed and a DELETED tombstone (an object without a
resourceVersion) for what vanished meanwhile. Objects are kept as `received` makes them.
"""

from __future__ import annotations

from concurrent.futures import Future
import logging
import threading
from typing import Any, Iterable, Iterator

from volcanic.kube.errors import NotFound, StoreError
from volcanic.kube.kinds import KINDS, Kind, kind_named
from volcanic.kube.objects import Key, Obj, key_of, meta_of
from volcanic.kube.store import Watch
from volcanic.real.client import KubeClient

log = logging.getLogger(__name__)

WATCH_SECONDS = 300  # the server ends each watch after this; the reflector resumes at once
PAGE = 1000


class KubeStore:
    """A Store on a real API server. close() stops its watches."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self._stop = threading.Event()

    def close(self) -> None:
        self._stop.set()

    # Reads.
    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        k = kind_named(kind)
        try:
            return received(k, self.client.request("GET", k.path(_ns(k, namespace), name)))
        except NotFound:
            return None

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        return self.list_with_version(kind_named(kind), namespace)[0]

    def watch(self, kinds: Iterable[str] | None = None) -> Watch:
        names = list(kinds) if kinds is not None else list(KINDS)
        w = Watch(names)
        self.reflect(names, w, w.synced)
        return w

    def reflect(self, kinds: Iterable[str], into: Watch, listed: threading.Event) -> None:
        """Starts one reflector thread per kind, offering into `into`; sets `listed` once every
        kind's first list is in."""
        names = list(kinds)
        pending = [len(names)]
        lock = threading.Lock()

        def one_listed() -> None:
            with lock:
                pending[0] -= 1
                if pending[0] == 0:
                    listed.set()
                    into.wake()  # a reader waiting for the lists goes on at once
        for name in names:
            threading.Thread(target=Reflector(self, kind_named(name), into, one_listed).run, daemon=True,
                             name=f"reflector-{name}").start()
        if not names:
            listed.set()

    # Writes. The waited-for ones go ahead of the background ones not sent yet.
    def create(self, obj: Obj) -> Obj:
        return self._create(obj, first=True).result()

    def create_async(self, obj: Obj) -> Future[Obj]:
        return self._create(obj)

    def update(self, obj: Obj) -> Obj:
        return self._write(obj, "", first=True).result()

    def update_status(self, obj: Obj) -> Obj:
        return self._write(obj, _status_path(obj), first=True).result()

    def update_status_async(self, obj: Obj) -> Future[Obj]:
        return self._write(obj, _status_path(obj))

    def bind(self, namespace: str, name: str, node: str, annotations: dict[str, str] | None = None) -> Obj:
        return self._bind(namespace, name, node, annotations, first=True).result()

    def bind_async(self, namespace: str, name: str, node: str,
                   annotations: dict[str, str] | None = None) -> Future[Obj]:
        return self._bind(namespace, name, node, annotations)

    def _create(self, obj: Obj, first: bool = False) -> Future[Obj]:
        k = kind_named(obj.get("kind"))
        return self.client.request_async("POST", k.path(_ns(k, meta_of(obj).get("namespace"))), obj,
                                         then=lambda answer: received(k, answer), first=first)

    def _write(self, obj: Obj, subresource: str, first: bool = False) -> Future[Obj]:
        k = kind_named(obj.get("kind"))
        path = k.path(_ns(k, meta_of(obj).get("namespace")), obj["metadata"]["name"]) + subresource
        return self.client.request_async("PUT", path, obj, then=lambda answer: received(k, answer), first=first)

    def _bind(self, namespace: str, name: str, node: str, annotations: dict[str, str] | None = None,
              first: bool = False) -> Future[Obj]:
        """POST pods/binding (the server merges the Binding's annotations into the pod's); the
        future of the server's Status answer."""
        meta: dict[str, Any] = {"name": name, "namespace": namespace}
        if annotations:
            meta["annotations"] = annotations
        body = {"apiVersion": "v1", "kind": "Binding", "metadata": meta,
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        return self.client.request_async("POST", f"/api/v1/namespaces/{namespace}/pods/{name}/binding", body,
                                         then=lambda answer: answer or {}, first=first)

    def delete(self, kind: str, name: str, namespace: str | None = None, uid: str | None = None) -> None:
        k = kind_named(kind)
        options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
        if uid is not None:
            options["preconditions"] = {"uid": uid}
        self.client.request("DELETE", k.path(_ns(k, namespace), name), options)

    # Internals.
    def list_with_version(self, k: Kind, namespace: str | None = None) -> tuple[list[Obj], str]:
        """Every object (in pages) and the list's resourceVersion."""
        items: list[Obj] = []
        version = ""
        for page, version in self.pages(k, namespace):
            items.extend(page)
        return items, version

    def pages(self, k: Kind, namespace: str | None = None) -> Iterator[tuple[list[Obj], str]]:
        """The objects page by page, each with the resourceVersion the list has so far (the
        last page's is the list's)."""
        query: dict[str, Any] = {"limit": PAGE}
        while True:
            page = self.client.request("GET", k.path(namespace if k.namespaced else None), query=query)
            more = meta_of(page).get("continue")
            yield [received(k, o) for o in page.get("items") or []], page["metadata"].get("resourceVersion", "")
            if not more:
                return
            query = {"limit": PAGE, "continue": more}


class Reflector:
    """One kind's list+watch into a Watch (client-go's reflector)."""

    def __init__(self, store: KubeStore, kind: Kind, watch: Watch, listed) -> None:
        self.store, self.kind, self.watch, self._listed = store, kind, watch, listed
        self.known: set[Key] = set()
        self.version: str | None = None

    def run(self) -> None:
        failures = 0
        while not self.store._stop.is_set():
            try:
                if self.version is None:
                    self._relist()
                self._watch()
                failures = 0
            except StoreError as e:
                failures += 1
                log.warning("watch of %s: %s; retrying", self.kind.plural, e)
                self.store._stop.wait(min(0.2 * 2 ** min(failures, 5), 5.0))
            except Exception:  # noqa: BLE001 - a reflector must not die; relist after a bug
                log.exception("watch of %s failed; listing again", self.kind.plural)
                self.version = None
                self.store._stop.wait(1.0)

    def _relist(self) -> None:
        """Offers each page as it comes (the reader takes in a big list while the rest is on
        its way), then tombstones for what vanished since the last list."""
        seen = set()
        for page, version in self.store.pages(self.kind):
            for obj in page:
                seen.add(key_of(obj))
                self.watch.offer("ADDED", obj)
        self.version = version
        for key in sorted(self.known - seen):
            self.watch.offer("DELETED", tombstone(self.kind, key))
        self.known = seen
        if self._listed is not None:
            self._listed()
            self._listed = None

    def _watch(self) -> None:
        query = {"watch": "true", "resourceVersion": self.version, "allowWatchBookmarks": "true",
                 "timeoutSeconds": WATCH_SECONDS}
        self.store.client.stream(self.kind.path(), query, WATCH_SECONDS + 30, self._event)

    def _event(self, event: dict) -> bool:
        """One watch event into the Watch; False ends the watch."""
        if self.store._stop.is_set():
            return False
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            if obj.get("code") == 410:  # too old: list again
                self.version = None
                return False
            raise StoreError(self.kind.name, "", "", f"watch error: {obj.get('message')}")
        self.version = meta_of(obj).get("resourceVersion") or self.version
        if kind == "BOOKMARK":
            return True
        obj = received(self.kind, obj)
        if kind == "DELETED":
            self.known.discard(key_of(obj))
        else:
            self.known.add(key_of(obj))
        self.watch.offer(kind, obj)
        return True


def tombstone(k: Kind, key: Key) -> Obj:
    """What a re-list offers as DELETED for an object it no longer has: kind and name without a
    resourceVersion (the informers hand their handlers the last state they cached)."""
    namespace, name = key
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": k.api_version, "kind": k.name, "metadata": meta}


def received(k: Kind, obj: Obj) -> Obj:
    """An object from the API server as volcanic keeps it, changed in place: with kind and
    apiVersion (items of a list come without), and without metadata.managedFields, as
    kube-scheduler's and kube-controller-manager's informers keep them: nothing here reads the
    server's field-ownership records, they are a third of a pod, and every cached copy would be
    decoded, converted for the engine and walked by the garbage collector for nothing. A write
    without them keeps the server's."""
    if isinstance(obj, dict):
        obj.setdefault("kind", k.name)
        obj.setdefault("apiVersion", k.api_version)
        meta = obj.get("metadata")
        if isinstance(meta, dict):
            meta.pop("managedFields", None)
    return obj


def _ns(k: Kind, namespace: str | None) -> str | None:
    return (namespace or "default") if k.namespaced else None


def _status_path(obj: Obj) -> str:
    """Where a status is written: the status subresource, or the object itself for a kind
    without one (a PodGroup, as Volcano's CRD has it)."""
    return "/status" if kind_named(obj.get("kind")).status_subresource else ""
