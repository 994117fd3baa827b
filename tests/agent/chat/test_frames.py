"""A turn's frames from its thread to the event loop (agent/chat/frames.py): nothing lost or
reordered, text deltas that queued up meanwhile sent as one, the end marker kept."""

from __future__ import annotations

import asyncio
import threading

from agent.chat.frames import FrameQueue, coalesce


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
