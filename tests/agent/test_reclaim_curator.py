"""The periodic round runs the skill curator's dry run when one is due: one report, no file changed."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from agent import reclaim
from foundation import config as hermes_config
from knowledge.models import ChatSession, PendingWrite, ReviewRun, SkillUsage
from knowledge.provenance import Provenance
from knowledge.skills.store import SkillStore
from tests.knowledge.skills.helpers import skill_md

pytestmark = pytest.mark.django_db(transaction=True)  # a round closes its connection


def test_a_round_writes_one_report_when_due(home) -> None:
    SkillStore(hermes_config.get()).create("brew-coffee", skill_md("brew-coffee"), prov=Provenance(actor="review"))
    SkillUsage.objects.filter(name="brew-coffee").update(last_used=timezone.now() - timedelta(days=120))
    reclaim.one_round("test", list)
    assert not ReviewRun.objects.filter(trigger="curator").exists()  # no chat yet: a new home waits
    chat = ChatSession.objects.create(title="long ago")
    ChatSession.objects.filter(pk=chat.pk).update(started_at=timezone.now() - timedelta(days=8))
    reclaim.one_round("test", list)
    reclaim.one_round("test", list)  # the next round finds the report
    [run] = ReviewRun.objects.filter(trigger="curator")
    assert [p.arguments["name"] for p in PendingWrite.objects.filter(review=run)] == ["brew-coffee"]
    assert (home / "skills" / "brew-coffee" / "SKILL.md").is_file()
