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


def fsync_dir(folder: Path) -> None:
    # Makes a rename or unlink durable; without it a power cut can bring the old entry back.
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
