"""A person's word on an answer's source, as an inbox item: what approving each kind does."""

from __future__ import annotations

import json

import pytest

from knowledge import source_feedback
from knowledge.models import ChatSession, PendingWrite, SkillOutcome
from knowledge.skills import outcomes

pytestmark = pytest.mark.django_db


def _item(action: str, subject: str) -> PendingWrite:
    chat = ChatSession.objects.create(title="Here")
    return source_feedback.source_item(chat, 7, "wrong", action, subject, {"kind": "x", "text": "t"})


def test_a_recalled_chat_is_left_out_only_once_its_item_is_approved():
    item = _item(source_feedback.NO_RECALL, "past-chat")
    assert source_feedback.not_recalled() == set()  # waiting: recalled as before
    assert item.approve() and item.status == "approved"
    assert source_feedback.not_recalled() == {"past-chat"}


def test_a_rejected_item_changes_nothing():
    item = _item(source_feedback.FLAG_SKILL, "deploy")
    assert item.reject()
    assert source_feedback.not_recalled() == set() and not SkillOutcome.objects.exists()
    assert "deploy" not in outcomes.flagged_names()


def test_one_approved_wrong_flags_the_skill_at_once_with_the_persons_words():
    assert _item(source_feedback.FLAG_SKILL, "deploy").approve()
    assert outcomes.flagged_names() == ["deploy"]
    assert "marked the skill 'Wrong'" in SkillOutcome.objects.get().detail


def test_an_unknown_action_fails_and_says_so():
    item = _item(source_feedback.NOTE, "x")
    PendingWrite.objects.filter(pk=item.pk).update(arguments={"action": "explode"})  # one this code does not know
    item.refresh_from_db()
    assert item.approve() and item.status == "failed"
    assert "Unknown source item" in json.loads(item.result)["error"]
