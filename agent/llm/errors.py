"""Every failure of the model server as one readable sentence (`LLMError`), never a traceback.

Servers wrap their error text in many shapes: OpenAI's `{"error": {"message": ...}}`, Ollama's
`{"error": "..."}`, vLLM's `{"object": "error", "message": ...}`, Mistral's `message` holding a
dict (or a JSON string) of FastAPI `detail` items. `readable_detail` finds the sentence in all
of them, once, without doubled punctuation.
"""

from __future__ import annotations

import json
import re
from typing import Any

import openai

from agent.llm.types import LLMError

MAX_DETAIL = 300
MAX_HTML = 64 * 1024  # enough of a page to find its title
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.S | re.I)


def _detail_items(items: list[Any], depth: int) -> str:
    parts = []
    for item in items[:3]:
        if isinstance(item, dict) and not (item.get("msg") or item.get("message")):
            parts.append(readable_detail(item, depth + 1))  # Gemini: a list of `{"error": {...}}` objects
        elif isinstance(item, dict):
            loc = ".".join(str(p) for p in item.get("loc") or [] if p != "body")
            msg = str(item.get("msg") or item.get("message") or "").strip()
            parts.append(f"{msg} ({loc})" if loc else msg)
        else:
            parts.append(str(item))
    return "; ".join(p for p in parts if p)


def readable_detail(body: Any, depth: int = 0) -> str:
    """The human sentence inside an error body, or "" when there is none."""
    if depth > 4 or body is None:
        return ""
    if isinstance(body, str):
        text = body.strip()
        if text[:200].lower().startswith(("<!doctype html", "<html", "<head", "<body")):
            return html_summary(text)
        if text.startswith(("{", "[")):
            try:
                return readable_detail(json.loads(text), depth + 1) or text
            except json.JSONDecodeError:
                return text
        return text
    if isinstance(body, list):
        return _detail_items(body, depth)
    if isinstance(body, dict):
        for key in ("error", "message", "detail", "msg"):
            if key in body and body[key]:
                found = readable_detail(body[key], depth + 1)
                if found:
                    return found
    return ""


def html_summary(page: str) -> str:
    """An HTML page where an API answer belongs: a proxy, firewall or sign-in page in between."""
    found = _TITLE.search(page[:MAX_HTML])
    title = " ".join(found.group(1).split())[:120] if found else ""
    named = f" (“{title}”)" if title else ""
    return f"an HTML page{named}, likely a proxy, firewall or sign-in page in front of the server"


def _clean(detail: str) -> str:
    detail = " ".join(detail.split())[:MAX_DETAIL]
    return detail.rstrip(" .")


def status_detail(exc: openai.APIStatusError | openai.APIError) -> str:
    detail = readable_detail(exc.body)
    if not detail and isinstance(exc, openai.APIStatusError):
        try:
            detail = readable_detail(exc.response.text)
        except (UnicodeDecodeError, RuntimeError):  # a streamed body that was never read
            detail = ""
    return _clean(detail)


def _suffix(detail: str) -> str:
    return f": {detail}" if detail else ""


def _retry_after(exc: openai.APIStatusError) -> str:
    value = exc.response.headers.get("retry-after", "")
    return f" The server asks to wait {value} s." if value.strip().isdigit() else " Try again shortly."


def human_error(exc: BaseException, base_url: str, model: str) -> LLMError:
    where = base_url or "the default OpenAI endpoint"
    if isinstance(exc, openai.APITimeoutError):
        return LLMError(f"The model server at {where} did not answer in time.", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        return LLMError(
            f"The model server at {where} is not reachable ({type(exc.__cause__ or exc).__name__}).", retryable=True
        )
    if isinstance(exc, openai.AuthenticationError):
        return LLMError(f"The model server at {where} refused the API key (HTTP 401). Check OPENAI_API_KEY.")
    if isinstance(exc, openai.NotFoundError):
        detail = status_detail(exc)
        if detail and "model" not in detail.lower():
            # "404 page not found" (Ollama's root without /v1, a proxy's path): the URL is wrong.
            return LLMError(
                f"The model server at {where} has no chat completions there (HTTP 404{_suffix(detail)}). "
                "Check model.base_url: OpenAI-compatible servers usually end it with /v1."
            )
        return LLMError(f"The model server at {where} does not know model '{model}' (HTTP 404{_suffix(detail)}).")
    if isinstance(exc, openai.RateLimitError):
        return LLMError(
            f"The model server at {where} is rate-limiting requests (HTTP 429).{_retry_after(exc)}", retryable=True
        )
    if isinstance(exc, openai.APIStatusError):
        detail = _suffix(status_detail(exc))
        return LLMError(
            f"The model server at {where} answered with an error (HTTP {exc.status_code}){detail}.",
            retryable=exc.status_code >= 500,
        )
    if isinstance(exc, openai.APIResponseValidationError):
        return LLMError(f"The model server at {where} sent a reply that is not a valid chat completion.")
    if isinstance(exc, openai.APIError):
        # An error object sent inside a 200 stream (OpenRouter, vLLM): the turn ends with its text.
        detail = status_detail(exc) or _clean(exc.message)
        return LLMError(f"The model server at {where} reported an error while answering{_suffix(detail)}.")
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
        return LLMError(f"The model server at {where} sent a reply that is not a valid chat completion.")
    return LLMError(f"The model call failed: {type(exc).__name__}: {exc}")
