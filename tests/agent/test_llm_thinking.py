"""`<think>` blocks in content become reasoning, however the pieces are cut."""

from __future__ import annotations

import pytest

from agent.llm.thinking import CLOSERS, ThinkSplitter


def _split(pieces: list[str]) -> tuple[str, str]:
    splitter = ThinkSplitter()
    answer, thinking = [], []
    for piece in pieces:
        a, t = splitter.feed(piece)
        answer.append(a)
        thinking.append(t)
    a, t = splitter.flush()
    return "".join(answer) + a, "".join(thinking) + t


TEXT = "\n<think>\nPlan the reply.\n</think>\n\nHello there."


@pytest.mark.parametrize("size", [1, 2, 3, 7, 100])
def test_a_think_block_is_split_off_at_any_cut(size):
    assert _split([TEXT[i : i + size] for i in range(0, len(TEXT), size)]) == ("Hello there.", "\nPlan the reply.\n")


def test_two_blocks_and_the_thinking_variant():
    assert _split(["<thinking>a</thinking> <think>b</think>answer"]) == ("answer", "ab")


def test_a_mention_of_the_tag_inside_the_answer_is_kept():
    assert _split(["Write ", "<think> to start a block."]) == ("Write <think> to start a block.", "")


def test_an_unclosed_block_is_thinking_and_a_bare_tag_prefix_is_the_answer():
    assert _split(["<think>still thinking"]) == ("", "still thinking")
    assert _split(["<thi"]) == ("<thi", "")


@pytest.mark.parametrize("close", CLOSERS)
@pytest.mark.parametrize("size", [1, 2, 5, 100])
def test_a_closing_tag_the_reply_never_opened_is_found_however_it_is_cut(close, size):
    # The template opened the block in the prompt: only its close arrives, in any pieces. What
    # went out as answer before it, and the piece's part before it, were thinking.
    text = f"Weigh [both] <options> first{close}The answer."
    splitter = ThinkSplitter()
    before: list[str] = []
    after: list[str] = []
    for i in range(0, len(text), size):
        (after if splitter.orphan else before).append(splitter.feed(text[i : i + size])[0])
    after.append(splitter.flush()[0])
    assert splitter.orphan == close
    assert "".join(before[:-1]) + splitter.orphan_thought == "Weigh [both] <options> first"
    assert before[-1] + "".join(after) == "The answer."
