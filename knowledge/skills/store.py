"""The skill store (docs/BEHAVIOUR.md, Skills): HERMES_HOME/skills/[<category>/]<name>/SKILL.md and its files.

Files are the source of truth; this is the only code that writes them. Every mutation runs
under an flock on skills/.lock (shared with other processes using the same home), writes
atomically, and records one change-log entry per file it touched so the dashboard can show
a diff and undo it. Paths are checked twice: textually (skill_format.check_rel_path) and on
disk (no symlinked component, resolved path inside the skill's folder).
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import os
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path, PurePosixPath

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from foundation import config as hermes_config
from knowledge import changelog
from knowledge.models import KnowledgeChange, SkillUsage
from knowledge.provenance import Provenance
from knowledge.skills.files import (
    SkillInfo,
    Snap,
    check_folder,
    load_skill,
    prune_empty,
    safe_join,
    shown_text,
    skill_folders,
    snapshot,
    supporting_files,
    write_skill_file,
)
from knowledge.skills.format import (
    SKILL_FILE,
    SkillError,
    check_category,
    check_file_size,
    check_name,
    check_rel_path,
    one_line,
    parse_skill_md,
    validate_existing,
)
from knowledge.skills.threats import check_text, check_write, file_context

__all__ = ["SkillError", "SkillInfo", "SkillStore"]

LOCK_FILE = ".lock"
INDEX_INSTRUCTION = (
    "Before acting on a request, check this list. If a skill matches the task, load it with "
    "skill_view(name) first and follow it. If a skill you followed proved wrong or incomplete, "
    'fix it with skill_manage(action="patch") so it is right next time.'
)


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
        return set(self.config.skills.disabled)

    def list(self) -> builtins.list[SkillInfo]:
        """Every skill folder, uncategorised first; broken ones carry their error."""
        disabled = self.disabled_names()
        seen: dict[str, SkillInfo] = {}
        found: builtins.list[SkillInfo] = []
        for category, folder in skill_folders(self.root):
            info = load_skill(self.root, category, folder, disabled)
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
        """The skill listed as `name`, else the one whose folder is `name`: as Hermes, whose tools
        find a skill by its folder and whose skill_view takes either name."""
        check_name(name)
        listed = self.list()
        for info in listed:
            if info.name == name:
                return info
        for info in listed:
            if info.path.name == name:
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
        return [rel for rel, _ in supporting_files(self.get(name).path)]

    def file_sizes(self, name: str) -> builtins.list[tuple[str, int]]:
        """(relative path, bytes) of every supporting file, for the skill page."""
        return [(rel, path.lstat().st_size) for rel, path in supporting_files(self.get(name).path)]

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

    def create(
        self, name: str, content: str, *, category: str = "", prov: Provenance | None = None, lenient: bool = False
    ) -> Path:
        """A new skill in the folder `name`; `lenient` (imports) accepts what Hermes lists with a warning.

        As Hermes creates one: a frontmatter name other than `name` is accepted; the folder is
        `name` and the skill is listed and invoked by its frontmatter name (as every skill placed
        in the home is, `read_placed_skill`), and the tools find it by either."""
        prov = prov or Provenance()
        check_name(name)
        check_category(category)
        listed = parse_skill_md(content, lenient=lenient).name
        check_text(f"the skill name '{name}'", f"{category} {name} {listed}")
        with self.locked():
            for wanted in dict.fromkeys((name, listed)):
                existing = self.find(wanted) or self.find_folder(wanted)
                if existing is not None:
                    where = f" in category '{existing.category}'" if existing.category else ""
                    raise SkillError(
                        f"A skill named '{wanted}' already exists{where}. Names are unique across categories; "
                        "use edit or patch to change it."
                    )
            parent = self.root
            for part in category.split("/") if category else ():
                parent = parent / part
                if os.path.lexists(parent / SKILL_FILE):
                    raise SkillError(f"'{parent.relative_to(self.root)}' is a skill, not a category.")
                if parent.is_symlink():
                    raise SkillError(f"The category folder '{category}' is a symbolic link; refusing to write into it.")
            folder = parent / name
            if os.path.lexists(folder):
                raise SkillError(f"'{folder.relative_to(self.root)}' already exists and is not a skill.")
            target = folder / SKILL_FILE
            self._write(name, target, content.encode("utf-8"), "create", prov)
            SkillUsage.objects.update_or_create(
                name=listed, defaults={"created_by": prov.actor, "views": 0, "uses": 0, "last_used": None}
            )
        return target

    def check_edit(self, name: str, content: str) -> SkillInfo:
        """The checks `edit` makes of a new SKILL.md, without writing (a form runs them first)."""
        check_name(name)
        info = self._writable(name)
        validate_existing(content, info.name, info.path.name, lenient=bool(info.warning))
        return info

    def edit(self, name: str, content: str, *, prov: Provenance | None = None) -> Path:
        with self.locked():
            info = self.check_edit(name, content)
            target = info.path / SKILL_FILE
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
        with self.locked():
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
                    # A skill listed over a limit (imported from Hermes) can still be patched.
                    validate_existing(new_text, info.name, info.path.name, lenient=bool(info.warning))
                except SkillError as exc:
                    raise SkillError(f"The patch would break SKILL.md, so it was not applied: {exc}") from exc
            data = new_text.encode("utf-8")
            check_file_size(len(data), label)
            self._write(name, target, data, "patch", prov or Provenance())
        return target

    def write_file(self, name: str, file_path: str, content: str, *, prov: Provenance | None = None) -> Path:
        if not isinstance(content, str):
            raise SkillError("file_content is required for write_file and must be a string.")
        return self.write_bytes(name, file_path, content.encode("utf-8"), prov=prov)

    def write_bytes(self, name: str, file_path: str, data: bytes, *, prov: Provenance | None = None) -> Path:
        """Any file of a skill's folder but SKILL.md (LICENSE.txt, fonts, binaries), size-capped."""
        check_name(name)
        rel = check_rel_path(file_path, support_only=True)
        check_file_size(len(data), str(rel))
        with self.locked():
            target = self._resolve(self._writable(name), rel)
            if target.is_dir():
                raise SkillError(f"'{rel}' is a folder.")
            self._write(name, target, data, "write_file", prov or Provenance())
        return target

    def remove_file(self, name: str, file_path: str, *, prov: Provenance | None = None) -> Path:
        check_name(name)
        rel = check_rel_path(file_path, support_only=True)
        with self.locked():
            info = self._writable(name)
            target = self._resolve(info, rel)
            if not target.is_file():
                raise SkillError(f"Skill '{name}' has no file '{rel}'.")
            self.record_change(name, "remove_file", prov or Provenance(), target, snapshot(target), None)
            target.unlink()
            prune_empty(target.parent, info.path)
        return target

    def delete(self, name: str, *, prov: Provenance | None = None) -> Path:
        """Remove the skill's folder, recording every file so undo can bring it all back."""
        prov = prov or Provenance()
        check_name(name)
        with self.locked():
            info = self._writable(name)
            folder, root = info.path, self.root
            # Belt and braces on top of the name regex: only ever a direct skill folder.
            if folder == root or folder.parent not in (root, root / info.category) or folder.is_symlink():
                raise SkillError(f"Refusing to delete '{folder}': it is not a skill folder.")
            batch = uuid.uuid4().hex[:12]  # the files of one delete are undone together
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
                    self.record_change(
                        name, "delete", prov, p, snapshot(p), None, summary=f"Deleted skill '{name}'", batch=batch
                    )
            for p in [*links, *files]:
                p.unlink()
            for dirpath, _dirs, _files in sorted(os.walk(folder, followlinks=False), reverse=True):
                os.rmdir(dirpath)
            if info.category:
                prune_empty(folder.parent, root)
        return folder

    def disable(self, name: str, *, prov: Provenance | None = None) -> Path:
        return self.set_enabled(name, False, prov or Provenance())

    def enable(self, name: str, *, prov: Provenance | None = None) -> Path:
        return self.set_enabled(name, True, prov or Provenance())

    def set_enabled(self, name: str, enabled: bool, prov: Provenance, undoes: KnowledgeChange | None = None) -> Path:
        with self.locked():
            info = self.get(name)
            # Re-read under the lock so a concurrent settings change or toggle is not overwritten;
            # save_changes touches only skills.disabled and keeps the rest of the file (Hermes' keys).
            current = hermes_config.load(self.config.home)
            disabled = [n for n in current.skills.disabled if n != name]
            if not enabled:
                disabled.append(name)
            self.config = hermes_config.save_changes({"skills.disabled": disabled}, self.config.home)
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
    def locked(self) -> Iterator[None]:
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

    def find(self, name: str) -> SkillInfo | None:
        return next((s for s in self.list() if s.name == name), None)

    def find_folder(self, folder_name: str) -> SkillInfo | None:
        """The skill whose folder is named `folder_name` (listed by another name in its frontmatter)."""
        return next((s for s in self.list() if s.path.name == folder_name), None)

    def _writable(self, name: str) -> SkillInfo:
        info = self.get(name)
        check_folder(info, self.root)  # broken content may be fixed; unsafe folders may not be touched
        return info

    def _resolve(self, info: SkillInfo, rel: PurePosixPath) -> Path:
        return safe_join(info.path, rel, "the skill's folder")

    def _write(self, name: str, target: Path, data: bytes, action: str, prov: Provenance) -> KnowledgeChange:
        rel, subject = file_context(self.root, target, name, data)  # nothing is written on a hit
        check_write(target.relative_to(self.root).as_posix(), data, rel, subject)
        before = snapshot(target)
        write_skill_file(target, data)
        return self.record_change(name, action, prov, target, before, shown_text(data))

    def record_change(
        self,
        name: str,
        action: str,
        prov: Provenance,
        target: Path,
        before: Snap,
        after: str | None,
        *,
        summary: str = "",
        batch: str = "",
        undoes: KnowledgeChange | None = None,
    ) -> KnowledgeChange:
        """Record one file's change in the change log (undo records its own through here too)."""
        rel = target.relative_to(self.root).as_posix()
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
            summary=summary or f"{action} {rel}",
            batch=batch,
            binary=before.is_b64,
            undoes=undoes,
        )
