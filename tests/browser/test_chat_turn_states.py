"""Every moment of a turn has a visible state, and Stop works at each of them."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from playwright.sync_api import expect

from tests.browser.chat_helpers import fresh_chat, send
from tests.fakellm import Reply, last_user_text

pytestmark = pytest.mark.browser


def test_a_slow_first_token_shows_thinking_and_stop_cancels_the_request(page, llm, screenshot):
    fresh_chat(page)
    llm.push(Reply(text="far too late", delay=12))
    llm.default = lambda body: Reply(text=f"answer to {last_user_text(body)}")
    send(page, "think hard")
    waiting = page.locator("#turn-waiting")
    expect(waiting).to_contain_text("Thinking…")
    # The indicator sits under the person's message, before any answer.
    expect(page.locator(".msg-user + #turn-waiting")).to_be_visible()
    expect(page.locator(".msg-assistant")).to_have_count(0)
    screenshot("chat-thinking", page)
    page.click("#stop")
    # Stopped long before the model's first token (12 s away); the wait allows for a loaded machine.
    expect(page.locator(".turn-note.stopped")).to_be_visible(timeout=3_000)
    expect(waiting).to_have_count(0)
    expect(page.locator("#input")).to_be_enabled()
    # The model server saw the connection closed, so it can stop generating.
    assert _wait_for(lambda: llm.hangups == 1)
    page.reload()
    expect(page.locator(".turn-note.stopped")).to_contain_text("Stopped.")
    page.wait_for_selector('#chat[data-connected="1"]')
    send(page, "now something short")
    expect(page.locator(".msg-assistant .md").last).to_have_text("answer to now something short")
    # The stopped answer is a mark for the page, never sent to the model as an empty message.
    sent = llm.chat_requests()[-1]["messages"]
    assert [m["role"] for m in sent[1:]] == ["user", "user"]


def test_stop_between_slow_chunks_takes_effect_at_once(page, llm):
    fresh_chat(page)
    llm.push(Reply(text="one two three four five six", chunk_delay=4))
    send(page, "slowly")
    expect(page.locator(".msg-assistant.streaming")).to_be_visible()
    expect(page.locator("#turn-waiting")).to_have_count(0)
    page.click("#stop")
    expect(page.locator(".turn-note.stopped")).to_be_visible(timeout=3_000)
    page.reload()
    expect(page.locator(".turn-note.stopped")).to_contain_text("Stopped.")


def _wait_for(check: Callable[[], bool], tries: int = 40) -> bool:
    for _ in range(tries):
        if check():
            return True
        time.sleep(0.05)
    return check()
