"""Command lines read as Volcano's Go binaries read theirs, so a Deployment written for
vc-scheduler, vc-controller-manager or vc-webhook-manager runs volcanic unchanged.

Volcano parses with spf13/pflag (v1.0.10) after Kubernetes' component-base
`cliflag.InitFlags` (cmd/*/main.go):
- `--name=value` and `--name value`; a bool takes no separate value (`--flag` is true,
  `--flag=false` is false, and in `--flag false` the `false` is a positional argument);
- `_` and `-` are the same in names (cliflag.WordSepNormalizeFunc: `--log_dir` is `--log-dir`);
- the one-letter names of Go's flag package (klog's `v`) are also shorthands: `-v=4`, `-v 4`,
  `-v4`;
- positional arguments may come between flags and are ignored by Volcano's mains (the chart's
  args end with a literal `2>&1`);
- values as Go reads them: strconv.ParseBool, ParseInt/ParseUint with base 0 (`0x10`),
  ParseFloat, time.ParseDuration, and a StringSlice's comma-separated CSV.

go_argv() rewrites such a command line into argparse's terms (every flag as `--name=value`)
and returns the positional arguments apart; the actions below give repeated flags pflag's
meaning (a StringArray or StringSlice given once replaces its default, then appends).
"""

from __future__ import annotations

import argparse
import csv
from typing import Any, Callable, Sequence

GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
            "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def go_bool(text: str) -> bool:
    """strconv.ParseBool."""
    if text not in GO_BOOLS:
        raise argparse.ArgumentTypeError(f"invalid boolean {text!r} (true or false)")
    return GO_BOOLS[text]


def _go_integer(text: str) -> int:
    """strconv.ParseInt's base 0: an optional sign, then 0x, 0o, 0b or a leading 0 (octal)
    prefixes, `_` only after a prefix."""
    body = text[1:] if text[:1] in "+-" else text
    sign = -1 if text[:1] == "-" else 1
    try:
        if len(body) > 1 and body[0] == "0" and body[1].isdigit():
            return sign * int(body[1:], 8)
        if "_" in body and body[:2].lower() not in ("0x", "0o", "0b"):
            raise ValueError(text)
        return sign * int(body, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer {text!r}") from None


def go_int(bits: int = 64, unsigned: bool = False) -> Callable[[str], int]:
    """pflag's IntVar (64 bits), Int32Var, Uint32Var, Uint64Var: a whole number in range."""
    low, high = (0, 2 ** bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)

    def parse(text: str) -> int:
        if unsigned and text.startswith(("-", "+")):
            raise argparse.ArgumentTypeError(f"invalid unsigned integer {text!r}")
        value = _go_integer(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is out of range ({low} to {high})")
        return value
    parse.__name__ = f"{'uint' if unsigned else 'int'}{bits}"
    return parse


def go_float(text: str) -> float:
    """strconv.ParseFloat: a number (no inf or nan, which no flag here means)."""
    try:
        if "_" in text:  # Python's float() takes digit separators; Go's does not
            raise ValueError(text)
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"invalid number {text!r}")
    return value


def go_duration(text: str) -> float:
    """time.ParseDuration, in seconds: "1s", "1m30s", "500ms", "0"; negative values parse
    (the flags that refuse them say so)."""
    from volcanic import _core
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    try:
        seconds = _core.parse_go_duration(body) / 1e9
    except ValueError:
        raise argparse.ArgumentTypeError(f'invalid duration {text!r} (e.g. "1s", "1m30s", "500ms")') from None
    return -seconds if text.startswith("-") else seconds


def csv_list(text: str) -> list[str]:
    """A StringSlice's value: one line of comma-separated values as encoding/csv reads it
    (quotes allowed), "" being none."""
    if text == "":
        return []
    try:
        rows = list(csv.reader([text], strict=True))
    except csv.Error as e:
        raise argparse.ArgumentTypeError(f"invalid list {text!r}: {e}") from None
    return rows[0] if rows else []


class GoBool(argparse.Action):
    """A pflag bool: `--flag` is true, `--flag=BOOL` as strconv.ParseBool reads it."""

    def __init__(self, option_strings: Sequence[str], dest: str, default: Any = False, **kwargs: Any) -> None:
        kwargs.pop("type", None)
        kwargs.pop("nargs", None)
        super().__init__(option_strings, dest, nargs="?", const="true", default=default, type=go_bool,
                         metavar="BOOL", **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, go_bool(values) if isinstance(values, str) else values)


class _Repeated(argparse.Action):
    """The first use replaces the default; later ones add to it (pflag's slices and arrays)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        seen = namespace.__dict__.setdefault("_repeated_seen", set())
        current = list(getattr(namespace, self.dest) or []) if self.dest in seen else []
        seen.add(self.dest)
        setattr(namespace, self.dest, current + (list(values) if isinstance(values, list) else [values]))


class StringArray(_Repeated):
    """pflag's StringArrayVar: each use is one value, commas included."""


class StringSlice(_Repeated):
    """pflag's StringSliceVar: each use is a comma-separated list (CSV)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs["type"] = csv_list
        super().__init__(option_strings, dest, **kwargs)


def _takes_value(action: argparse.Action) -> bool:
    return not isinstance(action, GoBool) and action.nargs != 0


def go_argv(parser: argparse.ArgumentParser, argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """`argv` as pflag reads it, rewritten for `parser` (a subcommand's parser): every flag
    it knows as `--name=value` (bools as `--name=true` when given bare); a flag it does not
    know is left as it is, for argparse to refuse. Returns (flags, positional arguments)."""
    known = parser._option_string_actions  # noqa: SLF001 - argparse has no public table
    flags: list[str] = []
    positional: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            positional.extend(argv[i:])
            break
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            option = "--" + name.replace("_", "-")
        else:  # a shorthand: -v=4, -v4, -v 4, -h
            option, rest = arg[:2], arg[2:]
            eq, value = ("=", rest[1:]) if rest.startswith("=") else ("=" if rest else "", rest)
        action = known.get(option)
        if action is None:
            flags.append(arg)
        elif eq and _takes_value(action) or eq and isinstance(action, GoBool):
            flags.append(f"{_long(action, option)}={value}")
        elif isinstance(action, GoBool):
            flags.append(f"{_long(action, option)}=true")
        elif not _takes_value(action):
            flags.append(option)
        elif i < len(argv):  # pflag takes the next argument whatever it looks like
            flags.append(f"{_long(action, option)}={argv[i]}")
            i += 1
        else:
            flags.append(option)  # argparse says it needs a value
    return flags, positional


def _long(action: argparse.Action, option: str) -> str:
    """The option's long spelling (`-v` -> `--v`), which argparse reads `=value` after."""
    longs = [s for s in action.option_strings if s.startswith("--")]
    return option if option.startswith("--") or not longs else longs[0]
