"""Unpacking archives that people upload, defensively.

Members are written one by one under a fresh folder, refusing absolute paths, `..`, links and
special files (zip-slip), with caps on member count and on the bytes actually written (a zip's
declared sizes can lie).

A zip is first judged by its central directory, read with `struct` record by record before
`zipfile` sees it: a count of entries over the cap (from the end record, or found while walking,
since the end record's count can lie) or declared sizes adding up past the cap refuse it before a
single member is read, and without building an object per entry.

Tar archives are decompressed here and read as a stream through `_CountingReader`, so every
decompressed byte counts against the cap, tar headers included: a small .tar.gz holding a 1 GiB
GNU long-name or pax header is refused after reading at most the cap, without ever asking for
the whole header at once. Extended headers are capped at MAX_HEADER_BYTES and names at
MAX_NAME_BYTES; messages quote at most a line of a member's name.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import stat
import struct
import tarfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO, cast

_CHUNK = 64 * 1024
MAX_HEADER_BYTES = 64 * 1024  # a GNU long name / pax header; real ones are a few hundred bytes
MAX_NAME_BYTES = 4096  # PATH_MAX on Linux
MAX_SEGMENT_BYTES = 255  # NAME_MAX: longer folder or file names cannot be created
_SHOWN_NAME_CHARS = 80


class ArchiveError(Exception):
    """An archive that is refused; the message says why, for the person who sent it."""


def shown(name: str) -> str:
    """A member name as quoted in a message or a log line: one line, at most 80 characters."""
    flat = repr(name)[1:-1]
    if len(flat) <= _SHOWN_NAME_CHARS:
        return f"'{flat}'"
    return f"'{flat[:_SHOWN_NAME_CHARS]}…' ({len(name.encode('utf-8', 'replace')):,} bytes)"


def _safe_member_path(name: str) -> PurePosixPath:
    if len(name.encode("utf-8", "replace")) > MAX_NAME_BYTES:
        raise ArchiveError(f"Archive member {shown(name)} has a name longer than {MAX_NAME_BYTES:,} bytes.")
    if "\x00" in name or "\\" in name:
        raise ArchiveError(f"Archive member {shown(name)} has a NUL or backslash in its name; refusing the archive.")
    path = PurePosixPath(name)
    if path.is_absolute() or name.startswith("/") or any(p == ".." for p in path.parts):
        raise ArchiveError(f"Archive member {shown(name)} points outside the archive (zip-slip); refusing the archive.")
    long = next((p for p in path.parts if len(p.encode("utf-8", "replace")) > MAX_SEGMENT_BYTES), None)
    if long is not None:
        size = len(long.encode("utf-8", "replace"))
        raise ArchiveError(
            f"Archive member {shown(name)} has a folder or file name of {size:,} bytes; "
            f"names longer than {MAX_SEGMENT_BYTES} bytes cannot be stored."
        )
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

    def spend(self, n: int) -> None:
        self.bytes_left -= n
        if self.bytes_left < 0:
            mb = self.max_bytes // (1024 * 1024)
            raise ArchiveError(f"The archive unpacks to more than {mb} MB; refusing it.")

    def copy(self, src: IO[bytes], dest: Path) -> None:
        """Write a member, counting its bytes (zip: the stream is not counted elsewhere)."""
        self._write(src, dest, count=True)

    def write(self, src: IO[bytes], dest: Path) -> None:
        """Write a tar member whose bytes the counting stream has already counted."""
        self._write(src, dest, count=False)

    def _write(self, src: IO[bytes], dest: Path, count: bool) -> None:
        dest.parent.mkdir(parents=True, exist_ok=True)
        with dest.open("xb") as out:  # "x": never overwrite or follow something already there
            while chunk := src.read(_CHUNK):
                if count:
                    self.spend(len(chunk))
                out.write(chunk)


# The records of a zip's directory (PKWARE APPNOTE.TXT 4.3.12-4.3.16), little-endian.
_END = struct.Struct("<4s4H2LH")  # end of central directory, then a comment of up to 64 KiB
_END_SIGNATURE = b"PK\x05\x06"
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_END = struct.Struct("<4sQ2H2L4Q")
_ENTRY = struct.Struct("<4s4B4HL2L5H2L")  # one central directory entry, then name, extra, comment
_ENTRY_SIGNATURE = b"PK\x01\x02"
_UNREADABLE_ZIP = "This is not a readable .zip archive (its central directory is damaged)."


def _size(n: int) -> str:
    return f"{n:,} bytes" if n < 1024 * 1024 else f"{n / (1024 * 1024):,.0f} MB"


def _too_many(budget: _Budget, listed: int | None) -> ArchiveError:
    if listed is None:  # found while walking: the end record's count was wrong
        return ArchiveError(f"The archive has more than {budget.max_members:,} members; refusing it.")
    return ArchiveError(
        f"The archive lists {listed:,} members, more than the {budget.max_members:,} accepted; refusing it."
    )


def _directory_place(fh: IO[bytes]) -> tuple[int, int, int]:
    """(entries listed, directory size, directory start) from the zip's end records."""
    fh.seek(0, io.SEEK_END)
    size = fh.tell()
    tail_at = max(0, size - _END.size - 0xFFFF)
    fh.seek(tail_at)
    tail = fh.read()
    at = tail.rfind(_END_SIGNATURE)
    if at < 0 or len(tail) - at < _END.size:
        raise ArchiveError(_UNREADABLE_ZIP)
    entries, directory_size = _END.unpack_from(tail, at)[4:6]
    end_at = tail_at + at
    start = end_at - directory_size
    locator_at = end_at - _ZIP64_LOCATOR.size
    if locator_at >= 0:
        # As zipfile does: a zip64 locator before the end record means the zip64 record's numbers count.
        fh.seek(locator_at)
        if fh.read(4) == b"PK\x06\x07":
            record_at = locator_at - _ZIP64_END.size
            fh.seek(max(0, record_at))
            record = fh.read(_ZIP64_END.size)
            if record_at < 0 or len(record) < _ZIP64_END.size or record[:4] != b"PK\x06\x06":
                raise ArchiveError(_UNREADABLE_ZIP)
            entries, directory_size = _ZIP64_END.unpack(record)[7:9]
            start = record_at - directory_size
    if start < 0:
        raise ArchiveError(_UNREADABLE_ZIP)
    return entries, directory_size, start


