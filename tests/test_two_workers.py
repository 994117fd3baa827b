"""Two daphne processes on one database (as behind a proxy): they agree on a chat's busy state,
and "New chat" pressed on one during an answer streaming from the other neither crashes the
turn nor loses its message."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from typing import Any

import pytest

from agent.chat.service import BUSY_MESSAGE
from tests.chat_socket import chat_socket, frames_until
from tests.daphne import Http, another_worker, model_env, start_daphne
from tests.fakellm import Reply, ScriptedLLM, last_user_text

pytestmark = pytest.mark.slow


def _busy_attr(page: str) -> str:
    match = re.search(r'data-busy="(\d)"', page)
    assert match, "the chat page carries the session's busy state"
    return match.group(1)


def test_two_workers_agree_on_busy_and_new_chat_during_an_answer_loses_nothing(tmp_path):
    llm = ScriptedLLM()
    release = threading.Event()

    def slow_answer(body: dict[str, Any]) -> Reply:
        if last_user_text(body) == "explain exit code 137":
            release.wait(60)  # the answer is "streaming" until the test lets it finish
            return Reply(text="Exit 137 means the process was killed (OOM).", chunk_delay=0.01)
        return Reply(text="ok")

    llm.default = slow_answer
    llm.start()
    try:
        with (
            start_daphne(tmp_path / "home", extra_env=model_env(llm.base_url)) as a,
            another_worker(a, extra_env=model_env(llm.base_url)) as b,
        ):
            on_a, on_b = Http(a.port), Http(b.port)
            on_a.login(a.token)
            on_b.login(b.token)
            assert on_a.get("/").status == 200
            (session_id,) = a.query("SELECT id FROM knowledge_chatsession")[0]

            async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]], str, str]:
                async with chat_socket(a, on_a, session_id) as ws_a, chat_socket(b, on_b, session_id) as ws_b:
                    await ws_a.send(json.dumps({"type": "message", "text": "explain exit code 137"}))
                    await frames_until(ws_a, "turn_started")
                    busy_on_b = _busy_attr(on_b.get(f"/c/{session_id}/").body)
                    await ws_b.send(json.dumps({"type": "message", "text": "a second message from tab B"}))
                    refused = await frames_until(ws_b, "error")
                    # "New chat" on worker B while worker A's answer is still being written.
                    new_chat = await asyncio.to_thread(on_b.csrf_post, "/c/new/", {"from": session_id})
                    assert new_chat.status == 302, new_chat
                    release.set()
                    frames = await frames_until(ws_a, "ready")
                    idle_on_b = _busy_attr(on_b.get(f"/c/{session_id}/").body)
                    return refused, frames, busy_on_b, idle_on_b

            refused, frames, busy_on_b, idle_on_b = asyncio.run(scenario())

            assert busy_on_b == "1"
            assert refused[-1]["error"] == BUSY_MESSAGE
            done = [f for f in frames if f["type"] == "done"]
            assert done and not done[0]["interrupted"]
            assert not [f for f in frames if f["type"] == "error"]
            assert idle_on_b == "0"
            stored = a.query("SELECT role, content FROM knowledge_message WHERE session_id=? ORDER BY id", session_id)
            assert stored == [
                ("user", "explain exit code 137"),
                ("assistant", "Exit 137 means the process was killed (OOM)."),
            ]
            # The old chat was ended by worker B once the answer was complete, not before.
            for _ in range(300):
                if a.query("SELECT ended_at FROM knowledge_chatsession WHERE id=?", session_id)[0][0]:
                    break
                threading.Event().wait(0.1)
            assert a.query("SELECT end_reason FROM knowledge_chatsession WHERE id=?", session_id) == [("new session",)]
            for server in (a, b):
                assert "Traceback" not in server.log()
    finally:
        release.set()
        llm.stop()
