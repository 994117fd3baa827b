"""Polling another process's state with an injected clock: done at once, done later, or given up."""

from __future__ import annotations

from knowledge.history.waiting import poll_until


def test_done_at_once_never_sleeps():
    slept: list[float] = []
    assert poll_until(lambda: True, 5, clock=lambda: 0.0, sleep=slept.append)
    assert slept == []


def test_done_after_a_few_polls():
    answers = iter([False, False, True])
    slept: list[float] = []
    assert poll_until(lambda: next(answers), 5, clock=lambda: 0.0, sleep=slept.append, every=0.5)
    assert slept == [0.5, 0.5]


def test_gives_up_when_the_timeout_passes():
    ticks = iter(range(100))
    slept: list[float] = []
    assert not poll_until(lambda: False, 3, clock=lambda: float(next(ticks)), sleep=slept.append)
    assert len(slept) == 2  # checked at t=1 and t=2, gave up at t=3
