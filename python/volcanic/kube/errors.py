"""Errors of the API layer: what a Store raises, and the two errors users see for bad objects."""

from __future__ import annotations


class InvalidObject(ValueError):
    """A malformed Kubernetes object; the message names the object and the field."""


class AdmissionError(ValueError):
    """An admission rule denied a request; the message is the rule's (Volcano's wording where
    Volcano has one), and kind, namespace and name say which object it was about."""

    def __init__(self, message: str, kind: str = "", namespace: str | None = None,
                 name: str | None = None) -> None:
        super().__init__(message)
        self.kind, self.namespace, self.name = kind, namespace, name


class StoreError(Exception):
    """An API error: `reason` is the Kubernetes status reason."""

    reason = "InternalError"

    def __init__(self, kind: str, namespace: str, name: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.namespace, self.name = kind, namespace, name


class NotFound(StoreError):
    reason = "NotFound"


class AlreadyExists(StoreError):
    reason = "AlreadyExists"


class Conflict(StoreError):
    reason = "Conflict"


class Unavailable(StoreError):
    """The API server could not be reached or answered 5xx/429: worth retrying later."""

    reason = "ServiceUnavailable"
