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


# Code named in the docs, as they write it: `run_turn()`, `AgentSession.run_turn()`,
# `ReviewRun.finish`, `live.listen()` (a module's function), and "`event_frame()` in
# `agent/chat/frames.py`" (a name and the file that defines it).
_CODE_NAME = re.compile(r"`((?:[A-Za-z_]\w*\.)?[A-Za-z_]\w*)(\(\))?`")
_NAME_IN_FILE = re.compile(r"`((?:[A-Za-z_]\w*\.)?[A-Za-z_]\w*)(?:\(\))?` in `((?:[\w-]+/)+[\w-]+\.py)`")
NAMING_DOCS = ("ARCHITECTURE.md", "DECISIONS.md")


def _definitions() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Every function, class, method and module-level name of the project's code: name -> the
    files defining it, and "Class.member" / "module.name" -> the files defining it."""
    import ast

    names: dict[str, set[str]] = {}
    dotted: dict[str, set[str]] = {}
    for path in _tracked():
        if not path.endswith(".py") or path.startswith(("tests/", "bench/")) or "/migrations/" in path:
            continue
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        stem = Path(path).stem if Path(path).stem != "__init__" else Path(path).parent.name
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.setdefault(node.name, set()).add(path)
            if isinstance(node, ast.ClassDef):
                members = [n for member in node.body for n in _bound_names(member)]
                # Instance attributes: `self.temperature = …` in any method.
                members += [
                    t.attr
                    for n in ast.walk(node)
                    if isinstance(n, ast.Assign | ast.AnnAssign)
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                ]
                for name in members:
                    dotted.setdefault(f"{node.name}.{name}", set()).add(path)
        for top in _module_level(tree.body):
            for name in _bound_names(top):
                names.setdefault(name, set()).add(path)
                dotted.setdefault(f"{stem}.{name}", set()).add(path)
    return names, dotted


def _module_level(body: list) -> list:
    """A module's statements, those inside its top-level `if` / `try` blocks included."""
    import ast

    out = []
    for node in body:
        out.append(node)
        if isinstance(node, ast.If | ast.Try):
            out += _module_level(node.body + node.orelse + getattr(node, "finalbody", []))
    return out


def _bound_names(node: object) -> list[str]:
    import ast

    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def unknown_code_names(text: str, names: dict[str, set[str]], dotted: dict[str, set[str]]) -> list[str]:
    """The code names `text` gives that the code does not define (or not in the file it says)."""
    modules = {key.split(".")[0] for key in dotted}
    unknown = []
    for line in text.splitlines():
        for name, path in _NAME_IN_FILE.findall(line):
            head = name.rpartition(".")[0]
            if head and not head[0].isupper():
                continue  # `live.listen()` in `agent/apps.py`: where it is called; its module names it
            if path not in names.get(name.split(".")[-1], set()) | dotted.get(name, set()):
                unknown.append(f"{name} in {path}")
        for name, call in _CODE_NAME.findall(line):
            head = name.rpartition(".")[0]
            if head[:1].isupper():
                # A project class's member; Django's and other libraries' classes are theirs.
                if head in names and name not in dotted:
                    unknown.append(name)
            elif head:
                if call and head in modules and name not in dotted:
                    unknown.append(name)
            elif call and name not in names:
                unknown.append(name + "()")
    return unknown


def test_a_renamed_function_fails_the_docs_that_name_it():
    names = {"run_turn": {"agent/chat/runner.py"}, "AgentSession": {"agent/chat/runner.py"}}
    dotted = {"AgentSession.run_turn": {"agent/chat/runner.py"}, "live.listen": {"agent/chat/live.py"}}
    fine = "`run_turn()` and `AgentSession.run_turn()`, `live.listen()`, `run_turn()` in `agent/chat/runner.py`"
    assert unknown_code_names(fine, names, dotted) == []
    stale = "`drive()`, `AgentSession.drive()`, `live.hear()`, `run_turn()` in `agent/chat/service.py`"
    assert unknown_code_names(stale, names, dotted) == [
        "run_turn in agent/chat/service.py",
        "drive()",
        "AgentSession.drive",
        "live.hear",
    ]


@pytest.mark.parametrize("doc", NAMING_DOCS)
def test_docs_name_only_code_that_exists_where_they_say(doc):
    names, dotted = _definitions()
    assert unknown_code_names((DOCS / doc).read_text(encoding="utf-8"), names, dotted) == []
