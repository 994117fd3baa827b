"""Text hidden in base64, hex or percent-encoding, decoded for the threat scan's readings
(knowledge/verification/threat_normalize.py): each decoded run is scanned as text of its own.

A run is decoded only when it reads as text (valid UTF-8, mostly printable, holding a letter), at
most MAX_DECODED_RUNS of them, so a write stays cheap whatever it holds.
"""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import unquote

MAX_DECODED_RUNS = 8

_B64_RUN = re.compile(r"[A-Za-z0-9+/_\-]{16,}={0,2}")
# Bare hex digits, and hex with a prefix on every byte: two patterns, each quick to skip ahead in.
# Each starts with a class (a look-behind second), so the engine skips to its first characters.
_HEX_RUN = re.compile(r"[0-9a-fA-F](?<![0-9a-fA-F][0-9a-fA-F])[0-9a-fA-F](?:[\s,:]?[0-9a-fA-F]{2}){7,}")
_HEX_PREFIXED = re.compile(r"(?:(?:\\x|0x|%)[0-9a-fA-F]{2}[\s,:]?){8,}")
_PERCENT = re.compile(r"(?:%[0-9a-fA-F]{2}){4,}")


def _readable(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = len(text) if text.isprintable() else sum(ch.isprintable() or ch in "\n\t" for ch in text)
    return text if text and printable >= 0.9 * len(text) and any(ch.isalpha() for ch in text) else None


def _from_b64(run: str) -> str | None:
    padded = run + "=" * (-len(run) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _readable(raw)


def _from_hex(run: str) -> str | None:
    digits = re.sub(r"\\x|0x|%|[\s,:]", "", run)
    if len(digits) % 2:
        digits = digits[:-1]
    try:
        return _readable(bytes.fromhex(digits))
    except ValueError:
        return None


def decoded_runs(text: str) -> list[str]:
    """Text hidden in base64, hex or percent-encoding, at most MAX_DECODED_RUNS of them."""
    found: list[str] = []
    prefixed = "%" in text or "0x" in text or "\\x" in text
    spans: list[tuple[int, int]] = []  # runs decoded as prefixed hex: their %XX need no second decoding
    for rx, decode in ((_HEX_RUN, _from_hex), (_HEX_PREFIXED, _from_hex), (_B64_RUN, _from_b64)):
        if rx is _HEX_PREFIXED and not prefixed:
            continue
        for m in rx.finditer(text):
            if rx is _HEX_PREFIXED:
                spans.append(m.span())
            decoded = decode(m.group(0).strip())
            if decoded and decoded not in found:
                found.append(decoded)
            if len(found) >= MAX_DECODED_RUNS:
                return found
    covered = iter(spans)  # in text order, as the percent runs are: one walk through both
    span = next(covered, None)
    for m in _PERCENT.finditer(text) if "%" in text else ():
        while span is not None and span[1] < m.end():
            span = next(covered, None)
        if span is not None and span[0] <= m.start():
            continue
        decoded = unquote(m.group(0))
        if decoded != m.group(0) and decoded not in found and _readable(decoded.encode("utf-8", "replace")):
            found.append(decoded)
    return found[:MAX_DECODED_RUNS]
