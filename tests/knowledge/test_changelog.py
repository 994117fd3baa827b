"""The change log: stores record who changed what; undo is dispatched to the store
that owns the file; undoing a review goes newest first so each file ends as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge import changelog
from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, KnowledgeChange, ReviewRun
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


def test_undo_goes_through_the_owning_store_and_is_recorded(home: Path):
    store = MemoryStore()
    store.add("memory", "Keep", Provenance(actor="user"))
    store.add("memory", "Mistake", Provenance(actor="agent"))
    bad = KnowledgeChange.objects.filter(actor="agent").get()
    undo = changelog.undo(bad)
    assert store.entries("memory") == ["Keep"]
    assert undo is not None and undo.actor == "undo" and undo.undoes_id == bad.pk


def test_a_kind_no_store_owns_cannot_be_undone():
    change = changelog.record(kind="webhook", target="t", action="x", prov=Provenance(), before="a", after="b")
    with pytest.raises(changelog.UndoError, match="No store can undo changes of kind 'webhook'"):
        changelog.undo(change)


def test_undo_review_dispatches_newest_first_and_skips_undo_records():
    review = _review()
    seen: list[str] = []

    def restorer(change: KnowledgeChange, prov: Provenance) -> None:
        seen.append(change.after)

    changelog.register_restorer("ordered", restorer)
    for after in ("first", "second", "third"):
        changelog.record(
            kind="ordered",
            target="t",
            action="edit",
            prov=Provenance(actor="review", review_id=review.pk),
            before="",
            after=after,
        )
    changelog.record(
        kind="ordered",
        target="t",
        action="undo",
        prov=Provenance(actor="undo", review_id=review.pk),
        before="",
        after="an undo",
    )
    assert changelog.undo_review(review.pk) == []  # this restorer records nothing
    assert seen == ["third", "second", "first"]


def test_undo_review_restores_a_file_the_review_wrote_twice(home: Path):
    store = MemoryStore()
    store.add("user", "Name: Ada", Provenance(actor="user"))
    before = (home / "memories" / "USER.md").read_bytes()
    review = _review()
    prov = Provenance(actor="review", review_id=review.pk)
    store.add("user", "Likes tea", prov)
    store.replace("user", "Likes tea", "Likes green tea", prov)
    done = changelog.undo_review(review.pk)
    assert len(done) == 2 and all(c.actor == "undo" for c in done)
    assert (home / "memories" / "USER.md").read_bytes() == before
