"""The admission chain the embedded API server runs on every create, update and delete:
mutating admission first, then validating admission, as the Kubernetes API server does.

A mutator returns the object to store (changed or not); a validator returns None to allow
or a message to deny. Either sees an AdmissionRequest with the operation, the new and old
objects and a lister of the cluster's current objects (for rules that read other objects).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from volcanic.kube.errors import AdmissionError
from volcanic.kube.objects import Obj, meta_of


@dataclass(frozen=True)
class AdmissionRequest:
    operation: str          # CREATE, UPDATE or DELETE
    obj: Obj | None         # the object sent (None on DELETE)
    old: Obj | None         # the stored object (None on CREATE)
    lister: Any             # get(kind, name, namespace) / list(kind, namespace) over stored objects

    @property
    def kind(self) -> str:
        return (self.obj or self.old or {}).get("kind", "")


Mutator = Callable[[AdmissionRequest], Obj]
Validator = Callable[[AdmissionRequest], "str | None"]


@dataclass
class AdmissionChain:
    """Mutators and validators by kind; kinds without rules are admitted unchanged.

    `operations`: (kind, "mutate" or "validate") -> the operations that kind's rules are
    called for, as a webhook's registration limits them (absent: every operation)."""

    mutators: dict[str, list[Mutator]] = field(default_factory=dict)
    validators: dict[str, list[Validator]] = field(default_factory=dict)
    operations: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)

    def add_mutator(self, kind: str, fn: Mutator) -> None:
        self.mutators.setdefault(kind, []).append(fn)

    def add_validator(self, kind: str, fn: Validator) -> None:
        self.validators.setdefault(kind, []).append(fn)

    def rules(self, kind: Any, operation: str, mutating: bool) -> list:
        """The mutators (or validators) of `kind` called for `operation`."""
        phase, table = ("mutate", self.mutators) if mutating else ("validate", self.validators)
        ops = self.operations.get((kind, phase))
        return table.get(kind, []) if ops is None or operation in ops else []

    def has_rules(self, kind: Any, operation: str) -> bool:
        return bool(self.rules(kind, operation, True) or self.rules(kind, operation, False))

    def admit(self, operation: str, obj: Obj | None, old: Obj | None, lister: Any) -> Obj | None:
        """The object to store after mutation; raises AdmissionError on a denial."""
        obj = self.mutate(operation, obj, old, lister)
        self.validate(operation, obj, old, lister)
        return obj

    def mutate(self, operation: str, obj: Obj | None, old: Obj | None, lister: Any) -> Obj | None:
        """Mutating admission alone: the object after every mutator of its kind."""
        if obj is not None:
            for mutate in self.rules(obj.get("kind", ""), operation, True):
                obj = mutate(AdmissionRequest(operation, obj, old, lister))
        return obj

    def validate(self, operation: str, obj: Obj | None, old: Obj | None, lister: Any) -> None:
        """Validating admission alone (the API server runs it after the schema check):
        raises AdmissionError with the first denial."""
        kind = (obj or old or {}).get("kind", "")
        validators = self.rules(kind, operation, False)
        if not validators:
            return
        request = AdmissionRequest(operation, obj, old, lister)
        for validate in validators:
            message = validate(request)
            if message:
                meta = meta_of(obj or old)
                raise AdmissionError(message, kind=kind, namespace=meta.get("namespace"),
                                     name=meta.get("name"))


class EmptyLister:
    """A lister of a cluster where nothing exists."""

    def get(self, kind: str, name: str, namespace: str | None = None) -> None:
        return None

    def list(self, kind: str, namespace: str | None = None) -> list[Obj]:
        return []


EMPTY_LISTER = EmptyLister()
