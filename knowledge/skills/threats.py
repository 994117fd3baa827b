"""The threat scan for skills: what a skill says reaches the model as much as a memory entry does.

A skill's name and description are in every session's system prompt (the index), and its
SKILL.md and text files reach the model through skill_view. So every write of a skill file is
scanned (a hit means nothing is written, as for memory), and every skill is scanned again when
it is listed (a hit leaves it out of the index and skill_view, and the skills page shows why):
files written by hand, by Hermes or by an older version were never scanned on the way in.

A skill's files are read in context (knowledge/verification/threat_document.py): its code
examples, the API calls its task is made of and a byte-order mark are not taken for threats;
the skill's name, category and description say which service its calls belong to.

Binary files are not scanned: skill_view refuses to show them as text. Results are remembered
per file (path, size, modification time, what the skill is about), so listing the skills does
not re-read every file.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from knowledge.skills.format import SKILL_FILE, SkillError, read_placed_skill
from knowledge.verification.threat_document import Subject, scan_document
from knowledge.verification.threat_scan import ThreatHit, scan_long

__all__ = ["Subject", "check_text", "check_write", "folder_threat", "skill_subject", "text_threat"]

_cache: dict[tuple[str, int, int, int, Subject], ThreatHit | None] = {}
_cache_lock = threading.Lock()
_CACHE_SIZE = 4096


def text_threat(data: bytes | str, path: str = "", subject: Subject | None = None) -> ThreatHit | None:
    """The first threat in a file's content; None for clean text and for binary files.

    With `path` (relative to the skill's folder) the content is a skill file, read in context."""
    if isinstance(data, bytes):
        if b"\x00" in data:
            return None
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not path:
        return scan_long(data)
    hits = scan_document(data, path, subject)
    return hits[0] if hits else None


def skill_subject(name: str, category: str = "", skill_md: str | None = None) -> Subject:
    """What a skill is about, from its name, category and SKILL.md's description."""
    description = ""
    if skill_md:
        try:
            description = read_placed_skill(skill_md, name).description
        except SkillError:
            description = ""  # a broken SKILL.md is refused for that; its files are read without one
    return Subject(name=name, category=category, description=description)


def folder_subject(folder: Path, root: Path) -> Subject:
    """`skill_subject` of the skill whose folder is `folder` under the skills folder `root`."""
    try:
        text = (folder / SKILL_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = None
    category = folder.parent.relative_to(root).as_posix() if folder.parent != root else ""
    return skill_subject(folder.name, category, text)


def file_context(root: Path, target: Path, name: str, data: bytes) -> tuple[str, Subject]:
    """A skill file about to be written, read in context: its path inside its skill, and what the
    skill is about (from the SKILL.md being written, or the one on disk), which says where its API
    calls belong."""
    folder = target.parent
    while folder != root and not (folder / SKILL_FILE).is_file() and target.name != SKILL_FILE:
        folder = folder.parent
    if target.name == SKILL_FILE and target.parent == folder:
        category = folder.parent.relative_to(root).as_posix() if folder.parent != root else ""
        subject = skill_subject(name, category, data.decode("utf-8", "replace"))
    else:
        subject = folder_subject(folder, root)
    return target.relative_to(folder).as_posix(), subject


def _message(label: str, hit: ThreatHit) -> str:
    return f"{label} matches threat pattern '{hit.id}': {hit.reason}"


def check_write(label: str, data: bytes | str, path: str = "", subject: Subject | None = None) -> None:
    """Refuse a write whose content would put a threat in front of the model (a skill file with
    `path`, relative to its folder, read in context)."""
    hit = text_threat(data, path, subject)
    if hit is not None:
        raise SkillError(f"Blocked: {_message(label, hit)}. Nothing was saved.")


def check_text(label: str, text: str) -> None:
    """Refuse a name or category that is itself an instruction (names are in the prompt's index)."""
    # Names join words with separators ("ignore-previous-instructions"): read them as words.
    check_write(label, text.replace("-", " ").replace("_", " ").replace("/", " "))


def _file_threat(rel: str, path: Path, subject: Subject) -> ThreatHit | None:
    try:
        st = path.lstat()
    except OSError:
        return None
    key = (str(path), st.st_size, st.st_mtime_ns, st.st_ino, subject)
    with _cache_lock:
        if key in _cache:
            return _cache[key]
    try:
        hit = text_threat(path.read_bytes(), rel, subject) if path.is_file() and not path.is_symlink() else None
    except OSError:
        hit = None  # unreadable: skill_view cannot show it either
    with _cache_lock:
        if len(_cache) >= _CACHE_SIZE:
            _cache.clear()
        _cache[key] = hit
    return hit


def folder_threat(name: str, category: str, files: Iterable[tuple[str, Path]], description: str = "") -> str:
    """Why a skill is left out of the prompt ("" when it is not): its name or a file is a threat."""
    subject = Subject(name=name, category=category, description=description)
    for label, text in ((f"the skill name '{name}'", name), (f"the category '{category}'", category)):
        hit = text_threat(text.replace("-", " ").replace("_", " ").replace("/", " ")) if text else None
        if hit is not None:
            return f"Left out of the prompt: {_message(label, hit)}."
    for rel, path in files:
        hit = _file_threat(rel, path, subject)
        if hit is not None:
            return f"Left out of the prompt: {_message(rel, hit)}. Edit or remove the text to use the skill."
    return ""
