"""The skill store (SPEC §3): HERMES_HOME/skills/[<category>/]<name>/SKILL.md and its files.

Files are the source of truth; this is the only code that writes them. Every mutation runs
under an flock on skills/.lock (shared with other processes using the same home), writes
atomically, and records one change-log entry per file it touched so the dashboard can show
a diff and undo it. Paths are checked twice: textually (skill_format.check_rel_path) and on
disk (no symlinked component, resolved path inside the skill's folder).
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import copy
import fcntl
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from agent import config as hermes_config
from knowledge import changelog
from knowledge.fileio import atomic_write
from knowledge.models import KnowledgeChange, SkillUsage
from knowledge.provenance import Provenance
from knowledge.skill_format import (
    MAX_FILE_BYTES,
    SKILL_FILE,
    SkillError,
    check_name,
    check_rel_path,
    one_line,
    validate_skill_md,
)

__all__ = ["SkillError", "SkillInfo", "SkillStore", "render_index"]

LOCK_FILE = ".lock"
# Marks a change whose `before` holds base64 (a binary supporting file) rather than text.
BASE64_MARK = "[base64]"
INDEX_INSTRUCTION = (
    "Before acting on a request, check this list. If a skill matches the task, load it with "
    "skill_view(name) first and follow it. If a skill you followed proved wrong or incomplete, "
    'fix it with skill_manage(action="patch") so it is right next time.'
)


@dataclass(frozen=True)
class SkillInfo:
    """One skill folder as listed. `error` is set (and the skill unused) when it is broken."""

    name: str
    category: str
    path: Path
    description: str = ""
    enabled: bool = True
    error: str = ""

    @property
    def broken(self) -> bool:
        return bool(self.error)

    @property
    def usable(self) -> bool:
        return self.enabled and not self.error


@dataclass(frozen=True)
class _Snap:
    """A file's content before a change: text, or base64 when it is not UTF-8."""

    exists: bool
    text: str = ""
    is_b64: bool = False

    def raw(self) -> bytes:
        return base64.b64decode(self.text) if self.is_b64 else self.text.encode("utf-8")


def _snapshot(path: Path) -> _Snap:
    if not path.is_file():
        return _Snap(exists=False)
    data = path.read_bytes()
    try:
        return _Snap(exists=True, text=data.decode("utf-8"))
    except UnicodeDecodeError:
        return _Snap(exists=True, text=base64.b64encode(data).decode("ascii"), is_b64=True)


def _write_skill_file(path: Path, data: bytes) -> None:
    atomic_write(path, data, mode=0o644)  # skills are meant to be read by people


def _prune_empty(start: Path, stop: Path) -> None:
    """Remove empty folders from `start` up to (not including) `stop`."""
    current = start
    while current != stop and current.is_relative_to(stop) and not current.is_symlink():
        try:
            current.rmdir()
        except OSError:
            return  # not empty (or already gone): the rest of the tree is in use
        current = current.parent


