"""The command trees, built explicitly: vcctl's (Volcano's cmd/cli/vcctl.go, plus `completion`)
and the one-command tools'. Commands of other modules join vcctl's through `extra`: pairs of
the parent's path under the root ("job", "queue", "" for the root) and a Command, e.g.
`vcctl(extra=[("job", Command("why", "why a job waits", run=why, flags=...))])`."""

from __future__ import annotations

import platform
from typing import Callable, Iterable

from volcanic.vcctl import completion, cronjobs, flows, jobs, pods, queuebindings, queues, short
from volcanic.vcctl.command import Command, Context, with_help

API_VERSION = "v1alpha1"  # what Volcano's `vcctl version` calls its API version


def _version(ctx: Context) -> None:
    from volcanic._version import version
    ctx.write(f"API Version: {API_VERSION}\nVersion: volcanic {version()} (Volcano v1.15.1's vcctl)\n"
              f"Git SHA: Not provided.\nBuilt At: Not provided.\nPython Version: {platform.python_version()}\n"
              f"Python OS/Arch: {platform.system().lower()}/{_arch()}\n")


def _arch() -> str:
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)


def vcctl(extra: Iterable[tuple[str, Command]] = ()) -> Command:
    root = Command("vcctl", commands=[
        jobs.group(), queues.group(), flows.group(flows.JOBTEMPLATE), flows.group(flows.JOBFLOW), pods.group(),
        cronjobs.group(), queuebindings.group(),  # hidden, as volcanic's other additions
        Command("version", "Print the version information", "Print the version information", example="vcctl version",
                run=_version, needs_api=False),
        completion.group("vcctl"), completion.complete_command()])
    for parent, command in extra:
        at = root
        for name in parent.split():
            child = at.child(name)
            if child is None:
                raise ValueError(f"vcctl: no command {parent!r} to add {command.name!r} under")
            at = child
        at.add(command)
    return with_help(root)


PROGRAMS: dict[str, Callable[[], Command]] = {
    "vcctl": vcctl, "vsub": short.vsub, "vjobs": short.vjobs, "vqueues": short.vqueues_command,
    "vcancel": short.vcancel, "vsuspend": short.vsuspend, "vresume": short.vresume,
}
