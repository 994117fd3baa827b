"""The text of an attached PDF, read on the server with pypdf, within stated limits.

The text then goes into the person's message like an attached text file (a fenced block under
"📎 name"), so it is stored, searchable and read by the model, and the review treats it as a
document, not as something the person said (docs/EVIDENCE.md). Every refusal is a sentence for
the person: encrypted, scanned (no text), not a PDF, too many pages.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass

from pypdf import PdfReader
from pypdf.errors import FileNotDecryptedError, PyPdfError

log = logging.getLogger(__name__)

MAX_PAGES = 300
# Room left in the message for the "📎 name" line, the fence and a few typed words.
FRAME_ROOM = 500


def _encrypted(name: str) -> str:
    return f"{name} is encrypted and cannot be read. Save it without protection and attach it again."


class PdfRefused(Exception):
    """Why a PDF gives no text, in the person's words."""


@dataclass(frozen=True)
class PdfText:
    text: str
    pages: int
    cut_at: int | None = None  # the text was cut at this many characters (the message limit)

    @property
    def note(self) -> str:
        pages = f"{self.pages} page{'s' if self.pages != 1 else ''}"
        return f"{pages}; cut at {self.cut_at:,} characters" if self.cut_at is not None else pages


def is_pdf(data: bytes) -> bool:
    # The header may follow a little junk; readers accept it within the first KB.
    return b"%PDF-" in data[:1024]


def _open(name: str, data: bytes) -> PdfReader:
    if not is_pdf(data):
        raise PdfRefused(f"{name} is not a PDF (its content does not start like one). It was not attached.")
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise PdfRefused(f"{name} is protected with a password; open it, save it without one and attach it again.")
        return reader
    except FileNotDecryptedError as exc:
        raise PdfRefused(_encrypted(name)) from exc
    except (PyPdfError, ValueError, KeyError, TypeError) as exc:
        # A damaged file: pypdf raises its own errors and, on some damage, plain ones.
        raise PdfRefused(f"{name} could not be read as a PDF ({type(exc).__name__}). It was not attached.") from exc


def _page_text(reader: PdfReader, name: str) -> list[str]:
    out = []
    try:
        for page in reader.pages:
            out.append(page.extract_text() or "")
    except FileNotDecryptedError as exc:
        raise PdfRefused(_encrypted(name)) from exc
    except (PyPdfError, ValueError, KeyError, TypeError) as exc:
        log.info("reading the text of %s failed", name, exc_info=True)
        raise PdfRefused(f"The text of {name} could not be read ({type(exc).__name__}). It was not attached.") from exc
    return out


def extract(name: str, data: bytes, max_chars: int) -> PdfText:
    """The text of the PDF `data`, at most `max_chars` characters (cut visibly, never silently)."""
    reader = _open(name, data)
    try:
        pages = len(reader.pages)
    except (PyPdfError, ValueError, KeyError, TypeError) as exc:
        raise PdfRefused(f"{name} could not be read as a PDF ({type(exc).__name__}). It was not attached.") from exc
    if pages > MAX_PAGES:
        most = f"attached PDFs are limited to {MAX_PAGES} pages"
        raise PdfRefused(f"{name} has {pages:,} pages; {most}. It was not attached.")
    text = "\n\n".join(t.strip() for t in _page_text(reader, name) if t.strip())
    if not text.strip():
        raise PdfRefused(f"{name} has no text to extract — it may be scanned images. It was not attached.")
    limit = max(1000, max_chars - FRAME_ROOM)
    if len(text) > limit:
        return PdfText(text[:limit], pages, cut_at=limit)
    return PdfText(text, pages)
