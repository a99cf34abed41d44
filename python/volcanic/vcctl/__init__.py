"""vcctl, Volcano's command line, in Python: the commands, flags, defaults, output and exit codes
of Volcano v1.15.1's `vcctl` and of its one-command tools (vsub, vjobs, vqueues, vcancel,
vsuspend, vresume), plus `-o json|yaml|wide` and shell completion (docs/vcctl.md).

The commands are written against a small API (volcanic.vcctl.api): the console scripts
(volcanic.cli.vcctl) give them a real API server, `Cluster.vcctl` the embedded cluster.

- command: the cobra/pflag framework (finding commands, flags, help, errors, exit codes)
- tree: the command trees, and where commands of other modules join them
- jobs, queues, pods, flows, cronjobs, queuebindings, short, completion: the commands
- format: Go's columns, times and durations; kubectl's -o json|yaml
"""

from __future__ import annotations

import io
import shlex
import sys
from typing import Any, Callable, Iterable, TextIO

from volcanic.vcctl.api import Api, NotServed, StoreApi
from volcanic.vcctl.command import Command, Flag, execute

__all__ = ["Api", "Command", "Flag", "NotServed", "StoreApi", "VcctlError", "on_store", "run"]

Connect = Callable[[str, str], Any]  # (--master, --kubeconfig) -> Api


class VcctlError(Exception):
    """A vcctl command that failed (Cluster.vcctl): the message is what it printed on stderr
    (`Failed to view job: job name ... is mandatory ...`, `Error: unknown flag: --x`); `code`
    its exit code, `stdout` what it printed before failing."""

    def __init__(self, message: str, code: int, stdout: str = "") -> None:
        super().__init__(message)
        self.code, self.stdout = code, stdout


def run(argv: Iterable[str], connect: Connect, prog: str = "vcctl", out: TextIO | None = None,
        err: TextIO | None = None, extra: Iterable[tuple[str, Command]] = ()) -> int:
    """Runs `prog` (vcctl, vsub, vjobs, vqueues, vcancel, vsuspend, vresume) with `argv`; its exit
    code. `extra`: commands added to vcctl's tree (volcanic.vcctl.tree.vcctl)."""
    from volcanic.vcctl import tree

    root = tree.vcctl(extra) if prog == "vcctl" else tree.PROGRAMS[prog]()
    return execute(root, list(argv), out or sys.stdout, err or sys.stderr, connect)


def on_store(api: Api, args: tuple[Any, ...], extra: Iterable[tuple[str, Command]] = ()) -> str:
    """What `Cluster.vcctl` does: the command line (one string split as a shell splits it, or
    its words), optionally starting with the program's name, run against `api`; what it
    printed. VcctlError on a non-zero exit."""
    from volcanic.vcctl.tree import PROGRAMS

    words = shlex.split(args[0]) if len(args) == 1 and isinstance(args[0], str) else [str(a) for a in args]
    prog = words.pop(0) if words and words[0] in PROGRAMS else "vcctl"
    out, err = io.StringIO(), io.StringIO()
    code = run(words, lambda master, kubeconfig: api, prog, out, err, extra)
    if code != 0:
        raise VcctlError(err.getvalue().strip(), code, out.getvalue())
    return out.getvalue()
