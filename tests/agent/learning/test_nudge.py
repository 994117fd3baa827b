"""The learning loop's two counters, driven as the runner drives them."""

from __future__ import annotations

from agent.learning.nudge import NudgeCounters


def _counters(memory: int = 10, skill: int = 10, **kw: bool) -> NudgeCounters:
    return NudgeCounters(
        memory_interval=memory,
        skill_interval=skill,
        memory_available=kw.get("memory_available", True),
        skill_available=kw.get("skill_available", True),
    )


def _turn(c: NudgeCounters, model_calls: int = 1, tools: tuple[str, ...] = ()) -> tuple[bool, bool]:
    c.turn_started()
    for _ in range(model_calls):
        c.model_called()
    for name in tools:
        c.tool_called(name)
    c.turn_finished()
    return c.take_flags()


def test_ten_plain_turns_set_both_flags_on_the_tenth():
    c = _counters()
    flags = [_turn(c) for _ in range(10)]
    assert flags[:9] == [(False, False)] * 9
    assert flags[9] == (True, True)
    assert (c.turns_since_memory, c.iters_since_skill) == (0, 0)
    assert _turn(c) == (False, False)  # flags are taken once, counting starts over


def test_one_turn_with_twelve_model_calls_sets_only_the_skill_flag():
    c = _counters()
    assert _turn(c, model_calls=12) == (False, True)
    assert c.iters_since_skill == 0 and c.turns_since_memory == 1


def test_skill_count_is_checked_only_at_the_end_of_the_turn():
    c = _counters(skill=3)
    c.turn_started()
    for _ in range(5):
        c.model_called()
    assert c.should_review_skills is False  # not mid-turn
    c.turn_finished()
    assert c.take_flags() == (False, True)


def test_counters_accumulate_across_turns_of_a_session():
    c = _counters(skill=10)
    for _ in range(3):
        _turn(c, model_calls=3)
    assert c.iters_since_skill == 9 and c.turns_since_memory == 3
    assert _turn(c, model_calls=1) == (False, True)


def test_a_real_memory_call_resets_the_turn_count_and_skill_manage_the_call_count():
    c = _counters()
    for _ in range(5):
        _turn(c)
    _turn(c, tools=("memory",))
    assert c.turns_since_memory == 0 and c.iters_since_skill == 6
    _turn(c, model_calls=2, tools=("skill_manage",))
    assert c.iters_since_skill == 0 and c.turns_since_memory == 1
    _turn(c, tools=("session_search",))  # other tools reset nothing
    assert (c.turns_since_memory, c.iters_since_skill) == (2, 1)


def test_memory_flag_waits_ten_turns_after_a_memory_call():
    c = _counters(skill=0)
    flags = [_turn(c, tools=("memory",) if n == 4 else ()) for n in range(15)]
    assert [n for n, f in enumerate(flags) if f[0]] == [14]


def test_intervals_zero_disable_both_reviews():
    c = _counters(memory=0, skill=0)
    assert not any(any(_turn(c, model_calls=20)) for _ in range(25))
    assert (c.turns_since_memory, c.iters_since_skill) == (0, 0)


def test_a_missing_tool_or_store_stops_its_counter():
    c = _counters(memory_available=False, skill_available=False)
    for _ in range(12):
        assert _turn(c, model_calls=12) == (False, False)
    assert (c.turns_since_memory, c.iters_since_skill) == (0, 0)


def test_counters_resume_from_persisted_values():
    c = NudgeCounters(10, 10, True, True, turns_since_memory=9, iters_since_skill=9)
    assert _turn(c) == (True, True)


def test_what_is_left_until_each_review_and_none_when_it_is_off() -> None:
    c = _counters(memory=3, skill=5)
    _turn(c, model_calls=2)
    assert (c.turns_until_memory(), c.iters_until_skill()) == (2, 3)
    off = _counters(memory=0, skill=5, skill_available=False)
    assert (off.turns_until_memory(), off.iters_until_skill()) == (None, None)
