"""Conflict items in the inbox, in a real browser: both entries side by side with Replace / Keep both /
Reject; a replace shows as "superseded" in the change history, and the memory page says when the
entry was learned and what it superseded. Each conflict is held by the real memory tool and gate
(a review's add that contradicts a saved entry), run in a `manage.py shell` on the server's home."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer
from tests.browser.test_curation import server_python

pytestmark = pytest.mark.browser

HOLD = """
from agent.tools.memory_tool import make_tool
from agent.tools.registry import ToolContext, ToolRegistry
from knowledge.models import Message
old, new, said = {old!r}, {new!r}, {said!r}
MemoryStore().add("user", old, Provenance(actor="user"))
session = ChatSession.objects.create(title="Conflict chat")
Message.objects.create(session=session, role="user", content=said)
run = ReviewRun.objects.create(session=session, prompt_kind="memory", status="done")
ctx = ToolContext(actor="review", session_id=session.pk, review_id=run.pk)
args = {{"target": "user", "action": "add", "content": new, "evidence": [said]}}
ToolRegistry([make_tool()]).dispatch("memory", args, ctx)
item = PendingWrite.objects.filter(review_id=run.pk).get()
assert item.hold_kind == "conflict", item.reason
print(item.pk)
"""


def hold_conflict(server: LiveServer, old: str, new: str, said: str) -> int:
    return int(server_python(server, HOLD.format(old=old, new=new, said=said)))


def user_entries(server: LiveServer) -> str:
    path = server.home / "memories" / "USER.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_replace_supersedes_and_the_memory_page_says_when_it_was_learned(page: Page, daphne_server, screenshot):
    old, new = "Prefers 4-space indents in Go", "Prefers 2-space indents in Go"
    pk = hold_conflict(daphne_server, old, new, "These days I use 2-space indents in Go, everywhere.")
    page.goto("/pending/")
    item = page.locator(f"#pending-{pk}")
    expect(item.locator(".conflict-old")).to_contain_text(old)
    expect(item.locator(".conflict-new")).to_contain_text(new)
    for label in ("Replace", "Keep both", "Reject"):
        expect(item.get_by_role("button", name=label, exact=True)).to_be_visible()
    screenshot("inbox-conflict", page, full_page=True)
    item.get_by_role("button", name="Replace", exact=True).click()
    expect(page.locator(".flash.success")).to_contain_text("is superseded by")
    assert new in user_entries(daphne_server) and old not in user_entries(daphne_server)
    # The change history says "superseded", and the change can be undone from its page.
    page.goto("/changes/")
    row = page.locator(".change-row", has_text="superseded").first
    expect(row).to_contain_text("supersede")
    # The memory page: when the entry was learned, and what it superseded.
    page.goto("/memory/")
    entry = page.locator("#memory-user .memory-entry", has_text=new)
    ((created,),) = daphne_server.query(
        "SELECT created_at FROM knowledge_knowledgechange WHERE action = 'supersede' ORDER BY id DESC LIMIT 1"
    )
    expect(entry.locator(".learned")).to_have_text(f"Learned {str(created)[:16]}")  # UTC, as the page shows it
    expect(entry.locator(".replaced")).to_contain_text(f"Superseded: {old}")
    screenshot("memory-learned", page, full_page=True)
    entry.locator(".learned a").click()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Undo this change").click()
    expect(page.locator(".flash.success")).to_contain_text("Undid change")
    assert old in user_entries(daphne_server) and new not in user_entries(daphne_server)


def test_keep_both_and_reject(page: Page, daphne_server):
    keep = hold_conflict(daphne_server, "Commutes by train", "Commutes by bike", "In summer I commute by bike.")
    drop = hold_conflict(daphne_server, "Drinks tea at work", "Drinks coffee at work", "At work I drink coffee.")
    page.goto("/pending/")
    page.locator(f"#pending-{keep}").get_by_role("button", name="Keep both", exact=True).click()
    expect(page.locator(".flash.success")).to_contain_text("added beside")
    page.locator(f"#pending-{drop}").get_by_role("button", name="Reject", exact=True).click()
    expect(page.locator(".flash")).to_contain_text(f"Rejected #{drop}")
    expect(page.locator(f"#pending-{keep}")).to_have_count(0)
    expect(page.locator(f"#pending-{drop}")).to_have_count(0)
    entries = user_entries(daphne_server)
    assert "Commutes by train" in entries and "Commutes by bike" in entries
    assert "Drinks tea at work" in entries and "Drinks coffee at work" not in entries
    rows = daphne_server.query(
        "SELECT id, status FROM knowledge_pendingwrite WHERE id IN (?, ?) ORDER BY id", keep, drop
    )
    assert [tuple(r) for r in rows] == [(keep, "approved"), (drop, "rejected")]
