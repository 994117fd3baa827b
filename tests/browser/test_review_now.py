"""Review on demand in the browser: "Review this chat now" in the chat's menu (with a focus) and
`/refine [focus]` from the slash menu start the background review at once; the review's request
carries the focus and its 💾 toast follows; on a phone the item is in the ⋯ menu."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.chat_helpers import send, wait_idle
from tests.browser.conftest import LiveServer
from tests.browser.test_chat_versions import start_chat
from tests.fakellm import Reply, ScriptedLLM, last_user_text

pytestmark = pytest.mark.browser

REVIEW_PROMPT = "Review the conversation above"
DONE = "💾 Review done: nothing new to save"


def _is_review_start(body: dict[str, Any]) -> bool:
    return REVIEW_PROMPT in last_user_text(body) and body["messages"][-1]["role"] == "user"


def _reviews(llm: ScriptedLLM) -> list[str]:
    return [last_user_text(body) for body in llm.requests if _is_review_start(body)]


def _chat_about_kakapos(page: Page, llm: ScriptedLLM) -> str:
    session_id = start_chat(page)
    llm.when(_is_review_start, Reply(text="Nothing to save."))
    send(page, "I feed the kakapos at dawn")
    wait_idle(page, 1)
    page.wait_for_selector('body[data-notify="open"]')
    return session_id


def test_refine_from_the_slash_menu_and_the_chat_menu_item_run_a_review_with_the_focus(
    page: Page, llm: ScriptedLLM, daphne_server: LiveServer
) -> None:
    session_id = _chat_about_kakapos(page, llm)
    page.fill("#input", "")
    page.type("#input", "/refi")
    option = page.locator("#slash-menu .slash-option")
    expect(option.locator(".slash-name")).to_have_text(["/refine"])
    page.press("#input", "Enter")
    expect(page.locator("#input")).to_have_value("/refine ")
    page.type("#input", "kakapo feeding times")
    page.press("#input", "Enter")
    expect(
        page.locator(".toast", has_text="Reviewing this chat now, focusing on: kakapo feeding times")
    ).to_be_visible()
    expect(page.locator(".toast", has_text=DONE)).to_be_visible(timeout=10_000)
    expect(page.locator("#input")).to_have_value("")
    (asked,) = _reviews(llm)
    assert "Focus on: kakapo feeding times" in asked
    # Not a message: the chat holds only what the person said.
    expect(page.locator(".msg-user")).to_have_count(1)
    # The same from the chat's menu, with a focus typed beside the item (the first review's toasts cleared).
    page.evaluate("document.querySelectorAll('.toast').forEach((t) => t.remove())")
    page.fill("#review-focus", "dawn routines")
    page.click("#review-now")
    expect(page.locator(".toast", has_text=DONE)).to_be_visible(timeout=10_000)
    expect(page.locator("#review-focus")).to_have_value("")
    assert "Focus on: dawn routines" in _reviews(llm)[-1]
    assert daphne_server.query(
        "select trigger, focus from knowledge_reviewrun where session_id=? order by id", session_id
    ) == [("request", "kakapo feeding times"), ("request", "dawn routines")]


def test_a_private_chat_refuses_it_in_words(page: Page, llm: ScriptedLLM, daphne_server: LiveServer) -> None:
    session_id = _chat_about_kakapos(page, llm)
    daphne_server.query("update knowledge_chatsession set private=true where id=?", session_id)
    page.click("#review-now")
    expect(page.locator("#chat-alert")).to_contain_text("This chat is private")
    assert _reviews(llm) == []


def test_on_a_phone_the_item_is_in_the_chat_menu(page: Page, llm: ScriptedLLM) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    _chat_about_kakapos(page, llm)
    expect(page.locator("#review-now")).to_be_hidden()
    page.click("#chat-menu-toggle")
    item = page.locator("#chat-menu #review-now")
    expect(item).to_be_in_viewport()
    assert (item.bounding_box() or {"height": 0})["height"] >= 44
    item.click()
    expect(page.locator(".toast", has_text=DONE)).to_be_visible(timeout=10_000)
    assert len(_reviews(llm)) == 1
