"""Past one process: a tab opened on worker B while worker A writes an answer (and the tab that
sent the message on A is gone, closed while the answer streamed to it) joins it through Redis:
the text so far, then the rest, each piece once; its Stop stops the answer on worker A, and
neither worker logs a failure."""

from __future__ import annotations

import asyncio
import json
import secrets
from typing import Any

import pytest

from tests.chat_socket import chat_socket, frames_until
from tests.daphne import Http, another_worker, model_env, start_daphne
from tests.fakellm import Reply, ScriptedLLM
from tests.redis_server import redis_url

pytestmark = pytest.mark.slow

ANSWER = "Exit code 137 means the process was killed. " + "Check the memory limit first. " * 120


def _text(frames: list[dict[str, Any]]) -> str:
    return "".join(f["text"] for f in frames if f["type"] == "delta")


def test_a_tab_on_another_worker_joins_the_answer_and_stops_it(tmp_path):
    llm = ScriptedLLM()
    llm.default = lambda body: Reply(text=ANSWER, chunk_delay=0.02)
    llm.start()
    try:
        with redis_url(tmp_path / "redis") as url:
            env = {**model_env(llm.base_url), "REDIS_URL": url, "HERMES_REDIS_PREFIX": secrets.token_hex(4)}
            with start_daphne(tmp_path / "home", extra_env=env) as a, another_worker(a, extra_env=env) as b:
                on_a, on_b = Http(a.port), Http(b.port)
                on_a.login(a.token)
                on_b.login(b.token)
                assert on_a.get("/").status == 200
                (session_id,) = a.query("SELECT id FROM knowledge_chatsession")[0]

                async def scenario() -> list[dict[str, Any]]:
                    async with chat_socket(a, on_a, session_id) as sender:
                        await sender.send(json.dumps({"type": "message", "text": "explain exit code 137"}))
                        await frames_until(sender, "delta")
                    # The sending tab reloaded, and its page came from the other worker.
                    async with chat_socket(b, on_b, session_id) as joined:
                        await joined.send(json.dumps({"type": "join"}))
                        frames = await frames_until(joined, "delta")
                        while len(_text(frames)) < 200:  # more of the answer arrives live
                            frames += await frames_until(joined, "delta")
                        await joined.send(json.dumps({"type": "stop"}))
                        return frames + await frames_until(joined, "ready")

                frames = asyncio.run(scenario())
                assert frames[0]["type"] == "turn_started" and frames[0]["joined"]
                assert frames[0]["text"] == "explain exit code 137"
                assert {"type": "stopping", "running": True} in frames
                (done,) = [f for f in frames if f["type"] == "done"]
                assert done["interrupted"]
                text = _text(frames)
                assert ANSWER.startswith(text) and 200 <= len(text) < len(ANSWER)  # each piece once, then stopped
                stored = a.query(
                    "SELECT content FROM knowledge_message WHERE session_id=? AND role='assistant'", session_id
                )
                assert stored == [(text,)]
                for server in (a, b):
                    assert "Traceback" not in server.log()
    finally:
        llm.stop()
