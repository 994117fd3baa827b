"""The one boundary to the model: an OpenAI-compatible chat-completions client.

This is the only module that imports `openai`. It turns the wire protocol into a few plain
types (`TextChunk`, `ModelReply`) and every failure into `LLMError`, whose message is written
for the person at the keyboard ("The model server at … is not reachable"), never a traceback.
Retries with backoff on 429 / 5xx / connection errors are done by the `openai` client itself
(`max_retries`), which also honours Retry-After.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import openai

from hermes_site.config import Config


class LLMError(Exception):
    """A model/API failure, with a human message. `partial_text` is what streamed before it."""

    def __init__(self, message: str, *, partial_text: str = "", retryable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.partial_text = partial_text
        self.retryable = retryable


@dataclass
class ToolCallRequest:
    id: str
    name: str
    arguments: str  # raw JSON text as the model sent it (may be malformed)

    def to_api(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reported: bool = False


@dataclass
class TextChunk:
    text: str


@dataclass
class ModelReply:
    content: str
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    finish_reason: str = ""
    usage: Usage = field(default_factory=Usage)

    def to_api(self) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            msg["tool_calls"] = [tc.to_api() for tc in self.tool_calls]
        else:
            msg["content"] = self.content
        return msg


StreamEvent = TextChunk | ModelReply


def _human_error(exc: BaseException, base_url: str, model: str) -> LLMError:
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
        return LLMError(f"The model server at {where} does not know model '{model}' (HTTP 404).")
    if isinstance(exc, openai.RateLimitError):
        return LLMError(
            f"The model server at {where} is rate-limiting requests (HTTP 429). Try again shortly.", retryable=True
        )
    if isinstance(exc, openai.APIStatusError):
        detail = _error_detail(exc)
        return LLMError(
            f"The model server at {where} answered with an error (HTTP {exc.status_code}){detail}.",
            retryable=exc.status_code >= 500,
        )
    if isinstance(exc, openai.APIResponseValidationError | json.JSONDecodeError | UnicodeDecodeError):
        return LLMError(f"The model server at {where} sent a reply that is not a valid chat completion.")
    return LLMError(f"The model call failed: {type(exc).__name__}: {exc}")


def _error_detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    msg: Any = None
    if isinstance(body, dict):
        inner = body.get("error")
        msg = inner.get("message") if isinstance(inner, dict) else body.get("message")
    return f": {str(msg)[:200]}" if msg else ""


class ChatClient:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        timeout: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        if not model:
            raise LLMError(
                "No model is configured. Set model.name in config.yaml (or HERMES_MODEL), and "
                "model.base_url (or OPENAI_BASE_URL) for a server other than OpenAI."
            )
        self.model = model
        self.base_url = base_url
        self._client = openai.OpenAI(
            base_url=base_url or None,
            # Local servers (Ollama, llama.cpp) accept any key; the client insists on one.
            api_key=api_key or "not-needed",
            timeout=timeout,
            max_retries=max_retries,
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def stream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        interrupt: threading.Event | None = None,
    ) -> Iterator[StreamEvent]:
        """Stream one completion: TextChunk events, then exactly one ModelReply.

        On interruption the stream is closed and a ModelReply with finish_reason
        "interrupted" carries what arrived so far.
        """
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            kwargs["tools"] = tools
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        finish = ""
        usage = Usage()
        saw_chunk = False
        try:
            stream = self._client.chat.completions.create(**kwargs)
        except openai.OpenAIError as exc:
            raise _human_error(exc, self.base_url, self.model) from exc
        try:
            for chunk in stream:
                saw_chunk = True
                if interrupt is not None and interrupt.is_set():
                    finish = "interrupted"
                    break
                if chunk.usage is not None:
                    usage = Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0, True)
                for choice in chunk.choices or []:
                    delta = choice.delta
                    if delta is not None and delta.content:
                        text.append(delta.content)
                        yield TextChunk(delta.content)
                    for tc in (delta.tool_calls if delta is not None else None) or []:
                        slot = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                        if tc.id:
                            slot["id"] = tc.id
                        if tc.function is not None:
                            if tc.function.name:
                                slot["name"] += tc.function.name
                            if tc.function.arguments:
                                slot["arguments"] += tc.function.arguments
                    if choice.finish_reason:
                        finish = choice.finish_reason
        except openai.OpenAIError as exc:
            err = _human_error(exc, self.base_url, self.model)
            err.partial_text = "".join(text)
            raise err from exc
        except Exception as exc:  # a cut-off or garbled stream surfaces as transport/parse errors
            raise LLMError(
                f"The model server's reply was cut off or unreadable ({type(exc).__name__}).",
                partial_text="".join(text),
                retryable=True,
            ) from exc
        finally:
            stream.close()
        if not finish:
            if not saw_chunk:
                raise LLMError("The model server sent an empty or unreadable reply.", retryable=True)
            raise LLMError(
                "The model server's reply was cut off before it finished.", partial_text="".join(text), retryable=True
            )
        tool_calls = [
            ToolCallRequest(id=slot["id"] or f"call_{i}", name=slot["name"], arguments=slot["arguments"])
            for i, slot in sorted(calls.items())
        ]
        yield ModelReply(content="".join(text), tool_calls=tool_calls, finish_reason=finish, usage=usage)

    def complete(
        self, messages: list[dict[str, Any]], *, timeout: float | None = None, max_tokens: int | None = None
    ) -> str:
        """A plain completion (no tools, not streamed), for summaries."""
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
        if max_tokens:
            kwargs["max_tokens"] = max_tokens
        if timeout is not None:
            kwargs["timeout"] = timeout
        try:
            resp = self._client.chat.completions.create(**kwargs)
        except openai.OpenAIError as exc:
            raise _human_error(exc, self.base_url, self.model) from exc
        if not resp.choices:
            raise LLMError("The model server returned no choices.")
        return resp.choices[0].message.content or ""

    def list_models(self) -> list[str]:
        """Used by the connection check on the first-run panel."""
        try:
            return [m.id for m in self._client.models.list()]
        except openai.OpenAIError as exc:
            raise _human_error(exc, self.base_url, self.model) from exc


def client_from_config(config: Config, model: str | None = None, *, timeout: float | None = None) -> ChatClient:
    return ChatClient(
        base_url=config.base_url,
        api_key=config.api_key,
        model=model or config.model_name,
        timeout=timeout if timeout is not None else float(config.get("model", "timeout")),
        max_retries=int(config.get("model", "max_retries")),
    )
