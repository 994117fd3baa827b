"""The chat and notification websockets, driven by Channels' communicator against the real
runner and the scripted model server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from agent.chat import live, presenter
from agent.chat import service as chat_service
from agent.learning import notify, review
from knowledge.models import Message
from tests.agent.ws import APP, frames_until, open_socket
from tests.conftest import write_config
from tests.fakellm import Reply, last_user_text

pytestmark = pytest.mark.django_db(transaction=True)

REVIEW_PROMPT = "Review the conversation above"


def _types(frames: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for f in frames:
        if not (f["type"] == "delta" and out and out[-1] == "delta"):
            out.append(f["type"])
    return out


async def test_a_turn_streams_frames_in_order_and_stores_the_conversation(llm, owner, session_id):
    llm.push(Reply(tool_calls=[{"name": "skills_list", "arguments": {}}]), Reply(text="Hello **world**, done."))
    comm = await open_socket(f"/ws/chat/{session_id}/", owner)
    await comm.send_json_to({"type": "message", "text": "list my skills"})
    frames = await frames_until(comm, "ready")
    assert _types(frames) == [
        "turn_started",
        "usage",
        "tool_started",
        "tool_finished",
        "delta",
        "usage",
        "done",
        "saved",
        "ready",
    ]
    by_type = {f["type"]: f for f in frames}
    assert by_type["turn_started"]["text"] == "list my skills"
    assert by_type["tool_started"]["name"] == "skills_list"
    finished = by_type["tool_finished"]
    assert finished["ok"] is True and '"skills"' in finished["result"] and finished["duration"] >= 0
    assert "".join(f["text"] for f in frames if f["type"] == "delta") == "Hello **world**, done."
    assert "<strong>world</strong>" in by_type["done"]["final_html"]
    assert by_type["done"]["interrupted"] is False
    saved = by_type["saved"]
    assert saved["turns_until_memory_review"] == 9 and saved["iters_until_skill_review"] == 8
    roles = await sync_to_async(
        lambda: list(Message.objects.filter(session_id=session_id).values_list("role", flat=True))
    )()
    assert roles == ["user", "assistant", "tool", "assistant"]
    await comm.disconnect()


async def test_stop_interrupts_a_slow_answer_and_the_next_message_works(llm, owner, session_id):
    llm.push(Reply(text="slow " * 200, chunk_delay=0.03))
    comm = await open_socket(f"/ws/chat/{session_id}/", owner)
    await comm.send_json_to({"type": "message", "text": "write a lot"})
    frames = [await comm.receive_json_from(timeout=10)]
    while frames[-1]["type"] != "delta":
        frames.append(await comm.receive_json_from(timeout=10))
    await comm.send_json_to({"type": "stop"})
    frames += await frames_until(comm, "ready")
    done = next(f for f in frames if f["type"] == "done")
    assert done["interrupted"] is True
    assert {"type": "stopping", "running": True} in frames
    llm.default = lambda body: Reply(text=f"answer to {last_user_text(body)}")
    await comm.send_json_to({"type": "message", "text": "short please"})
    frames = await frames_until(comm, "ready")
    done = next(f for f in frames if f["type"] == "done")
    assert done["interrupted"] is False and "answer to short please" in done["final_html"]
    await comm.disconnect()


async def test_a_second_message_while_a_reply_is_written_gets_an_error(llm, owner, session_id):
    llm.push(Reply(text="x" * 120, chunk_delay=0.03))
    comm = await open_socket(f"/ws/chat/{session_id}/", owner)
    await comm.send_json_to({"type": "message", "text": "first"})
    assert (await comm.receive_json_from(timeout=10))["type"] == "turn_started"
    await comm.send_json_to({"type": "message", "text": "second"})
    frames = await frames_until(comm, "ready")
    errors = [f for f in frames if f["type"] == "error"]
    assert errors == [{"type": "error", "error": chat_service.BUSY_MESSAGE}]
    assert next(f for f in frames if f["type"] == "done")["interrupted"] is False
    await comm.disconnect()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("this is not json", "not JSON"),
        ("[1, 2, 3]", "JSON object"),
        ('{"type": "dance"}', "Unknown frame type 'dance'"),
        ('{"text": "no type"}', "Unknown frame type None"),
        ('{"type": "message"}', 'needs "text"'),
        ('{"type": "message", "text": 42}', 'needs "text"'),
        ('{"type": "message", "text": "   "}', "The message is empty"),
        (json.dumps({"type": "message", "text": "y" * 51}), "the limit is 50"),
    ],
)
async def test_bad_frames_get_a_clear_error_and_the_socket_stays_open(llm, home, owner, session_id, raw, expected):
    write_config(home, "agent:\n  max_message_chars: 50\n")
    comm = await open_socket(f"/ws/chat/{session_id}/", owner)
    await comm.send_to(text_data=raw)
    frame = await comm.receive_json_from(timeout=5)
    assert frame["type"] == "error" and expected in frame["error"], frame
    await comm.send_json_to({"type": "ping"})
    assert await comm.receive_json_from(timeout=5) == {"type": "pong"}
    assert not llm.requests  # nothing reached the model
    await comm.disconnect()


async def test_a_model_error_is_a_retryable_error_frame_and_the_message_is_kept(llm, home, owner, session_id):
    write_config(home, "model:\n  max_retries: 0\n")
    llm.push(Reply(status=500, error_message="upstream exploded"))
    comm = await open_socket(f"/ws/chat/{session_id}/", owner)
    await comm.send_json_to({"type": "message", "text": "please answer"})
    frames = await frames_until(comm, "ready")
    error = next(f for f in frames if f["type"] == "error")
    assert error["retry"] is True and error["error"]
    stored = await sync_to_async(lambda: list(Message.objects.filter(session_id=session_id, role="user")))()
    assert [m.content for m in stored] == ["please answer"]
    await comm.disconnect()


async def test_unauthenticated_sockets_are_refused(llm, session_id):
    for path in (f"/ws/chat/{session_id}/", "/ws/notify/"):
        comm = WebsocketCommunicator(APP, path)
        comm.scope["user"] = AnonymousUser()
        connected, code = await comm.connect()
        assert (connected, code) == (False, 4401)
        # As a browser's socket would: the refused consumer then ends, leaving no channel-layer
        # receive behind (with Redis, one left for the loop's teardown to cancel could hang it).
        await comm.disconnect()


async def test_review_toast_reaches_every_page_with_its_line_and_link(llm, home, owner, session_id):
    write_config(home, "memory:\n  nudge_interval: 1\nskills:\n  creation_nudge_interval: 0\n")
    llm.when(
        lambda body: REVIEW_PROMPT in last_user_text(body) and body["messages"][-1]["role"] == "user",
        Reply(
            tool_calls=[
                {
                    "name": "memory",
                    "arguments": {
                        "target": "user",
                        "action": "add",
                        "content": "Likes tea",
                        "evidence": ["I like tea"],
                    },
                }
            ]
        ),
    )
    llm.default = lambda body: Reply(text="done" if body["messages"][-1]["role"] == "tool" else "noted")
    tabs = [await open_socket("/ws/notify/", owner) for _ in range(2)]
    chat = await open_socket(f"/ws/chat/{session_id}/", owner)
    await chat.send_json_to({"type": "message", "text": "I like tea"})
    frames = await frames_until(chat, "ready")
    assert next(f for f in frames if f["type"] == "saved")["review_running"] is True
    for tab in tabs:
        got = [await tab.receive_json_from(timeout=15)]
        while got[-1]["type"] != "review":
            got.append(await tab.receive_json_from(timeout=15))
        assert got[0] == {"type": "review_started", "session_id": session_id}
        notice = got[-1]
        assert notice["line"] == "💾 1 saved"
        assert notice["href"] == "/memory/" and notice["session_id"] == session_id
        await tab.disconnect()
    await sync_to_async(review.wait_for_reviews)(session_id, 10)
    await chat.disconnect()


async def test_a_toast_waits_until_the_turn_it_followed_has_been_delivered(owner):
    tab = await open_socket("/ws/notify/", owner)
    live.gate.begin("s-busy")
    created = notify.SavedWrite(kind="skill", target="deploy", action="create", message="Skill 'deploy' created")
    notice = notify.ReviewNotice("s-busy", 7, "skill", "Skill 'deploy' created", "done", saved=[created])
    await asyncio.get_running_loop().run_in_executor(None, notify.publish, notice)
    assert await tab.receive_nothing(timeout=0.3)
    live.gate.delivered("s-busy")
    frame = await tab.receive_json_from(timeout=5)
    assert frame["line"] == "💾 1 saved" and frame["href"] == "/skills/deploy/"
    await tab.disconnect()


async def test_a_second_tab_on_the_same_chat_sees_the_turn_live(llm, owner, session_id):
    llm.push(Reply(text="Answer for both tabs."))
    sender = await open_socket(f"/ws/chat/{session_id}/", owner)
    watcher = await open_socket(f"/ws/chat/{session_id}/", owner)
    other_session = await sync_to_async(lambda: chat_service.create_session().pk)()
    bystander = await open_socket(f"/ws/chat/{other_session}/", owner)
    await sender.send_json_to({"type": "message", "text": "hello from tab one"})
    sent = await frames_until(sender, "ready")
    mirrored = await frames_until(watcher, "ready")
    assert _types(mirrored) == _types(sent)
    assert all(f.get("mirrored") for f in mirrored) and not any(f.get("mirrored") for f in sent)
    assert mirrored[0]["text"] == "hello from tab one"
    assert "".join(f["text"] for f in mirrored if f["type"] == "delta") == "Answer for both tabs."
    # Refusals stay with the socket that caused them; other chats hear nothing.
    await sender.send_json_to({"type": "nonsense"})
    assert (await sender.receive_json_from(timeout=5))["type"] == "error"
    assert await watcher.receive_nothing(timeout=0.5)
    assert await bystander.receive_nothing(timeout=0.5)
    for comm in (sender, watcher, bystander):
        await comm.disconnect()


async def test_thinking_streams_as_reasoning_frames_and_is_stored_apart(llm, owner, session_id):
    from tests.wire.llamacpp import CASES

    case = next(c for c in CASES if c.name == "llamacpp_reasoning_content_stream")
    llm.push(Reply(raw=case.raw))
    comm = await open_socket(f"/ws/chat/{session_id}/", owner)
    await comm.send_json_to({"type": "message", "text": "hi"})
    frames = await frames_until(comm, "ready")
    assert _types(frames)[:3] == ["turn_started", "reasoning", "reasoning"]
    assert "".join(f["text"] for f in frames if f["type"] == "reasoning") == case.reasoning
    assert "".join(f["text"] for f in frames if f["type"] == "delta") == case.answer
    stored = await sync_to_async(lambda: Message.objects.get(session_id=session_id, role="assistant"))()
    assert (stored.content, stored.reasoning) == (case.answer, case.reasoning)
    items = await sync_to_async(lambda: presenter.conversation(stored.session))()
    assert (items[-1].content, items[-1].reasoning) == (case.answer, case.reasoning)  # for the page on reload
    await comm.disconnect()
