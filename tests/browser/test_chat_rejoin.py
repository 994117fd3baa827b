"""A reload, a second tab or another device joins an answer being written: the text so far
(rendered as it streamed), then the rest live, with Stop; never shown as finished before it is;
at the end every tab shows the same final answer with Regenerate."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.chat_helpers import fresh_chat, send, wait_idle
from tests.fakellm import Reply

pytestmark = pytest.mark.browser

ANSWER = "# Release plan\n\nFirst the **build**, then the tests.\n\n" + "Then one more careful step. " * 40


def _streamed_chars(page: Page) -> int:
    return len(page.locator(".msg-assistant.streaming .md").inner_text())


def _joins_mid_answer(page: Page) -> None:
    """The page shows the answer so far as it streams, with Stop and nothing of a finished answer."""
    streaming = page.locator(".msg-assistant.streaming .md")
    expect(streaming.locator("h1")).to_have_text("Release plan")  # rendered as the live renderer does
    expect(streaming.locator("strong")).to_have_text("build")
    expect(page.locator("#stop")).to_be_visible()
    expect(page.locator(".msg-user")).to_have_count(1)
    expect(page.locator(".msg-assistant")).to_have_count(1)
    expect(page.locator(".turn-note")).to_have_count(0)  # no "Still being written…" left over
    expect(page.locator(".msg-regenerate")).to_have_count(0)
    so_far = _streamed_chars(page)
    page.wait_for_function(
        "n => document.querySelector('.msg-assistant.streaming .md').innerText.length > n + 40", arg=so_far
    )  # more text arrives live


def test_a_reload_and_a_second_tab_join_the_answer_and_end_with_the_first(page, context, llm):
    session_id = fresh_chat(page)
    llm.push(Reply(text=ANSWER, chunk_delay=0.02))
    send(page, "how do we release?")
    expect(page.locator(".msg-assistant.streaming .md strong")).to_have_text("build")
    page.reload()
    _joins_mid_answer(page)
    other = context.new_page()
    other.goto(f"/c/{session_id}/")
    _joins_mid_answer(other)
    for tab in (page, other):
        wait_idle(tab, 1)
        expect(tab.locator(".msg-assistant .msg-regenerate")).to_have_count(1)
        expect(tab.locator(".msg-assistant .md-tail")).to_have_count(0)
        expect(tab.locator(".msg-assistant .md")).to_contain_text("Then one more careful step.")
    assert page.locator(".msg-assistant .md").inner_html() == other.locator(".msg-assistant .md").inner_html()
    page.reload()  # and both are what the stored answer shows
    expect(page.locator(".msg-assistant .md h1")).to_have_text("Release plan")
    assert page.locator(".msg-assistant .md").inner_html() == other.locator(".msg-assistant .md").inner_html()
    other.close()


def test_stop_on_a_reloaded_page_stops_the_answer(page, llm):
    fresh_chat(page)
    llm.push(Reply(text=ANSWER * 4, chunk_delay=0.04))
    send(page, "a long one please")
    expect(page.locator(".msg-assistant.streaming .md strong")).to_have_text("build")
    page.reload()
    _joins_mid_answer(page)
    page.click("#stop")
    wait_idle(page, 1)
    expect(page.locator(".turn-note.stopped")).to_contain_text("Stopped.")
    expect(page.locator("#stop")).to_be_hidden()
    stopped = page.locator(".msg-assistant .md").inner_text()
    assert len(stopped) < len(ANSWER * 4)
    page.reload()
    expect(page.locator(".turn-note.stopped")).to_contain_text("Stopped.")
