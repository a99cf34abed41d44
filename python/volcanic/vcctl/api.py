"""What vcctl's commands need of an API server, and that interface over a volcanic Store.

Api is small: get (NotFound raised, with the API server's message), list (optionally by
labels), create, a JSON merge patch, delete, and the server's clock. StoreApi provides it over
any Store (volcanic.kube.store): the embedded cluster's API (`Cluster.api`) directly, a real
API server through the subclass in volcanic.cli.vcctl, which sends a real PATCH and says
which resource a server lacks (NotServed).
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, Callable, Mapping, Protocol

from volcanic.kube.errors import Conflict, NotFound
from volcanic.kube.kinds import KINDS, Kind
from volcanic.kube.objects import Obj, labels_of
from volcanic.kube.patch import merge_patch
from volcanic.kube.store import Store

# A label selector as vcctl uses them: label -> value, or None for "the label exists".
Labels = Mapping[str, "str | None"]
# Kubernetes' names.SimpleNameGenerator: 5 characters of these after generateName.
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"


class NotServed(Exception):
    """The API server has no such resource (its CRD is not installed): one line naming the kind."""

    def __init__(self, kind: Kind) -> None:
        super().__init__(f'the server doesn\'t have a resource type "{kind.plural}" ({kind.name}, '
                         f"{kind.api_version}): is volcanic installed? (volcanic install)")
        self.kind = kind


class Api(Protocol):
    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj: ...
    def list(self, kind: str, namespace: str | None = None, labels: Labels | None = None) -> list[Obj]: ...
    def create(self, obj: Obj) -> Obj: ...
    def patch(self, kind: str, name: str, namespace: str | None, patch: Obj) -> Obj: ...
    def delete(self, kind: str, name: str, namespace: str | None = None) -> None: ...
    def now(self) -> float: ...


def kind_of(name: str) -> Kind:
    """A kind vcctl knows (volcanic.kube.kinds)."""
    return KINDS[name]


def matches(obj: Obj, labels: Labels | None) -> bool:
    """Whether obj's labels satisfy the selector."""
    have = labels_of(obj)
    return all(k in have if v is None else have.get(k) == v for k, v in (labels or {}).items())


def selector(labels: Labels) -> str:
    """The selector as a labelSelector query ("a,b=c")."""
    return ",".join(k if v is None else f"{k}={v}" for k, v in labels.items())


class StoreApi:
    """Api over a Store. `now`: the clock objects are stamped with (the embedded cluster's
    virtual clock; the wall clock for a real server). generateName is filled in here when
    `generates_names` is False (the embedded store takes names only), deterministically."""

    def __init__(self, store: Store, now: Callable[[], float] = time.time, generates_names: bool = False,
                 foresight: Any = None) -> None:
        """foresight: what answers `job why`, `job forecast` and `queue pending` (a
        volcanic.foresight.Foresight, or its HTTP client on a real cluster)."""
        self.store, self._now, self.generates_names = store, now, generates_names
        self.foresight = foresight

    def now(self) -> float:
        return self._now()

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj:
        k = kind_of(kind)
        obj = self.store.get(k.name, name, namespace)
        if obj is None:
            raise NotFound(k.name, namespace or "", name, k.not_found(name))
        return obj

    def list(self, kind: str, namespace: str | None = None, labels: Labels | None = None) -> list[Obj]:
        k = kind_of(kind)
        return [o for o in self.store.list(k.name, namespace or None) if matches(o, labels)]

    def create(self, obj: Obj) -> Obj:
        k = kind_of(obj["kind"])
        meta = obj["metadata"]
        if not meta.get("name") and meta.get("generateName") and not self.generates_names:
            meta = dict(meta, name=self._generated(k, meta["generateName"], meta.get("namespace")))
            obj = dict(obj, metadata=meta)
        return self.store.create(obj)

    def patch(self, kind: str, name: str, namespace: str | None, patch: Obj) -> Obj:
        """A JSON merge patch, as get, merge and update (again on a conflict, as a PATCH does
        on the server)."""
        for _ in range(5):
            obj = self.get(kind, name, namespace)
            try:
                return self.store.update(merge_patch(obj, patch))
            except Conflict:
                continue
        return self.store.update(merge_patch(self.get(kind, name, namespace), patch))

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        k = kind_of(kind)
        try:
            self.store.delete(k.name, name, namespace)
        except NotFound:
            raise NotFound(k.name, namespace or "", name, k.not_found(name)) from None

    def _generated(self, k: Kind, prefix: str, namespace: str | None) -> str:
        """prefix + 5 characters, as the API server's name generator, from a hash of the prefix
        and a counter (the same history makes the same names)."""
        for n in range(1000):
            digest = hashlib.sha256(f"{prefix}/{namespace}/{n}".encode()).digest()
            name = prefix + "".join(_NAME_CHARS[b % len(_NAME_CHARS)] for b in digest[:5])
            if self.store.get(k.name, name, namespace) is None:
                return name
        raise Conflict(k.name, namespace or "", prefix, f"no free name for generateName {prefix!r}")

