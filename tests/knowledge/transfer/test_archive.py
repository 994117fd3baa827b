"""Archives people upload: header bombs, zips listing too many members or bytes, and over-long names are
refused clearly."""

from __future__ import annotations

import io
import secrets
import struct
import tarfile
import tracemalloc
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledge.transfer.archive import MAX_HEADER_BYTES, ArchiveError, unpack
from knowledge.transfer.hermes_import import MAX_ARCHIVE_BYTES, MAX_MEMBERS, TransferError, import_archive
from tests.daphne import Http, start_daphne

GIB = 1024 * 1024 * 1024
_MB = 1024 * 1024


def _gzip_stream(parts: Iterator[bytes]) -> bytes:
    comp = zlib.compressobj(6, zlib.DEFLATED, 31)  # wbits 31: gzip container
    out = io.BytesIO()
    for part in parts:
        out.write(comp.compress(part))
    out.write(comp.flush())
    return out.getvalue()


def header_bomb(kind: str, size: int = GIB) -> bytes:
    """A .tar.gz of about a megabyte whose first header declares (and holds) `size` bytes of name."""
    info = tarfile.TarInfo("././@LongLink" if kind == "gnu" else "././@PaxHeader")
    info.type = tarfile.GNUTYPE_LONGNAME if kind == "gnu" else tarfile.XHDTYPE
    info.size = size
    head = info.tobuf(format=tarfile.GNU_FORMAT if kind == "gnu" else tarfile.USTAR_FORMAT)
    if kind == "pax":
        prefix = f"{size} path=".encode()
        body_start = prefix
    else:
        body_start = b""

    def parts() -> Iterator[bytes]:
        yield head + body_start
        left = size - len(body_start)
        chunk = b"a" * _MB
        while left > 0:
            yield chunk[: min(left, _MB)]
            left -= _MB
        yield b"\0" * (-size % 512)
        member = tarfile.TarInfo("memories/MEMORY.md")
        member.size = 5
        yield member.tobuf(format=tarfile.USTAR_FORMAT) + b"hello" + b"\0" * 507 + b"\0" * 1024

    return _gzip_stream(parts())


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    return {kind: header_bomb(kind) for kind in ("gnu", "pax")}


@pytest.mark.parametrize("kind", ["gnu", "pax"])
@pytest.mark.slow
def test_a_header_bomb_is_refused_without_reading_it(kind, bombs, tmp_path):
    assert len(bombs[kind]) < 2 * _MB  # small on the wire...
    with pytest.raises(ArchiveError) as err:
        unpack(io.BytesIO(bombs[kind]), tmp_path, max_bytes=MAX_ARCHIVE_BYTES, max_members=10)
    message = str(err.value)
    assert "header" in message and len(message) < 300  # ...refused by its header, quoting no name
    assert list(tmp_path.iterdir()) == []


def test_headers_count_against_the_cap_even_when_each_is_small(tmp_path):
    # Many extended headers just under the header cap, adding up past the archive cap.
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for i in range(40):
            info = tarfile.TarInfo(f"f{i}")
            info.pax_headers = {"comment": "x" * (MAX_HEADER_BYTES - 100)}
            tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(ArchiveError, match="more than 1 MB"):
        unpack(io.BytesIO(buf.getvalue()), tmp_path, max_bytes=_MB, max_members=100)


def _tar_with(name: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo(name)
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    return buf.getvalue()


def test_a_path_segment_over_255_bytes_is_refused_clearly(home, db):
    name = "memories/" + "n" * 300 + "/MEMORY.md"
    with pytest.raises(TransferError) as err:
        import_archive(io.BytesIO(_tar_with(name)), "long.tar.gz")
    assert "longer than 255 bytes" in str(err.value) and "n" * 100 not in str(err.value)


def test_the_import_page_says_nothing_was_imported_for_a_long_segment(auth_client):
    upload = io.BytesIO(_tar_with("skills/" + "é" * 200 + "/SKILL.md"))
    upload.name = "long.tar.gz"
    resp = auth_client.post("/transfer/import/", {"archive": upload})
    assert resp.status_code == 400
    html = resp.content.decode()
    assert "Nothing was imported." in html and "longer than 255 bytes" in html


def _vm_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc status")


@pytest.mark.parametrize("kind", ["gnu", "pax"])
@pytest.mark.slow
def test_the_server_refuses_a_header_bomb_in_bounded_memory(kind, bombs, tmp_path):
    with start_daphne(tmp_path / "home") as server:
        owner = Http(server.port)
        owner.login(server.token)
        boundary = "----hermes" + secrets.token_hex(8)
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="csrfmiddlewaretoken"\r\n\r\n'
                f"{owner.cookies['csrftoken']}\r\n--{boundary}\r\n"
                'Content-Disposition: form-data; name="archive"; filename="bomb.tar.gz"\r\n'
                "Content-Type: application/gzip\r\n\r\n"
            ).encode()
            + bombs[kind]
            + f"\r\n--{boundary}--\r\n".encode()
        )
        resp = owner.request(
            "POST",
            "/transfer/import/",
            body=body,
            headers={"Content-Type": f"multipart/form-data; boundary={boundary}", "Origin": server.origin},
            timeout=120,
        )
        peak = _vm_hwm_mb(server.process.pid)
        print(f"\n{kind} header bomb: answered {resp.status}, server peak memory {peak:.0f} MB")
        assert resp.status == 400 and "Nothing was imported." in resp.body
        assert peak < 300
        assert "a" * 200 not in server.log()  # the name is never logged
        assert not (server.home / "memories" / "MEMORY.md").exists()


