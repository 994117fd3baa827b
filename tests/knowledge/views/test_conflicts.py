"""Conflict items in the inbox: both entries shown, and Replace / Keep both / Reject, each one change
that the change log can undo; the memory page then says when the entry was learned and what it
superseded."""

from __future__ import annotations

import pytest

from agent.tools.memory_tool import make_tool
from agent.tools.registry import ToolContext, ToolRegistry
from knowledge import undo
from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, KnowledgeChange, Message, PendingWrite, ReviewRun
from knowledge.provenance import Provenance

pytestmark = pytest.mark.django_db
OLD, NEW = "Prefers 4-space indents in Python", "Prefers 2-space indents in Python"
SAID = "These days I use 2-space indents in Python, everywhere."


@pytest.fixture
def conflict(home) -> PendingWrite:
    """A review's add that contradicts a saved entry, held by the real memory tool and gate."""
    MemoryStore().add("user", OLD, Provenance(actor="user"))
    session = ChatSession.objects.create(title="Indents")
    Message.objects.create(session=session, role="user", content=SAID)
    run = ReviewRun.objects.create(session=session, prompt_kind="memory", status="running")
    ctx = ToolContext(actor="review", session_id=session.pk, review_id=run.pk)
    args = {"target": "user", "action": "add", "content": NEW, "evidence": [SAID]}
    result = ToolRegistry([make_tool()]).dispatch("memory", args, ctx)
    assert not result.ok
    item = PendingWrite.objects.get()
    assert item.hold_kind == "conflict" and item.conflict == {"target": "user", "text": OLD}
    return item


def _decide(client, item: PendingWrite, decision: str):
    return client.post(f"/pending/{item.pk}/conflict/", {"decision": decision}, follow=True)


def test_the_inbox_shows_both_entries_and_three_choices(auth_client, conflict):
    html = auth_client.get("/pending/").content.decode()
    assert OLD in html and NEW in html and "USER.md" in html
    for label in ("Replace", "Keep both", "Reject"):
        assert f">{label}</button>" in html
    assert f"/pending/{conflict.pk}/conflict/" in html


def test_replace_supersedes_the_old_entry_in_one_undoable_change(auth_client, conflict):
    html = _decide(auth_client, conflict, "replace").content.decode()
    assert MemoryStore().entries("user") == [NEW]
    change = KnowledgeChange.objects.order_by("-id").first()
    assert change is not None and change.action == "supersede" and change.actor == "user"
    assert "superseded" in change.summary and OLD in change.summary
    assert "superseded by" in html and f"change #{change.pk}" in html
    conflict.refresh_from_db()
    assert conflict.status == "approved"
    # The change history says so, and its undo brings the old entry back.
    assert "superseded" in auth_client.get("/changes/").content.decode()
    undo.undo(change)
    assert MemoryStore().entries("user") == [OLD]


def test_the_memory_page_says_when_an_entry_was_learned_and_what_it_replaced(auth_client, conflict):
    _decide(auth_client, conflict, "replace")
    change = KnowledgeChange.objects.order_by("-id").first()
    assert change is not None
    html = auth_client.get("/memory/").content.decode()
    assert "Learned" in html and change.created_at.strftime("%Y-%m-%d") in html
    assert "Superseded:" in html and OLD in html


def test_keep_both_adds_the_new_entry_beside_the_old(auth_client, conflict):
    html = _decide(auth_client, conflict, "keep").content.decode()
    assert MemoryStore().entries("user") == [OLD, NEW]
    change = KnowledgeChange.objects.order_by("-id").first()
    assert change is not None and change.action == "add"
    assert "added beside" in html
    undo.undo(change)
    assert MemoryStore().entries("user") == [OLD]


def test_reject_drops_the_new_entry(auth_client, conflict):
    changes = KnowledgeChange.objects.count()
    html = _decide(auth_client, conflict, "reject").content.decode()
    assert MemoryStore().entries("user") == [OLD]
    assert KnowledgeChange.objects.count() == changes and "Rejected" in html
    conflict.refresh_from_db()
    assert conflict.status == "rejected"


def test_a_bad_decision_or_a_decided_item_changes_nothing(auth_client, conflict):
    html = _decide(auth_client, conflict, "merge").content.decode()
    assert "Pick Replace, Keep both or Reject" in html
    conflict.refresh_from_db()
    assert conflict.status == "pending"
    _decide(auth_client, conflict, "reject")
    html = _decide(auth_client, conflict, "replace").content.decode()
    assert "not a conflict waiting for a decision" in html and MemoryStore().entries("user") == [OLD]


def test_replace_after_the_old_entry_was_removed_just_adds(auth_client, conflict):
    MemoryStore().remove("user", "4-space", Provenance(actor="user"))
    html = auth_client.get("/pending/").content.decode()
    assert "No longer in the file" in html
    _decide(auth_client, conflict, "replace")
    assert MemoryStore().entries("user") == [NEW]
