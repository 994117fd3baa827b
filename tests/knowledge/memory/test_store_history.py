"""MemoryStore's history: every change logged with its full before and after, outside
edits logged before the next write, and undo byte for byte, one change or a whole review."""

from __future__ import annotations

import pytest

from knowledge import undo as knowledge_undo
from knowledge.memory.store import MemoryStore
from knowledge.models import KnowledgeChange, ReviewRun
from knowledge.provenance import Provenance
from tests.knowledge.memory.test_store import AGENT, mem_file

pytestmark = pytest.mark.django_db


@pytest.fixture
def store(home):
    return MemoryStore()


def test_each_change_is_logged_with_full_before_and_after(store):
    prov = Provenance(actor="review", session_id=None, review_id=None)
    store.add("memory", "one", prov)
    store.add("memory", "two", AGENT)
    first, second = KnowledgeChange.objects.order_by("id")
    assert (first.kind, first.target, first.action, first.actor) == ("memory", "memory", "add", "review")
    assert (first.before, first.after, first.existed_before) == ("", "one", False)
    assert (second.before, second.after, second.actor) == ("one", "one\n§\ntwo", "agent")
    assert second.summary == "add: two"


def test_external_edit_is_logged_before_the_next_write(home, store):
    store.add("memory", "one", AGENT)
    mem_file(home).write_text("one\n§\nhand written", encoding="utf-8")
    store.add("memory", "three", AGENT)
    changes = list(KnowledgeChange.objects.order_by("id"))
    assert [(c.action, c.actor) for c in changes] == [("add", "agent"), ("external_edit", "external"), ("add", "agent")]
    assert (changes[1].before, changes[1].after) == ("one", "one\n§\nhand written")
    assert changes[2].before == "one\n§\nhand written"


def test_undo_restores_the_file_byte_exactly(home, store):
    path = mem_file(home)
    path.parent.mkdir(parents=True)
    original = b"  first note\r\n\xc2\xa7\r\nsecond  \n\n"
    path.write_bytes(original)
    store.add("memory", "added", AGENT)
    change = KnowledgeChange.objects.get(action="add")
    undo = knowledge_undo.undo(change)
    assert path.read_bytes() == original
    assert undo is not None and (undo.action, undo.actor, undo.undoes_id) == ("undo", "undo", change.pk)
    # The store knows the restored content, so the next write logs no phantom external edit.
    store.add("memory", "later", AGENT)
    assert not KnowledgeChange.objects.filter(actor="external").exists()


def test_undo_of_a_first_write_removes_the_file(home, store):
    store.add("user", "x", AGENT)
    knowledge_undo.undo(KnowledgeChange.objects.get())
    assert not mem_file(home, "USER.md").exists()


def test_undo_review_restores_the_original_file(home, store):
    store.add("memory", "keep one", AGENT)
    store.add("memory", "keep two", AGENT)
    original = mem_file(home).read_bytes()
    review = ReviewRun.objects.create(prompt_kind="memory")
    prov = Provenance(actor="review", review_id=review.pk)
    store.add("memory", "review added", prov)
    store.replace("memory", "keep one", "keep one (edited)", prov)
    store.apply("memory", [{"action": "remove", "old_text": "keep two"}, {"action": "add", "content": "z"}], prov)
    assert mem_file(home).read_bytes() != original
    undone = knowledge_undo.undo_review(review.pk)
    assert len(undone) == 3
    assert mem_file(home).read_bytes() == original


def test_supersede_replaces_the_whole_entry_and_is_logged_as_such(store):
    store.add("user", "Prefers 4-space indents", AGENT)
    store.add("user", "Lives in Lyon", AGENT)
    result = store.supersede("user", "Prefers 4-space indents", "Prefers 2-space indents", Provenance(actor="user"))
    assert result["success"] is True
    assert store.entries("user") == ["Prefers 2-space indents", "Lives in Lyon"]
    change = KnowledgeChange.objects.order_by("-id").first()
    assert change is not None and change.action == "supersede"
    assert change.summary == "superseded: Prefers 4-space indents -> Prefers 2-space indents"
    knowledge_undo.undo(change)
    assert store.entries("user") == ["Prefers 4-space indents", "Lives in Lyon"]


def test_supersede_of_an_entry_that_is_gone_changes_nothing(store):
    store.add("user", "Lives in Lyon", AGENT)
    result = store.supersede("user", "Prefers 4-space indents", "Prefers 2-space indents", Provenance(actor="user"))
    assert result["success"] is False and store.entries("user") == ["Lives in Lyon"]
