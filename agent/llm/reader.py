"""The JSON objects of one reply, whatever framing the server chose for it.

A server does not always answer in the framing it was asked for: some gateways answer a
streamed request with one whole `chat.completion` as `application/json`, some servers answer a
plain request with server-sent events ending in `[DONE]`, a proxy or sign-in page answers with
HTML. The reply is therefore read by what it is — its Content-Type, and its first bytes when
the header says nothing useful — never by what was requested. Server-sent events are parsed
here rather than by the `openai` client, which fails on spec-valid events without `data`
(a `retry:` block) and reads a JSON body sent to a stream request as no events at all.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from agent.llm.arguments import back_to_back
from agent.llm.errors import MAX_HTML, html_summary, readable_detail
from agent.llm.types import LLMError

_SSE_FIELD = re.compile(r"^(data|event|id|retry)\s*:|^:")
_HTML_STARTS = ("<!doctype", "<html", "<head", "<body", "<!--")


class RawResponse(Protocol):
    """The part of an HTTP response (httpx) the reader uses."""

    @property
    def headers(self) -> Any: ...

    @property
    def status_code(self) -> int: ...

    @property
    def url(self) -> Any: ...

    def iter_lines(self) -> Iterator[str]: ...


@dataclass
class Payload:
    """One JSON object of the reply; `whole` when it is a complete reply rather than a chunk."""

    data: dict[str, Any]
    whole: bool = False


def _content_type(response: RawResponse) -> str:
    return str(response.headers.get("content-type") or "").split(";")[0].strip().lower()


def _first_line(lines: Iterator[str]) -> str | None:
    for line in lines:
        if line.strip():
            return line
    return None


def read_payloads(response: RawResponse, where: str) -> Iterator[Payload]:
    """Every JSON object the reply carries, in order; an error the reply reports raises `LLMError`
    (`where` names the server in it)."""
    lines = response.iter_lines()
    first = _first_line(lines)
    if first is None:
        return
    kind = _content_type(response)
    head = first.lstrip().lower()
    # The bytes decide before the header does: proxies mislabel (SSE sent as text/html).
    if _SSE_FIELD.match(first.lstrip()):
        yield from _sse_payloads(_chain(first, lines), where)
        return
    if "html" in kind and not head.startswith(("{", "[")) or head.startswith(_HTML_STARTS):
        raise html_error(response, first, lines)
    if "event-stream" in kind:
        yield from _sse_payloads(_chain(first, lines), where)
        return
    yield from _json_payloads(_chain(first, lines), where)


def _chain(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    yield from rest


def html_error(response: RawResponse, first: str, rest: Iterator[str]) -> LLMError:
    page = first
    for line in rest:
        page += "\n" + line
        if len(page) > MAX_HTML or "</title>" in page.lower():
            break
    return LLMError(
        f"The model server at {response.url} answered with {html_summary(page)}, not a chat completion "
        f"(HTTP {response.status_code}). Check model.base_url, or sign in to the proxy."
    )


def _sse_payloads(lines: Iterator[str], where: str) -> Iterator[Payload]:
    """Server-sent events: `data` lines joined per event; comments, `event`, `id`, `retry` ignored."""
    data: list[str] = []
    for line in lines:
        if not line.strip():
            if data:
                done, payloads = _sse_event("\n".join(data), where)
                data = []
                yield from payloads
                if done:
                    return
            continue
        if line.startswith("data:"):
            value = line[5:]
            data.append(value[1:] if value.startswith(" ") else value)
        elif line.lstrip().startswith("{") and not data:
            data.append(line)  # a JSON line without `data:` (some gateways): read it all the same
    if data:
        yield from _sse_event("\n".join(data), where)[1]


def _sse_event(data: str, where: str) -> tuple[bool, list[Payload]]:
    text = data.strip()
    if text.startswith("[DONE]"):
        return True, []
    if not text.startswith(("{", "[")):
        return False, []  # a keep-alive such as `data: ping`
    try:
        objs = [json.loads(text)]
    except json.JSONDecodeError:
        # Events without the blank line between them (some servers), or chunks written back to
        # back in one event (some proxies): the JSON values one after another.
        objs = _back_to_back(text)
    out = []
    for obj in objs:
        if isinstance(obj, dict):
            raise_reported_error(obj, where)
            out.append(Payload(obj, whole=_is_whole(obj)))
    return "[DONE]" in text.split("\n")[-1], out


def _back_to_back(text: str) -> list[Any]:
    values = back_to_back(text, stop="[DONE]")
    if values is None or len(values) < 2:
        raise json.JSONDecodeError("not JSON values one after another", text, 0)
    return values


def _json_payloads(lines: Iterator[str], where: str) -> Iterator[Payload]:
    """One JSON body, or JSON lines (one chunk per line) from servers that stream without SSE."""
    text_lines = list(lines)
    try:
        values = [json.loads("\n".join(text_lines))]
    except json.JSONDecodeError:
        try:
            values = [json.loads(line) for line in text_lines if line.strip()]
        except json.JSONDecodeError:
            began = " ".join(" ".join(text_lines)[:80].split())
            raise LLMError(
                f"The model server at {where} sent a reply that is not a valid chat completion (it began “{began}”)."
            ) from None
    for obj in values:
        if isinstance(obj, list):  # Google sends its errors as a list of error objects
            for item in obj:
                if isinstance(item, dict):
                    raise_reported_error(item, where)
        if not isinstance(obj, dict):
            raise LLMError(f"The model server at {where} sent a reply that is not a valid chat completion.")
        raise_reported_error(obj, where)
        if not isinstance(obj.get("choices"), list):
            raise LLMError(f"The model server at {where} sent a reply that is not a valid chat completion.")
        if not obj["choices"] and len(values) == 1:
            raise LLMError(f"The model server at {where} returned no choices.")
        yield Payload(obj, whole=_is_whole(obj))


def _is_whole(obj: dict[str, Any]) -> bool:
    choices = obj.get("choices")
    if obj.get("object") == "chat.completion":
        return True
    return isinstance(choices, list) and any(isinstance(c, dict) and "message" in c for c in choices)


def raise_reported_error(obj: dict[str, Any], where: str) -> None:
    """An error object sent with HTTP 200 (OpenRouter, vLLM mid-stream): the turn ends with its text."""
    error = obj.get("error")
    if not error and obj.get("object") == "error":
        error = obj  # vLLM's error object, sent inside a 200 stream
    if not error:
        return
    detail = " ".join(readable_detail(error).split())[:300].rstrip(" .")
    suffix = f": {detail}" if detail else ""
    raise LLMError(f"The model server at {where} reported an error while answering{suffix}.")
