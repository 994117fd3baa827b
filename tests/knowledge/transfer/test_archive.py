"""Archives people upload: header bombs and over-long names are refused clearly."""

from __future__ import annotations

import io
import secrets
import tarfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from knowledge.transfer.archive import MAX_HEADER_BYTES, ArchiveError, unpack
from knowledge.transfer.hermes_import import MAX_ARCHIVE_BYTES, TransferError, import_archive
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
