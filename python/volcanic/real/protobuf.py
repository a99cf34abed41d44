"""Kubernetes' protobuf encoding for the objects the components create and watch most.

The API server decodes and encodes protobuf for far less CPU than JSON (docs/benchmark.md:
its own floor is 15% slower in JSON), and custom resources have no protobuf form at all, so
volcanic speaks it for pods, bindings and nodes and JSON for the rest. The codec is native
(_core.ProtobufCodec), driven by protobuf_schema.json, which tools/protoschema writes from
k8s.io/api's struct tags; a decoded object is the dict its JSON would give.

What the schema cannot carry exactly (a key it lacks, a value of the wrong type) is sent as
JSON: encode() answers None. What it cannot read (a field a newer API server added) raises
ValueError when read strictly, and the client reads JSON from then on (KubeClient): lists and
watches fill the caches whose objects are written back, so they lose nothing. The answer to
a create or a bind is read leniently (such a field left out): its reader counts and expects
the pod, and writes nothing back from it.
"""

from __future__ import annotations

import functools
from importlib import resources
import re
from typing import Any

import orjson

from volcanic import _core

CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"  # the start of an object in protobuf
KINDS = frozenset({"Pod", "Binding"})  # the bodies sent as protobuf
# GETs (lists, watches, reads) and POSTs (creates, binds) whose answer may come as protobuf.
_ANSWERS = re.compile(r"/api/v1/(namespaces/[^/?]+/)?(pods|nodes)(/[^/?]+(/binding)?)?")


def answers_protobuf(method: str, path: str) -> bool:
    """Whether to ask for this request's answer in protobuf (its objects have a schema)."""
    return method in ("GET", "POST") and _ANSWERS.fullmatch(path) is not None


@functools.cache
def codec(strict: bool = True) -> Any:
    """The codec; it leaves metadata.managedFields out of what it decodes, as the store drops
    them from JSON (volcanic.real.store.received): decoding their JSON took half the time of
    decoding a pod."""
    schema = resources.files("volcanic.real").joinpath("protobuf_schema.json").read_text()
    return _core.ProtobufCodec(schema, orjson.loads, orjson.dumps, strict, ["managedFields"])


def encode(obj: dict) -> bytes | None:
    """The object's protobuf body, or None if only JSON can carry it exactly."""
    try:
        return codec().encode(obj)
    except ValueError:
        return None


def decode(data: bytes, strict: bool = True) -> dict:
    """An object (or a list) from a protobuf answer; strictly, ValueError if the schema cannot
    read all of it."""
    return codec(strict).decode(data)


class Frames:
    """A protobuf watch's stream cut into its frames (each a 4-byte big-endian length, then a
    WatchEvent): feed() answers the events the chunk completes."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[dict]:
        self._buffer += chunk
        events, start = [], 0
        while len(self._buffer) - start >= 4:
            size = int.from_bytes(self._buffer[start:start + 4], "big")
            if len(self._buffer) - start - 4 < size:
                break
            events.append(codec().decode_watch_event(bytes(self._buffer[start + 4:start + 4 + size])))
            start += 4 + size
        del self._buffer[:start]
        return events
