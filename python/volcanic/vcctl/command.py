"""vcctl's command framework: Volcano's vcctl is a cobra command tree whose flags are spf13/pflag
flags, run through component-base's `cli.Run`; this module gives the same behaviour in Python.

- Finding the command: cobra's rules (the first argument that is not a flag names a subcommand;
  an unknown one under the root is `unknown command "x" for "vcctl"` with cobra's suggestions;
  a group without a subcommand prints its help).
- Flags: pflag's syntax, read by volcanic.kube.pflag.go_argv (`--name value`, `--name=value`,
  `-n value`, `-nvalue`, a bool bare or `=BOOL`, `_` as `-`); values as pflag converts them, with
  pflag's messages (`invalid argument "x" for "-m, --min" flag: strconv.ParseInt: parsing "x":
  invalid syntax`). Every command also takes component-base's global flags (`-v`, `--vmodule`,
  `--log-flush-frequency`), accepted and unused but for `-v` (see execute()).
- Help: cobra's layout, byte for byte (`-h`/`--help` on any command, `vcctl help CMD`).
- Exit codes: 0; 1 for a command line cobra refuses (`Error: ...` on stderr); 255 for a command
  that failed (Volcano's CheckError: `Failed to <command> <group>: <error>`, os.Exit(-1)).

The tree is built explicitly (volcanic.vcctl.tree): a Command is plain data, its run function
gets a Context with the flag values and the API (volcanic.vcctl.api).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
import os
import traceback
from typing import Any, Callable, Iterable, TextIO

from volcanic.kube import pflag
from volcanic.kube.errors import AdmissionError, InvalidObject, StoreError
from volcanic.vcctl.api import NotServed

EXIT_USAGE = 1  # component-base's cli.Run: a command line cobra cannot parse
EXIT_FAILED = 255  # Volcano's util.CheckError: os.Exit(-1)
TRACEBACK_ENV = "VCCTL_TRACEBACK"  # set (to anything but "" or 0): a bug's traceback on stderr


class UsageError(Exception):
    """A command line cobra refuses: `Error: <message>` on stderr, exit 1."""


class Failure(Exception):
    """A command that failed: `Failed to <command path>: <message>` on stderr, exit 255."""


@dataclass(frozen=True)
class Flag:
    """One pflag flag. `type` is pflag's type name (string, int, int32, bool, duration, and
    klog's Level and moduleSpec); `default` its default value (None: the type's zero).
    `choices`: the values a string flag takes (a check of volcanic's own, for -o).
    `complete`: what shell completion offers for its value ("files", or a kind whose names
    the API lists). `hidden`: parsed but left out of the help (pflag's MarkHidden), for
    volcanic's additions, so that help reads as Volcano's."""

    name: str
    short: str = ""
    type: str = "string"
    default: Any = None
    usage: str = ""
    choices: tuple[str, ...] = ()
    complete: str | None = None
    hidden: bool = False

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")

    @property
    def spelled(self) -> str:
        """How pflag names the flag in its messages: "-m, --min" or "--all-namespaces"."""
        return f"-{self.short}, --{self.name}" if self.short else f"--{self.name}"

    def zero(self) -> Any:
        if self.default is not None:
            return self.default
        return {"string": "", "bool": False, "duration": 0.0, "moduleSpec": ""}.get(self.type, 0)

    def parse(self, text: str) -> Any:
        """The value of `text` as pflag converts it; UsageError with pflag's message."""
        try:
            value = _CONVERT[self.type](text)
        except ValueError as e:
            raise UsageError(f'invalid argument "{text}" for "{self.spelled}" flag: {e}') from None
        if self.choices and value not in self.choices:
            raise UsageError(f'invalid argument "{text}" for "{self.spelled}" flag: must be one of '
                             f'{", ".join(self.choices)}')
        return value

    def usage_line(self) -> tuple[str, str]:
        """pflag's FlagUsages line: the names and type, and the usage with the default."""
        names = f"  -{self.short}, --{self.name}" if self.short else f"      --{self.name}"
        kind = "" if self.type == "bool" else self.type
        default = self.zero()
        shown = _default_text(self.type, default)
        usage = self.usage
        if shown:
            usage += f' (default "{shown}")' if self.type == "string" else f" (default {shown})"
        return names + (f" {kind}" if kind else ""), usage


def _go_int(bits: int, base0: bool = True) -> Callable[[str], int]:
    parse = pflag.go_int(bits)

    def convert(text: str) -> int:
        try:
            if not base0 and not text.lstrip("+-").isdigit():
                raise argparse.ArgumentTypeError("invalid")
            return parse(text)
        except argparse.ArgumentTypeError as e:
            why = "value out of range" if "out of range" in str(e) else "invalid syntax"
            raise ValueError(f'strconv.ParseInt: parsing "{text}": {why}') from None
    return convert


def _go_bool(text: str) -> bool:
    try:
        return pflag.go_bool(text)
    except argparse.ArgumentTypeError:
        raise ValueError(f'strconv.ParseBool: parsing "{text}": invalid syntax') from None


def _go_duration(text: str) -> float:
    try:
        return pflag.go_duration(text)
    except argparse.ArgumentTypeError:
        raise ValueError(f'time: invalid duration "{text}"') from None


_CONVERT: dict[str, Callable[[str], Any]] = {
    "string": str, "moduleSpec": str, "bool": _go_bool, "duration": _go_duration,
    "int": _go_int(64), "int32": _go_int(32), "Level": _go_int(32, base0=False),
}


def _default_text(kind: str, value: Any) -> str:
    """pflag's DefValue when it is not the type's zero (what help shows), else ""."""
    if kind == "bool":
        return "true" if value else ""
    if kind == "duration":
        return _duration_text(value) if value else ""
    return str(value) if value not in ("", 0, None) else ""


def _duration_text(seconds: float) -> str:
    """time.Duration.String() for the whole seconds and minutes the flags use."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


# component-base's cli.Run adds klog's flags to every command (persistent on the root).
GLOBAL_FLAGS = (
    Flag("log-flush-frequency", type="duration", default=5.0,
         usage="Maximum number of seconds between log flushes"),
    Flag("v", "v", type="Level", usage="number for the log level verbosity"),
    Flag("vmodule", type="moduleSpec", usage="comma-separated list of pattern=N settings for file-filtered "
         "logging (only works for the default text log format)"),
)


@dataclass
class Command:
    """A cobra command: `run` is None for a group, which prints its help."""

    name: str
    short: str = ""
    long: str = ""
    example: str = ""
    flags: list[Flag] = field(default_factory=list)
    run: Callable[["Context"], None] | None = None
    commands: list["Command"] = field(default_factory=list)
    hidden: bool = False
    args: str = ""  # what follows the name in the usage line (help's "[command]")
    needs_api: bool = True  # the API is connected before run (Volcano builds its config first)
    raw_args: bool = False  # no flags: every argument goes to run as flags["_args"] (`__complete`)
    parent: "Command | None" = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        for c in self.commands:
            c.parent = self

    def add(self, *commands: "Command") -> "Command":
        for c in commands:
            c.parent = self
            self.commands = [x for x in self.commands if x.name != c.name] + [c]
        return self

    def child(self, name: str) -> "Command | None":
        return next((c for c in self.commands if c.name == name), None)

    @property
    def path(self) -> str:
        return f"{self.parent.path} {self.name}" if self.parent else self.name

    @property
    def root(self) -> "Command":
        return self.parent.root if self.parent else self

    def help_flag(self) -> Flag:
        return Flag("help", "h", type="bool", usage=f"help for {self.name}")

    def local_flags(self) -> list[Flag]:
        own = self.flags + ([] if self.parent else list(GLOBAL_FLAGS))
        return sorted(own + [self.help_flag()], key=lambda f: f.name)

    def inherited_flags(self) -> list[Flag]:
        return list(GLOBAL_FLAGS) if self.parent else []

    def all_flags(self) -> list[Flag]:
        return self.local_flags() + self.inherited_flags()

    def visible_commands(self) -> list["Command"]:
        return sorted((c for c in self.commands if not c.hidden), key=lambda c: c.name)


class Context:
    """What a command's run function gets: `flags` (the values by flag name, `-` as `_`), the
    API (connected on first use, from --master and --kubeconfig), and the output streams."""

    def __init__(self, command: Command, values: dict[str, Any], out: TextIO, err: TextIO,
                 connect: Callable[[str, str], Any]) -> None:
        self.command, self.flags, self.out, self.err = command, _Values(values), out, err
        self.connect = connect  # (master, kubeconfig) -> Api
        self._api: Any = None

    @property
    def api(self) -> Any:
        if self._api is None:
            self._api = self.connect(self.flags.get("master", ""), self.flags.get("kubeconfig", ""))
        return self._api

    def write(self, text: str) -> None:
        self.out.write(text)


class _Values(dict):
    """Flag values, also as attributes (ctx.flags.namespace)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


# Finding the command (cobra's Find, stripFlags and legacyArgs).
def find(root: Command, argv: list[str]) -> tuple[Command, list[str]]:
    """The command argv names and the arguments left for it (its flags and positionals)."""
    cmd, rest = root, list(argv)
    while True:
        index = _first_positional(rest, cmd)
        sub = cmd.child(rest[index]) if index is not None else None
        if sub is None:
            break
        del rest[index]
        cmd = sub
    if cmd is root and root.commands and root.run is None:
        index = _first_positional(rest, root)
        if index is not None:
            raise UsageError(f'unknown command "{rest[index]}" for "{root.name}"{_suggestions(root, rest[index])}')
    return cmd, rest


def _first_positional(args: list[str], cmd: Command) -> int | None:
    """cobra's stripFlags: the index of the first argument that is not a flag or a flag's value
    (a flag without `=` that is not one of the command's own bools takes the next argument)."""
    bools = {f.name for f in cmd.flags if f.type == "bool"} | {f.short for f in cmd.flags if f.type == "bool"}
    i = 0
    while i < len(args):
        s = args[i]
        i += 1
        if s == "--":
            return None
        takes_value = "=" not in s and (
            (s.startswith("--") and s[2:] not in bools) or (s.startswith("-") and len(s) == 2 and s[1:] not in bools))
        if takes_value:
            if len(args) - i <= 1:
                return None
            i += 1
        elif s and not s.startswith("-"):
            return i - 1
    return None


def _suggestions(cmd: Command, typed: str) -> str:
    """cobra's findSuggestions: commands within Levenshtein distance 2 or starting with it."""
    names = [c.name for c in cmd.visible_commands()
             if _distance(typed.lower(), c.name.lower()) <= 2 or c.name.lower().startswith(typed.lower())]
    return "\n\nDid you mean this?\n" + "".join(f"\t{n}\n" for n in names) if names else ""


def _distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]


# Flags.
def parse_flags(cmd: Command, args: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The values of cmd's flags in `args` (defaults for those not given) and the positional
    arguments; UsageError as pflag words it."""
    flags = cmd.all_flags()
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    by_option: dict[str, Flag] = {}
    for f in flags:
        options = [f"--{f.name}"] + ([f"-{f.short}"] if f.short else [])
        if f.type == "bool":
            parser.add_argument(*options, action=pflag.GoBool)
        else:
            parser.add_argument(*options)
        by_option.update({o: f for o in options})
    given, positional = pflag.go_argv(parser, args)
    values = {f.dest: f.zero() for f in flags}
    for item in given:
        option, eq, text = item.partition("=")
        f = by_option.get(option)
        if f is None:
            raise UsageError(f"unknown flag: {option}" if item.startswith("--")
                             else f"unknown shorthand flag: '{item[1:2]}' in {item}")
        if not eq:
            raise UsageError(f"flag needs an argument: '{f.short}' in -{f.short}" if option == f"-{f.short}"
                             else f"flag needs an argument: --{f.name}")
        values[f.dest] = f.parse(text)
    return values, positional


# Help (cobra's default help and usage templates).
def help_text(cmd: Command) -> str:
    about = (cmd.long or cmd.short).rstrip()
    return (f"{about}\n\n" if about else "") + usage_text(cmd)


def usage_text(cmd: Command, with_help_flag: bool = True) -> str:
    lines = "Usage:"
    if cmd.run is not None:
        lines += f"\n  {cmd.path}" + (f" {cmd.args}" if cmd.args else "") + " [flags]"
    subcommands = cmd.visible_commands()
    if subcommands:
        lines += f"\n  {cmd.path} [command]"
    if cmd.example:
        lines += f"\n\nExamples:\n{cmd.example}"
    if subcommands:
        listed = subcommands + [c for c in cmd.commands if c.name == "help"]
        # cobra pads to its longest command, hidden ones included; Volcano's trees hide none but
        # help, so padding to the listed ones is the same for them and keeps volcanic's hidden
        # additions (`queuebinding`, longer than any of Volcano's) out of the help.
        pad = max([11] + [len(c.name) for c in listed])
        lines += "\n\nAvailable Commands:" + "".join(f"\n  {c.name:<{pad}} {c.short}"
                                                     for c in sorted(listed, key=lambda c: c.name))
    local = [f for f in cmd.local_flags() if (with_help_flag or f.name != "help") and not f.hidden]
    lines += "\n\nFlags:\n" + flag_usages(local)
    if cmd.inherited_flags():
        lines += "\n\nGlobal Flags:\n" + flag_usages(cmd.inherited_flags())
    if subcommands:
        lines += f'\n\nUse "{cmd.path} [command] --help" for more information about a command.'
    return lines + "\n"


def flag_usages(flags: Iterable[Flag]) -> str:
    """pflag's FlagUsages, trailing whitespace trimmed: names and types, then the usage, aligned
    three spaces after the longest."""
    lines = [f.usage_line() for f in flags]
    width = max(len(names) for names, _ in lines)
    return "\n".join(f"{names:<{width}}   {usage}".rstrip() for names, usage in lines)


def _help(ctx: Context) -> None:
    """cobra's help command: the help of the command named, or the root's usage."""
    root = ctx.command.root
    names = ctx.flags["_args"]
    cmd: Command | None = root
    for name in names:
        cmd = cmd.child(name) if cmd else None
    if cmd is None:
        ctx.err.write(f"Unknown help topic [`{' '.join(names)}`]\n" + usage_text(root, with_help_flag=False))
        return
    ctx.out.write(help_text(cmd))


def with_help(root: Command) -> Command:
    """The root with cobra's `help` command: listed among the root's commands, but no
    subcommand of its own (hidden: not in `[command]` lines nor in suggestions)."""
    return root.add(Command("help", "Help about any command", args="[command]", run=_help, needs_api=False,
                            hidden=True, long="Help provides help for any command in the application.\n"
                            f"Simply type {root.name} help [path to command] for full details."))


# Running.
def execute(root: Command, argv: list[str], out: TextIO, err: TextIO, connect: Callable[[str, str], Any]) -> int:
    """Runs the command argv names; its exit code."""
    cmd = root
    values: dict[str, Any] = {}
    try:
        cmd, rest = find(root, argv)
        values, positional = ({}, rest) if cmd.raw_args else parse_flags(cmd, rest)
        if values.get("help") or cmd.run is None:
            out.write(help_text(cmd))
            return 0
        values["_args"] = positional
        ctx = Context(cmd, values, out, err, connect)
        if cmd.needs_api:
            ctx.api  # noqa: B018 - connected first, as Volcano builds its client config first
        cmd.run(ctx)
        return 0
    except UsageError as e:
        err.write(f"Error: {e}\n")
        return EXIT_USAGE
    except BrokenPipeError:  # the reader of the output went away: the caller's to handle
        raise
    except (Failure, NotServed, StoreError, AdmissionError, InvalidObject, OSError) as e:
        err.write(f"{failed(cmd)}: {message_of(e)}\n")
        return EXIT_FAILED
    except Exception as e:  # noqa: BLE001 - a bug: one line, and the traceback when asked for
        err.write(f"{failed(cmd)}: unexpected {type(e).__name__}: {e} (a bug in vcctl; -v 1 or {TRACEBACK_ENV}=1 "
                  "shows where)\n")
        if values.get("v", 0) > 0 or _traceback_asked():
            traceback.print_exc(file=err)
        return EXIT_FAILED


def _traceback_asked() -> bool:
    return os.environ.get(TRACEBACK_ENV, "") not in ("", "0")


def failed(cmd: Command) -> str:
    """Volcano's CheckError prefix: "Failed to" and the command's names up to the root's child,
    from the command up ("Failed to list job")."""
    names = []
    while cmd.parent is not None:
        names.append(cmd.name)
        cmd = cmd.parent
    return "Failed to" + "".join(f" {n}" for n in names)


def message_of(error: BaseException) -> str:
    """An error as Volcano prints it: the API server's message (without the request volcanic's
    client prefixes it with), the webhook's for an admission denial."""
    if isinstance(error, AdmissionError):
        return f"admission webhook denied the request: {error}"
    if isinstance(error, FileNotFoundError | PermissionError | IsADirectoryError):
        return f"open {error.filename}: {(error.strerror or str(error)).lower()}"
    text = str(error)
    if type(error) is StoreError:  # "GET /apis/...: <the server's message>"
        method, _, rest = text.partition(" ")
        if method.isupper() and rest.startswith("/") and ": " in rest:
            return rest.split(": ", 1)[1]
    return text
