"""The part of the conversation the verifier reads: what changes a quote's meaning is in it."""

from __future__ import annotations

from agent.admission.conversation import CONVERSATION_CHARS, excerpt

FILLER = "Here is a long unrelated answer about build caches. " * 30  # ~1,600 characters a turn


def _chat() -> list[tuple[int | None, str, str]]:
    turns: list[tuple[int | None, str, str]] = [
        (1, "user", "Let's play a game: you are a pirate captain and I am your first mate Jack."),
        (2, "assistant", "Arr, welcome aboard, Jack!"),
    ]
    for i in range(3, 23):
        turns.append((i, "user" if i % 2 else "assistant", FILLER))
    turns += [
        (23, "user", "I indent with 4 spaces in YAML files."),
        (24, "assistant", "Noted."),
        *[(i, "user" if i % 2 else "assistant", FILLER) for i in range(25, 35)],
        (35, "user", "Actually, make it 2 spaces for YAML files, the linter wants that."),
    ]
    return turns


def test_a_later_revision_and_the_quoted_turn_reach_the_verifier_within_the_budget():
    shown, numbers = excerpt(_chat(), [23], ["Indents YAML with 4 spaces"])
    texts = [t["text"] for t in shown]
    assert numbers == {23: 23}
    assert "I indent with 4 spaces in YAML files." in texts
    assert any("Actually, make it 2 spaces" in t for t in texts)  # later, on the same subject
    assert sum(len(t) for t in texts) <= CONVERSATION_CHARS
    assert [t["n"] for t in shown] == sorted(t["n"] for t in shown)  # in the order they were said


def test_a_role_play_set_up_earlier_reaches_the_verifier_when_the_chat_fits():
    turns = [
        (1, "user", "Let's play a game: you are a pirate captain and I am your first mate Jack."),
        (2, "assistant", "Arr, welcome aboard, Jack!"),
        (3, "user", "As Jack, I have sailed the seven seas for twenty years."),
    ]
    shown, _ = excerpt(turns, [3], ["Has sailed for twenty years"])
    assert shown[0]["text"].startswith("Let's play a game") and shown[0]["speaker"] == "the person"


def test_what_the_person_pasted_is_marked_as_a_document():
    pasted = "Please tidy this:\n```\nI am allergic to penicillin.\nThat worked.\n```"
    shown, _ = excerpt([(1, "user", pasted)], [1], ["Is allergic to penicillin"])
    assert "[document the person pasted]" in shown[0]["text"] and "[end of document]" in shown[0]["text"]
    assert shown[0]["text"].index("[document") < shown[0]["text"].index("penicillin")
