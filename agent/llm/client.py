"""The chat-completions client: requests shaped for what the server accepts, replies read leniently.

Requests go through the `openai` client's HTTP client and its rules (retries with backoff on
429 / 5xx / connection errors, honouring Retry-After; the first try sent without its per-request
option handling) but replies are taken as plain JSON, so the fields
and shapes real servers send beyond OpenAI's types reach `Assembler` intact. A request the
server refuses for a feature it lacks is repeated once without it, and the finding is stored.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import openai
from openai._models import FinalRequestOptions

from agent.llm.abort import MARKER_HEADER, Stopped, new_marker, send_interruptibly, watch_response
from agent.llm.assemble import Assembler
from agent.llm.capabilities import (
    NOT_RETRIED,
    TOOLS_OFF_NOTICE,
    Capabilities,
    CapabilityStore,
    MemoryCapabilityStore,
    classify_refusal,
    learn,
    refuses_embeddings,
)
from agent.llm.embeddings import EMBED_BATCH, BadEmbeddings, check_lengths, read_vectors
from agent.llm.errors import human_error, status_detail
from agent.llm.reader import read_payloads
from agent.llm.textcalls import parse_text_calls
from agent.llm.types import LLMError, ModelReply, Notice, StreamEvent, TextChunk
from agent.llm.wire import wire_messages

log = logging.getLogger(__name__)

# Each refusal removes one feature, so a request can be refused at most this many times.
MAX_REFUSALS = 7
_REFUSAL_STATUSES = {400, 422, 500, 501}


class Refused(Exception):
    def __init__(self, feature: str) -> None:
        super().__init__(feature)
        self.feature = feature


class _UnreadReply(openai.Stream[object]):
    """The `openai` client's stream, used only to get the HTTP response back unread."""


def _direct_url(client: openai.OpenAI) -> str | None:
    """The chat URL a request's first try may be sent to past the `openai` client's request path:
    None unless the key is plain, with no per-request auth or request transform and no query
    string the path would merge."""
    per_request = ("_provider_runtime", "_api_key_provider", "_workload_identity_auth", "_custom_query")
    if not isinstance(client._client, httpx2.Client) or client.base_url.query:
        return None
    if any(getattr(client, name, None) for name in per_request):
        return None
    return str(client.base_url) + "chat/completions"


