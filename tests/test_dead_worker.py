"""The daphne worker streaming an answer is killed (SIGKILL) while tabs on another worker show it:
those tabs leave "busy" with a clear message within seconds, what they saw of the answer is
stored and shown after a reload, and the next message, sent on the live worker, is answered.

Two real daphne processes on one database, their frames crossing through Redis
(tests/redis_server.py), the scripted model streaming slowly."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
from typing import Any

import pytest

from agent.chat.consumers import SERVER_STOPPED
from agent.chat.presenter import ENDINGS
from tests.chat_socket import chat_socket, frames_until
from tests.daphne import Daphne, Http, another_worker, model_env, start_daphne
from tests.fakellm import Reply, ScriptedLLM, last_user_text
from tests.redis_server import redis_url

pytestmark = pytest.mark.slow

LONG_ANSWER = "".join(f"step {n} of the slow answer. " for n in range(400))  # ~30 s at this pace
QUESTION = "walk me through the slow answer"


def _seen(frames: list[dict[str, Any]]) -> str:
    return "".join(f["text"] for f in frames if f["type"] == "delta")


async def _checkpointed(server: Daphne, session_id: str) -> str:
    """The answer's stored text once its first checkpoint is written."""
    for _ in range(300):
        rows = server.query("SELECT content FROM knowledge_message WHERE session_id=? AND role='assistant'", session_id)
        if rows and rows[0][0]:
            return str(rows[0][0])
        await asyncio.sleep(0.1)
    raise AssertionError("the streaming answer was never checkpointed")


def _llm() -> ScriptedLLM:
    llm = ScriptedLLM()

    def reply(body: dict[str, Any]) -> Reply:
        if last_user_text(body) == QUESTION:
            return Reply(text=LONG_ANSWER, chunk_delay=0.01)
        return Reply(text=f"answer to {last_user_text(body)}")

    llm.default = reply
    llm.start()
    return llm


def test_killing_the_worker_streaming_an_answer_frees_the_tabs_on_the_other_worker(tmp_path):
    llm = _llm()
    try:
        with redis_url(tmp_path / "redis") as url:
            env = {**model_env(llm.base_url), "REDIS_URL": url, "HERMES_REDIS_PREFIX": secrets.token_hex(4)}
            with start_daphne(tmp_path / "home", extra_env=env) as a, another_worker(a, extra_env=env) as b:
                _scenario(a, b, llm)
    finally:
        llm.stop()


def _scenario(a: Daphne, b: Daphne, llm: ScriptedLLM) -> None:
    on_a, on_b = Http(a.port), Http(b.port)
    on_a.login(a.token)
    on_b.login(b.token)
    assert on_a.get("/").status == 200
    (session_id,) = a.query("SELECT id FROM knowledge_chatsession")[0]

    async def run() -> dict[str, Any]:
        async with (
            chat_socket(b, on_b, session_id) as watcher,
            chat_socket(b, on_b, session_id) as stopper,
            chat_socket(a, on_a, session_id) as sender,
        ):
            await asyncio.sleep(0.5)  # the sockets' introductions (join/peer) cross Redis
            await sender.send(json.dumps({"type": "message", "text": QUESTION}))
            before = await frames_until(watcher, "delta")
            stored = await _checkpointed(a, session_id)
            await frames_until(stopper, "delta")
            os.kill(a.process.pid, signal.SIGKILL)  # mid-stream: no chance to say anything
            a.process.wait()
            # One tab presses Stop: nothing runs any more, and it is told so at once.
            await stopper.send(json.dumps({"type": "stop"}))
            # The other tab only watches: both hear within 15 s of the kill.
            stopped, after = await asyncio.wait_for(
                asyncio.gather(frames_until(stopper, "ready"), frames_until(watcher, "ready")), 15
            )
            await watcher.send(json.dumps({"type": "message", "text": "are you still there?"}))
            next_turn = await frames_until(watcher, "ready")
            return {
                "seen": _seen(before + after),
                "stored": stored,
                "stopped": stopped,
                "after": after,
                "next": next_turn,
            }

    got = asyncio.run(run())

    assert got["stored"] and LONG_ANSWER.startswith(got["stored"]) and got["stored"] != LONG_ANSWER
    for frames in (got["stopped"], got["after"]):
        errors = [f for f in frames if f["type"] == "error"]
        assert [e["error"] for e in errors] == [SERVER_STOPPED], frames
        assert frames[-1]["type"] == "ready"
    assert {"type": "stopping", "running": False} in got["stopped"]

    # What the person saw is stored, marked stopped, and shown after a reload.
    answer = b.query(
        "SELECT content, finish_reason FROM knowledge_message WHERE session_id=? AND role='assistant' ORDER BY id",
        session_id,
    )
    partial, reason = answer[0]
    assert reason == "interrupted" and partial and LONG_ANSWER.startswith(partial)
    assert got["seen"].startswith(partial[: len(got["seen"])])
    page = on_b.get(f"/c/{session_id}/").body
    assert partial[:200] in page and ENDINGS["interrupted"] in page
    assert 'data-busy="0"' in page

    # The next message on the live worker is answered, with the partial answer in its context.
    assert not [f for f in got["next"] if f["type"] == "error"]
    assert [f for f in got["next"] if f["type"] == "done"]
    assert answer[1:] == [("answer to are you still there?", "stop")]
    context = [m for m in llm.chat_requests()[-1]["messages"] if m["role"] == "assistant"]
    assert context and context[0]["content"] == partial
    assert "Traceback" not in b.log()
