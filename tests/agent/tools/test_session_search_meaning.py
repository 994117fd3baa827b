"""The agent's session_search finds a past chat by meaning when an embedding model is set, and
says that the session was found by meaning alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent import recall
from agent.llm import client_from_config
from agent.tools import session_search
from agent.tools.registry import ToolContext, ToolRegistry
from foundation import config as hermes_config
from knowledge.models import ChatSession, Message
from tests.conftest import write_config
from tests.fakellm import Reply, ScriptedLLM

pytestmark = pytest.mark.django_db


def _chat(title: str, *texts: str) -> ChatSession:
    session = ChatSession.objects.create(title=title)
    for text in texts:
        Message.objects.create(session=session, role="user", content=text)
    return session


def _call(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    registry = ToolRegistry([session_search.make_tool()])
    return json.loads(registry.dispatch("session_search", json.dumps(args), ctx).content())


def test_a_past_chat_is_found_by_meaning_and_marked_so(llm: ScriptedLLM, home: Path):
    llm.serve_embeddings()
    write_config(home, "embeddings:\n  model: all-minilm\n")
    ci = _chat("Pipeline", "We agreed to rerun the integration suite automatically because it keeps failing at random.")
    _chat("Cake", "For the birthday I will bake a lemon drizzle cake with poppy seeds.")
    current = _chat("Now", "hello")
    recall.embed_backlog()
    llm.default = Reply(text="They chose automatic reruns.")
    client = client_from_config(hermes_config.get())
    try:
        out = _call(
            {"query": "what did we decide about the unreliable CI tests"},
            ToolContext(session_id=current.id, llm=client),
        )
    finally:
        client.close()
    assert out["success"] is True
    assert [hit["session_id"] for hit in out["results"]] == [ci.id]
    assert out["results"][0]["matched"] == "meaning"
    assert "integration suite" in out["results"][0]["snippet"]
