"""Each message shows when it was written, and each answer its tokens: as the server reported
them, or estimated (marked "~") when it reported none."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.chat_helpers import fresh_chat, send, wait_idle
from tests.fakellm import Reply

pytestmark = pytest.mark.browser

CLOCK = re.compile(r"\d{1,2}:\d{2}")


def test_messages_show_their_time_and_answers_their_tokens(page, llm):
    fresh_chat(page)
    llm.push(Reply(text="a reported answer", completion_tokens=42))
    send(page, "first")
    wait_idle(page, 1)
    llm.push(Reply(text="x" * 80, send_usage=False))
    send(page, "second")
    wait_idle(page, 2)
    for shown in ("live", "reloaded"):
        expect(page.locator(".msg-user .msg-meta time").first).to_have_text(CLOCK)
        answers = page.locator(".msg-assistant .msg-meta")
        expect(answers.nth(0)).to_contain_text("42 tokens")
        expect(answers.nth(0).locator("time")).to_have_text(CLOCK)
        expect(answers.nth(1)).to_contain_text("~20 tokens")
        if shown == "live":
            page.reload()
            page.wait_for_selector('#chat[data-connected="1"]')
