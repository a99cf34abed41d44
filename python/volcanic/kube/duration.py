"""Durations as Kubernetes writes them (Go's time.ParseDuration: "90s", "1h30m", "1.5m"), and
back (Go's Duration.String(), for status.runningDuration and messages). Parsing is the
engine's (src/volcanic/api/duration.h), the one the scheduler's plugins use."""

from __future__ import annotations

from volcanic import _core


def parse_duration(value: object, field: str) -> float:
    """Seconds in a Go duration string, or a plain number of seconds.

    Raises ValueError naming `field` for anything else (negative values included).
    """
    if isinstance(value, bool):
        raise ValueError(f"{field}: invalid duration {value!r}")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            seconds = float(text)  # a plain number of seconds, which Go's grammar has no room for
        except ValueError:
            try:
                seconds = _core.parse_go_duration(text) / 1e9
            except ValueError:
                raise ValueError(f'{field}: invalid duration "{value}" (use e.g. "90s", "5m", "1h30m")') from None
    else:
        raise ValueError(f"{field}: invalid duration {value!r}")
    if not seconds >= 0 or seconds == float("inf"):
        raise ValueError(f"{field}: invalid duration {value!r}")
    return seconds


def format_duration(seconds: float) -> str:
    """time.Duration.String(): "30s", "1m30s", "1h0m0s", "500ms"."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return f"{sign}{_trim(ns / size)}{unit}"
    h, rest = divmod(ns, 3_600_000_000_000)
    m, rest = divmod(rest, 60_000_000_000)
    s = _trim(rest / 1e9) + "s"
    if h:
        return f"{sign}{h}h{m}m{s}"
    if m:
        return f"{sign}{m}m{s}"
    return sign + s


def _trim(value: float) -> str:
    text = f"{value:.9f}".rstrip("0").rstrip(".")
    return text or "0"