def _zip64_size(extra: bytes) -> int:
    """The uncompressed size an entry keeps in its zip64 extra field (the field comes first)."""
    at = 0
    while at + 4 <= len(extra):
        tag, length = struct.unpack_from("<2H", extra, at)
        if tag == 1 and length >= 8 and at + 12 <= len(extra):
            return int(struct.unpack_from("<Q", extra, at + 4)[0])
        at += 4 + length
    return 0xFFFFFFFF


def _check_zip_directory(fh: IO[bytes], budget: _Budget) -> None:
    """Refuse a zip whose directory lists too many entries or too many declared bytes."""
    entries, directory_size, start = _directory_place(fh)
    if entries > budget.max_members:
        raise _too_many(budget, entries)
    fh.seek(start)
    walked = count = declared = 0
    while walked < directory_size:
        head = fh.read(_ENTRY.size)
        if len(head) < _ENTRY.size or head[:4] != _ENTRY_SIGNATURE:
            raise ArchiveError(_UNREADABLE_ZIP)
        fields = _ENTRY.unpack(head)
        unpacked, name_length, extra_length, comment_length = fields[11:15]
        fh.seek(name_length, io.SEEK_CUR)
        extra = fh.read(extra_length)
        fh.seek(comment_length, io.SEEK_CUR)
        count += 1
        if count > budget.max_members:
            raise _too_many(budget, None)
        declared += _zip64_size(extra) if unpacked == 0xFFFFFFFF else unpacked
        if declared > budget.max_bytes:
            raise ArchiveError(
                f"The archive says its files unpack to more than {_size(budget.max_bytes)}, the most accepted; "
                "refusing it."
            )
        walked += _ENTRY.size + name_length + extra_length + comment_length


