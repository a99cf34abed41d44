"""Go regular expressions (RE2 syntax, Go's `regexp` package) run with Python's `re`, for the
patterns Volcano compiles with regexp.Compile: a HyperNode member's regexMatch.pattern.

    pattern = go_regexp(text)        # an re.Pattern; GoRegexpError (a ValueError) if refused
    pattern.search(node_name)        # Go's MatchString: a match anywhere in the name

What is accepted: the patterns both engines read the same way. Refused, with Go's message,
what Go refuses and Python would take: lookarounds, atomic groups, conditionals, comments
((?=, (?!, (?<=, (?<!, (?>, (?(, (?#), back-references (\\1, (?P=name)), possessive
quantifiers (a*+), repeat counts over 1000, the escapes \\Z \\u \\U \\N and the inline flags
a, L, u, x. Translated, where Go and Python spell one thing differently: \\z (end of text) is
Python's \\Z, (?<name>...) is (?P<name>...), and {,n} is literal text in Go (Python would
repeat). Refused although Go takes them (volcanic's one difference, said in the message):
Unicode classes (\\pL, \\p{Greek}), \\Q...\\E, \\x{41}, POSIX classes ([[:alpha:]]), the
ungreedy flag (?U), and flags set mid-pattern (a(?i)b; Python takes them only at the start).
"""

from __future__ import annotations

import re

MAX_REPEAT = 1000  # Go's regexp/syntax limit on {n,m}
# Group openings Go refuses, longest first.
_PERL_GROUPS = ("(?<=", "(?<!", "(?P=", "(?=", "(?!", "(?>", "(?#", "(?(")
_GO_FLAGS = set("imsU-")
_REPEAT = re.compile(r"\{(\d*)(,?)(\d*)\}")
_NAMED = re.compile(r"\(\?<(?=[A-Za-z_])")
_POSIX = re.compile(r"\[:\^?[a-z]+:\]")


class GoRegexpError(ValueError):
    """A pattern refused; the message is Go's `error parsing regexp: ...` where Go has one."""


def go_regexp(pattern: str) -> re.Pattern[str]:
    """`pattern` compiled as Go reads it (see the module docstring)."""
    try:
        return re.compile(_translated(pattern))
    except re.error as e:
        raise GoRegexpError(f"error parsing regexp: {e.msg}: `{pattern}`") from None


def _refuse(what: str, pattern: str, go_takes_it: bool = False) -> GoRegexpError:
    if go_takes_it:
        return GoRegexpError(f"`{what}` in `{pattern}` is valid in Go but not supported by volcanic")
    return GoRegexpError(f"error parsing regexp: {what}")


def _translated(p: str) -> str:
    out: list[str] = []
    i, in_class = 0, False
    while i < len(p):
        c = p[i]
        if c == "\\":
            out.append(_escape(p, i, in_class))
            i += 2
        elif in_class:
            posix = _POSIX.match(p, i)
            if posix:
                raise _refuse(posix.group(0), p, go_takes_it=True)
            in_class = c != "]"
            out.append(c)
            i += 1
        elif c == "[":
            # A ']' right after '[' or '[^' is a literal in both engines.
            start = i + 1 + (p.startswith("^", i + 1))
            start += p.startswith("]", start)
            out.append(p[i:start])
            i, in_class = start, True
        elif c == "(" and p.startswith("(?", i):
            text, i = _group(p, i)
            out.append(text)
        elif c == "{":
            text, i = _brace(p, i)
            out.append(text)
        else:
            if c in "*+?" and p.startswith("+", i + 1) and (c != "?" or not _after_quantifier(p, i)):
                raise _refuse(f"invalid nested repetition operator: `{c}+`", p)
            out.append(c)
            i += 1
    return "".join(out)


def _after_quantifier(p: str, i: int) -> bool:
    """Whether the '?' at i makes the quantifier before it lazy (a*?+ is lazy then '+')."""
    return i > 0 and p[i - 1] in "*+?}"


def _escape(p: str, i: int, in_class: bool) -> str:
    e = p[i:i + 2]
    letter = e[1:]
    if letter in ("p", "P", "Q", "E") or p.startswith("\\x{", i):
        raise _refuse(e if letter != "x" else "\\x{", p, go_takes_it=True)
    if letter.isdigit() and letter != "0" or letter in ("Z", "u", "U", "N"):
        raise _refuse(f"invalid escape sequence: `{e}`", p)
    return "\\Z" if letter == "z" and not in_class else e


def _group(p: str, i: int) -> tuple[str, int]:
    """The group opening at i, as Python spells it, and where the scan goes on."""
    for perl in _PERL_GROUPS:
        if p.startswith(perl, i):
            raise _refuse(f"invalid or unsupported Perl syntax: `{perl}`", p)
    if _NAMED.match(p, i):
        return "(?P<", i + 3
    if p.startswith("(?P<", i):
        return "(?P<", i + 4
    j = i + 2
    while j < len(p) and p[j] not in ":)":
        j += 1
    flags = p[i + 2:j]
    if not set(flags) <= _GO_FLAGS:
        raise _refuse(f"invalid or unsupported Perl syntax: `{p[i:j + 1]}`", p)
    if "U" in flags or p.startswith(")", j) and i > 0:  # Python sets flags at the start only
        raise _refuse(p[i:j + 1], p, go_takes_it=True)
    return p[i:j], j


def _brace(p: str, i: int) -> tuple[str, int]:
    """A repeat {n}, {n,}, {n,m} (checked against Go's limit), or a literal '{'."""
    m = _REPEAT.match(p, i)
    if m is None or not m.group(1):
        return "\\{", i + 1  # Go reads '{' that starts no repeat, {,n} included, as text
    counts = [int(n) for n in (m.group(1), m.group(3)) if n]
    if max(counts) > MAX_REPEAT or len(counts) == 2 and counts[1] < counts[0]:
        raise _refuse(f"invalid repeat count: `{m.group(0)}`", p)
    if p.startswith("+", m.end()):
        raise _refuse(f"invalid nested repetition operator: `{m.group(0)}+`", p)
    return m.group(0), m.end()
