"""A turn's frames (agent/chat/frames.py): one frame per event the page shows, and their way from
the turn's thread to the event loop: nothing lost or reordered, text deltas that queued up
meanwhile sent as one, the end marker kept."""

from __future__ import annotations

import asyncio
import threading

import pytest

from agent.chat.frames import FrameQueue, coalesce, event_frame
from agent.chat.runner import TurnSaved, TurnStarted
from agent.llm import Usage
from agent.loop import ModelCalled, TextDelta, ToolFinished, ToolStarted, TurnDone, TurnError
from agent.tools.results import MAX_RESULT_CHARS
from knowledge.models import ChatSession


def test_runs_of_deltas_join_and_other_frames_keep_their_place():
    frames = [
        {"type": "turn_started", "text": "hi"},
        {"type": "delta", "text": "Hel"},
        {"type": "delta", "text": "lo"},
        {"type": "tool_started", "call_id": "c1"},
        {"type": "delta", "text": "!"},
        None,
    ]
    assert coalesce(frames) == [
        {"type": "turn_started", "text": "hi"},
        {"type": "delta", "text": "Hello"},
        {"type": "tool_started", "call_id": "c1"},
        {"type": "delta", "text": "!"},
        None,
    ]


async def test_frames_from_a_thread_arrive_complete_and_in_order():
    queue = FrameQueue(asyncio.get_running_loop())
    texts = [f"chunk {i} " for i in range(500)]

    def produce() -> None:
        queue.put({"type": "turn_started"})
        for text in texts:
            queue.put({"type": "delta", "text": text})
        queue.put({"type": "done"})
        queue.put(None)

    thread = threading.Thread(target=produce)
    thread.start()
    received: list[dict | None] = []
    batches = 0
    while None not in received:
        received.extend(await queue.get_batch())
        batches += 1
    thread.join()
    kinds = [f["type"] if f else None for f in received]
    assert kinds[0] == "turn_started" and kinds[-2:] == ["done", None]
    assert "".join(f["text"] for f in received if f and f["type"] == "delta") == "".join(texts)
    assert batches <= len(texts) + 3  # never more wake-ups than frames


@pytest.mark.django_db
def test_every_event_type_has_its_frame(home):
    frame = event_frame
    started = frame(TurnStarted(5, "hi `x`"))
    assert started == {
        "type": "turn_started",
        "message_id": 5,
        "text": "hi `x`",
        "html": "<p>hi <code>x</code></p>\n",
        "kind": "message",
        "answer_id": None,
    }
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
    long = "r" * (MAX_RESULT_CHARS + 10)
    frame = event_frame(ToolFinished("c", "t", "{}", long, True, 0.0, {}))
    assert frame is not None and frame["result"] == "r" * MAX_RESULT_CHARS + "\n… (truncated)"
