"""The one boundary to the model: an OpenAI-compatible chat-completions client.

This package is the only code that imports `openai`, and it imports no Django. It turns the
wire protocol of real servers (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, OpenRouter,
DeepSeek, Mistral, LiteLLM, Groq, Gemini, SGLang, gateways and proxies — each with its own
dialect, see tests/wire/) into a few plain types (`TextChunk`, `ReasoningChunk`, `Notice`,
`ModelReply`), and every failure into `LLMError`, whose message is written for the person at
the keyboard, never a traceback.
"""

from __future__ import annotations

from agent.llm.abort import StopSignal
from agent.llm.capabilities import Capabilities, CapabilityStore, MemoryCapabilityStore
from agent.llm.client import ChatClient
from agent.llm.types import (
    LLMError,
    ModelReply,
    Notice,
    ReasoningChunk,
    StreamEvent,
    TextChunk,
    ToolCallRequest,
    Usage,
)
from foundation.config import Config


def client_from_config(
    config: Config,
    model: str | None = None,
    *,
    timeout: float | None = None,
    capabilities: CapabilityStore | None = None,
) -> ChatClient:
    return ChatClient(
        base_url=config.base_url,
        api_key=config.api_key,
        model=model or config.model_name,
        timeout=timeout if timeout is not None else config.model.timeout,
        max_retries=config.model.max_retries,
        capabilities=capabilities,
    )


__all__ = [
    "Capabilities",
    "CapabilityStore",
    "ChatClient",
    "LLMError",
    "MemoryCapabilityStore",
    "ModelReply",
    "Notice",
    "ReasoningChunk",
    "StopSignal",
    "StreamEvent",
    "TextChunk",
    "ToolCallRequest",
    "Usage",
    "client_from_config",
]
