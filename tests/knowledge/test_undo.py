"""Undo is dispatched to the store that owns the file, and recorded; undoing a review goes newest
first so each file ends as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge import changelog, undo
from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, KnowledgeChange, ReviewRun
from knowledge.provenance import Provenance

pytestmark = pytest.mark.django_db


def _review() -> ReviewRun:
    return ReviewRun.objects.create(session=ChatSession.objects.create(), prompt_kind="memory")


def test_every_store_that_writes_the_change_log_can_undo():
    assert set(undo.RESTORERS) == {"memory", "skill"}


def test_undo_goes_through_the_owning_store_and_is_recorded(home: Path):
    store = MemoryStore()
    store.add("memory", "Keep", Provenance(actor="user"))
    store.add("memory", "Mistake", Provenance(actor="agent"))
    bad = KnowledgeChange.objects.filter(actor="agent").get()
    undone = undo.undo(bad)
    assert store.entries("memory") == ["Keep"]
    assert undone is not None and undone.actor == "undo" and undone.undoes_id == bad.pk


def test_a_kind_no_store_owns_cannot_be_undone():
    change = changelog.record(kind="webhook", target="t", action="x", prov=Provenance(), before="a", after="b")
    with pytest.raises(undo.UndoError, match="No store can undo changes of kind 'webhook'"):
        undo.undo(change)


def test_undo_review_dispatches_newest_first_and_skips_undo_records(monkeypatch: pytest.MonkeyPatch):
    review = _review()
    seen: list[str] = []

    def restorer(change: KnowledgeChange, prov: Provenance) -> None:
        seen.append(change.after)

    monkeypatch.setitem(undo.RESTORERS, "ordered", restorer)
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
    assert undo.undo_review(review.pk) == []  # this restorer records nothing
    assert seen == ["third", "second", "first"]


def test_undo_review_restores_a_file_the_review_wrote_twice(home: Path):
    store = MemoryStore()
    store.add("user", "Name: Ada", Provenance(actor="user"))
    before = (home / "memories" / "USER.md").read_bytes()
    review = _review()
    prov = Provenance(actor="review", review_id=review.pk)
    store.add("user", "Likes tea", prov)
    store.replace("user", "Likes tea", "Likes green tea", prov)
    done = undo.undo_review(review.pk)
    assert len(done) == 2 and all(c.actor == "undo" for c in done)
    assert (home / "memories" / "USER.md").read_bytes() == before
