"""The counters of a private chat (knowledge/private_chats.py): nothing counts and nothing fires;
switched back, they go on from where they stood."""

from __future__ import annotations

from agent.learning.nudge import NudgeCounters


def _turn(c: NudgeCounters, model_calls: int = 1) -> tuple[bool, bool]:
    c.turn_started()
    for _ in range(model_calls):
        c.model_called()
    c.turn_finished()
    return c.take_flags()


def test_a_private_chat_counts_nothing_and_fires_nothing() -> None:
    c = NudgeCounters(memory_interval=10, skill_interval=10, memory_available=True, skill_available=True)
    assert [_turn(c) for _ in range(4)] == [(False, False)] * 4
    c.private = True
    assert [_turn(c, model_calls=12) for _ in range(12)] == [(False, False)] * 12
    assert (c.turns_since_memory, c.iters_since_skill) == (4, 4)
    assert (c.turns_until_memory(), c.iters_until_skill()) == (None, None)  # the page shows no countdown
    c.private = False  # switched back: the count goes on from 4
    assert (c.turns_until_memory(), c.iters_until_skill()) == (6, 6)
    assert [_turn(c) for _ in range(6)][-1] == (True, True)
