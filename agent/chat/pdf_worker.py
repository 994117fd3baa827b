"""Reads one PDF's text in a process of its own: `python -m agent.chat.pdf_worker MAX_CHARS MEMORY CPU`.

The server (agent/chat/pdf_text.py) starts this module for every attached PDF, so a hostile file
costs this process, never the server: before reading anything it limits its own address space to
MEMORY bytes and its processor time to CPU seconds, and once it has used NICE_AFTER seconds of
processor time it lowers its own priority to the lowest there is (SCHED_IDLE), so a long document
yields to the pages the server answers while a normal one is read at full speed.

The PDF comes on standard input. Each result is one JSON line on standard output, written as soon
as it is known, so the server can stop reading at its own deadline and keep what came:

    {"pages": 12}                     once, when the page count is known
    {"text": "..."}                   per page (stripped, cut to what the budget still allows)
    {"end": "done"}                   every page read, or MAX_CHARS characters reached
    {"refused": KIND, "detail": ...}  instead of the end; KIND is one of REFUSALS

The sentences for the person are the server's; this module only says what happened. It imports
the standard library and pypdf and nothing of the project, so it starts in about a tenth of a
second.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import resource
import signal
import sys
import warnings
from types import FrameType
from typing import Any

from pypdf import PdfReader
from pypdf.errors import FileNotDecryptedError

# Seconds of processor time read at full priority: a normal document finishes well within this.
NICE_AFTER = 0.5
NICENESS = 19
EXIT_MEMORY = 3
REFUSALS = ("not_pdf", "encrypted", "password", "damaged", "filter", "pages", "memory")
MAX_PAGES = 300
_FILTER = re.compile(r"Unsupported filter (/?\S+)")


def limit_self(memory: int, cpu: int) -> None:
    """Cap this process: address space, processor seconds (SIGXCPU at `cpu`, SIGKILL a second later)."""
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a killed reader leaves no core file of the PDF
    signal.signal(signal.SIGPROF, _yield_to_server)
    signal.setitimer(signal.ITIMER_PROF, NICE_AFTER)


def _yield_to_server(signum: int, frame: FrameType | None) -> None:
    # SCHED_IDLE runs this process only on a processor nothing else wants; on a 2-core machine two
    # readers at the lowest nice still slowed the server's pages 2.4x, at SCHED_IDLE 1.3x.
    if hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_IDLE"):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    else:
        os.nice(NICENESS)


def send(**fields: Any) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def read(data: bytes, max_chars: int) -> None:
    """Write the JSON lines for the PDF `data`, stopping once `max_chars` characters of text came."""
    if b"%PDF-" not in data[:1024]:
        send(refused="not_pdf")
        return
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            send(refused="password")
            return
        pages = len(reader.pages)
        if pages > MAX_PAGES:
            send(refused="pages", detail=pages)
            return
        send(pages=pages)
        left = max_chars
        for page in reader.pages:
            text = (page.extract_text() or "").strip()
            if text:
                send(text=text[: left + 1])
                left -= len(text) + 2  # the blank line the server puts between pages
                if left < 0:
                    break
        send(end="done")
    except FileNotDecryptedError:
        send(refused="encrypted")
    except NotImplementedError as exc:
        found = _FILTER.search(str(exc))
        send(refused="filter" if found else "damaged", detail=found.group(1) if found else type(exc).__name__)
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - reported to the server as a damaged file
        # pypdf raises its own errors on damage and, on some damage, any plain one (KeyError,
        # RecursionError…). Whatever the file made the reader raise, the file is damaged: this
        # process exists only to read it, and the server hears why in a word.
        send(refused="damaged", detail=type(exc).__name__)


def main(argv: list[str]) -> None:
    max_chars, memory, cpu = (int(arg) for arg in argv)
    limit_self(memory, cpu)
    # pypdf reports every oddity of a damaged file as a warning; the refusal says all the server needs.
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    try:
        read(sys.stdin.buffer.read(), max_chars)
    except MemoryError:
        # The big allocation failed and is gone, so a short line still fits; the exit code says
        # the same should even that fail.
        try:
            send(refused="memory")
        finally:
            os._exit(EXIT_MEMORY)


if __name__ == "__main__":
    main(sys.argv[1:])
