"""The text of an attached PDF, read by a worker process (agent/chat/pdf_worker.py) within stated limits.

The text then goes into the person's message like an attached text file (a fenced block under
"📎 name"), so it is stored, searchable and read by the model, and the review treats it as a
document, not as something the person said (docs/EVIDENCE.md).

A PDF is a program of sorts: a small file can inflate to gigabytes or make every page parse one
huge stream again. So the server never parses one itself. Each PDF is read by a fresh process
capped in memory and processor time, under a wall-clock deadline for the whole document; its pages
come back as they are read, and reading stops at the message limit. At most WORKERS run at once
per server process. The caller waits on a pipe (no lock, no processor), so the other requests go
on meanwhile. Every refusal is one sentence for the person: encrypted, scanned (no text), damaged,
not a PDF, too many pages, too slow, too much memory, an unknown compression, or a busy server.
"""

from __future__ import annotations

import json
import logging
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from agent.chat import pdf_worker

log = logging.getLogger(__name__)

MAX_PAGES = pdf_worker.MAX_PAGES
# Room left in the message for the "📎 name" line, the fence and a few typed words.
FRAME_ROOM = 500
# The whole document, from the upload's arrival to its last page (HERMES_PDF_SECONDS, for a slow machine).
DEADLINE = float(os.environ.get("HERMES_PDF_SECONDS") or 20)
# A 300-page text PDF is read within 64 MB of address space (interpreter and pypdf included); this
# leaves room for a 10 MB file with embedded fonts and stops a decompression bomb long before the
# machine feels it.
MEMORY = 512 * 1024 * 1024
WORKERS = 2
_ROOT = Path(__file__).resolve().parents[2]
_READ = 64 * 1024
_JSON_BYTES = 12  # the most bytes one character of text takes in a JSON line (an escaped surrogate pair)

_slots = threading.BoundedSemaphore(WORKERS)


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


def _not_attached(name: str) -> Callable[[str], str]:
    return lambda why: f"{name} {why}. It was not attached."


def _sentence(name: str, kind: str, detail: object, deadline: float, memory: int = MEMORY) -> str:
    no = _not_attached(name)
    sentences = {
        "not_pdf": no("is not a PDF (its content does not start like one)"),
        "password": f"{name} is protected with a password; open it, save it without one and attach it again.",
        "encrypted": f"{name} is encrypted and cannot be read. Save it without protection and attach it again.",
        "damaged": no(f"could not be read as a PDF ({detail})"),
        "filter": no(f"uses a compression this reader does not know ({detail})"),
        "pages": no(f"has {detail:,} pages; attached PDFs are limited to {MAX_PAGES} pages")
        if isinstance(detail, int)
        else no("has too many pages"),
        "memory": no(f"needs more memory than allowed to read (over {memory // (1024 * 1024)} MB)"),
        "slow": no(f"took too long to read (over {deadline:g} seconds)"),
        "busy": f"Other PDFs are being read right now; attach {name} again in a minute.",
        "empty": no("has no text to extract — it may be scanned images"),
    }
    return sentences.get(kind, no("could not be read as a PDF"))


@dataclass
class _Outcome:
    pages: int = 0
    texts: list[str] | None = None
    refused: str = ""
    detail: object = None
    done: bool = False


def _take(line: bytes, got: _Outcome) -> None:
    try:
        item = json.loads(line)
    except ValueError:
        got.refused = "damaged"  # the worker never writes anything else: it broke mid-line
        return
    if "pages" in item:
        got.pages = int(item["pages"])
    elif "text" in item and got.texts is not None:
        got.texts.append(str(item["text"]))
    elif "refused" in item:
        got.refused, got.detail = str(item["refused"]), item.get("detail")
    elif "end" in item:
        got.done = True


def _run(data: bytes, budget: int, memory: int, deadline_at: float, clock: Callable[[], float]) -> _Outcome:
    """Start the worker on `data` and read its lines until it ends, refuses or the deadline passes."""
    got = _Outcome(texts=[])
    cpu = max(1, int(deadline_at - clock()) + 1)
    with tempfile.TemporaryFile() as source, tempfile.TemporaryFile() as errors:
        # The PDF goes in as a file, not through a pipe: no write can block on a worker that stalls.
        source.write(data)
        source.seek(0)
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent.chat.pdf_worker", str(budget), str(memory), str(cpu)],
            cwd=_ROOT,
            stdin=source,
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        assert proc.stdout is not None
        try:
            _read_lines(proc, got, deadline_at, clock, cap=budget * _JSON_BYTES + _READ)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            proc.stdout.close()
        if not (got.done or got.refused):
            got.refused = _why_it_stopped(proc.returncode, errors, clock() >= deadline_at)
    return got


def _read_lines(
    proc: subprocess.Popen[bytes], got: _Outcome, deadline_at: float, clock: Callable[[], float], cap: int
) -> None:
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    pending = b""
    total = 0
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while not (got.done or got.refused):
            left = deadline_at - clock()
            if left <= 0 or not sel.select(timeout=left):
                return  # the deadline passed: the caller stops the worker
            chunk = os.read(fd, _READ)
            if not chunk:
                return  # the worker ended without a last line
            total += len(chunk)
            if total > cap:  # more than its budget allows: not the worker this module started
                got.refused = "damaged"
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                _take(line, got)


def _why_it_stopped(code: int, errors: IO[bytes], late: bool) -> str:
    if late or code in (-signal.SIGXCPU, -signal.SIGKILL):
        return "slow"
    if code == pdf_worker.EXIT_MEMORY:
        return "memory"
    errors.seek(0, os.SEEK_END)
    errors.seek(max(0, errors.tell() - 2000))
    log.warning("the PDF reader stopped with code %s: %s", code, errors.read().decode("utf-8", "replace"))
    return "damaged"


def extract(
    name: str,
    data: bytes,
    max_chars: int,
    *,
    deadline: float = DEADLINE,
    memory: int = MEMORY,
    clock: Callable[[], float] = time.monotonic,
) -> PdfText:
    """The text of the PDF `data`, at most `max_chars` characters (cut visibly, never silently).

    Raises PdfRefused with the sentence for the person when it gives no text within `deadline`
    seconds (waiting for a free worker included) and `memory` bytes of address space."""
    if not is_pdf(data):
        raise PdfRefused(_sentence(name, "not_pdf", None, deadline))
    deadline_at = clock() + deadline
    limit = max(1000, max_chars - FRAME_ROOM)
    if not _slots.acquire(timeout=deadline):
        raise PdfRefused(_sentence(name, "busy", None, deadline))
    try:
        got = _run(data, limit, memory, deadline_at, clock)
    finally:
        _slots.release()
    if got.refused:
        log.info("%s was refused: %s (%s)", name, got.refused, got.detail)
        raise PdfRefused(_sentence(name, got.refused, got.detail, deadline, memory))
    text = "\n\n".join(got.texts or [])
    if not text:
        raise PdfRefused(_sentence(name, "empty", None, deadline))
    if len(text) > limit:
        return PdfText(text[:limit], got.pages, cut_at=limit)
    return PdfText(text, got.pages)
