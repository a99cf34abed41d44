"""Shell completion: `vcctl completion bash|zsh|fish` prints a script (the usage of cobra's
default completion command, which Volcano's vcctl turns off), and the hidden `__complete`
command the scripts call with the words typed so far. It answers subcommands, flags, the values
of flags with a fixed set (-o) and names read from the API server (jobs, queues, namespaces,
jobflows, jobtemplates; nothing when it cannot be reached), one per line as `value<TAB>what`;
the line `__files__` alone asks the shell for file names."""

from __future__ import annotations

from typing import Any

from volcanic.kube.objects import meta_of
from volcanic.vcctl.command import Command, Context, Flag, UsageError, find, parse_flags

FILES = "__files__"

BASH = r"""# bash completion for {prog} (volcanic)
_{fn}_complete() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} IFS=$'\n'
    local -a out
    out=($("${{COMP_WORDS[0]}}" __complete "${{COMP_WORDS[@]:1:COMP_CWORD}}" 2>/dev/null))
    if [[ "${{out[0]}}" == "{files}" ]]; then
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -- "$cur"))
        return
    fi
    COMPREPLY=("${{out[@]%%$'\t'*}}")
}}
complete -F _{fn}_complete {prog}
"""

ZSH = r"""#compdef {prog}
# zsh completion for {prog} (volcanic)
_{fn}() {{
    local -a out candidates
    local line
    out=("${{(@f)$(${{words[1]}} __complete "${{(@)words[2,CURRENT]}}" 2>/dev/null)}}")
    if [[ "${{out[1]}}" == "{files}" ]]; then
        _files
        return
    fi
    for line in "${{out[@]}}"; do
        [[ -z "$line" ]] && continue
        if [[ "$line" == *$'\t'* ]]; then
            candidates+=("${{${{line%%$'\t'*}}//:/\\:}}:${{line#*$'\t'}}")
        else
            candidates+=("${{line//:/\\:}}")
        fi
    done
    _describe '{prog}' candidates
}}
if [[ "$funcstack[1]" == "_{fn}" ]]; then
    _{fn} "$@"
else
    compdef _{fn} {prog}
fi
"""

FISH = r"""# fish completion for {prog} (volcanic)
function __{fn}_complete
    set -l args (commandline -opc)[2..-1] (commandline -ct)
    set -l out ({prog} __complete $args 2>/dev/null)
    if test "$out[1]" = "{files}"
        __fish_complete_path (commandline -ct)
        return
    end
    printf '%s\n' $out
end
complete -c {prog} -f -a '(__{fn}_complete)'
"""

SCRIPTS = {"bash": BASH, "zsh": ZSH, "fish": FISH}
HOW = {
    "bash": "To load it into the current shell:\n\n\tsource <({prog} completion bash)\n\n"
            "To load it in every new shell, save it once (Linux; on macOS under $(brew --prefix)/etc/"
            "bash_completion.d):\n\n\t{prog} completion bash > /etc/bash_completion.d/{prog}\n",
    "zsh": "Completion must be enabled in zsh; if it is not, enable it once:\n\n"
           "\techo \"autoload -U compinit; compinit\" >> ~/.zshrc\n\n"
           "To load it into the current shell:\n\n\tsource <({prog} completion zsh)\n\n"
           "To load it in every new shell, save it once in a directory of $fpath:\n\n"
           "\t{prog} completion zsh > \"${{fpath[1]}}/_{prog}\"\n",
    "fish": "To load it into the current shell:\n\n\t{prog} completion fish | source\n\n"
            "To load it in every new shell, save it once:\n\n"
            "\t{prog} completion fish > ~/.config/fish/completions/{prog}.fish\n",
}


def group(prog: str) -> Command:
    no_descriptions = Flag("no-descriptions", type="bool", usage="disable completion descriptions")
    shells = [Command(shell, f"Generate the autocompletion script for {shell}",
                      f"Generate the autocompletion script for {prog} for the {shell} shell: it completes "
                      f"commands, flags and the names of jobs and queues (asked of the API server).\n\n"
                      + HOW[shell].format(prog=prog), run=_script(shell), needs_api=False, flags=[no_descriptions])
              for shell in SCRIPTS]
    return Command("completion", "Generate the autocompletion script for the specified shell",
                   f"Generate the autocompletion script for {prog} for the specified shell.\n"
                   "See each sub-command's help for details on how to use the generated script.\n",
                   commands=shells, hidden=True)  # Volcano's vcctl has none: its help does not list it


def complete_command() -> Command:
    """The hidden `__complete` the scripts call (on the root, as cobra's)."""
    return Command("__complete", hidden=True, run=complete, needs_api=False, raw_args=True)


def _script(shell: str):
    def run(ctx: Context) -> None:
        prog = ctx.command.root.name
        script = SCRIPTS[shell].format(prog=prog, fn=prog.replace("-", "_"), files=FILES)
        if ctx.flags.no_descriptions:  # the scripts show what follows a tab; send none
            script = script.replace("__complete", "__complete --no-descriptions", 1)
        ctx.write(script)
    return run


def complete(ctx: Context) -> None:
    """The candidates for the last of the words (the one being typed), one per line."""
    words = list(ctx.flags["_args"])
    describe = "--no-descriptions" not in words
    words = [w for w in words if w != "--no-descriptions"]
    current = words.pop() if words else ""
    candidates = suggest(ctx.command.root, words, current, ctx)
    if candidates == [FILES]:
        ctx.write(FILES + "\n")
        return
    ctx.write("".join(f"{value}\t{what}\n" if describe and what else f"{value}\n"
                      for value, what in candidates if value.startswith(current)))


def suggest(root: Command, words: list[str], current: str, ctx: Context) -> Any:
    """(value, description) pairs, or [FILES]."""
    try:
        cmd, rest = find(root, words)
    except UsageError:
        return []
    flags = {f"--{f.name}": f for f in cmd.all_flags()} | {f"-{f.short}": f for f in cmd.all_flags() if f.short}
    if words and words[-1] in flags and flags[words[-1]].type != "bool" and "=" not in words[-1]:
        return _values(flags[words[-1]], cmd, rest[:-1], ctx)
    if current.startswith("--") and "=" in current:
        option, _, _ = current.partition("=")
        if option in flags:
            return [(f"{option}={v}", what) for v, what in _values(flags[option], cmd, rest, ctx)]
        return []
    if current.startswith("-"):
        return [(f"--{f.name}", f.usage) for f in cmd.all_flags() if f.name != "help"]
    subcommands = cmd.visible_commands() + [c for c in cmd.commands if c.name == "help"]
    return [(c.name, c.short) for c in subcommands]


def _values(flag: Flag, cmd: Command, rest: list[str], ctx: Context) -> Any:
    if flag.choices:
        return [(c, "") for c in flag.choices]
    if flag.complete == "files":
        return [FILES]
    if not flag.complete:
        return []
    try:
        values, _ = parse_flags(cmd, rest)
    except UsageError:
        values = {}
    try:
        api = ctx.connect(values.get("master", ""), values.get("kubeconfig", ""))
        kind = flag.complete
        namespace = values.get("namespace") or "default" if kind not in ("Queue", "Namespace") else None
        return [(meta_of(o)["name"], kind) for o in api.list(kind, namespace)]
    except Exception:  # noqa: BLE001 - completion offers nothing rather than fail the shell
        return []
