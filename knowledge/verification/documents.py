"""What a person said versus what they pasted: a stored message with its documents blanked out.

Fenced code, quoted lines (">"), indented blocks, blocks of PASTE_LINES or more consecutive lines
and blocks that open with a Markdown heading are documents the person pasted (a README, a log, an
e-mail), not their statements about themselves; prose between two parts of one document belongs to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A block of this many consecutive lines is a paste, not something typed as a chat message.
PASTE_LINES = 5

_FENCE = re.compile(r"^(?:```|~~~)")
_HEADING = re.compile(r"^#{1,6}\s")


@dataclass(frozen=True)
class Located:
    """A quote and the text of the stored message it was found in (documents already blanked)."""

    quote: str
    text: str
    role: str = "user"


def _document_blocks(lines: list[str]) -> list[bool]:
    """For each line: is it part of a pasted document?"""
    doc = [False] * len(lines)
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line.strip()):
            doc[i], fenced = True, not fenced
        elif fenced or line.lstrip().startswith(">") or line.startswith(("    ", "\t")):
            doc[i] = True
    start = 0
    for i in range(len(lines) + 1):
        if i == len(lines) or not lines[i].strip():
            block = [j for j in range(start, i) if not doc[j]]  # plain lines, not already fenced or quoted
            if block and _HEADING.match(lines[block[0]].strip()):
                # A pasted Markdown document runs from its first heading to the end of the message.
                for j in range(block[0], len(lines)):
                    doc[j] = True
                break
            if len(block) >= PASTE_LINES:
                for j in block:
                    doc[j] = True
            start = i + 1
    _fill_between(lines, doc)
    return doc


def _fill_between(lines: list[str], doc: list[bool]) -> None:
    """Prose between two parts of one pasted document (a README's paragraphs between its
    headings) belongs to the document too."""
    marks = [i for i, d in enumerate(doc) if d and lines[i].strip()]
    if len(marks) < 2:
        return
    for i in range(marks[0], marks[-1]):
        doc[i] = True


def statement_text(content: str) -> str:
    """The message with what the person pasted blanked out: what is left is what they said."""
    lines = content.split("\n")
    doc = _document_blocks(lines)
    return "\n".join("" if d else line for line, d in zip(lines, doc, strict=True))


DOCUMENT_START, DOCUMENT_END = "[document the person pasted]", "[end of document]"


def mark_documents(content: str) -> str:
    """The message with each pasted document wrapped in markers, so a reader (the verifier) can tell
    what the person said from what they pasted; the markers inside a document are neutralised so it
    cannot close its own wrapping."""
    lines = content.split("\n")
    doc = _document_blocks(lines)
    out: list[str] = []
    for i, (line, d) in enumerate(zip(lines, doc, strict=True)):
        if d and (i == 0 or not doc[i - 1]):
            out.append(DOCUMENT_START)
        out.append(line.replace("[end of document]", "[end of document)") if d else line)
        if d and (i == len(lines) - 1 or not doc[i + 1]):
            out.append(DOCUMENT_END)
    return "\n".join(out)
