"""The skills folder on disk, for the skill store: finding skill folders and checking they are
safe, snapshots for the change log, durable writes, path joins that never follow a symbolic
link out of a folder, and pruning empty folders."""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from foundation.fileio import atomic_write
from knowledge.skills.format import MAX_SKILL_DEPTH, SKILL_FILE, SkillError, check_name, read_placed_skill
from knowledge.skills.threats import folder_threat

# Marks a change whose `before` holds base64 (a binary supporting file) rather than text.


@dataclass(frozen=True)
class Snap:
    """A file's content before a change: text, or base64 when it is not UTF-8."""

    exists: bool
    text: str = ""
    is_b64: bool = False

    def raw(self) -> bytes:
        return base64.b64decode(self.text) if self.is_b64 else self.text.encode("utf-8")


def shown_text(data: bytes) -> str:
    """What the change log shows of written content: the text, or a note for a binary file
    (undo needs only `before`, which keeps the bytes)."""
    if b"\x00" not in data:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return f"[binary file, {len(data):,} bytes]"


def snapshot(path: Path) -> Snap:
    if not path.is_file():
        return Snap(exists=False)
    data = path.read_bytes()
    # NUL is valid UTF-8 but not storable in PostgreSQL text: such a file is kept as binary.
    if b"\x00" not in data:
        try:
            return Snap(exists=True, text=data.decode("utf-8"))
        except UnicodeDecodeError:
            pass
    return Snap(exists=True, text=base64.b64encode(data).decode("ascii"), is_b64=True)


def write_skill_file(path: Path, data: bytes) -> None:
    atomic_write(path, data, mode=0o644)  # skills are meant to be read by people


def prune_empty(start: Path, stop: Path) -> None:
    """Remove empty folders from `start` up to (not including) `stop`."""
    current = start
    while current != stop and current.is_relative_to(stop) and not current.is_symlink():
        try:
            current.rmdir()
        except OSError:
            return  # not empty (or already gone): the rest of the tree is in use
        current = current.parent


def safe_join(base: Path, rel: PurePosixPath, where: str) -> Path:
    """`base`/`rel`, refusing any symbolic link on the way and any result outside `base`."""
    target = base.joinpath(*rel.parts)
    current = base
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            raise SkillError(f"'{rel}' goes through a symbolic link; refusing to follow it.")
    if not target.resolve().is_relative_to(base.resolve()):
        raise SkillError(f"'{rel}' is outside {where}.")
    return target


@dataclass(frozen=True)
class SkillInfo:
    """One skill folder as listed. `error` is set (and the skill unused) when it is broken."""

    name: str
    category: str
    path: Path
    description: str = ""
    enabled: bool = True
    error: str = ""
    warning: str = ""  # a limit the skill breaks but is still used with, as Hermes lists it

    @property
    def broken(self) -> bool:
        return bool(self.error)

    @property
    def usable(self) -> bool:
        return self.enabled and not self.error


MAX_SCANNED_FOLDERS = 10_000


def skill_folders(root: Path) -> Iterator[tuple[str, Path]]:
    """(category, folder) of every folder holding a SKILL.md, shallowest first, each depth sorted.

    The category is the path of the folders above the skill ("mlops/inference"). A skill's own
    folder is not searched further (its subfolders are its files); hidden folders are skipped and
    symbolic links are listed (to be flagged) but never followed.
    """
    level = [root]
    scanned = 0
    for _depth in range(MAX_SKILL_DEPTH):
        below: list[Path] = []
        for parent in level:
            for sub in sorted(p for p in parent.iterdir() if not p.name.startswith(".") and p.is_dir()):
                scanned += 1
                if scanned > MAX_SCANNED_FOLDERS:
                    return
                if os.path.lexists(sub / SKILL_FILE):
                    yield ("" if parent == root else parent.relative_to(root).as_posix()), sub
                elif not sub.is_symlink():
                    below.append(sub)
        level = below


def load_skill(root: Path, category: str, folder: Path, disabled: set[str]) -> SkillInfo:
    name = folder.name
    info = SkillInfo(name=name, category=category, path=folder, enabled=name not in disabled)
    try:
        check_folder(info, root)
        # As Hermes lists them: an over-long description is truncated, not hidden; the frontmatter
        # name is the skill's name; a file without frontmatter is used with its folder's name.
        parsed = read_placed_skill((folder / SKILL_FILE).read_text(encoding="utf-8"), name)
    except SkillError as exc:
        return replace(info, error=str(exc))
    except UnicodeDecodeError:
        return replace(info, error="SKILL.md is not valid UTF-8 text.")
    except OSError as exc:
        return replace(info, error=f"SKILL.md cannot be read: {exc.strerror or exc}")
    # What the model would read (name, SKILL.md, text files) is scanned as it is listed: a hit
    # keeps the skill out of the index and skill_view, and the skills page shows why.
    threat = folder_threat(
        parsed.name, category, [(SKILL_FILE, folder / SKILL_FILE), *supporting_files(folder)], parsed.description
    )
    return replace(
        info, name=parsed.name, description=parsed.description, warning=" ".join(parsed.warnings), error=threat
    )


def check_folder(info: SkillInfo, root: Path) -> None:
    """Raise if a folder is unsafe to read or write (symlinks, names that are not names)."""
    try:
        check_name(info.name, "skill folder name")
        for part in info.category.split("/") if info.category else ():
            check_name(part, "category folder name")
    except SkillError as exc:
        raise SkillError(f"{exc} Rename the folder on disk.") from exc
    above = [info.path.parents[i] for i in range(len(info.path.relative_to(root).parts) - 1)]
    for p in (*above, info.path, info.path / SKILL_FILE):
        if p != root and p.is_symlink():
            raise SkillError(f"'{p.relative_to(root)}' is a symbolic link; skills must be real folders and files.")
    if not info.path.resolve().is_relative_to(root):
        raise SkillError(f"'{info.name}' resolves outside the skills folder.")


def supporting_files(folder: Path) -> Iterator[tuple[str, Path]]:
    """(path relative to the skill folder, path) of every file but SKILL.md, hidden ones included
    (so the skill page shows everything the model could read); folder links not followed."""
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames.sort()
        for fn in sorted(filenames):
            path = Path(dirpath, fn)
            rel = path.relative_to(folder).as_posix()
            if rel != SKILL_FILE:
                yield rel, path
