"""A review that saves one write and holds another, in a real browser: the toast says
"💾 1 saved · 1 waits for you", its held part opens the inbox narrowed to that review, and
"Approve all from this review" saves the held write and the navigation's count drops."""

from __future__ import annotations

import json
import time

import pytest
from playwright.sync_api import Page, expect

from tests.browser.chat_helpers import fresh_chat, send, wait_idle
from tests.daphne import Daphne
from tests.fakellm import Reply, last_user_text

pytestmark = pytest.mark.browser

REVIEW_PROMPT = "Review the conversation above"


def pending_badge(page: Page) -> int:
    badge = page.locator("#pending-badge")
    return int(badge.text_content() or 0) if badge.count() else 0


def _held_review(server: Daphne, session_id: str) -> int:
    """The id of the review that held a write of this chat, once it has (the bound only keeps a
    broken test from hanging)."""
    for _ in range(300):
        found = server.query(
            "select distinct review_id from knowledge_pendingwrite where session_id=? and status='pending'", session_id
        )
        if found:
            [(review_id,)] = found
            return int(review_id)
        time.sleep(0.05)
    reviews = server.query("select id, status, summary, error from knowledge_reviewrun where session_id=?", session_id)
    raise AssertionError(f"no write of chat {session_id} is waiting; its reviews: {reviews}")


def test_a_held_write_is_announced_and_approved_with_its_review(page: Page, llm, daphne_server, screenshot):
    session_id = fresh_chat(page)
    # One write quotes the person (saved), the other quotes words they never wrote (held).
    # Words no other browser test saves: the home is shared, and an entry on the same subject would be a conflict.
    saved = {
        "target": "user",
        "action": "add",
        "content": "Keeps bees on the balcony",
        "evidence": ["I keep bees on the balcony"],
    }
    held = {"target": "user", "action": "add", "content": "Lives in Oslo", "evidence": ["I moved to Oslo in May"]}
    llm.when(
        # Only the review of this chat after its tenth turn: a review of another test's chat still
        # finishing on the shared server must not take these writes.
        lambda body: (
            REVIEW_PROMPT in last_user_text(body)
            and body["messages"][-1]["role"] == "user"
            and "turn 10, I keep bees on the balcony" in json.dumps(body["messages"][:-1])
        ),
        Reply(tool_calls=[{"name": "memory", "arguments": saved}, {"name": "memory", "arguments": held}]),
        times=1,
    )
    llm.default = lambda body: Reply(
        text="done" if body["messages"][-1]["role"] == "tool" else f"answer to {last_user_text(body)}"
    )
    page.wait_for_selector('body[data-notify="open"]')
    waiting_before = pending_badge(page)
    for i in range(1, 10):
        send(page, f"turn {i}")
        wait_idle(page, i)
    send(page, "turn 10, I keep bees on the balcony")
    # The review that held the write (a skill review may have run in the same chat too). Every
    # page hears every review's toast, and an earlier test's review may still be finishing on the
    # shared server: this chat's toast is the one linking to this review.
    review_id = _held_review(daphne_server, session_id)
    toast = page.locator(".toast", has=page.locator(f'a[href="/pending/?review={review_id}"]'))
    expect(toast).to_be_visible(timeout=8000)  # the review has ended: all its writes are decided
    held_now = daphne_server.query(
        "select arguments, hold_kind, reason from knowledge_pendingwrite where review_id=? and status='pending'",
        review_id,
    )
    assert len(held_now) == 1 and "Lives in Oslo" in held_now[0][0], held_now  # with the reasons when not
    expect(toast).to_have_text("💾 1 saved · 1 waits for you", timeout=8000)
    # The open page's navigation counts the new waiting write without a reload.
    expect(page.locator("#pending-badge")).to_have_text(str(waiting_before + 1))
    screenshot("review-toast-waiting", page)
    waiting = toast.get_by_role("link", name="1 waits for you")
    assert waiting.get_attribute("href") == f"/pending/?review={review_id}"
    waiting.click()

    page.wait_for_url(f"**/pending/?review={review_id}")
    expect(page.get_by_role("heading", level=1)).to_contain_text(f"Pending from review #{review_id}")
    expect(page.locator(".pending-item")).to_have_count(1)
    item = page.locator(".pending-item")
    expect(item).to_contain_text("Lives in Oslo")
    expect(item.locator(".badge.bad")).to_have_text("Not shown by the conversation")
    before = pending_badge(page)
    assert before >= 1
    screenshot("inbox-review", page, full_page=True)

    page.get_by_role("button", name="Approve all from this review").click()
    expect(page.locator(".flash.success")).to_have_text(f"Approved 1 write from review #{review_id}.")
    expect(page.locator(".pending-item")).to_have_count(0)
    expect(page.locator("main")).to_contain_text(f"Nothing from review #{review_id} is waiting.")
    assert pending_badge(page) == before - 1
    user_md = (daphne_server.home / "memories" / "USER.md").read_text(encoding="utf-8")
    assert "Keeps bees on the balcony" in user_md and "Lives in Oslo" in user_md
    statuses = daphne_server.query("select status from knowledge_pendingwrite where review_id=?", review_id)
    assert statuses == [("approved",)]
    page.get_by_role("link", name="← All pending writes").click()
    page.wait_for_url("**/pending/")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Pending approval")
