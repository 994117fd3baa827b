"""A review that holds a write for approval says so at once, in a toast linking to the inbox
narrowed to that review."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.chat_helpers import fresh_chat, send, wait_idle
from tests.fakellm import Reply, last_user_text

pytestmark = pytest.mark.browser

REVIEW_PROMPT = "Review the conversation above"


def test_a_write_held_as_unsupported_gets_a_toast_without_a_reload(page, llm, daphne_server):
    session_id = fresh_chat(page)
    # The review claims a quote the person never wrote: the write waits in the inbox.
    llm.when(
        lambda body: REVIEW_PROMPT in last_user_text(body) and body["messages"][-1]["role"] == "user",
        Reply(
            tool_calls=[
                {
                    "name": "memory",
                    "arguments": {
                        "target": "user",
                        "action": "add",
                        "content": "Lives in Paris",
                        "evidence": ["I moved to Paris last spring"],
                    },
                }
            ]
        ),
        times=1,
    )
    llm.default = lambda body: Reply(
        text="done" if body["messages"][-1]["role"] == "tool" else f"answer to {last_user_text(body)}"
    )
    page.wait_for_selector('body[data-notify="open"]')
    for i in range(1, 11):
        send(page, f"turn {i}")
        wait_idle(page, i)
    toast = page.locator(".toast", has_text="💾 1 waits for you")
    expect(toast).to_be_visible(timeout=8000)
    held = daphne_server.query("select status, review_id from knowledge_pendingwrite where session_id=?", session_id)
    assert [status for status, _ in held] == ["pending"]
    link = toast.get_by_role("link", name="1 waits for you")
    assert link.get_attribute("href") == f"/pending/?review={held[0][1]}"
    link.click()
    page.wait_for_url("**/pending/?review=*")
    expect(page.locator("main")).to_contain_text("Lives in Paris")


def test_a_removal_nobody_asked_for_waits_in_the_inbox_until_approved(page, llm, daphne_server):
    folder = daphne_server.write_skill("old-deploy-notes", "How we deployed before", "1. Run make old-deploy").parent
    fresh_chat(page)
    # The review deletes a skill the person never mentioned: it waits for them instead.
    llm.when(
        lambda body: REVIEW_PROMPT in last_user_text(body) and body["messages"][-1]["role"] == "user",
        Reply(tool_calls=[{"name": "skill_manage", "arguments": {"action": "delete", "name": "old-deploy-notes"}}]),
        times=1,
    )
    llm.default = lambda body: Reply(
        text="done" if body["messages"][-1]["role"] == "tool" else f"answer to {last_user_text(body)}"
    )
    page.wait_for_selector('body[data-notify="open"]')
    for i in range(1, 11):
        send(page, f"turn {i}")
        wait_idle(page, i)
    toast = page.locator(".toast", has_text="💾 1 waits for you")
    expect(toast).to_be_visible(timeout=8000)
    assert (folder / "SKILL.md").exists()
    toast.get_by_role("link", name="1 waits for you").click()
    page.wait_for_url("**/pending/?review=*")
    item = page.locator(".pending-item", has_text="old-deploy-notes")
    expect(item.locator(".badge.bad")).to_have_text("Removal")
    expect(item).to_contain_text("Not done until you approve it")
    expect(item).to_contain_text("Deletes the skill and all its files.")
    item.get_by_role("button", name="Approve", exact=True).click()
    expect(page.locator("main")).to_contain_text("Skill 'old-deploy-notes' deleted")
    assert not folder.exists()
