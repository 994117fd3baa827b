"""Import an existing Hermes Agent home; knowledge/transfer/export.py writes the other way.

Import writes only through the stores (MemoryStore.add, SkillStore.create / write_file) with
Provenance(actor="import"), so the lock, limits, threat scan and change log all apply. Every
change of one import carries the id of a ReviewRun(trigger="import"): the change log's
"undo everything one review did" then undoes the whole import as one unit, and the import
shows in the review history with what it changed.

Archives come from people's uploads; knowledge/transfer/archive.py unpacks them defensively.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO

from django.utils import timezone

from knowledge import undo
from knowledge.memory.ops import ENTRY_DELIMITER
from knowledge.memory.store import TARGETS, MemoryStore, parse
from knowledge.models import KnowledgeChange, ReviewRun, SkillUsage
from knowledge.provenance import Provenance
from knowledge.skills.files import skill_folders, supporting_files
from knowledge.skills.format import (
    MAX_LENIENT_SKILL_CHARS,
    SKILL_FILE,
    SkillError,
    check_file_size,
    read_placed_skill,
)
from knowledge.skills.store import SkillStore
from knowledge.transfer.archive import ArchiveError, unpack

MAX_ARCHIVE_BYTES = 50 * 1024 * 1024  # uncompressed total, and the upload size
MAX_MEMBERS = 5000
IMPORT_TRIGGER = "import"


class TransferError(Exception):
    """An import or export that cannot go ahead; the message is shown to the person."""


# -- reports ----------------------------------------------------------------------------------


@dataclass
class Item:
    """One thing the import looked at and what became of it."""

    kind: str  # memory | user | skill | file
    name: str  # entry preview, skill name or skill/file path
    outcome: str  # added | duplicate | rejected | skipped
    reason: str = ""


@dataclass
class ImportReport:
    source: str
    run_id: int | None = None
    items: list[Item] = field(default_factory=list)

    def count(self, outcome: str, kinds: tuple[str, ...] = ("memory", "user", "skill", "file")) -> int:
        return sum(1 for i in self.items if i.outcome == outcome and i.kind in kinds)

    @property
    def problems(self) -> list[Item]:
        return [i for i in self.items if i.outcome in ("rejected", "skipped")]

    @property
    def summary(self) -> str:
        return (
            f"Import from {self.source}: {self.count('added', ('memory',))} memory and "
            f"{self.count('added', ('user',))} user-profile entries added, {self.count('added', ('skill',))} skills "
            f"and {self.count('added', ('file',))} supporting files created; {self.count('duplicate')} duplicates "
            f"skipped, {len(self.problems)} not imported"
        )

    def to_json(self) -> list[dict[str, str]]:
        return [asdict(i) for i in self.items]


# -- archives ---------------------------------------------------------------------------------


def extract_archive(fh: IO[bytes], dest: Path, max_bytes: int = MAX_ARCHIVE_BYTES) -> Path:
    """Unpack a .zip or .tar(.gz) safely into `dest`; return the Hermes home inside it."""
    try:
        unpack(fh, dest, max_bytes=max_bytes, max_members=MAX_MEMBERS)
    except ArchiveError as exc:
        raise TransferError(str(exc)) from exc
    return find_home(dest)


def _looks_like_home(folder: Path) -> bool:
    mem = folder / "memories"
    if any((mem / t.filename).is_file() for t in TARGETS.values()):
        return True
    skills = folder / "skills"
    return skills.is_dir() and not skills.is_symlink() and next(skill_folders(skills), None) is not None


def find_home(folder: Path) -> Path:
    """`folder` or its single top-level subfolder (archives often wrap `.hermes/`)."""
    if _looks_like_home(folder):
        return folder
    children = [c for c in folder.iterdir() if not c.name.startswith("__MACOSX")] if folder.is_dir() else []
    if len(children) == 1 and children[0].is_dir() and not children[0].is_symlink() and _looks_like_home(children[0]):
        return children[0]
    raise TransferError(
        f"'{folder.name or folder}' is not a Hermes home: expected memories/MEMORY.md, memories/USER.md or "
        "skills/[<category>/]<name>/SKILL.md inside it."
    )


# -- import -----------------------------------------------------------------------------------


def _read_text(path: Path, limit: int) -> str:
    if path.is_symlink() or not path.is_file():
        raise TransferError(f"'{path.name}' is not a regular file")
    if path.stat().st_size > limit:
        raise TransferError(f"'{path.name}' is larger than {limit:,} bytes")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TransferError(f"'{path.name}' is not UTF-8 text") from exc


def _import_memories(src: Path, prov: Provenance, report: ImportReport) -> None:
    store = MemoryStore()
    for target, spec in TARGETS.items():
        path = src / "memories" / spec.filename
        if not path.exists():
            continue
        try:
            entries = parse(_read_text(path, MAX_ARCHIVE_BYTES))
        except TransferError as exc:
            report.items.append(Item(target, spec.filename, "skipped", str(exc)))
            continue
        for entry in entries:
            name = entry if len(entry) <= 80 else entry[:80] + "…"
            used, limit = store.usage(target)
            if used + (len(ENTRY_DELIMITER) if used else 0) + len(entry) > limit:
                # Sizes first: an entry that cannot fit is refused without the cost of a scan.
                why = f"would bring {spec.label} over the limit ({used:,}/{limit:,} chars used, entry {len(entry):,})"
                report.items.append(Item(target, name, "rejected", why))
                continue
            result = store.add(target, entry, prov)
            if not result.get("success"):
                report.items.append(Item(target, name, "rejected", str(result.get("error", ""))))
            elif result.get("changed"):
                report.items.append(Item(target, name, "added"))
            else:
                report.items.append(Item(target, name, "duplicate", "already in this home"))


def _import_skill(store: SkillStore, category: str, folder: Path, prov: Provenance, report: ImportReport) -> None:
    name = folder.name
    label = f"{category}/{name}" if category else name
    if folder.is_symlink() or (folder / SKILL_FILE).is_symlink():
        report.items.append(Item("skill", label, "skipped", "symbolic link; only real folders are imported"))
        return
    try:
        content = _read_text(folder / SKILL_FILE, MAX_LENIENT_SKILL_CHARS * 4)
        store.create(name, content, category=category, prov=prov, lenient=True)
        listed = read_placed_skill(content, name).name  # its frontmatter name, if the folder's differs
    except (TransferError, SkillError) as exc:
        clash = "already exists" in str(exc)
        report.items.append(Item("skill", label, "skipped" if clash else "rejected", str(exc)))
        return
    report.items.append(Item("skill", label, "added", store.get(listed).warning))
    # Every file of the folder whatever its subfolder (curl/, shared/, reference.md beside SKILL.md),
    # as Hermes' skill_view reads any of them: SKILL.md points at them.
    for rel, path in supporting_files(folder):
        _import_file(store, listed, rel, path, prov, report)
    for rel in _hidden_files(folder):  # said, not silently dropped
        report.items.append(Item("file", f"{name}/{rel}", "skipped", "hidden file; not imported"))


def _hidden_files(folder: Path) -> list[str]:
    found = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        hidden = [n for n in [*dirnames, *filenames] if n.startswith(".")]
        found += [Path(dirpath, n).relative_to(folder).as_posix() for n in sorted(hidden)]
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
    return found


def _import_file(store: SkillStore, name: str, rel: str, path: Path, prov: Provenance, report: ImportReport) -> None:
    where = f"{name}/{rel}"
    if path.is_symlink() or not path.is_file():
        report.items.append(Item("file", where, "skipped", "symbolic link or special file"))
        return
    try:
        check_file_size(path.stat().st_size, where)
    except SkillError as exc:  # refused before its bytes are read
        report.items.append(Item("file", where, "rejected", str(exc)))
        return
    try:
        store.write_bytes(name, rel, path.read_bytes(), prov=prov)
    except SkillError as exc:
        report.items.append(Item("file", where, "rejected", str(exc)))
    else:
        report.items.append(Item("file", where, "added"))


def import_home(src: Path, source_label: str = "") -> ImportReport:
    """Merge the memories and skills of the Hermes home at `src` into this one."""
    src = find_home(src)
    started = time.monotonic()
    run = ReviewRun.objects.create(trigger=IMPORT_TRIGGER, prompt_kind="import", status="running")
    report = ImportReport(source=source_label or str(src), run_id=run.pk)
    prov = Provenance(actor="import", review_id=run.pk)
    try:
        _import_memories(src, prov, report)
        store = SkillStore()
        skills = src / "skills"
        found = skill_folders(skills) if skills.is_dir() and not skills.is_symlink() else iter(())
        for category, folder in found:
            _import_skill(store, category, folder, prov, report)
    except BaseException as exc:
        # Whatever was written so far stays undoable through the run; record why it stopped.
        run.status, run.error = "failed", f"{type(exc).__name__}: {exc}"
        raise
    else:
        run.status = "done"
    finally:
        run.summary = report.summary
        run.changes = report.to_json()
        run.finished_at = timezone.now()
        run.duration_ms = int((time.monotonic() - started) * 1000)
        run.save()
    return report


def import_path(path: Path) -> ImportReport:
    """A folder or an archive file on this machine."""
    path = path.expanduser()
    if path.is_dir():
        return import_home(path, str(path))
    if not path.is_file():
        raise TransferError(f"'{path}' does not exist (give a Hermes home folder or a .zip / .tar.gz of one).")
    if path.stat().st_size > MAX_ARCHIVE_BYTES:
        raise TransferError(f"'{path.name}' is larger than {MAX_ARCHIVE_BYTES // (1024 * 1024)} MB.")
    with path.open("rb") as fh:
        return import_archive(fh, path.name)


def import_archive(fh: IO[bytes], label: str) -> ImportReport:
    with tempfile.TemporaryDirectory(prefix="hermes-import-") as tmp:
        home = extract_archive(fh, Path(tmp))
        return import_home(home, label)


@dataclass
class ImportRecord:
    run: ReviewRun
    items: list[Item]
    undone: bool

    @property
    def problems(self) -> list[Item]:
        return [i for i in self.items if i.outcome in ("rejected", "skipped")]


def _is_undone(run: ReviewRun) -> bool:
    return KnowledgeChange.objects.filter(actor="undo", undoes__review_id=run.pk).exists()


def recent_imports(limit: int = 20) -> list[ImportRecord]:
    runs = ReviewRun.objects.filter(trigger=IMPORT_TRIGGER).order_by("-created_at", "-id")[:limit]
    records = []
    for run in runs:
        raw = run.changes if isinstance(run.changes, list) else []
        items = [Item(**i) for i in raw if isinstance(i, dict) and set(i) == {"kind", "name", "outcome", "reason"}]
        records.append(ImportRecord(run, items, _is_undone(run)))
    return records


def undo_import(run_id: int) -> list[KnowledgeChange]:
    """Undo every change of one import (newest first), so each file ends as it was before."""
    run = ReviewRun.objects.filter(pk=run_id, trigger=IMPORT_TRIGGER).first()
    if run is None:
        raise TransferError(f"There is no import #{run_id}.")
    if _is_undone(run):
        raise TransferError(f"Import #{run_id} was already undone.")
    created = list(
        KnowledgeChange.objects.filter(review_id=run.pk, kind="skill", action="create").values_list("target", flat=True)
    )
    try:
        done = undo.undo_review(run.pk, Provenance(actor="undo"))
    except undo.UndoError as exc:
        raise TransferError(str(exc)) from exc
    # The usage rows SkillStore.create made for the imported skills would otherwise list
    # skills that no longer exist as "never used" on the overview.
    existing = {s.name for s in SkillStore().list()}
    SkillUsage.objects.filter(name__in=[n for n in created if n not in existing], views=0, uses=0).delete()
    return done
