"""The reasons live in the repo: nothing outside docs/ cites a text a newcomer does not have (the
specification, the design notes, the issue tracker), every pointer into docs/ names a section that
exists, and docs/ARCHITECTURE.md names only files that exist, answering its three questions in at most
three files each."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
ARCHITECTURE = DOCS / "ARCHITECTURE.md"
SCANNED = (".py", ".js", ".html", ".sh", ".md", ".toml", ".cfg", ".css")
THIS_FILE = "tests/test_docs.py"  # it spells out what it looks for

# Citations of texts outside the repo: "SPEC §5", "SPEC.md", "DESIGN.md", 'DESIGN "Known traps"',
# "issue 13", "issues 8 and 13", "seed §20.3", "§20.8". Case matters for SPEC/DESIGN, so names such
# as `_PATTERN_SPECS` or a word like "design" are not citations.
CITATION = re.compile(r"\bSPEC\b|\bDESIGN\b|\b[Ii]ssues? #?\d|\bseed §|§ ?\d")


def _tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [f for f in out.stdout.splitlines() if (ROOT / f).is_file()]


def citations(text: str) -> list[tuple[int, str]]:
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1) if CITATION.search(line)]


def test_citation_pattern_finds_what_it_should():
    cited = [
        "The memory store (SPEC §2).",
        "see SPEC.md",
        "files under ~400 lines (DESIGN.md)",
        'arrives late (DESIGN "Known traps")',
        "Message actions (issue 13, defect 4)",
        "The one renderer (issues 8 and 13).",
        "the counters (seed §20.2.1)",
        "providers (§20.8)",
    ]
    plain = [
        "from knowledge.verification.threat_patterns import _PATTERN_SPECS, COMPACT_SPECS",
        "SPEC_INVISIBLE = [0x200B]",
        'entries are joined by "\\n§\\n"',
        "the same `§` format",
        "https://github.com/ollama/ollama/issues/15457",
        "a design choice; the issue tracker",
    ]
    assert [t for t in cited if not citations(t)] == []
    assert [t for t in plain if citations(t)] == []


def test_no_file_outside_docs_cites_texts_outside_the_repo():
    found = {}
    for name in _tracked():
        if name.startswith("docs/") or name == THIS_FILE or not name.endswith(SCANNED):
            continue
        hits = citations((ROOT / name).read_text(encoding="utf-8", errors="replace"))
        if hits:
            found[name] = hits
    assert found == {}, "say what the citation stands for, or point into docs/ (e.g. docs/BEHAVIOUR.md, Memory)"


# A pointer into docs/ as the code writes it: "docs/BEHAVIOUR.md, Memory", 'docs/ARCHITECTURE.md, "The
# path of a turn"', "docs/DECISIONS.md, record 11".
_POINTER = re.compile(r'docs/(\w+\.md), (?:record (\d+)|"?([A-Z][\w ,\'-]*?))"?[).;]')


def _headings(doc: str) -> set[str]:
    return {
        line.lstrip("#").strip()
        for line in (DOCS / doc).read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    }


def test_pointer_pattern_reads_the_forms_the_code_uses():
    text = 'a (docs/BEHAVIOUR.md, The learning loop). b (docs/DECISIONS.md, record 11); c (docs/ARCHITECTURE.md, "The path of a turn")'
    assert _POINTER.findall(text) == [
        ("BEHAVIOUR.md", "", "The learning loop"),
        ("DECISIONS.md", "11", ""),
        ("ARCHITECTURE.md", "", "The path of a turn"),
    ]


def test_pointers_into_docs_name_a_section_that_exists():
    broken = []
    for name in _tracked():
        if name.startswith("docs/") or name == THIS_FILE or not name.endswith(SCANNED):
            continue
        text = (ROOT / name).read_text(encoding="utf-8", errors="replace")
        for doc, record, section in _POINTER.findall(" ".join(text.split())):
            if not (DOCS / doc).is_file():
                broken.append(f"{name}: {doc}")
                continue
            headings = _headings(doc)
            found = any(h.startswith(f"{record}. ") for h in headings) if record else section in headings
            if not found:
                broken.append(f"{name}: {doc}, {record or section}")
    assert broken == []


# A repo path as ARCHITECTURE.md writes it: `agent/chat/live.py`, `static/js/chat/`. Not URLs
# (`/ws/notify/`, preceded by a slash) and not templates of names (`/ws/chat/<session_id>/`).
_PATH = re.compile(r"(?<![\w./<:-])((?:[\w.-]+/)+[\w.-]*)")
_FILE = re.compile(r"\.(py|js|html|md|sh|toml|cfg|css|json|txt)$")


def named_paths(text: str) -> set[str]:
    paths = set()
    for match in _PATH.finditer(text):
        path = match.group(1)
        if path.endswith("/") or _FILE.search(path):
            paths.add(path)
    return paths


def test_architecture_names_only_files_that_exist():
    paths = named_paths(ARCHITECTURE.read_text(encoding="utf-8"))
    assert len(paths) > 50  # the check is reading the document, not passing on nothing
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert missing == []


def test_architecture_tables_name_modules_that_exist():
    """A package's row names its modules bare (`client.py` in the row of `agent/llm/`)."""
    missing = []
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        package = re.match(r"\| `([\w/]+/)` \|", line)
        if package:
            for name in re.findall(r"`(\w+\.py)`", line):
                if not (ROOT / package.group(1) / name).is_file():
                    missing.append(package.group(1) + name)
    assert missing == []


def _question_rows() -> list[tuple[str, list[str]]]:
    """The rows of the "Find it in three files" table: (question, the files it names)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Find it in three files", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].endswith("?"):
            rows.append((cells[0], re.findall(r"`([^`]+)`", cells[1])))
    return rows


@pytest.mark.parametrize("topic", ["evidence", "toast", "Chinese"])
def test_architecture_answers_each_question_in_at_most_three_files(topic):
    rows = [(q, files) for q, files in _question_rows() if topic in q]
    assert rows, f"no question about {topic!r} in ARCHITECTURE.md's 'Find it in three files'"
    for question, files in rows:
        assert 1 <= len(files) <= 3, question
        assert [f for f in files if not (ROOT / f).is_file()] == [], question
