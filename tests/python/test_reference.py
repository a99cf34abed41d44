"""Every section citation resolves (issue 34 item 5): the `§N.M` that code, tests, scenarios
and docs cite ("§2.6", "reference §4.3", "volcano.md §6.3 case 2", ranges such as
"§2.1–2.3") has a heading in docs/reference.md, and every `research §N.M` (an earlier study
that is not in the repository, numbered differently) has a row in that page's table of older
citations pointing to a heading. A citation belongs to `research` when that word is the last
document named before it in its clause (up to a ';' on the same line)."""

from __future__ import annotations

from collections import defaultdict
import pathlib
import re
from typing import Iterator

ROOT = pathlib.Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference.md"
SCANNED = ("python", "src", "tests", "docs")
# Files that mention sections without citing them: the page itself and this test.
NOT_CITING = {REFERENCE.resolve(), pathlib.Path(__file__).resolve()}
SKIPPED_SUFFIXES = {".so", ".pyc", ".png", ".jpg", ".gif", ".ipynb"}

CITATION = re.compile(r"§ ?(\d+(?:\.\d+)*)(?: ?[-–] ?(\d+(?:\.\d+)*))?")
DOCUMENT = re.compile(r"\b(research|reference|volcano\.md)\b")
HEADING = re.compile(r"^#+ §(\d+(?:\.\d+)*)\s", re.MULTILINE)
RESEARCH_ROW = re.compile(r"^\| research §(\d+(?:\.\d+)*) \|.*\| §(\d+(?:\.\d+)*) \|$", re.MULTILINE)


def _expand(first: str, last: str | None) -> list[str]:
    """A range "2.3-2.5" within one section is each subsection; anything else its two ends."""
    if last is None:
        return [first]
    a, b = first.split("."), last.split(".")
    if len(a) == len(b) == 2 and a[0] == b[0] and int(a[1]) <= int(b[1]):
        return [f"{a[0]}.{i}" for i in range(int(a[1]), int(b[1]) + 1)]
    return [first, last]


def citations_in(line: str) -> list[tuple[str, str]]:
    """(document, section) for each citation of a line; document is "research" or
    "reference" (which "volcano.md" and a bare § also mean)."""
    found = []
    for m in CITATION.finditer(line):
        clause = line[:m.start()].rsplit(";", 1)[-1]
        named = DOCUMENT.findall(clause)
        document = "research" if named and named[-1] == "research" else "reference"
        found.extend((document, section) for section in _expand(m.group(1), m.group(2)))
    return found


def _files() -> Iterator[pathlib.Path]:
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if (path.is_file() and "__pycache__" not in path.parts and path.suffix not in SKIPPED_SUFFIXES
                    and path.resolve() not in NOT_CITING):
                yield path


def repository_citations() -> dict[tuple[str, str], list[str]]:
    """(document, section) -> where it is cited ("path:line")."""
    cited: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in _files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for key in citations_in(line):
                cited[key].append(f"{path.relative_to(ROOT)}:{number}")
    return cited


def headings(text: str) -> set[str]:
    return set(HEADING.findall(text))


def research_rows(text: str) -> dict[str, str]:
    """research section -> the section of this page that covers it."""
    return dict(RESEARCH_ROW.findall(text))


def dangling(cited: dict[tuple[str, str], list[str]], text: str) -> list[str]:
    """One message per citation that does not resolve in the page `text`."""
    have, rows = headings(text), research_rows(text)
    problems = []
    for (document, section), where in sorted(cited.items()):
        if document == "reference" and section not in have:
            problems.append(f"§{section} has no heading in docs/reference.md; cited at {', '.join(where[:3])}")
        elif document == "research" and section not in rows:
            problems.append(f"research §{section} has no row in docs/reference.md's table of older citations; "
                            f"cited at {', '.join(where[:3])}")
    return problems


# --- The repository -------------------------------------------------------------------------

def test_every_citation_has_a_heading_or_a_row():
    cited = repository_citations()
    assert dangling(cited, REFERENCE.read_text(encoding="utf-8")) == []


def test_the_scan_finds_the_citations_it_must():
    """Guards against a scan that finds nothing (and so passes on anything): citations known
    to exist are found, classified by document."""
    cited = repository_citations()
    assert any(w.startswith("python/volcanic/controllers/queue.py:") for w in cited[("reference", "2.6")])
    assert any(w.startswith("src/volcanic/framework/statement.h:") for w in cited[("reference", "4.2")])
    assert any(w.startswith("src/volcanic/actions/enqueue.cc:") for w in cited[("research", "5.3")])
    assert len(cited) > 40


def test_research_rows_point_to_headings():
    text = REFERENCE.read_text(encoding="utf-8")
    have = headings(text)
    rows = research_rows(text)
    assert rows, "no `| research §N.M | topic | §N.M |` rows found"
    assert {research: see for research, see in rows.items() if see not in have} == {}


def test_headings_are_unique_and_in_order():
    numbers = HEADING.findall(REFERENCE.read_text(encoding="utf-8"))
    keys = [tuple(int(p) for p in n.split(".")) for n in numbers]
    assert len(set(numbers)) == len(numbers)
    assert keys == sorted(keys)


# --- The checker itself: it fails on what it must -------------------------------------------

PAGE = "# Page\n\n## §2 Controllers\n\n### §2.6 Queue controller\n\n| research §5.1 | proportion | §2.6 |\n"


def _cited(*lines: str) -> dict[tuple[str, str], list[str]]:
    cited: dict[tuple[str, str], list[str]] = defaultdict(list)
    for n, line in enumerate(lines, 1):
        for key in citations_in(line):
            cited[key].append(f"x:{n}")
    return cited


def test_a_dangling_citation_is_reported():
    assert dangling(_cited("see §2.6 and reference §2"), PAGE) == []
    assert dangling(_cited("queue controller (reference §2.6, §9.9)"), PAGE) == [
        "§9.9 has no heading in docs/reference.md; cited at x:1"]
    assert dangling(_cited("research §5.2 overcommit"), PAGE) == [
        "research §5.2 has no row in docs/reference.md's table of older citations; cited at x:1"]


def test_citations_are_attributed_to_their_document():
    of = citations_in
    assert of("// allocate (reference §4.3, research §1): queue by queue") == [
        ("reference", "4.3"), ("research", "1")]
    assert of("reference: volcano.md §4.1 (x); research §2.5-2.6") == [
        ("reference", "4.1"), ("research", "2.5"), ("research", "2.6")]
    assert of("research §1.3 (BestEffort skipped), §5.7 backfill, §3.2 (pods)") == [
        ("research", "1.3"), ("research", "5.7"), ("research", "3.2")]
    assert of("- **Job controller** (reference §2.1–2.3): the request events") == [
        ("reference", "2.1"), ("reference", "2.2"), ("reference", "2.3")]
    assert of("(reference §3 intro, §3.4; webhook paths)") == [("reference", "3"), ("reference", "3.4")]
    assert of("no section here, 5 § signs aside") == []


def test_headings_of_any_level_count_and_prose_does_not():
    assert headings("# §1 A\n## §1.2 B\n#### §4.6 C\n§4.5 in prose\n") == {"1", "1.2", "4.6"}
    assert citations_in("§ 3.5 with a space") == [("reference", "3.5")]
