"""The browser chat's synchronous side: frames for each event, the stored conversation with
tool cards, the review counters, the busy state through knowledge.history.turns, and live agents that
notice another server process moved the conversation on."""

from __future__ import annotations

import queue
from datetime import timedelta

import pytest

from agent.chat import service as chat_service
from agent.chat.runner import TurnSaved, TurnStarted
from agent.llm import Usage
from agent.loop import ModelCalled, TextDelta, ToolFinished, ToolStarted, TurnDone, TurnError
from knowledge.history import turns
from knowledge.models import ChatSession, Message
from tests.conftest import write_config
from tests.fakellm import Reply

pytestmark = pytest.mark.django_db(transaction=True)


def test_every_event_type_has_its_frame(home):
    frame = chat_service.event_frame
    started = frame(TurnStarted(5, "hi `x`"))
    assert started == {"type": "turn_started", "message_id": 5, "text": "hi `x`", "html": "<p>hi <code>x</code></p>\n"}
    assert frame(TextDelta("He")) == {"type": "delta", "text": "He"}
    reported = ModelCalled(1, Usage(10, 42, True), {"role": "assistant", "content": "hi"}, "stop")
    assert frame(reported) == {"type": "usage", "tokens": 42, "estimated": False}
    guessed = ModelCalled(1, Usage(0, 0, False), {"role": "assistant", "content": "x" * 80}, "stop")
    assert frame(guessed) == {"type": "usage", "tokens": 20, "estimated": True}
    assert frame(ToolStarted("c1", "memory", "{}")) == {
        "type": "tool_started",
        "call_id": "c1",
        "name": "memory",
        "arguments": "{}",
    }
    finished = frame(ToolFinished("c1", "memory", "{}", '{"success": true}', True, 0.12345, {}))
    assert finished == {
        "type": "tool_finished",
        "call_id": "c1",
        "name": "memory",
        "result": '{"success": true}',
        "ok": True,
        "duration": 0.123,
    }
    done = frame(TurnDone("**bold** <script>x</script>", 1))
    assert done is not None and done["type"] == "done" and "<strong>bold</strong>" in done["final_html"]
    assert "<script>" not in done["final_html"] and (done["interrupted"], done["hit_limit"]) == (False, False)
    assert frame(TurnError("Model down", "partial")) == {
        "type": "error",
        "error": "Model down",
        "partial": "partial",
        "retry": True,
    }
    saved = frame(TurnSaved(ChatSession.objects.create().pk, False, 3, None))
    assert saved == {
        "type": "saved",
        "turns_until_memory_review": 3,
        "iters_until_skill_review": None,
        "review_spawned": False,
        "review_running": False,
    }
    assert frame(object()) is None


def test_a_long_tool_result_is_truncated_in_its_frame():
    long = "r" * (chat_service.MAX_RESULT_CHARS + 10)
    frame = chat_service.event_frame(ToolFinished("c", "t", "{}", long, True, 0.0, {}))
    assert frame is not None and frame["result"] == "r" * chat_service.MAX_RESULT_CHARS + "\n… (truncated)"


def test_conversation_joins_each_tool_card_to_its_result():
    s = ChatSession.objects.create()
    Message.objects.create(session=s, role="user", content="save this")
    call = {"id": "call-1", "type": "function", "function": {"name": "memory", "arguments": '{"target":"user"}'}}
    lost = {"id": "call-2", "type": "function", "function": {"name": "skills_list", "arguments": "not json"}}
    Message.objects.create(session=s, role="assistant", content="", tool_calls=[call, lost])
    Message.objects.create(session=s, role="tool", tool_call_id="call-1", content='{"success": false, "error": "no"}')
    Message.objects.create(session=s, role="tool", tool_call_id="unknown", content="orphan")
    Message.objects.create(session=s, role="assistant", content="Could not save.")
    items = chat_service.conversation(s)
    assert [i.kind for i in items] == ["user", "tool", "tool", "assistant"]
    card = items[1].tool
    assert card is not None and card.name == "memory" and card.arguments == '{\n  "target": "user"\n}'
    assert card.pending is False and card.ok is False and '"error": "no"' in card.result
    assert card.duration is not None and card.duration >= 0
    other = items[2].tool
    assert other is not None and other.pending and other.arguments == "not json" and other.result == ""


