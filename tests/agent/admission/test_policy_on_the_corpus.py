"""The write policy on the write corpus (agent/learning_eval/writes), every case through the real memory
tool: the figures docs/EVIDENCE.md publishes, held as the bar they must keep."""

from __future__ import annotations

import pytest

from agent.learning_eval import writes

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


@pytest.fixture(scope="module")
def summaries(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        report = writes.evaluate(writes.load(), writes.MODES)
    return {s["mode"]: s for s in report["summaries"]}


def test_a_verifier_that_judges_correctly_saves_what_is_true_and_nothing_else(summaries):
    correct = summaries["correct"]
    assert correct["good_saved"] / correct["good"] >= 0.95, correct["correct_held"]
    assert correct["bad_saved"] / correct["bad"] <= 0.02, correct["classes"]


def test_a_verifier_that_approves_everything_lets_through_only_what_code_cannot_see(summaries):
    approve_all = summaries["approve_all"]
    assert approve_all["code_can_see"][0] == 0, approve_all["classes"]  # secrets, documents, instructions ...
    assert approve_all["meaning_only"][0] > 0  # negation, sarcasm, role-play: only a model can tell


def test_with_the_verifier_off_the_fallback_saves_most_correct_writes_and_no_secret(summaries):
    off = summaries["off"]
    assert off["good_saved"] / off["good"] >= 0.85, off["correct_held"]
    assert off["classes"]["secret"][0] == 0 and off["code_can_see"][0] == 0
