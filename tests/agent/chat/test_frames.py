"""A turn's frames (agent/chat/frames.py): one frame per event the page shows, and their way from
the turn's thread to the event loop: nothing lost or reordered, text deltas that queued up
meanwhile sent as one, the end marker kept."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from agent.chat import frames
from agent.chat.frames import Frame, FrameQueue, TurnFrames, coalesce, event_frame
from agent.chat.runner import TurnSaved, TurnStarted
from agent.llm import Usage
from agent.loop import ModelCalled, TextDelta, ToolFinished, ToolStarted, TurnDone, TurnError
from agent.tools.results import MAX_RESULT_CHARS
from foundation.rendering import render_markdown
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


async def _read_turn(queue: FrameQueue) -> tuple[list[Frame | None], int]:
    received: list[Frame | None] = []
    batches = 0
    while None not in received:
        received.extend(await queue.get_batch())
        batches += 1
    return received, batches


async def test_text_streaming_faster_than_the_window_is_collected_by_the_loop_not_sent_per_chunk(monkeypatch):
    monkeypatch.setattr(frames, "FRAME_WINDOW", 0.5)  # far longer than the chunks' spacing
    queue = FrameQueue(asyncio.get_running_loop())
    texts = [f"token {i} " for i in range(150)]

    def produce() -> None:  # a fast model: a chunk every 2 ms, 0.3 s in all
        queue.put({"type": "turn_started"})
        for text in texts:
            queue.put({"type": "delta", "text": text})
            time.sleep(0.002)
        queue.put({"type": "done"})
        queue.put(None)

    thread = threading.Thread(target=produce)
    thread.start()
    received, batches = await _read_turn(queue)
    thread.join()
    assert "".join(f["text"] for f in received if f and f["type"] == "delta") == "".join(texts)
    assert [f["type"] if f else None for f in received][-2:] == ["done", None]
    assert batches <= 15, batches  # a few windows' worth, not one per chunk (150)


async def test_the_first_token_and_every_frame_but_text_are_handed_over_at_once_while_the_loop_collects(
    monkeypatch,
):
    monkeypatch.setattr(frames, "FRAME_WINDOW", 3600.0)  # the loop's own collection never comes in the test
    loop = asyncio.get_running_loop()
    busy, quiet = FrameQueue(loop), FrameQueue(loop)
    for i in range(2):  # two wake-ups closer than the window: the loop collects from now on
        busy.put({"type": "delta", "text": f"{i} "})
        await busy.get_batch()
    busy.put({"type": "delta", "text": "waits for the window "})
    # Another chat's first token is not left to the window, and brings what waited with it.
    quiet.put({"type": "turn_started"})
    assert await quiet.get_batch() == [{"type": "turn_started"}]
    quiet.put({"type": "delta", "text": "First"})
    assert await quiet.get_batch() == [{"type": "delta", "text": "First"}]
    assert await busy.get_batch() == [{"type": "delta", "text": "waits for the window "}]
    # A tool's start is shown at once too, with the text before it.
    busy.put({"type": "delta", "text": "Let me look. "})
    busy.put({"type": "tool_started", "call_id": "c1"})
    assert await busy.get_batch() == [
        {"type": "delta", "text": "Let me look. "},
        {"type": "tool_started", "call_id": "c1"},
    ]
    for queue in (busy, quiet):  # and so is each answer's end
        queue.put({"type": "done"})
        queue.put(None)
        assert await queue.get_batch() == [{"type": "done"}, None]


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


# -- answers rendered as they stream -------------------------------------------------------------


def shown(frames: list[Frame | None]) -> tuple[str, str, str | None]:
    """What the page shows of one answer after these delta frames: the blocks' HTML, the open
    tail's text and whether it is an open fence (static/js/chat/turn.js does the same)."""
    html, tail, fence = "", "", None
    for f in frames:
        assert f is not None
        if "tail" in f:
            html, tail, fence = html + f["html"], f["tail"], f["fence"]
        else:
            tail += f["text"]
    return html, tail, fence


ANSWER = "# Plan\n\n- fetch\n  - retry\n- parse\n\n```python\nprint('<b>')\n```\n\nDone <i>."


def answer_frames(text: str, step: int, turn: TurnFrames | None = None) -> list[Frame | None]:
    turn = turn or TurnFrames()
    frames: list[Frame | None] = []
    for i in range(0, len(text), step):
        frames += turn.frames(TextDelta(text[i : i + step]))
    return frames


def test_an_answer_streams_as_blocks_that_end_as_the_final_render():
    turn = TurnFrames()
    frames = answer_frames(ANSWER, 3, turn)
    html, tail, fence = shown(frames)
    assert html.startswith("<h1>Plan</h1>") and tail == "Done <i>." and fence is None
    assert "".join(f["text"] for f in frames if f) == ANSWER  # the source, for Copy and the data-source
    called: list[Frame | None] = [
        *turn.frames(ModelCalled(1, Usage(0, 0, False), {"role": "assistant", "content": ANSWER}, "stop"))
    ]
    assert [f["type"] for f in called if f] == ["delta", "usage"]  # the open tail rendered when the call ends
    assert shown(frames + called[:1]) == (render_markdown(ANSWER), "", None)
    assert turn.frames(TurnDone(final_text=ANSWER, iterations=1))[0]["final_html"] == render_markdown(ANSWER)


def test_an_open_fence_is_shown_as_code_while_it_streams():
    frames = answer_frames("Run:\n\n```bash\nmake te", 2)
    assert shown(frames) == ("<p>Run:</p>\n", "make te", "bash")


@pytest.mark.parametrize("step", [1, 5, 40])
def test_joined_delta_frames_show_the_same_answer(step: int):
    frames = answer_frames(ANSWER, step)
    assert shown([f for f in coalesce(frames) if f is not None]) == shown(frames)
    for cut in range(1, len(frames)):
        joined = coalesce(frames[:cut]) + coalesce(frames[cut:])
        assert shown([f for f in joined if f is not None]) == shown(frames)


def test_text_after_a_tool_call_is_a_new_answer_block_and_a_failure_renders_what_came():
    turn = TurnFrames()
    answer_frames("Let me look.\n\nFirst", 4, turn)
    flushed = turn.frames(ModelCalled(1, Usage(0, 0, False), {"role": "assistant", "content": "x"}, "tool_calls"))
    assert flushed[0]["html"] == render_markdown("Let me look.\n\nFirst").split("\n", 1)[1]
    second = answer_frames("## Found\n\npart", 4, turn)
    assert shown(second)[0] == "<h2>Found</h2>\n"
    failed = turn.frames(TurnError("the server went away", "## Found\n\npart"))
    assert [f["type"] for f in failed] == ["delta", "error"] and failed[0]["html"] == "<p>part</p>\n"


def test_a_continued_answer_streams_as_text_for_the_final_render_to_replace():
    turn = TurnFrames()
    turn.frames(TurnStarted(5, "go on", "continue", 4))
    frames = answer_frames("# more\n\ntext", 2, turn)
    assert all(f is not None and "html" not in f for f in frames)
