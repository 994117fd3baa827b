"""Skill outcomes: verdicts reach the turn's skills; three bad ones flag a skill until a review takes them."""

from __future__ import annotations

import pytest

from knowledge.models import ChatSession, Message, ReviewRun, SkillOutcome
from knowledge.skills import outcomes
from knowledge.skills.outcomes import Use

pytestmark = pytest.mark.django_db


def _turn(session: ChatSession, name: str, outcome: str = "ok") -> Message:
    asked = Message.objects.create(session=session, role="user", content=f"/{name} go")
    answer = Message.objects.create(session=session, role="assistant", content="done")
    outcomes.record_turn(session.pk, asked.pk, answer.pk, [Use(name, "slash", outcome), Use(name, "view")])
    return answer


def test_one_record_per_skill_per_turn_and_the_verdict_reaches_it():
    session = ChatSession.objects.create()
    answer = _turn(session, "deploy-app")
    assert SkillOutcome.objects.count() == 1
    outcomes.give_verdict(answer, "bad", "wrong host")
    assert SkillOutcome.objects.get().outcome == "bad" and SkillOutcome.objects.get().detail == "wrong host"
    with pytest.raises(ValueError):
        outcomes.give_verdict(answer, "meh")


def test_three_bad_outcomes_flag_until_handed_to_a_review():
    session = ChatSession.objects.create()
    _turn(session, "deploy-app", "tool_error")
    _turn(session, "deploy-app", "interrupted")
    _turn(session, "git-bisect")
    assert outcomes.flagged_names() == []
    _turn(session, "deploy-app", "bad")
    stats = outcomes.stats(["deploy-app", "git-bisect"])
    assert stats["deploy-app"].needs_review and stats["deploy-app"].success_rate == 0
    assert stats["git-bisect"].success_rate == 100 and not stats["git-bisect"].needs_review
    run = ReviewRun.objects.create(session=session, prompt_kind="skill")
    text = outcomes.hand_to_review(run.pk)
    assert "Skill 'deploy-app' failed in recent uses" in text and text.count("\n- ") == 3
    assert outcomes.flagged_names() == [] and outcomes.hand_to_review(run.pk) == ""
