"""Gemini 3 on Google's OpenAI-compatible endpoint (generativelanguage.googleapis.com/v1beta/openai)."""

from __future__ import annotations

from typing import Any

from tests.fakellm import Raw
from tests.wire import WireCase, chunk, error, memory_json, sse
from tests.wire.replay import FOLLOW_UP

SIGNATURE = "EjQKMgEMOdbHJChLX75QUCJjyYlmRvZ0aWNrZXQtc2lnbmF0dXJl"
_FIRST = memory_json("gemini-signed-first")
_MODEL = "gemini-3-pro-preview"

# Google's refusal when a signed call comes back without its signature: a JSON *list*.
MISSING_SIGNATURE = error(400, [{"error": {
    "code": 400, "status": "INVALID_ARGUMENT",
    "message": "Function call is missing a thought_signature in functionCall parts. This is required for tools "
               "to work correctly, and missing thought_signature may lead to degraded model performance. "
               "Additional data, function call `default_api:memory` , position 2. Please refer to "
               "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."}}])  # fmt: skip


def _signed_back(body: dict[str, Any]) -> Raw:
    """Like Gemini: the follow-up is refused unless the first call's signature came back on it."""
    calls = [tc for m in body.get("messages", []) if m.get("tool_calls") for tc in m["tool_calls"]]
    sent = [((tc.get("extra_content") or {}).get("google") or {}).get("thought_signature") for tc in calls]
    if not calls or sent[0] != SIGNATURE:
        return MISSING_SIGNATURE
    return sse(chunk({"role": "assistant", "content": FOLLOW_UP}, "stop", model=_MODEL))


def _call(call_id: str | None, args: str | None, name: str | None = "memory", **extra: Any) -> dict[str, Any]:
    fn = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    call: dict[str, Any] = {"type": "function", "function": fn, **extra} if fn else dict(extra)
    if call_id:
        call["id"] = call_id
    return chunk({"tool_calls": [call]}, model=_MODEL)


CASES = [
    WireCase(
        "gemini3_signed_calls_without_index",
        "Gemini 3 Pro (gemini-3-pro-preview) on the OpenAI-compatible endpoint",
        "https://ai.google.dev/gemini-api/docs/thought-signatures (and continuedev/continue#8865)",
        11,
        sse(
            chunk({"role": "assistant", "content": None}, model=_MODEL),
            # no `index`; the first call's arguments in two deltas, its signature in a delta of its own
            _call("function-call-8174", _FIRST[:25]),
            _call(None, _FIRST[25:], name=None),
            _call(None, None, name=None, extra_content={"google": {"thought_signature": SIGNATURE}}),
            _call("function-call-8175", memory_json("gemini-unsigned-second")),  # only the first call is signed
            chunk({}, "stop", model=_MODEL,
                  usage={"prompt_tokens": 311, "completion_tokens": 40, "total_tokens": 351}),
        ),
        stream=True,
        saves=("gemini-signed-first", "gemini-unsigned-second"),
        prompt_tokens=311,
        follow_up=_signed_back,
    ),
    WireCase(
        "gemini3_refuses_a_call_without_its_signature",
        "Gemini 3 Pro (gemini-3-pro-preview) on the OpenAI-compatible endpoint",
        "https://ai.google.dev/gemini-api/docs/thought-signatures",
        11,
        MISSING_SIGNATURE,
        stream=False,
        error="Function call is missing a thought_signature in functionCall parts",
    ),
]  # fmt: skip