def test_counters_count_down_to_the_next_reviews_and_are_none_when_off(home):
    s = ChatSession.objects.create(turns_since_memory=4, iters_since_skill=7)
    assert chat_service.counters(s) == {"turns_until_memory_review": 6, "iters_until_skill_review": 3}
    write_config(home, "memory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n")
    assert chat_service.counters(s) == {"turns_until_memory_review": None, "iters_until_skill_review": None}


def test_the_page_counter_and_the_turns_saved_frame_agree_when_memory_is_off(home, llm):
    write_config(home, "memory:\n  memory_enabled: false\n  user_profile_enabled: false\n")
    session = chat_service.create_session()
    saved = _run_turn(session.pk, "hello")[-1]
    chat_service.forget(session.pk)
    assert saved["turns_until_memory_review"] is None
    session.refresh_from_db()
    assert chat_service.counters(session)["turns_until_memory_review"] is None


def test_one_turn_at_a_time_stop_reaches_it_and_the_busy_state_is_on_the_row():
    s = ChatSession.objects.create()
    interrupt = chat_service.try_begin_turn(s.pk)
    assert interrupt is not None and chat_service.is_busy(s.pk) and turns.is_busy(s.pk)
    assert chat_service.try_begin_turn(s.pk) is None  # a second tab
    assert chat_service.stop_turn(s.pk) and interrupt.is_set()
    assert not chat_service.stop_turn("not-running-here")
    chat_service.forget(s.pk)
    # Another server's expired claim does not hold the chat.
    turns.release(s.pk)
    past = turns.LEASE + timedelta(minutes=1)
    assert turns.claim(s.pk, worker="elsewhere:1", now=s.started_at - past)
    assert not chat_service.is_busy(s.pk)
    assert chat_service.try_begin_turn(s.pk) is not None
    chat_service.stop_turn(s.pk)
    turns.release(s.pk)


def test_a_deleted_chat_cannot_begin_a_turn():
    with pytest.raises(ChatSession.DoesNotExist):
        chat_service.try_begin_turn("gone")


def _run_turn(session_id: str, text: str) -> list[dict]:
    interrupt = chat_service.try_begin_turn(session_id)
    assert interrupt is not None
    frames: queue.Queue = queue.Queue()
    chat_service.submit_turn(session_id, text, interrupt, frames.put)
    out = []
    while (frame := frames.get(timeout=30)) is not None:
        out.append(frame)
    return out


def test_a_turn_frees_the_chat_and_the_cached_agent_sees_what_another_process_stored(home, llm):
    llm.default = lambda body: Reply(text=f"seen {len(body['messages'])} messages")
    session = chat_service.create_session()
    frames = _run_turn(session.pk, "first")
    assert [f["type"] for f in frames if f["type"] != "delta"] == ["turn_started", "usage", "done", "saved"]
    assert "".join(f["text"] for f in frames if f["type"] == "delta") == "seen 2 messages"
    assert frames[-1]["title"] == "first" and not chat_service.is_busy(session.pk)
    # Another server process answers a turn of this chat: its rows land in the shared database.
    Message.objects.create(session=session, role="user", content="from the other server")
    Message.objects.create(session=session, role="assistant", content="answered there")
    ChatSession.objects.filter(pk=session.pk).update(message_count=4)
    _run_turn(session.pk, "second")
    sent = [m["content"] for m in llm.chat_requests()[-1]["messages"][1:]]
    assert sent == ["first", "seen 2 messages", "from the other server", "answered there", "second"]
    chat_service.forget(session.pk)


def test_a_turn_of_a_deleted_chat_reports_it_instead_of_hanging(home, llm):
    session = chat_service.create_session()
    interrupt = chat_service.try_begin_turn(session.pk)
    assert interrupt is not None
    ChatSession.objects.filter(pk=session.pk).delete()
    frames: queue.Queue = queue.Queue()
    chat_service.submit_turn(session.pk, "hello?", interrupt, frames.put)
    first = frames.get(timeout=30)
    assert first == {"type": "error", "error": "This chat no longer exists (it was deleted).", "retry": False}
    assert frames.get(timeout=30) is None