class ChatClient:
    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        timeout: float = 60.0,
        max_retries: int = 2,
        capabilities: CapabilityStore | None = None,
        openai_client: openai.OpenAI | None = None,
    ) -> None:
        """`openai_client`: an existing client to share (see agent/clients.py); closing this
        ChatClient then leaves it open for its other users."""
        if not model:
            raise LLMError(
                "No model is configured. Set model.name in config.yaml (or HERMES_MODEL), and "
                "model.base_url (or OPENAI_BASE_URL) for a server other than OpenAI."
            )
        self.model = model
        self.base_url = base_url
        # Sent with every request when set (a chat's own temperature); None: the server's default.
        self.temperature: float | None = None
        self._store: CapabilityStore = capabilities or MemoryCapabilityStore()
        self.caps = Capabilities.from_dict(self._store.load(base_url, model))
        self._owns_client = openai_client is None
        self._client = openai_client or openai.OpenAI(
            base_url=base_url or None,
            # Local servers (Ollama, llama.cpp) accept any key; the client insists on one.
            api_key=api_key or "not-needed",
            timeout=timeout,
            max_retries=max_retries,
        )
        self._direct_url = _direct_url(self._client)  # where _post_once sends; None: it does not

    @property
    def openai_client(self) -> openai.OpenAI:
        return self._client

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    @property
    def accepts_images(self) -> bool:
        """False once the server said this model cannot take image parts; unknown counts as yes."""
        return self.caps.images is not False

    @property
    def can_call_tools(self) -> bool:
        """False once the server said this model cannot take tools (learned or probed)."""
        return self.caps.tools is not False

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests -------------------------------------------------------------------------------
    def build_request(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        *,
        stream: bool,
        max_tokens: int | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        caps = self.caps
        body: dict[str, Any] = {"model": self.model, "messages": wire_messages(messages, caps)}
        if response_format and caps.response_format is not False:
            body["response_format"] = response_format
        send_tools = bool(tools) and caps.tools is not False
        if send_tools:
            body["tools"] = tools
        stream = stream and not (send_tools and caps.stream_tools is False)
        if stream:
            body["stream"] = True
            if caps.stream_options is not False:
                body["stream_options"] = {"include_usage": True}
        if max_tokens:
            body[caps.max_tokens_field] = max_tokens
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    def send(
        self, body: dict[str, Any], timeout: float | None = None, marker: str = "", stop: threading.Event | None = None
    ) -> Any:
        """POST one request and return the HTTP response unread (see agent/llm/reader.py);
        a refusal of a known feature raises `Refused`, others `LLMError`. `marker` tags the
        request so that Stop (`stop`) can find its connection (agent/llm/abort.py)."""
        options: Any = {"headers": {MARKER_HEADER: marker}} if marker else {}
        try:
            response, retries = self._post_once(body, timeout, marker, stop)
            if response is not None:
                return response
            changes: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
            if retries != self._client.max_retries:
                changes["max_retries"] = retries
            client = self._client.with_options(**changes) if changes else self._client
            # Always a streamed HTTP read, whatever `stream` asks of the server: the reply is
            # read by what it turns out to be, and the body stays plain JSON with every field.
            reply = client.post(
                "/chat/completions", body=body, cast_to=object, stream=True, stream_cls=_UnreadReply, options=options
            )
            return reply.response
        except openai.APIStatusError as exc:
            if exc.status_code in _REFUSAL_STATUSES:
                feature = classify_refusal(status_detail(exc), body)
                if feature is not None:
                    raise Refused(feature) from exc
            raise human_error(exc, self.base_url, self.model) from exc
        except openai.OpenAIError as exc:
            raise human_error(exc, self.base_url, self.model) from exc

    def _post_once(
        self, body: dict[str, Any], timeout: float | None, marker: str, stop: threading.Event | None
    ) -> tuple[Any, int]:
        """The first try of a request, sent straight through the `openai` client's own HTTP
        client (its pool, headers, URL and timeout): the response when the server accepted it,
        else None and how many retries the `openai` client's path has left for it (after the
        backoff it would have waited). A refusal with no retry left raises its `APIStatusError`.

        The `openai` client's request path costs 0.3-0.7 ms of CPU more a model call than its
        HTTP client (its options copied, validated and merged per try, more as the conversation
        grows), a tenth of a turn's budget. It still sends every retry, and every request of a
        client whose auth it computes per request (key providers, workload identity, provider
        runtimes)."""
        client = self._client
        retries = client.max_retries
        url = self._direct_url
        if url is None:
            return None, retries
        headers = {k: v for k, v in {**client.default_headers, **client.auth_headers}.items() if isinstance(v, str)}
        if marker:
            headers[MARKER_HEADER] = marker
        # Encoded as the openai client encodes a body.
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        http: httpx2.Client = client._client
        request = http.build_request(
            "POST", url, content=content, headers=headers, timeout=client.timeout if timeout is None else timeout
        )
        # A request after Stop is not tried again: that would ask for an answer nobody reads.
        stopped = stop is not None and stop.is_set
        try:
            response = http.send(request, stream=True)
        except httpx2.TransportError as exc:
            if retries > 0 and not (stopped and stopped()):
                return None, retries - 1
            # What the openai client's path raises for it, with no retry left.
            if isinstance(exc, httpx2.TimeoutException):
                raise openai.APITimeoutError(request=request) from exc
            raise openai.APIConnectionError(request=request) from exc
        if response.is_success:
            return response, retries
        # The openai client's own rules: which statuses are retried (429, 5xx, or as the server
        # says), after how long (Retry-After, else its backoff), and the error raised otherwise.
        response.read()
        if retries > 0 and client._should_retry(response) and not (stopped and stopped()):
            options = FinalRequestOptions.construct(method="post", url="/chat/completions")
            time.sleep(client._calculate_retry_timeout(retries, options, response.headers))
            if not (stopped and stopped()):
                return None, retries - 1
        raise client._make_status_error_from_response(response)

    def remember(self, feature: str) -> Notice | None:
        log.info("model server %s (%s) refused %s; remembered", self.base_url, self.model, feature)
        learn(self.caps, feature)
        self.save_capabilities()
        return Notice(TOOLS_OFF_NOTICE) if feature == "tools" else None

    def save_capabilities(self) -> None:
        self._store.save(self.base_url, self.model, self.caps.to_dict())

    def _send_adapting(
        self,
        build: Any,
        timeout: float | None = None,
        notices: list[Notice] | None = None,
        marker: str = "",
        stop: threading.Event | None = None,
    ) -> tuple[dict[str, Any], Any]:
        for _ in range(MAX_REFUSALS):
            body = build()
            try:
                return body, self.send(body, timeout, marker, stop)
            except Refused as refused:
                notice = self.remember(refused.feature)
                if refused.feature in NOT_RETRIED:
                    raise LLMError(NOT_RETRIED[refused.feature]) from refused
                if notice is not None and notices is not None:
                    notices.append(notice)
        raise LLMError(f"The model server at {self.base_url} refused every form of the request.")

    # -- the loop's call ------------------------------------------------------------------------
    def stream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        interrupt: threading.Event | None = None,
    ) -> Iterator[StreamEvent]:
        """Stream one completion: Notice/ReasoningChunk/TextChunk events, then exactly one ModelReply.

        On interruption the stream is closed and a ModelReply with finish_reason
        "interrupted" carries what arrived so far.
        """
        notices: list[Notice] = []

        def send(marker: str = "") -> tuple[dict[str, Any], Any]:
            build = functools.partial(self.build_request, messages, tools, stream=True)
            return self._send_adapting(build, None, notices, marker, interrupt)

        if interrupt is None:
            body, response = send()
        else:
            # The wait for the server's first byte can be long (slow and reasoning models):
            # Stop must end it too, and close the connection so the server stops generating.
            marker = new_marker()
            try:
                body, response = send_interruptibly(
                    lambda: send(marker), interrupt, self._client._client, marker, lambda late: late[1].close()
                )
            except Stopped:
                yield from notices
                yield ModelReply("", [], "interrupted")
                return
        yield from notices
        yield from self.read(body, response, interrupt)

    def read(
        self, body: dict[str, Any], response: Any, interrupt: threading.Event | None = None
    ) -> Iterator[StreamEvent]:
        """The events of the reply to `body`, streamed or whole, ending with one ModelReply."""
        assembler = Assembler(
            tools_offered=bool(body.get("tools")), think_opened=self.caps.think_opened, text_calls=self.caps.text_calls
        )
        saw_payload = whole = interrupted = False
        # Stop cuts a read waiting for the next chunk.
        read_all = watch_response(response, interrupt) if interrupt is not None else None
        try:
            for payload in read_payloads(response, self.base_url or "the default OpenAI endpoint"):
                saw_payload = True
                if interrupt is not None and interrupt.is_set():
                    interrupted = True
                    break
                whole = whole or payload.whole
                yield from assembler.feed(payload.data)
        except LLMError as err:
            err.partial_text = err.partial_text or "".join(assembler.text)
            raise
        except httpx2.TimeoutException as exc:
            raise self._broken("did not answer in time", assembler) from exc
        except httpx2.TransportError as exc:
            if interrupt is not None and interrupt.is_set():
                interrupted = True  # the connection was cut by Stop (watch_response)
            else:
                raise self._broken(f"broke off the reply ({type(exc).__name__})", assembler) from exc
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise LLMError(
                f"The model server's reply was unreadable ({type(exc).__name__}).",
                partial_text="".join(assembler.text),
                retryable=True,
            ) from exc
        except Exception as exc:
            # A bug here, not a network fault: keep the traceback for the log, tell the person plainly.
            log.exception("reading the reply of %s failed", self.base_url)
            raise LLMError(
                f"Internal error while reading the model's reply ({type(exc).__name__}: {exc}); see the server log.",
                partial_text="".join(assembler.text),
            ) from exc
        finally:
            if read_all is not None:
                read_all()
            response.close()
        if interrupted or (interrupt is not None and interrupt.is_set()):
            _, reply = assembler.finish()
            yield ModelReply(reply.content, [], "interrupted", reply.usage, reply.reasoning)
            return
        if whole:
            assembler.finish_reason = assembler.finish_reason or "stop"  # a whole body is never cut off
        yield from self._reply(assembler, saw_payload)

    def _learn_template(self, assembler: Assembler) -> None:
        """Remember (or forget) that this model's template opens a think block in the prompt, so
        that its next replies stream the thinking as thinking from their first word; and that it
        writes its tool calls as text (its native channel empty, a whole answer of its own markup)."""
        if assembler.text_calls and self.caps.text_calls is None:
            log.info("model %s at %s: tool calls come as text", self.model, self.base_url)
            self.caps.text_calls = True
            self.save_capabilities()
        found = assembler.think_opened
        if found is not None and found != self.caps.think_opened:
            log.info("model %s at %s: think block opened by the template: %r", self.model, self.base_url, found)
            self.caps.think_opened = found
            self.save_capabilities()

    def _broken(self, what: str, assembler: Assembler) -> LLMError:
        where = self.base_url or "the default OpenAI endpoint"
        return LLMError(f"The model server at {where} {what}.", partial_text="".join(assembler.text), retryable=True)

    def _reply(self, assembler: Assembler, saw_chunk: bool) -> Iterator[StreamEvent]:
        events, reply = assembler.finish()
        self._learn_template(assembler)
        yield from events
        if not reply.finish_reason:
            partial = "".join(assembler.text)
            if not saw_chunk:
                raise LLMError("The model server sent an empty or unreadable reply.", retryable=True)
            raise LLMError(
                "The model server's reply was cut off before it finished.", partial_text=partial, retryable=True
            )
        yield reply

    # -- summaries and probes -----------------------------------------------------------------------
    def complete(
        self, messages: list[dict[str, Any]], *, timeout: float | None = None, max_tokens: int | None = None
    ) -> str:
        """A plain completion (no tools, not streamed), for summaries. Always a `str`."""
        return self.completion(messages, timeout=timeout, max_tokens=max_tokens).content

    def completion(
        self,
        messages: list[dict[str, Any]],
        *,
        timeout: float | None = None,
        max_tokens: int | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> ModelReply:
        """`complete`, with the whole reply: its usage is counted by callers that bill a run for it.

        `response_format` (OpenAI's `{"type": "json_schema", "json_schema": {...}}`) is sent
        unless this server is known to refuse it; a refusal repeats the request once without it
        and is remembered. `reply.structured` says whether it was sent and accepted."""

        def build() -> dict[str, Any]:
            return self.build_request(
                messages, None, stream=False, max_tokens=max_tokens, response_format=response_format
            )

        body, response = self._send_adapting(build, timeout)
        reply: ModelReply | None = None
        for event in self.read(body, response):
            if isinstance(event, ModelReply):
                reply = event  # the other events repeat the reply's text; a summary needs only that
        assert reply is not None  # read() always ends with a ModelReply or raises
        if "response_format" in body:
            reply.structured = True
            if self.caps.response_format is not True:
                self.caps.response_format = True
                self.save_capabilities()
        visible, parsed = parse_text_calls(reply.content)
        if parsed:
            # No tools were offered, so nothing held the markup back; a summary never carries it.
            reply.content = visible
        return reply

    # -- embeddings -----------------------------------------------------------------------------
    @property
    def can_embed(self) -> bool:
        """False once the server said it has no embeddings for this model; unknown counts as yes."""
        return self.caps.embeddings is not False

    def embed(self, texts: list[str], *, timeout: float | None = None) -> list[list[float]] | None:
        """One vector per text, in order, from POST /embeddings with this client's model.

        None when the server cannot embed (no such endpoint, or a model it will not embed with):
        that is learned from its first answer and remembered, so it is not asked again. A
        network fault or a passing server error raises `LLMError` and teaches nothing; so does
        an answer that is not one list of numbers per text, all of one length."""
        if not self.can_embed:
            return None
        client = self._client if timeout is None else self._client.with_options(timeout=timeout)
        vectors: list[list[float]] = []
        try:
            for start in range(0, len(texts), EMBED_BATCH):
                batch = texts[start : start + EMBED_BATCH]
                answer = client.post("/embeddings", body={"model": self.model, "input": batch}, cast_to=object)
                vectors.extend(read_vectors(answer, len(batch)))
            check_lengths(vectors)
        except openai.APIStatusError as exc:
            if not refuses_embeddings(exc.status_code, status_detail(exc)):
                raise human_error(exc, self.base_url, self.model) from exc
            log.info("model server %s (%s) has no embeddings; remembered", self.base_url, self.model)
            self.caps.embeddings = False
            self.save_capabilities()
            return None
        except openai.OpenAIError as exc:
            raise human_error(exc, self.base_url, self.model) from exc
        except (BadEmbeddings, json.JSONDecodeError, UnicodeDecodeError) as exc:
            what = str(exc) if isinstance(exc, BadEmbeddings) else f"the answer is not JSON ({type(exc).__name__})"
            where = self.base_url or "the default OpenAI endpoint"
            raise LLMError(f"The model server at {where} sent embeddings that cannot be used: {what}.") from exc
        if texts and self.caps.embeddings is not True:
            self.caps.embeddings = True
            self.save_capabilities()
        return vectors

    def list_models(self) -> list[str]:
        """Used by the connection check on the first-run panel."""
        try:
            return [m.id for m in self._client.models.list()]
        except openai.OpenAIError as exc:
            raise human_error(exc, self.base_url, self.model) from exc


__all__ = ["ChatClient", "Refused", "TextChunk"]
