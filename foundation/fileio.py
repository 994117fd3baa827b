"""Durable file writes shared by the knowledge stores.

A write goes to a temp file in the same folder, is fsynced, then atomically replaces the
target, and the folder is fsynced so the rename itself survives a crash. A reader (or a writer
killed with SIGKILL) therefore only ever sees the old file or the new one, never a mix.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, content: str | bytes, *, mode: int | None = None, through_link: bool = False) -> None:
    """Replace `path` with `content` atomically. `mode` None keeps mkstemp's private 0600.

    `through_link`: when `path` is a symbolic link (a dotfiles set-up), replace the file it
    points to and keep the link, as Hermes does; otherwise the link itself is replaced.
    """
    if through_link and path.is_symlink():
        path = Path(os.path.realpath(path))
    data = content.encode("utf-8") if isinstance(content, str) else content
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        # A failed or interrupted write must not leave temp files behind; the target is intact.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def create_private(path: Path, content: str | bytes = b"") -> bool:
    """Create `path` with `content`, readable and writable by its owner only (0600).

    The content goes to a temp file that mkstemp creates 0600 (the mode is given to the system
    call that creates it, so no umask widens it and it is never briefly readable by others),
    which is then hard-linked into place: another process sees no file or the whole file, and of
    two processes creating the same file one wins and the other keeps its content. False when
    `path` already existed (it is left as it is).
    """
    data = content.encode("utf-8") if isinstance(content, str) else content
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o600)  # mkstemp's mode, stated outright
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    fsync_dir(path.parent)
    return True


def exposed(paths: list[Path]) -> list[Path]:
    """The paths (those that exist) that a group or other local accounts can read or enter."""
    out = []
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            if path.lstat().st_mode & 0o077:
                out.append(path)
    return out


def fsync_dir(folder: Path) -> None:
    # Makes a rename or unlink durable; without it a power cut can bring the old entry back.
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