def _extract_zip(fh: IO[bytes], dest: Path, budget: _Budget) -> None:
    _check_zip_directory(fh, budget)
    fh.seek(0)
    with zipfile.ZipFile(fh) as zf:
        for info in zf.infolist():
            budget.member()
            rel = _safe_member_path(info.filename)
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise ArchiveError(f"Archive member {shown(info.filename)} is a symbolic link; refusing the archive.")
            if info.is_dir() or rel == PurePosixPath("."):
                (dest / rel).mkdir(parents=True, exist_ok=True)
                continue
            with zf.open(info) as src:
                budget.copy(src, dest / rel)


class _CountingReader(io.RawIOBase):
    """The decompressed tar stream, refusing to go past the budget (headers count too).

    A read is refused *before* it is made when it asks for more than is left, so a header that
    declares a gigabyte never makes anything allocate a gigabyte.
    """

    def __init__(self, src: IO[bytes], budget: _Budget) -> None:
        self.src = src
        self.budget = budget

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0 or size > self.budget.bytes_left + 1:
            size = self.budget.bytes_left + 1  # one byte past the cap proves the cap is crossed
        data = self.src.read(size)
        self.budget.spend(len(data))
        return data

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class _CappedTarInfo(tarfile.TarInfo):
    """Refuses an extended header (GNU long name/link, pax) bigger than MAX_HEADER_BYTES before
    tarfile reads it into memory."""

    _EXTENDED = (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE,
                 tarfile.SOLARIS_XHDTYPE)  # fmt: skip

    def _proc_member(self, tarfile: tarfile.TarFile) -> tarfile.TarInfo:
        if self.type in self._EXTENDED and self.size > MAX_HEADER_BYTES:
            raise ArchiveError(
                f"The archive has a {self.size:,}-byte extended (long name or pax) header; at most "
                f"{MAX_HEADER_BYTES // 1024} KB is accepted. Refusing it."
            )
        return super()._proc_member(tarfile)  # type: ignore[misc]


def _decompressed(fh: IO[bytes]) -> IO[bytes]:
    magic = fh.read(6)
    fh.seek(0)
    if magic.startswith(b"\x1f\x8b"):
        return cast(IO[bytes], gzip.GzipFile(fileobj=fh, mode="rb"))
    if magic.startswith(b"BZh"):
        return bz2.BZ2File(fh, mode="rb")
    if magic.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(fh, mode="rb")
    return fh


def _extract_tar(fh: IO[bytes], dest: Path, budget: _Budget) -> None:
    stream = _CountingReader(_decompressed(fh), budget)
    # "r|": a forward-only stream, so tarfile never seeks back or reads ahead of what is counted.
    with tarfile.open(fileobj=stream, mode="r|", tarinfo=_CappedTarInfo) as tf:
        for member in tf:
            budget.member()
            rel = _safe_member_path(member.name)
            if member.issym() or member.islnk():
                raise ArchiveError(f"Archive member {shown(member.name)} is a link; refusing the archive.")
            if member.isdir():
                (dest / rel).mkdir(parents=True, exist_ok=True)
                continue
            if not member.isfile():
                raise ArchiveError(f"Archive member {shown(member.name)} is not a regular file; refusing the archive.")
            src = tf.extractfile(member)
            if src is None:
                raise ArchiveError(f"Archive member {shown(member.name)} cannot be read.")
            with src:
                budget.write(src, dest / rel)


def unpack(fh: IO[bytes], dest: Path, *, max_bytes: int, max_members: int) -> None:
    """Unpack a .zip or .tar(.gz/.bz2/.xz) into `dest`, or raise ArchiveError."""
    budget = _Budget(max_bytes, max_members)
    try:
        fh.seek(0)
        if zipfile.is_zipfile(fh):
            fh.seek(0)
            _extract_zip(fh, dest, budget)
        else:
            fh.seek(0)
            _extract_tar(fh, dest, budget)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, gzip.BadGzipFile, lzma.LZMAError, struct.error) as exc:
        raise ArchiveError(f"This is not a readable .zip or .tar.gz archive ({str(exc)[:200]}).") from exc
    except FileExistsError as exc:
        raise ArchiveError(f"The archive lists {shown(str(exc.filename))} twice; refusing it.") from exc
    except OSError as exc:
        # Whatever the file system refuses (a name it cannot hold, a full disk) is the archive's
        # problem to report, not a server error.
        raise ArchiveError(f"The archive cannot be unpacked here: {exc.strerror or type(exc).__name__}.") from exc
