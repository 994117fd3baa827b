"""Script a `ScriptedLLM` to answer like the server a `WireCase` recorded."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.fakellm import Reply, ScriptedLLM
from tests.wire import WireCase
from tests.wire.llamacpp import CASES as LLAMACPP

# A server whose replies were recorded non-streamed is one that cannot stream with tools:
# it refuses like llama.cpp did, and the client must come back without streaming.
NO_STREAM_WITH_TOOLS = next(c for c in LLAMACPP if c.refuses == "stream_tools")

FOLLOW_UP = "saved"


def uses(feature: str) -> Callable[[dict[str, Any]], bool]:
    """Whether a request body uses the feature a refusal case refuses."""
    checks: dict[str, Callable[[dict[str, Any]], bool]] = {
        "tools": lambda b: bool(b.get("tools")),
        "stream_tools": lambda b: bool(b.get("stream") and b.get("tools")),
        "system_role": lambda b: any(m.get("role") == "system" for m in b.get("messages", [])),
        "stream_options": lambda b: "stream_options" in b,
        "reasoning_echo": lambda b: any("reasoning_content" in m for m in b.get("messages", [])),
        "max_completion_tokens": lambda b: "max_completion_tokens" in b,
    }
    return checks[feature]


def replay(server: ScriptedLLM, case: WireCase) -> None:
    """The case answers the first request it fits; later requests get a plain answer."""
    follow = case.follow_up
    if callable(follow):
        answer = follow
        server.default = lambda body: Reply(raw=answer(body))
    elif follow is not None:
        server.default = lambda body: Reply(raw=follow)
    else:
        server.default = lambda body: Reply(text=FOLLOW_UP)
    if case.error:
        server.default = lambda body: Reply(raw=case.raw)
    elif case.refuses:
        server.when(uses(case.refuses), Reply(raw=case.raw))
    elif case.stream:
        server.when(lambda b: bool(b.get("stream")), Reply(raw=case.raw), times=1)
    else:
        server.when(uses("stream_tools"), Reply(raw=NO_STREAM_WITH_TOOLS.raw))
        server.when(lambda b: not b.get("stream"), Reply(raw=case.raw), times=1)
