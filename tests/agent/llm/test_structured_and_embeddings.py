"""Structured output (`response_format`) and embeddings: asked for until the server refuses them,
each refusal learned once per server + model and remembered by every later client.

The refusals below are the bodies real servers send, each with the public page it was taken from.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from agent.llm import ChatClient, LLMError, MemoryCapabilityStore
from knowledge.capabilities import describe
from tests.fakellm import EMBEDDING_DIMS, Raw, Reply, ScriptedLLM, embedding

VERDICT = {
    "type": "json_schema",
    "json_schema": {
        "name": "verdict",
        "schema": {
            "type": "object",
            "properties": {"allow": {"type": "boolean"}, "reason": {"type": "string"}},
            "required": ["allow", "reason"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}
ANSWER = '{"allow": true, "reason": "plain fact"}'
ASK = [{"role": "user", "content": "Is this entry safe to keep?"}]


@dataclass(frozen=True)
class Refusal:
    server: str
    source: str
    status: int
    body: Any
    response_format: dict[str, Any]

    def __str__(self) -> str:
        return self.server


STRUCTURED_REFUSALS = [
    Refusal(
        "OpenAI (gpt-4, gpt-3.5-turbo)",
        # The text langchain-openai matches to explain the refusal (_handle_openai_bad_request).
        "https://github.com/langchain-ai/langchain/blob/master/libs/partners/openai/langchain_openai/chat_models/base.py",
        400,
        {"error": {"message": "Invalid parameter: 'response_format' of type 'json_schema' is not supported with "
                   "this model.", "type": "invalid_request_error", "param": "response_format", "code": None}},
        VERDICT,
    ),
    Refusal(
        "Groq (llama-3.3-70b-versatile)",
        "https://console.groq.com/docs/structured-outputs",
        400,
        {"error": {"message": "This model does not support response format `json_schema`. See supported models at "
                   "https://console.groq.com/docs/structured-outputs#supported-models",
                   "type": "invalid_request_error"}},
        VERDICT,
    ),
    Refusal(
        "LM Studio 0.3 (asked for json_object)",
        "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/189",
        400,
        {"error": "'response_format.type' must be 'json_schema' or 'text'"},
        {"type": "json_object"},
    ),
    Refusal(
        "llama.cpp server b3777 (before json_schema)",
        "https://github.com/ggml-org/llama.cpp/issues/9522",
        500,
        {"error": {"code": 500, "message": 'response_format type must be one of "text" or "json_object", but got: '
                   "json_schema", "type": "server_error"}},
        VERDICT,
    ),
    Refusal(
        "vLLM (xgrammar backend)",
        "https://github.com/vllm-project/vllm/blob/main/vllm/v1/structured_output/backend_xgrammar.py",
        400,
        {"object": "error", "message": "The provided JSON schema contains features not supported by xgrammar.",
         "type": "BadRequestError", "param": None, "code": 400},
        VERDICT,
    ),
    Refusal(
        "Ollama (a schema its grammar converter cannot take)",
        "https://github.com/ollama/ollama/blob/main/llm/server.go",
        500,
        {"error": {"message": "invalid JSON schema in format", "type": "api_error", "param": None, "code": None}},
        VERDICT,
    ),
]  # fmt: skip

EMBEDDING_REFUSALS = [
    Refusal(
        "llama.cpp server without --embeddings",
        "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/server.cpp",
        501,
        {"error": {"code": 501, "message": "This server does not support embeddings. Start it with `--embeddings`",
                   "type": "not_supported_error"}},
        {},
    ),
    Refusal(
        "llama.cpp server with --pooling none",
        "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/server.cpp",
        400,
        {"error": {"code": 400, "message": "Pooling type 'none' is not OAI compatible. Please use a different "
                   "pooling type", "type": "invalid_request_error"}},
        {},
    ),
    Refusal(
        "vLLM serving a generative model",
        "https://github.com/vllm-project/vllm/blob/main/vllm/entrypoints/openai/api_server.py",
        400,
        {"object": "error", "message": "The model does not support Embeddings API", "type": "BadRequestError",
         "param": None, "code": 400},
        {},
    ),
    Refusal(
        "Ollama, a chat model at /v1/embeddings",
        "https://github.com/chunkhound/chunkhound/issues/41",
        500,
        {"error": {"message": "this model does not support embeddings", "type": "api_error", "param": None,
                   "code": None}},
        {},
    ),
    Refusal(
        # The report shows the body only; sent here with 400, the status that says least.
        "LM Studio, a chat model at /v1/embeddings",
        "https://github.com/lmstudio-ai/lms/issues/205",
        400,
        {"error": {"message": 'Failed to load model "m". Error: Model is not embedding.',
                   "type": "invalid_request_error", "param": "model", "code": "model_not_found"}},
        {},
    ),
]  # fmt: skip


@pytest.fixture
def server() -> Iterator[ScriptedLLM]:
    s = ScriptedLLM()
    s.start()
    yield s
    s.stop()


def _client(server: ScriptedLLM, store: MemoryCapabilityStore) -> ChatClient:
    return ChatClient(base_url=server.base_url, api_key="k", model="m", max_retries=0, capabilities=store)


def _formats(server: ScriptedLLM) -> list[Any]:
    return [body.get("response_format") for body in server.chat_requests()]


# -- structured output ------------------------------------------------------------------------------


def test_structured_output_is_sent_and_its_acceptance_remembered(server):
    server.default = lambda body: Reply(text=ANSWER)
    store = MemoryCapabilityStore()
    with _client(server, store) as client:
        reply = client.completion(ASK, response_format=VERDICT)
    assert reply.content == ANSWER and reply.structured
    assert _formats(server) == [VERDICT]
    assert (store.load(server.base_url, "m") or {})["response_format"] is True
    with _client(server, store) as later:
        assert later.completion(ASK, response_format=VERDICT).structured
    assert _formats(server) == [VERDICT, VERDICT]


@pytest.mark.parametrize("refusal", STRUCTURED_REFUSALS, ids=str)
def test_a_refused_response_format_is_dropped_once_and_never_sent_again(server, refusal):
    server.when(lambda body: "response_format" in body, Reply(raw=Raw(status=refusal.status, body=refusal.body)))
    server.default = lambda body: Reply(text=ANSWER)
    store = MemoryCapabilityStore()
    with _client(server, store) as client:
        reply = client.completion(ASK, response_format=refusal.response_format)
    # The answer still comes, and the caller learns it was not constrained by the server.
    assert reply.content == ANSWER and not reply.structured
    assert _formats(server) == [refusal.response_format, None]
    assert (store.load(server.base_url, "m") or {})["response_format"] is False
    with _client(server, store) as later:  # a new client, as in a new session or process
        assert not later.completion(ASK, response_format=refusal.response_format).structured
    assert _formats(server) == [refusal.response_format, None, None]


def test_a_scripted_refusal_of_response_format_is_learned(server):
    server.refuse_response_format("response_format is not supported by this model")
    server.default = lambda body: Reply(text=ANSWER)
    with _client(server, MemoryCapabilityStore()) as client:
        assert not client.completion(ASK, response_format=VERDICT).structured
        assert not client.completion(ASK, response_format=VERDICT).structured
    assert _formats(server) == [VERDICT, None, None]


def test_an_unrelated_error_with_response_format_is_shown_and_not_learned(server):
    server.push(Reply(status=400, error_message="messages must not be empty"))
    store = MemoryCapabilityStore()
    with _client(server, store) as client, pytest.raises(LLMError, match="messages must not be empty"):
        client.completion(ASK, response_format=VERDICT)
    assert len(server.chat_requests()) == 1
    assert (store.load(server.base_url, "m") or {}).get("response_format") is None


def test_a_completion_without_response_format_sends_none(server):
    with _client(server, MemoryCapabilityStore()) as client:
        reply = client.completion(ASK)
    assert reply.content == "ok" and not reply.structured
    assert _formats(server) == [None]


# -- embeddings -------------------------------------------------------------------------------------


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_embeddings_come_back_in_order_batched_and_are_remembered(server):
    server.serve_embeddings()
    texts = [f"note number {i} about the garden" for i in range(70)]
    store = MemoryCapabilityStore()
    with _client(server, store) as client:
        vectors = client.embed(texts)
    assert vectors == [embedding(t) for t in texts]
    assert [len(r["input"]) for r in server.embedding_requests] == [32, 32, 6]
    assert all(r["model"] == "m" for r in server.embedding_requests)
    assert (store.load(server.base_url, "m") or {})["embeddings"] is True
    assert server.chat_requests() == []  # embedding requests are not chat requests


def test_the_scripted_embedding_puts_near_texts_near(server):
    server.serve_embeddings()
    with _client(server, MemoryCapabilityStore()) as client:
        vectors = client.embed(["green tea in the morning", "green teas in the mornings", "quarterly tax return"])
    assert vectors is not None
    tea, teas, tax = vectors
    assert len(tea) == EMBEDDING_DIMS and math.isclose(_cosine(tea, tea), 1.0)
    assert _cosine(tea, teas) > _cosine(tea, tax)


def test_no_embeddings_endpoint_gives_none_and_is_not_asked_again(server):
    store = MemoryCapabilityStore()
    with _client(server, store) as client:
        assert client.embed(["a"]) is None  # the scripted server answers 404 until told to serve
        assert client.embed(["b"]) is None
        assert not client.can_embed
    with _client(server, store) as later:
        assert later.embed(["c"]) is None
    assert len(server.embedding_requests) == 1
    assert (store.load(server.base_url, "m") or {})["embeddings"] is False


@pytest.mark.parametrize("refusal", EMBEDDING_REFUSALS, ids=str)
def test_a_server_that_refuses_embeddings_is_learned_once(server, refusal):
    server.serve_embeddings(Raw(status=refusal.status, body=refusal.body))
    store = MemoryCapabilityStore()
    with _client(server, store) as client:
        assert client.embed(["a", "b"]) is None
        assert client.embed(["c"]) is None
    assert len(server.embedding_requests) == 1
    assert (store.load(server.base_url, "m") or {})["embeddings"] is False


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"object": "list", "data": [{"index": 0, "embedding": [0.1, 0.2]}]}, "2 texts were sent, 1 embeddings"),
        ({"object": "list", "data": [{"index": 0, "embedding": [0.1]}, {"index": 1, "embedding": "AAAA"}]},
         "not a list of numbers"),
        ({"object": "list", "data": [{"index": 0, "embedding": [0.1]}, {"index": 1, "embedding": [None]}]},
         "other than finite numbers"),
        ({"object": "list", "data": [{"index": 0, "embedding": [0.1]}, {"index": 1, "embedding": [0.1, 0.2]}]},
         "not all of one length"),
        ({"embeddings": [[0.1], [0.2]]}, "no list of embeddings"),
        ("<html>proxy</html>", "the answer is not JSON"),
    ],
    ids=["count", "base64", "null", "lengths", "ollama-native-shape", "html"],
)  # fmt: skip
def test_a_malformed_embeddings_answer_is_an_error_and_teaches_nothing(server, answer, message):
    server.serve_embeddings(Raw(body=answer))
    store = MemoryCapabilityStore()
    with _client(server, store) as client, pytest.raises(LLMError, match="sent embeddings that cannot be used") as err:
        client.embed(["a", "b"])
    assert message in err.value.message
    assert (store.load(server.base_url, "m") or {}).get("embeddings") is None


def test_embeddings_answered_out_of_order_are_put_back_in_order(server):
    a, b = embedding("alpha"), embedding("beta")
    data = [{"object": "embedding", "index": 1, "embedding": b}, {"object": "embedding", "index": 0, "embedding": a}]
    server.serve_embeddings(Raw(body={"object": "list", "data": data}))
    with _client(server, MemoryCapabilityStore()) as client:
        assert client.embed(["alpha", "beta"]) == [a, b]


def test_a_passing_server_error_or_lost_connection_is_an_error_not_a_finding(server):
    server.serve_embeddings(Raw(status=503, body={"error": {"message": "loading model"}}))
    store = MemoryCapabilityStore()
    with _client(server, store) as client:
        with pytest.raises(LLMError, match="HTTP 503") as busy:
            client.embed(["a"])
        assert busy.value.retryable
        assert client.embed(["a"]) == [embedding("a")]  # asked again: the server was only busy
    url = server.base_url
    server.stop()
    gone = ChatClient(base_url=url, api_key="k", model="gone", max_retries=0, capabilities=store)
    with gone, pytest.raises(LLMError, match="not reachable"):
        gone.embed(["a"])
    assert (store.load(url, "gone") or {}).get("embeddings") is None


def test_the_settings_page_lists_both_features_with_what_lacking_them_means():
    states = {s.feature.key: s for s in describe({"response_format": False, "embeddings": None})}
    assert states["response_format"].state == "no"
    assert states["response_format"].feature.without == (
        "The verifier's answers are read as plain JSON and held when unclear."
    )
    assert states["embeddings"].state == "unknown"
    assert states["embeddings"].feature.without == "Similar entries and past chats are found by their words only."
