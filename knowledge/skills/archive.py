"""Archived skills (docs/BEHAVIOUR.md, Curator): a skill's folder moved whole into
skills/.archive/<name>/, Hermes Agent's layout. The skill listing skips hidden folders, so an
archived skill is out of the prompt, the tools and the slash menu, and its files stay on disk
until the person restores it.

A move is one change-log entry (action "archive" or "restore", `before` and `after` the folder's
path before and after), so the change history shows it and undo moves it back. Moves run under
the skill store's lock, like every other write to the skills folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from django.utils import timezone

from knowledge import changelog
from knowledge.models import KnowledgeChange, SkillUsage
from knowledge.provenance import Provenance
from knowledge.skills.files import check_folder, prune_empty
from knowledge.skills.format import SKILL_FILE, SkillError, check_category, check_name, read_placed_skill
from knowledge.skills.store import SkillStore

ARCHIVE_DIR = ".archive"


@dataclass(frozen=True)
class Archived:
    """One folder of skills/.archive/ as the skills page lists it."""

    folder: str  # the folder's name inside .archive (the skill's name, or name-2 after a clash)
    name: str
    description: str
    archived_at: datetime | None
    was: str  # where it lived: "category/name" or "name"


def archive_root(store: SkillStore) -> Path:
    return store.root / ARCHIVE_DIR


def _moved_from(folder: str) -> str:
    """The path the archived folder came from, as its archive change recorded it."""
    last = (
        KnowledgeChange.objects.filter(kind="skill", action="archive", after=f"{ARCHIVE_DIR}/{folder}")
        .order_by("-id")
        .first()
    )
    return last.before if last is not None else ""


def archived(store: SkillStore) -> list[Archived]:
    """Every folder holding a SKILL.md in skills/.archive/, by name (symbolic links left out)."""
    root = archive_root(store)
    if not root.is_dir() or root.is_symlink():
        return []
    found = []
    for sub in sorted(root.iterdir()):
        if sub.is_symlink() or not sub.is_dir() or not (sub / SKILL_FILE).is_file():
            continue
        try:
            parsed = read_placed_skill((sub / SKILL_FILE).read_text(encoding="utf-8"), sub.name)
            name, description = parsed.name, parsed.description
        except (SkillError, UnicodeDecodeError, OSError):
            name, description = sub.name, ""  # listed all the same: restoring it shows what is wrong
        usage = SkillUsage.objects.filter(name=name).first()
        found.append(Archived(sub.name, name, description, usage.archived_at if usage else None, _moved_from(sub.name)))
    return found


def archive(
    store: SkillStore, name: str, prov: Provenance, *, why: str = "", undoes: KnowledgeChange | None = None
) -> KnowledgeChange:
    """Move the skill's folder into skills/.archive/ and record it; SkillError when it cannot."""
    check_name(name)
    with store.locked():
        info = store.get(name)
        root = store.root
        check_folder(info, root)
        folder = info.path
        if folder.parent not in (root, root / info.category):
            raise SkillError(f"Refusing to archive '{folder}': it is not a skill folder.")
        target_root = archive_root(store)
        if target_root.is_symlink():
            raise SkillError(f"'{ARCHIVE_DIR}' is a symbolic link; refusing to move skills into it.")
        target_root.mkdir(exist_ok=True)
        dest, n = target_root / folder.name, 1
        while os.path.lexists(dest):  # an earlier skill of the same name is archived already
            n += 1
            dest = target_root / f"{folder.name}-{n}"
        was = folder.relative_to(root).as_posix()
        os.rename(folder, dest)
        if info.category:
            prune_empty(folder.parent, root)
        now = timezone.now()
        SkillUsage.objects.update_or_create(name=name, defaults={"archived_at": now})
        return changelog.record(
            kind="skill",
            target=name,
            action="archive",
            prov=prov,
            path=was,
            before=was,
            after=dest.relative_to(root).as_posix(),
            summary=f"Archived skill '{name}'" + (f": {why}" if why else ""),
            undoes=undoes,
        )


def restore(
    store: SkillStore, folder: str, prov: Provenance, *, undoes: KnowledgeChange | None = None
) -> KnowledgeChange:
    """Move skills/.archive/<folder> back where it was archived from (the top level when nothing
    recorded it, e.g. Hermes Agent archived it) and record it; SkillError when it cannot."""
    check_name(folder, "archived folder name")
    with store.locked():
        root = store.root
        source = archive_root(store) / folder
        if source.is_symlink() or not (source / SKILL_FILE).is_file():
            raise SkillError(f"There is no archived skill '{folder}'.")
        try:
            name = read_placed_skill((source / SKILL_FILE).read_text(encoding="utf-8"), folder).name
        except (SkillError, UnicodeDecodeError, OSError):
            name = folder
        was = _moved_from(folder) or name
        category, _, base = was.rpartition("/")
        check_category(category)
        check_name(base, "skill folder name")
        if store.find(name) is not None:
            raise SkillError(f"A skill named '{name}' exists again; rename or delete it before restoring this one.")
        dest = root / was
        if os.path.lexists(dest):
            raise SkillError(f"'{was}' already exists in the skills folder; move it away before restoring.")
        parent = root
        for part in category.split("/") if category else ():
            parent = parent / part
            if parent.is_symlink() or os.path.lexists(parent / SKILL_FILE):
                raise SkillError(f"'{parent.relative_to(root)}' is not a category folder; cannot restore into it.")
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.rename(source, dest)
        SkillUsage.objects.filter(name=name).update(archived_at=None)
        return changelog.record(
            kind="skill",
            target=name,
            action="restore",
            prov=prov,
            path=was,
            before=f"{ARCHIVE_DIR}/{folder}",
            after=was,
            summary=f"Restored skill '{name}' from the archive",
            undoes=undoes,
        )


def undo_move(store: SkillStore, change: KnowledgeChange, prov: Provenance) -> KnowledgeChange | None:
    """Undo an archive (restore it) or a restore (archive it again); recorded as undoing `change`.
    None when the skill is already where the undo would put it (restored, or archived, since)."""
    try:
        if change.action == "archive":
            folder = change.after.removeprefix(f"{ARCHIVE_DIR}/")
            if not (archive_root(store) / folder).exists() and store.find(change.target) is not None:
                return None
            return restore(store, folder, prov, undoes=change)
        if store.find(change.target) is None:
            return None
        return archive(store, change.target, prov, undoes=change)
    except SkillError as exc:
        raise changelog.UndoError(f"Cannot undo: {exc}") from exc
