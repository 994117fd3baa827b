"""Unpacking archives that people upload, defensively.

Members are written one by one under a fresh folder, refusing absolute paths, `..`, links and
special files (zip-slip), with caps on member count and on the bytes actually written (a zip's
declared sizes can lie).
"""

from __future__ import annotations

import stat
import tarfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO

_CHUNK = 64 * 1024


class ArchiveError(Exception):
    """An archive that is refused; the message says why, for the person who sent it."""


def _safe_member_path(name: str) -> PurePosixPath:
    if "\x00" in name or "\\" in name:
        raise ArchiveError(f"Archive member {name!r} has a NUL or backslash in its name; refusing the archive.")
    path = PurePosixPath(name)
    if path.is_absolute() or name.startswith("/") or any(p == ".." for p in path.parts):
        raise ArchiveError(f"Archive member {name!r} points outside the archive (zip-slip); refusing the archive.")
    parts = [p for p in path.parts if p not in ("", ".")]
    return PurePosixPath(*parts) if parts else PurePosixPath(".")


class _Budget:
    def __init__(self, max_bytes: int, max_members: int) -> None:
        self.bytes_left = max_bytes
        self.members_left = max_members
        self.max_members = max_members
        self.max_bytes = max_bytes

    def member(self) -> None:
        self.members_left -= 1
        if self.members_left < 0:
            raise ArchiveError(f"The archive has more than {self.max_members} members; refusing it.")

    def copy(self, src: IO[bytes], dest: Path) -> None:
        dest.parent.mkdir(parents=True, exist_ok=True)
        with dest.open("xb") as out:  # "x": never overwrite or follow something already there
            while chunk := src.read(_CHUNK):
                self.bytes_left -= len(chunk)
                if self.bytes_left < 0:
                    mb = self.max_bytes // (1024 * 1024)
                    raise ArchiveError(f"The archive unpacks to more than {mb} MB; refusing it.")
                out.write(chunk)


def _extract_zip(fh: IO[bytes], dest: Path, budget: _Budget) -> None:
    with zipfile.ZipFile(fh) as zf:
        for info in zf.infolist():
            budget.member()
            rel = _safe_member_path(info.filename)
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise ArchiveError(f"Archive member {info.filename!r} is a symbolic link; refusing the archive.")
            if info.is_dir() or rel == PurePosixPath("."):
                (dest / rel).mkdir(parents=True, exist_ok=True)
                continue
            with zf.open(info) as src:
                budget.copy(src, dest / rel)


def _extract_tar(fh: IO[bytes], dest: Path, budget: _Budget) -> None:
    with tarfile.open(fileobj=fh, mode="r:*") as tf:
        for member in tf:
            budget.member()
            rel = _safe_member_path(member.name)
            if member.issym() or member.islnk():
                raise ArchiveError(f"Archive member {member.name!r} is a link; refusing the archive.")
            if member.isdir():
                (dest / rel).mkdir(parents=True, exist_ok=True)
                continue
            if not member.isfile():
                raise ArchiveError(f"Archive member {member.name!r} is not a regular file; refusing the archive.")
            src = tf.extractfile(member)
            if src is None:
                raise ArchiveError(f"Archive member {member.name!r} cannot be read.")
            with src:
                budget.copy(src, dest / rel)


def unpack(fh: IO[bytes], dest: Path, *, max_bytes: int, max_members: int) -> None:
    """Unpack a .zip or .tar(.gz) into `dest`, or raise ArchiveError."""
    budget = _Budget(max_bytes, max_members)
    try:
        fh.seek(0)
        if zipfile.is_zipfile(fh):
            fh.seek(0)
            _extract_zip(fh, dest, budget)
        else:
            fh.seek(0)
            _extract_tar(fh, dest, budget)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError) as exc:
        raise ArchiveError(f"This is not a readable .zip or .tar.gz archive ({exc}).") from exc
    except FileExistsError as exc:
        raise ArchiveError(f"The archive lists {exc.filename!r} twice; refusing it.") from exc
