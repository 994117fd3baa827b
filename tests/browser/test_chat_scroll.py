"""The chat opens at its end, follows an answer while the person is at the bottom, and shows
the person's new message when they send while scrolled up."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.chat_helpers import fresh_chat, send, wait_idle
from tests.fakellm import Reply

pytestmark = pytest.mark.browser

LONG = "\n\n".join(f"Paragraph {i}: " + "words to read " * 12 for i in range(40))
GAP = "() => { const m = document.getElementById('messages'); return m.scrollHeight - m.scrollTop - m.clientHeight; }"


def _gap(page: Page) -> float:
    return float(page.evaluate(GAP))


@pytest.mark.parametrize("width", [1280, 390])
def test_a_chat_opens_at_its_end_and_follows_the_stream(page, llm, width):
    fresh_chat(page)
    page.set_viewport_size({"width": width, "height": 800})
    for n in (1, 2):
        llm.push(Reply(text=LONG))
        send(page, f"long answer {n}")
        wait_idle(page, n)
    page.reload()
    page.wait_for_selector('#chat[data-connected="1"]')
    last = page.locator(".msg-assistant").last
    good = last.locator(".feedback-good")
    expect(good).to_be_in_viewport()
    page.wait_for_function(f"() => ({GAP})() <= 2")
    # A slow answer is followed while the person stays at the bottom.
    llm.push(Reply(text=LONG[:2400], chunk_delay=0.01))
    send(page, "and another")
    streaming = page.locator(".msg-assistant.streaming")
    expect(streaming).to_be_visible()
    page.wait_for_function("() => document.querySelector('.msg-assistant.streaming').textContent.length > 800")
    assert _gap(page) <= 2
    wait_idle(page, 3)
    assert _gap(page) <= 2


def test_sending_while_scrolled_up_brings_the_new_message_into_view(page, llm):
    fresh_chat(page)
    llm.push(Reply(text=LONG), Reply(text=LONG))
    send(page, "first")
    wait_idle(page, 1)
    send(page, "second")
    wait_idle(page, 2)
    page.evaluate("document.getElementById('messages').scrollTop = 0")
    expect(page.locator("#jump-latest")).to_be_hidden()
    llm.push(Reply(text="short reply", delay=1))
    send(page, "my new question")
    expect(page.locator(".msg-user").last).to_be_in_viewport()
    expect(page.locator(".msg-assistant .md").last).to_have_text("short reply")
    assert _gap(page) <= 2
