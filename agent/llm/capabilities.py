"""What one server + model can do, learned from its refusals (or a probe) and remembered.

The client asks for every feature until the server refuses one; the refusal is recognised
from its error text (`classify_refusal`), the request is repeated once without that feature,
and the finding is saved through a `CapabilityStore` so the next request, the next session
and the next process do not learn it again. The store is a protocol: the Django app supplies
one backed by the database (knowledge/capabilities.py); this package imports no Django.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, fields
from typing import Any, Protocol


@dataclass
class Capabilities:
    # None: not known yet (the feature is used until the server refuses it).
    tools: bool | None = None  # accepts `tools` (Ollama models without a tool template do not)
    stream_tools: bool | None = None  # streams while tools are offered (older llama.cpp does not)
    system_role: bool | None = None  # accepts a system message (Gemma chat templates do not)
    stream_options: bool | None = None  # accepts stream_options (Mistral answers 422)
    reasoning_echo: bool | None = None  # accepts reasoning_content on assistant messages
    # accepts the fields another server put on its replies (`extra_content`, `reasoning_details`)
    # sent back with them: a chat moved to a strict server (Mistral answers 422) drops them
    provider_echo: bool | None = None
    images: bool | None = None  # accepts image_url content parts (a vision model)
    # accepts `response_format` with a JSON schema (structured output); the verifier asks for it
    response_format: bool | None = None
    embeddings: bool | None = None  # serves /v1/embeddings for this model (recall and nearest entries by meaning)
    # writes tool calls as text in its own template's markup because the server's tool parser is off:
    # learned from a reply whose native tool channel was empty while its whole output was such markup
    text_calls: bool | None = None
    # The closing tag when the model's chat template opens a think block in the prompt, so its
    # replies start inside it (learned from a reply that closed a block it never opened).
    think_opened: str = ""
    max_tokens_field: str = "max_tokens"  # or max_completion_tokens (OpenAI reasoning models)
    probed_at: str = ""  # ISO time of the last full probe, "" when only learned in use

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Capabilities:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in (data or {}).items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def limitations(self) -> list[str]:
        """What the person should know, in their words."""
        out = []
        if self.tools is False:
            out.append(TOOLS_OFF_NOTICE)
        if self.stream_tools is False:
            out.append("Replies that may call tools arrive whole instead of word by word (no streaming with tools).")
        if self.system_role is False:
            out.append("The system prompt is sent inside the first user message (the model has no system role).")
        if self.stream_options is False:
            out.append("Token usage is estimated when the server does not report it (stream_options refused).")
        if self.images is False:
            out.append("Attached images are not sent: the model sees [image: name] instead (it takes no images).")
        if self.response_format is False:
            out.append("The verifier's answers are read as plain JSON and held when unclear (no structured output).")
        if self.embeddings is False:
            out.append("Similar entries and past chats are found by their words only (the server has no embeddings).")
        return out


TOOLS_OFF_NOTICE = (
    "This model cannot call tools: the agent cannot save memories or skills itself and reviews are off; "
    "save by hand in the browser, or choose a model that can call tools."
)

IMAGES_OFF_ERROR = (
    "This model does not accept images. Your message is kept; from now on the model sees each image as "
    "[image: name]. To send the image, choose a model that reads images (the Model box) and send it again."
)
# Refusals that are not repeated without the feature: the person sent that feature on purpose,
# and an answer that silently ignored it would mislead (the turn ends with the sentence above).
NOT_RETRIED = {"images": IMAGES_OFF_ERROR}

# Error texts of real servers (recorded in tests/wire/) -> the feature they refuse.
_REFUSALS: list[tuple[str, tuple[str, ...]]] = [
    ("stream_tools", ("cannot use tools with stream", "tools with stream", "streaming is not supported with tools")),
    ("tools", ("does not support tools", "tools are not supported", "tool use is not supported",
               "enable-auto-tool-choice", "tool choice requires", "does not support function")),
    ("system_role", ("system role not supported", "system role is not supported", "system messages are not supported")),
    ("stream_options", ("stream_options",)),
    ("images", ("image input is not supported", "not compiled for multimodal", "does not support image",
                "image input detected", "mmproj")),
    # Structured output (a `response_format` with a JSON schema). Texts recorded in
    # tests/agent/llm/test_structured_and_embeddings.py, each with its public source: OpenAI
    # ("'response_format' of type 'json_schema' is not supported with this model"), Groq ("does not
    # support response format `json_schema`"), LM Studio ("'response_format.type' must be ..."),
    # llama.cpp before json_schema (HTTP 500 "response_format type must be one of ..."), vLLM
    # ("JSON schema contains features not supported by xgrammar"; its older errors speak of
    # guided decoding), Ollama (HTTP 500 "invalid JSON schema in format").
    ("response_format", ("response_format", "response format", "json_schema", "json schema",
                         "structured output", "guided")),
]  # fmt: skip


def classify_refusal(detail: str, request: dict[str, Any]) -> str | None:
    """The feature a 400/422/500 refuses, if its text names one the request used."""
    text = detail.lower()
    if "reasoning_content" in text and "passed back" not in text and _echoes_reasoning(request):
        return "reasoning_echo"
    if any(key in text and _echoes(request, key) for key in ("extra_content", "reasoning_details")):
        return "provider_echo"  # a server other than the one that sent them (the model was changed)
    if "max_completion_tokens" in text:
        if "max_completion_tokens" in request:
            return "max_completion_tokens"
        if "max_tokens" in request:
            return "max_tokens"
    for feature, needles in _REFUSALS:
        if any(n in text for n in needles) and _uses(feature, request):
            return feature
    return None


def _echoes_reasoning(request: dict[str, Any]) -> bool:
    return any(isinstance(m, dict) and "reasoning_content" in m for m in request.get("messages", []))


def _echoes(request: dict[str, Any], key: str) -> bool:
    """Whether a message, or a tool call of one, carries `key`."""
    for m in request.get("messages", []):
        if not isinstance(m, dict):
            continue
        raw_calls = m.get("tool_calls")
        calls: list[Any] = raw_calls if isinstance(raw_calls, list) else []
        if key in m or any(isinstance(c, dict) and key in c for c in calls):
            return True
    return False


def _uses(feature: str, request: dict[str, Any]) -> bool:
    if feature == "stream_tools":
        return bool(request.get("stream") and request.get("tools"))
    if feature == "tools":
        return bool(request.get("tools"))
    if feature == "system_role":
        return any(isinstance(m, dict) and m.get("role") == "system" for m in request.get("messages", []))
    if feature == "stream_options":
        return "stream_options" in request
    if feature == "images":
        return any(_has_image(m) for m in request.get("messages", []))
    if feature == "response_format":
        return "response_format" in request
    return False


def _has_image(message: Any) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(isinstance(p, dict) and p.get("type") == "image_url" for p in content)


# /v1/embeddings: any answer with these statuses means the server has no such endpoint (or not
# for this model); other refusals are recognised from their text, recorded (with sources) in
# tests/agent/llm/test_structured_and_embeddings.py: llama.cpp started without --embeddings
# (501), its "pooling type 'none'" (400), vLLM's "does not support Embeddings API" (400), Ollama's
# "this model does not support embeddings" (500 at /v1), LM Studio's "Model is not embedding".
_EMBEDDINGS_ABSENT = {404, 405, 501}
_EMBEDDINGS_REFUSALS = ("not support embeddings", "embeddings api", "embeddings are not supported",
                        "embedding is not supported", "not an embedding model", "model is not embedding",
                        "pooling type 'none'")  # fmt: skip


def refuses_embeddings(status: int, detail: str) -> bool:
    """Whether an error answer to POST /embeddings says this server + model cannot embed
    (rather than failing for a while: overloaded, rate-limited, a bad key)."""
    if status in _EMBEDDINGS_ABSENT:
        return True
    text = detail.lower()
    return status in {400, 422, 500} and any(n in text for n in _EMBEDDINGS_REFUSALS)


def learn(caps: Capabilities, refused: str) -> None:
    """Record a refusal on `caps`."""
    if refused == "max_tokens":
        caps.max_tokens_field = "max_completion_tokens"
    elif refused == "max_completion_tokens":
        caps.max_tokens_field = "max_tokens"
    else:
        setattr(caps, refused, False)


class CapabilityStore(Protocol):
    def load(self, base_url: str, model: str) -> dict[str, Any] | None: ...

    def save(self, base_url: str, model: str, data: dict[str, Any]) -> None: ...


class MemoryCapabilityStore:
    """Remembers for the life of the process (the default when no database store is given)."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], dict[str, Any]] = {}
        self._lock = threading.Lock()

    def load(self, base_url: str, model: str) -> dict[str, Any] | None:
        with self._lock:
            found = self._data.get((base_url, model))
            return dict(found) if found is not None else None

    def save(self, base_url: str, model: str, data: dict[str, Any]) -> None:
        with self._lock:
            self._data[(base_url, model)] = dict(data)
