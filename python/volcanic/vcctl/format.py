"""How vcctl prints: Go's fixed-width columns, times and durations as Volcano's Go code prints
them, quantities in their canonical form, and the `-o json|yaml` documents kubectl prints.

Times are shown in the local time zone, as Go's metav1.Time (decoded into time.Local) shows
them; the embedded cluster's objects carry its virtual clock's times.
"""

from __future__ import annotations

from datetime import datetime
import json
from typing import Any, Callable, Iterable, Sequence

import yaml

from volcanic.kube.clock import seconds_of
from volcanic.kube.objects import Obj, dig
from volcanic.kube.quantity import format_quantity, parse_quantity

ZERO_TIME = "0001-01-01 00:00:00 +0000 UTC"  # Go's time.Time{}.String()
OUTPUTS = ("json", "yaml", "wide")


def row(values: Iterable[Any], widths: Sequence[int]) -> str:
    """Go's `%-Ns` for each value, one after the other (a value longer than its width is not
    cut), and a newline."""
    return "".join(f"{v!s:<{w}}" for v, w in zip(values, widths)) + "\n"


def width(header: str, values: Iterable[Any], extra: int) -> int:
    """The longest of the header and the values, plus `extra`."""
    return max([len(header)] + [len(str(v)) for v in values]) + extra


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], extra: int) -> str:
    """The header and the rows, each column as wide as its longest cell (header included) plus
    `extra`."""
    widths = [width(title, (r[i] for r in rows), extra) for i, title in enumerate(header)]
    return row(header, widths) + "".join(row(r, widths) for r in rows)


def num(obj: Any, *path: str) -> int:
    """A whole number at `path`; 0 when absent or not a number (Go's zero value)."""
    value = dig(obj, *path)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def text(obj: Any, *path: str) -> str:
    """A string at `path`; "" when absent (Go's zero value)."""
    value = dig(obj, *path)
    return value if isinstance(value, str) else "" if value is None else str(value)


def go_slice(value: Any) -> str:
    """Go's %v of a []string: "[a b]", "[]" for none."""
    return "[" + " ".join(str(v) for v in value) + "]" if isinstance(value, list) else "[]"


def go_json(value: Any, indent: int | None = None, sort_keys: bool = True) -> str:
    """encoding/json's text: map keys sorted (a struct's fields keep their order: sort_keys
    False), <, > and & escaped as Go escapes them."""
    separators = (",", ":") if indent is None else (",", ": ")
    out = json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=False, separators=separators)
    return out.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def quantity(value: Any) -> str:
    """A quantity as Go's Quantity.String() prints it; "0" for none."""
    if value is None:
        return "0"
    try:
        return format_quantity(parse_quantity(value))
    except ValueError:
        return str(value)


def resources(values: Any) -> str:
    """A resource list as "cpu=2,memory=4Gi" (names sorted); "<none>" when empty."""
    if not isinstance(values, dict) or not values:
        return "<none>"
    return ",".join(f"{k}={quantity(v)}" for k, v in sorted(values.items()))


# Times.
def local(timestamp: str) -> datetime:
    seconds = seconds_of(timestamp)
    assert seconds is not None  # the caller checked for an empty timestamp
    return datetime.fromtimestamp(seconds).astimezone()


def go_time(timestamp: Any) -> str:
    """metav1.Time's String(): "2024-01-01 00:00:00 +0000 UTC" in the local zone; Go's zero
    time for none."""
    if not isinstance(timestamp, str) or not timestamp:
        return ZERO_TIME
    return local(timestamp).strftime("%Y-%m-%d %H:%M:%S %z %Z")


def go_date(timestamp: Any) -> str:
    """metav1.Time's Format("2006-01-02") in the local zone."""
    if not isinstance(timestamp, str) or not timestamp:
        return "0001-01-01"
    return local(timestamp).strftime("%Y-%m-%d")


def since(timestamp: Any, now: float, volcano: bool = False) -> str:
    """The age of a timestamp as kubectl prints it (TranslateTimestampSince); "<unknown>" for
    none. `volcano`: Volcano's own copy of HumanDuration (pkg/cli/util), which writes "2y0d"
    where apimachinery's writes "2y"."""
    if not isinstance(timestamp, str) or not timestamp:
        return "<unknown>"
    return human_duration(now - (seconds_of(timestamp) or 0.0), volcano)


def human_duration(seconds: float, volcano: bool = False) -> str:
    """apimachinery's duration.HumanDuration (Volcano's util.HumanDuration with `volcano`)."""
    whole = int(seconds)  # Go's int(d.Seconds()) truncates toward zero
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        return f"{minutes}m" + (f"{whole % 60}s" if whole % 60 else "")
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        return f"{hours}h" + (f"{minutes % 60}m" if minutes % 60 else "")
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" + (f"{hours % 24}h" if hours % 24 else "")
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = hours // 24 % 365
        return f"{hours // 24 // 365}y" + (f"{days}d" if days or volcano else "")
    return f"{hours // 24 // 365}y"


# -o json|yaml.
def as_list(items: list[Obj]) -> Obj:
    """What `kubectl get -o json` prints for several objects."""
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def listing(objs: list[Obj], output: str, table: Callable[[], str]) -> str:
    """What a list command prints: the objects as a List for -o json|yaml, `No resources
    found` for none, else its table."""
    if output in ("json", "yaml"):
        return dump(as_list(objs), output)
    return table() if objs else "No resources found\n"


def dump(value: Any, output: str) -> str:
    """An object or a List as `kubectl get -o json` (4 spaces, keys sorted) or `-o yaml`
    (keys sorted, no line wrapping) prints it."""
    if output == "json":
        return go_json(value, indent=4) + "\n"
    return yaml.dump(value, Dumper=_GoDumper, default_flow_style=False, sort_keys=True, allow_unicode=True,
                     width=1 << 30)


class _GoDumper(yaml.SafeDumper):
    """PyYAML's safe output with a string that must be quoted in double quotes, as go-yaml (and
    so kubectl) quotes it: `resourceVersion: "674"`."""

    def choose_scalar_style(self):  # noqa: ANN201 - PyYAML's hook
        style = super().choose_scalar_style()
        return '"' if style == "'" else style