_LOCAL = struct.Struct("<4s2B4HL2L2H")  # a zip's local file header
_ENTRY = struct.Struct("<4s4B4HL2L5H2L")  # a zip's central directory entry


def _entry(unpacked: int = 0, extra: bytes = b"") -> bytes:
    """A central directory entry for the empty stored member "a" at offset 0."""
    sig = b"PK\x01\x02"
    return _ENTRY.pack(sig, 20, 3, 20, 0, 0, 0, 0, 0, 0, 0, unpacked, 1, len(extra), 0, 0, 0, 0, 0) + b"a" + extra


def _zip_of_entries(path: Path, entry: bytes, count: int, *, listed: int | None = None, zip64: bool = False) -> Path:
    """A zip whose central directory repeats `entry` `count` times, written as bytes: a 600,000-entry
    directory costs a second to write, where zipfile would take minutes and hundreds of megabytes.
    The end record lists `listed` entries (default: the truth)."""
    local = _LOCAL.pack(b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0) + b"a"
    listed = count if listed is None else listed
    size = len(entry) * count
    with path.open("wb") as out:
        out.write(local)
        out.write(entry * count)
        if zip64:
            ends = len(local) + size
            out.write(struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, listed, listed, size, len(local)))
            out.write(struct.pack("<4sLQL", b"PK\x06\x07", 0, ends, 1))
            out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0))
        else:
            out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, listed, listed, size, len(local), 0))
    return path


def _refusal(path: Path, dest: Path) -> tuple[str, int]:
    """The refusal of unpacking `path` with the import's caps, and the peak memory it took."""
    dest.mkdir()
    with path.open("rb") as fh:
        tracemalloc.start()
        try:
            with pytest.raises(ArchiveError) as err:
                unpack(fh, dest, max_bytes=MAX_ARCHIVE_BYTES, max_members=MAX_MEMBERS)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert list(dest.iterdir()) == []  # refused before any member was read
    return str(err.value), peak


def test_the_bytes_built_here_are_a_zip_zipfile_reads(tmp_path):
    with zipfile.ZipFile(_zip_of_entries(tmp_path / "three.zip", _entry(), 3)) as zf:
        assert zf.namelist() == ["a", "a", "a"] and zf.read("a") == b""
    with zipfile.ZipFile(_zip_of_entries(tmp_path / "z64.zip", _entry(), 3, zip64=True)) as zf:
        assert zf.namelist() == ["a", "a", "a"]


def test_a_zip_of_600k_entries_is_refused_by_its_directory_in_little_memory(tmp_path):
    path = _zip_of_entries(tmp_path / "many.zip", _entry(), 600_000, zip64=True)
    message, peak = _refusal(path, tmp_path / "out")
    assert message == f"The archive lists 600,000 members, more than the {MAX_MEMBERS:,} accepted; refusing it."
    assert peak < 20 * _MB


def test_a_zip_whose_end_record_understates_its_entries_is_refused_while_walking(tmp_path):
    path = _zip_of_entries(tmp_path / "liar.zip", _entry(), 600_000, listed=1)
    message, peak = _refusal(path, tmp_path / "out")
    assert message == f"The archive has more than {MAX_MEMBERS:,} members; refusing it."
    assert peak < 20 * _MB


@pytest.mark.parametrize(
    "entry",
    [_entry(unpacked=2**31), _entry(unpacked=0xFFFFFFFF, extra=struct.pack("<2HQ", 1, 8, 2**40))],
    ids=["declared", "zip64-declared"],
)
def test_a_zip_declaring_more_than_the_cap_unpacked_is_refused_before_reading(tmp_path, entry):
    message, _ = _refusal(_zip_of_entries(tmp_path / "big.zip", entry, 1), tmp_path / "out")
    assert message == "The archive says its files unpack to more than 50 MB, the most accepted; refusing it."