class SkillStore:
    def __init__(self, config: hermes_config.Config | None = None) -> None:
        self.config = config or hermes_config.get()

    # ----- reading -------------------------------------------------------------------------

    @property
    def root(self) -> Path:
        root = self.config.skills_dir
        root.mkdir(parents=True, exist_ok=True)
        return root.resolve()

    def disabled_names(self) -> set[str]:
        return set(self.config.get("skills", "disabled"))

    def list(self) -> builtins.list[SkillInfo]:
        """Every skill folder, uncategorised first; broken ones carry their error."""
        disabled = self.disabled_names()
        seen: dict[str, SkillInfo] = {}
        found: builtins.list[SkillInfo] = []
        for category, folder in self._folders():
            info = self._load(category, folder, disabled)
            first = seen.get(info.name)
            if first is not None:
                where = f"category '{first.category}'" if first.category else "the top level"
                info = replace(info, error=f"duplicate skill name: '{info.name}' already exists in {where}")
            else:
                seen[info.name] = info
            found.append(info)
        return found

    def available(self, category: str | None = None) -> builtins.list[SkillInfo]:
        """Enabled, valid skills: the ones the index and the tools show."""
        return [s for s in self.list() if s.usable and (category is None or s.category == category)]

    def get(self, name: str) -> SkillInfo:
        check_name(name)
        for info in self.list():
            if info.name == name:
                return info
        raise SkillError(f"Skill '{name}' not found. Use skills_list to see the available skills.")

    def read(self, name: str, file_path: str | None = None) -> str:
        """SKILL.md, or one file of the skill's folder, as text."""
        info = self.get(name)
        if file_path in (None, "", SKILL_FILE):
            target = info.path / SKILL_FILE
        else:
            target = self._resolve(info, check_rel_path(file_path, support_only=False))
        if not target.is_file():
            raise SkillError(f"Skill '{name}' has no file '{file_path or SKILL_FILE}'.")
        try:
            return target.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise SkillError(f"'{file_path}' is a binary file and cannot be shown as text.") from exc

    def files(self, name: str) -> builtins.list[str]:
        """The skill's supporting files, relative to its folder (hidden files left out)."""
        info = self.get(name)
        out: builtins.list[str] = []
        for dirpath, dirnames, filenames in os.walk(info.path, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for fn in sorted(filenames):
                rel = Path(dirpath, fn).relative_to(info.path).as_posix()
                if rel != SKILL_FILE and not fn.startswith("."):
                    out.append(rel)
        return out

    def render_index(self) -> str:
        """The system prompt's skills section; "" when no skill is usable."""
        skills = self.available()
        if not skills:
            return ""
        lines = ["## Skills", INDEX_INSTRUCTION, ""]
        categories = sorted({s.category for s in skills}, key=lambda c: (c != "", c))
        for category in categories:
            if category:
                lines.append(f"### {category}")
            lines.extend(f"- {s.name}: {one_line(s.description)}" for s in skills if s.category == category)
        return "\n".join(lines) + "\n"

    # ----- usage statistics ----------------------------------------------------------------

    def record_view(self, name: str) -> None:
        self._bump(name, "views")

    def record_use(self, name: str) -> None:
        self._bump(name, "uses")

    def _bump(self, name: str, counter: str) -> None:
        row, _ = SkillUsage.objects.get_or_create(name=name)
        SkillUsage.objects.filter(pk=row.pk).update(**{counter: F(counter) + 1}, last_used=timezone.now())

    # ----- mutations -----------------------------------------------------------------------

    def create(self, name: str, content: str, *, category: str = "", prov: Provenance | None = None) -> Path:
        prov = prov or Provenance()
        check_name(name)
        if category:
            check_name(category, "category name")
        validate_skill_md(content, name)
        with self._locked():
            existing = self._find(name)
            if existing is not None:
                where = f" in category '{existing.category}'" if existing.category else ""
                raise SkillError(
                    f"A skill named '{name}' already exists{where}. Names are unique across categories; "
                    "use edit or patch to change it."
                )
            parent = self.root
            if category:
                parent = parent / category
                if os.path.lexists(parent / SKILL_FILE):
                    raise SkillError(f"'{category}' is a skill, not a category.")
                if parent.is_symlink():
                    raise SkillError(f"The category folder '{category}' is a symbolic link; refusing to write into it.")
            folder = parent / name
            if os.path.lexists(folder):
                raise SkillError(f"'{folder.relative_to(self.root)}' already exists and is not a skill.")
            target = folder / SKILL_FILE
            self._write(name, target, content.encode("utf-8"), "create", prov)
            SkillUsage.objects.update_or_create(
                name=name, defaults={"created_by": prov.actor, "views": 0, "uses": 0, "last_used": None}
            )
        return target

    def edit(self, name: str, content: str, *, prov: Provenance | None = None) -> Path:
        validate_skill_md(content, check_name(name))
        with self._locked():
            target = self._writable(name).path / SKILL_FILE
            self._write(name, target, content.encode("utf-8"), "edit", prov or Provenance())
        return target

    def patch(
        self,
        name: str,
        old_string: str,
        new_string: str,
        *,
        file_path: str | None = None,
        replace_all: bool = False,
        prov: Provenance | None = None,
    ) -> Path:
        check_name(name)
        if not isinstance(old_string, str) or not old_string:
            raise SkillError("old_string is required for patch: the exact text to replace.")
        if not isinstance(new_string, str):
            raise SkillError('new_string is required for patch (use "" to delete the text).')
        rel = None if file_path in (None, "", SKILL_FILE) else check_rel_path(file_path, support_only=True)
        with self._locked():
            info = self._writable(name)
            target = info.path / SKILL_FILE if rel is None else self._resolve(info, rel)
            label = SKILL_FILE if rel is None else str(rel)
            if not target.is_file():
                raise SkillError(f"Skill '{name}' has no file '{label}'.")
            try:
                text = target.read_text(encoding="utf-8")
            except UnicodeDecodeError as exc:
                raise SkillError(f"'{label}' is a binary file; it cannot be patched.") from exc
            count = text.count(old_string)
            if count == 0:
                raise SkillError(f"old_string was not found in {label}. Copy it exactly from skill_view.")
            if count > 1 and not replace_all:
                raise SkillError(
                    f"old_string appears {count} times in {label}; include more surrounding text to make it "
                    "unique, or set replace_all to replace every occurrence."
                )
            new_text = text.replace(old_string, new_string, -1 if replace_all else 1)
            if rel is None:
                try:
                    validate_skill_md(new_text, name)
                except SkillError as exc:
                    raise SkillError(f"The patch would break SKILL.md, so it was not applied: {exc}") from exc
            data = new_text.encode("utf-8")
            self._check_size(data, label)
            self._write(name, target, data, "patch", prov or Provenance())
        return target

    def write_file(self, name: str, file_path: str, content: str, *, prov: Provenance | None = None) -> Path:
        check_name(name)
        rel = check_rel_path(file_path, support_only=True)
        if not isinstance(content, str):
            raise SkillError("file_content is required for write_file and must be a string.")
        data = content.encode("utf-8")
        self._check_size(data, str(rel))
        with self._locked():
            target = self._resolve(self._writable(name), rel)
            if target.is_dir():
                raise SkillError(f"'{rel}' is a folder.")
            self._write(name, target, data, "write_file", prov or Provenance())
        return target

    def remove_file(self, name: str, file_path: str, *, prov: Provenance | None = None) -> Path:
        check_name(name)
        rel = check_rel_path(file_path, support_only=True)
        with self._locked():
            info = self._writable(name)
            target = self._resolve(info, rel)
            if not target.is_file():
                raise SkillError(f"Skill '{name}' has no file '{rel}'.")
            self._log(name, "remove_file", prov or Provenance(), target, _snapshot(target), None)
            target.unlink()
            _prune_empty(target.parent, info.path)
        return target

    def delete(self, name: str, *, prov: Provenance | None = None) -> Path:
        """Remove the skill's folder, recording every file so undo can bring it all back."""
        prov = prov or Provenance()
        check_name(name)
        with self._locked():
            info = self._writable(name)
            folder, root = info.path, self.root
            # Belt and braces on top of the name regex: only ever a direct skill folder.
            if folder == root or folder.parent not in (root, root / info.category) or folder.is_symlink():
                raise SkillError(f"Refusing to delete '{folder}': it is not a skill folder.")
            batch = f"[batch {uuid.uuid4().hex[:12]}]"
            files: builtins.list[Path] = []
            links: builtins.list[Path] = []
            for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
                for entry in [*filenames, *dirnames]:
                    p = Path(dirpath, entry)
                    if p.is_symlink():
                        links.append(p)  # removed as a link; its target is never touched
                    elif entry in filenames:
                        files.append(p)
            files.sort(key=lambda p: (p.name != SKILL_FILE, str(p)))
            with transaction.atomic():  # the log first: a failed removal leaves a restorable record
                for p in files:
                    self._log(name, "delete", prov, p, _snapshot(p), None, summary=f"Deleted skill '{name}' {batch}")
            for p in [*links, *files]:
                p.unlink()
            for dirpath, _dirs, _files in sorted(os.walk(folder, followlinks=False), reverse=True):
                os.rmdir(dirpath)
            if info.category:
                _prune_empty(folder.parent, root)
        return folder

    def disable(self, name: str, *, prov: Provenance | None = None) -> Path:
        return self._set_enabled(name, False, prov or Provenance())

    def enable(self, name: str, *, prov: Provenance | None = None) -> Path:
        return self._set_enabled(name, True, prov or Provenance())

    def _set_enabled(self, name: str, enabled: bool, prov: Provenance, undoes: KnowledgeChange | None = None) -> Path:
        with self._locked():
            info = self.get(name)
            # Re-read under the lock so a concurrent settings change or toggle is not overwritten.
            current = hermes_config.load(self.config.home)
            data = copy.deepcopy(current.data)
            disabled = [n for n in data["skills"]["disabled"] if n != name]
            if not enabled:
                disabled.append(name)
            data["skills"]["disabled"] = disabled
            saved = hermes_config.save(current, data)
            self.config = saved if saved.home == self.config.home else hermes_config.load(self.config.home)
            # Named for what it did even when it is an undo, so undoing the undo toggles back.
            changelog.record(
                kind="skill",
                target=name,
                action="enable" if enabled else "disable",
                prov=prov,
                path=str(info.path.relative_to(self.root)),
                before="",
                after="",
                summary=f"{'Enabled' if enabled else 'Disabled'} skill '{name}'",
                undoes=undoes,
            )
        return info.path

    # ----- internals -----------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        # O_NOFOLLOW: a planted symlink at .lock must not make us create or open a file elsewhere.
        try:
            fd = os.open(self.root / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            raise SkillError(f"Cannot open the skills lock file {LOCK_FILE}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the flock

    def _folders(self) -> Iterator[tuple[str, Path]]:
        root = self.root
        tops = sorted(p for p in root.iterdir() if not p.name.startswith(".") and p.is_dir())
        categories = []
        for top in tops:
            if os.path.lexists(top / SKILL_FILE):
                yield "", top
            else:
                categories.append(top)
        for cat in categories:
            for sub in sorted(cat.iterdir()):
                if not sub.name.startswith(".") and sub.is_dir() and os.path.lexists(sub / SKILL_FILE):
                    yield cat.name, sub

    def _load(self, category: str, folder: Path, disabled: set[str]) -> SkillInfo:
        name = folder.name
        info = SkillInfo(name=name, category=category, path=folder, enabled=name not in disabled)
        try:
            self._check_folder(info)
            parsed = validate_skill_md((folder / SKILL_FILE).read_text(encoding="utf-8"), name)
        except SkillError as exc:
            return replace(info, error=str(exc))
        except UnicodeDecodeError:
            return replace(info, error="SKILL.md is not valid UTF-8 text.")
        except OSError as exc:
            return replace(info, error=f"SKILL.md cannot be read: {exc.strerror or exc}")
        return replace(info, description=parsed.description)

    def _check_folder(self, info: SkillInfo) -> None:
        """Raise if a folder is unsafe to read or write (symlinks, names that are not names)."""
        try:
            check_name(info.name, "skill folder name")
            if info.category:
                check_name(info.category, "category folder name")
        except SkillError as exc:
            raise SkillError(f"{exc} Rename the folder on disk.") from exc
        root = self.root
        for p in (info.path.parent, info.path, info.path / SKILL_FILE):
            if p != root and p.is_symlink():
                raise SkillError(f"'{p.relative_to(root)}' is a symbolic link; skills must be real folders and files.")
        if not info.path.resolve().is_relative_to(root):
            raise SkillError(f"'{info.name}' resolves outside the skills folder.")

    def _find(self, name: str) -> SkillInfo | None:
        return next((s for s in self.list() if s.name == name), None)

    def _writable(self, name: str) -> SkillInfo:
        info = self.get(name)
        self._check_folder(info)  # broken content may be fixed; unsafe folders may not be touched
        return info

    def _resolve(self, info: SkillInfo, rel: PurePosixPath) -> Path:
        target = info.path.joinpath(*rel.parts)
        current = info.path
        for part in rel.parts:
            current = current / part
            if current.is_symlink():
                raise SkillError(f"'{rel}' goes through a symbolic link; refusing to follow it.")
        if not target.resolve().is_relative_to(info.path.resolve()):
            raise SkillError(f"'{rel}' is outside the skill's folder.")
        return target

    @staticmethod
    def _check_size(data: bytes, label: str) -> None:
        if len(data) > MAX_FILE_BYTES:
            raise SkillError(f"'{label}' is {len(data):,} bytes; supporting files are limited to {MAX_FILE_BYTES:,}.")

    def _write(self, name: str, target: Path, data: bytes, action: str, prov: Provenance) -> KnowledgeChange:
        before = _snapshot(target)
        _write_skill_file(target, data)
        return self._log(name, action, prov, target, before, data.decode("utf-8", errors="replace"))

    def _log(
        self,
        name: str,
        action: str,
        prov: Provenance,
        target: Path,
        before: _Snap,
        after: str | None,
        *,
        summary: str = "",
        undoes: KnowledgeChange | None = None,
    ) -> KnowledgeChange:
        rel = target.relative_to(self.root).as_posix()
        summary = summary or f"{action} {rel}"
        if before.is_b64:
            summary = f"{summary} {BASE64_MARK}"
        return changelog.record(
            kind="skill",
            target=name,
            action=action,
            prov=prov,
            path=rel,
            before=before.text,
            after=after or "",
            existed_before=before.exists,
            exists_after=after is not None,
            summary=summary,
            undoes=undoes,
        )

    # ----- undo ----------------------------------------------------------------------------

    def restore(self, change: KnowledgeChange, prov: Provenance) -> KnowledgeChange | None:
        """Put a change's `before` back; undoing one file of a delete restores the whole folder."""
        if change.action in ("disable", "enable"):
            self._set_enabled(change.target, change.action == "disable", prov, undoes=change)
            return KnowledgeChange.objects.filter(undoes=change).order_by("-id").first()
        changes = [change]
        if change.action == "delete" and "[batch " in change.summary:
            batch = change.summary[change.summary.index("[batch ") :].split("]")[0]
            changes = list(
                KnowledgeChange.objects.filter(
                    kind="skill", target=change.target, action="delete", summary__contains=batch
                ).order_by("id")
            )
        with self._locked():
            results = {c.pk: self._restore_file(c, prov) for c in changes}
        return results.get(change.pk) or next((r for r in results.values() if r is not None), None)

    def _restore_file(self, change: KnowledgeChange, prov: Provenance) -> KnowledgeChange | None:
        root = self.root
        try:
            rel = check_rel_path(change.path, support_only=False)
        except SkillError as exc:
            raise changelog.UndoError(f"Cannot undo: {exc}") from exc
        target = root.joinpath(*rel.parts)
        current = root
        for part in rel.parts:
            current = current / part
            if current.is_symlink():
                raise changelog.UndoError(f"Cannot undo: '{change.path}' goes through a symbolic link.")
        if not target.resolve().is_relative_to(root):
            raise changelog.UndoError(f"Cannot undo: '{change.path}' is outside the skills folder.")
        now = _snapshot(target)
        if not change.existed_before:
            if not now.exists:
                return None  # already gone: nothing to undo
            target.unlink()
            _prune_empty(target.parent, root)
            return self._log(change.target, "undo", prov, target, now, None, undoes=change)
        wanted = _Snap(exists=True, text=change.before, is_b64=BASE64_MARK in change.summary).raw()
        if now.exists and now.raw() == wanted:
            return None  # already as it was (e.g. the rest of a delete batch restored it)
        if target.name == SKILL_FILE and not now.exists:
            other = self._find(change.target)
            if other is not None and other.path != target.parent:
                raise changelog.UndoError(f"Cannot undo: a skill named '{change.target}' exists again elsewhere.")
        _write_skill_file(target, wanted)
        return self._log(change.target, "undo", prov, target, now, wanted.decode("utf-8", "replace"), undoes=change)


def render_index(store: SkillStore | None = None) -> str:
    return (store or SkillStore()).render_index()


def _restore(change: KnowledgeChange, prov: Provenance) -> KnowledgeChange | None:
    return SkillStore(hermes_config.get()).restore(change, prov)


changelog.register_restorer("skill", _restore)
