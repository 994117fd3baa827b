"""The dashboard server killed mid-turn and started again: nothing said is lost."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from tests import dbs
from tests.chat_socket import chat_socket, frames_until
from tests.daphne import Http, start_daphne
from tests.fakellm import Reply, ScriptedLLM, last_user_text

pytestmark = pytest.mark.slow


async def test_server_killed_mid_answer_then_restarted_keeps_the_conversation(tmp_path: Path) -> None:
    llm = ScriptedLLM()
    llm.start()
    llm.push(Reply(text="a very slow answer " * 300, chunk_delay=0.05))
    llm.default = lambda body: Reply(text=f"answer to {last_user_text(body)}")
    env = {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "k", "HERMES_MODEL": "scripted-model"}
    config = "model:\n  max_retries: 0\nmemory:\n  flush_min_turns: 0\n"
    home = tmp_path / "home"
    home.mkdir()
    try:
        with start_daphne(home, config, env) as server:
            client = Http(server.port)
            client.login(server.token)
            assert client.get("/").status in (200, 302)
            session_id = server.query("select id from knowledge_chatsession")[0][0]
            async with chat_socket(server, client, session_id) as ws:
                await ws.send(json.dumps({"type": "message", "text": "please keep my question"}))
                await frames_until(ws, "delta")
                os.kill(server.process.pid, signal.SIGKILL)  # mid-stream, no chance to clean up
                server.process.wait()
        with start_daphne(home, config, env) as server:
            if not dbs.on_postgres():
                assert server.query("PRAGMA integrity_check") == [("ok",)]
            assert server.query("select content from knowledge_message where role='user'") == [
                ("please keep my question",)
            ]
            client = Http(server.port)
            client.login(server.token)
            page = client.get(f"/c/{session_id}/")
            assert page.status == 200 and "please keep my question" in page.body
            async with chat_socket(server, client, session_id) as ws:
                await ws.send(json.dumps({"type": "message", "text": "are you back?"}))
                frames = await frames_until(ws, "done")
            assert not [f for f in frames if f["type"] == "error"]
            users = [m["content"] for m in llm.chat_requests()[-1]["messages"] if m["role"] == "user"]
            assert users == ["please keep my question", "are you back?"]
            assert server.query("select content from knowledge_message where role='assistant'")[-1] == (
                "answer to are you back?",
            )
    finally:
        llm.stop()
