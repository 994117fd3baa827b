"""Small real PDF and PNG files made in the test, for the attachment tests (no binary fixtures).

`text_pdf` writes the objects by hand (a page per string, Helvetica text), with a correct
cross-reference table, so pypdf reads it as any PDF from a word processor. The other kinds
(encrypted, only blank pages) are written with pypdf itself. The hostile ones (a decompression
bomb, pages sharing one slow stream, an unknown compression) are written by hand like `text_pdf`.
"""

from __future__ import annotations

import functools
import io
import struct
import zlib

from pypdf import PdfWriter


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _assemble(objects: list[bytes]) -> bytes:
    """A PDF of these objects (numbered from 1, the first the catalog) with its cross-reference table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{n} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def _stream(data: bytes, extra: str = "") -> bytes:
    return f"<< /Length {len(data)}{extra} >>\nstream\n".encode() + data + b"\nendstream"


def _page(contents: int) -> bytes:
    return (
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> "
        f"/Contents {contents} 0 R >>".encode()
    )


def _head(kids: list[int]) -> list[bytes]:
    refs = " ".join(f"{k} 0 R" for k in kids)
    return [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{refs}] /Count {len(kids)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]


def text_pdf(pages: list[str]) -> bytes:
    """A PDF with one page per string; each string's lines are written top to bottom."""
    objects = _head([4 + 2 * i for i in range(len(pages))])
    for i, text in enumerate(pages):
        lines = " ".join(f"({_escape(line)}) Tj 0 -14 Td" for line in text.splitlines() or [""])
        objects.append(_page(5 + 2 * i))
        objects.append(_stream(f"BT /F1 11 Tf 40 800 Td {lines} ET".encode("latin-1")))
    return _assemble(objects)


@functools.cache
def flate_bomb_pdf(pages: int = 20, inflated: int = 70 * 1024 * 1024) -> bytes:
    """Pages of compressed blank space: each page's content stream inflates from ~70 KB to `inflated`
    bytes (just under pypdf's own cap on one stream), so the whole file of ~1.4 MB asks for GBs."""
    packer = zlib.compressobj(9)
    chunk = b" " * (1024 * 1024)
    packed = b"".join(packer.compress(chunk) for _ in range(inflated // len(chunk))) + packer.flush()
    objects = _head([4 + 2 * i for i in range(pages)])
    for i in range(pages):
        objects.append(_page(5 + 2 * i))
        objects.append(_stream(packed, " /Filter /FlateDecode"))
    return _assemble(objects)


@functools.cache
def shared_stream_pdf(pages: int = 300, operators: int = 100_000) -> bytes:
    """Pages that all show one compressed content stream of `operators` text-showing operators:
    a small file whose every page is slow to read (each shows an empty string: no text at all)."""
    content = b"BT /F1 11 Tf 40 800 Td " + b"() Tj " * operators + b"ET"
    objects = _head([5 + i for i in range(pages)])
    objects.append(_stream(zlib.compress(content, 9), " /Filter /FlateDecode"))
    objects.extend(_page(4) for _ in range(pages))
    return _assemble(objects)


def unknown_filter_pdf() -> bytes:
    """A page whose content stream names a compression no reader knows."""
    objects = _head([4])
    objects.append(_page(5))
    objects.append(_stream(b"BT /F1 11 Tf 40 800 Td (hidden) Tj ET", " /Filter /NoSuchDecode"))
    return _assemble(objects)


def blank_pdf(pages: int = 1) -> bytes:
    """Pages without any text, as a scan's images would be."""
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=595, height=842)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def encrypted_pdf(password: str = "secret") -> bytes:
    writer = PdfWriter(clone_from=io.BytesIO(text_pdf(["A locked page"])))
    writer.encrypt(user_password=password, owner_password=password, algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def png(width: int = 2, height: int = 2) -> bytes:
    """A real PNG of red pixels, written chunk by chunk (signature, IHDR, IDAT, IEND)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = (b"\x00" + b"\xff\x00\x00" * width) * height
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
