"""The change log: stores record who changed what (undo: tests/knowledge/test_undo.py)."""

from __future__ import annotations

import pytest

from knowledge import changelog
from knowledge.models import ChatSession, ReviewRun
from knowledge.provenance import Provenance

pytestmark = pytest.mark.django_db


def _review() -> ReviewRun:
    return ReviewRun.objects.create(session=ChatSession.objects.create(), prompt_kind="memory")


def test_record_keeps_provenance_before_and_after_and_caps_the_summary():
    review = _review()
    prov = Provenance(actor="review", session_id=review.session_id, review_id=review.pk, message_id=12)
    change = changelog.record(
        kind="skill", target="x", action="create", prov=prov, before="", after="new", summary="s" * 400,
        existed_before=False, batch="b1",
    )  # fmt: skip
    change.refresh_from_db()
    assert (change.actor, change.session_id, change.review_id, change.message_id) == (
        "review",
        review.session_id,
        review.pk,
        12,
    )
    assert (change.before, change.after, change.existed_before, change.batch) == ("", "new", False, "b1")
    assert len(change.summary) == 300
