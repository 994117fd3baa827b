"""A tool call's arguments text, from the pieces a server streamed, made into one JSON object.

Servers disagree on what a piece is. Most send new pieces (joined as they come); some send the
whole arguments so far on every chunk (DeepSeek via Qianfan, GLM-style servers); some end with
one more chunk holding the whole arguments again (gateway adapters); vLLM's hermes parser can
send the object as a JSON string (or a string of a string); models wrap it in a ```json fence or
leave a template token after it. Joining blindly gives `{"a":{"a":1}` or `{"a":1}{"a":1}`, so
the pieces are read by what they are, and only when the plain join is not JSON.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)
_DECODER = json.JSONDecoder()
# How many times arguments may have been encoded as a JSON string around the object.
_MAX_ENCODINGS = 3


def parses(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        return False


def merge_arguments(pieces: list[str]) -> str:
    """The arguments text the pieces make: joined, or read as cumulative / repeated whole."""
    joined = "".join(pieces)
    if len(pieces) < 2 or parses(joined):
        return joined
    merged = ""
    for piece in pieces:
        if merged and piece.startswith(merged):
            merged = piece  # the piece repeats everything so far, and perhaps more
        elif merged and is_object(merged) and is_object(piece):
            merged = piece  # the whole arguments again
        else:
            merged += piece
    if parses(merged):
        return merged
    if is_object(pieces[-1]):
        return pieces[-1]
    # The whole arguments sent twice, in pieces or at once, in any order: the last one.
    whole = back_to_back(joined)
    if whole and all(isinstance(v, dict) for v in whole):
        return json.dumps(whole[-1], ensure_ascii=False)
    return joined


def back_to_back(text: str, *, between: str = "", stop: str = "") -> list[Any] | None:
    """The JSON values `text` holds one after another (`{…}{…}`, `{…} [{…}]`), with whitespace
    and the characters of `between` between them and `stop` ending them; None unless the text
    is nothing but that."""
    values: list[Any] = []
    pos = 0
    while pos < len(text):
        if text[pos].isspace() or text[pos] in between:
            pos += 1
            continue
        if stop and text.startswith(stop, pos):
            break
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError:
            return None
        values.append(value)
    return values


def decode_arguments(text: str) -> str:
    """The JSON object text inside a JSON string, a ```json fence, or before a stray token;
    the text unchanged when it is already an object or holds none."""
    if is_object(text):
        return text
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = None
    for _ in range(_MAX_ENCODINGS):
        if not isinstance(value, str):
            break
        if is_object(value):
            return value  # sent as a JSON string holding the object: decoded once (or twice)
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            break
    fenced = _FENCE.match(text)
    if fenced and is_object(fenced.group(1)):
        return fenced.group(1)
    start = text.find("{")
    if start < 0:
        return text
    try:
        obj, end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError:
        return text
    rest = text[:start] + text[end:]
    # Only a trailing token or whitespace may be dropped, never a second object or more text.
    if isinstance(obj, dict) and "{" not in rest and len(rest.strip()) <= 40:
        return json.dumps(obj, ensure_ascii=False)
    return text
