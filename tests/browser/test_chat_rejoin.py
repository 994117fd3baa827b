"""A reload or a second tab joins an answer being written: the text so far (rendered as it
streamed), then the rest live, with Stop; never shown as finished before it is (no Regenerate, no
"Still being written…" left over); at the end every tab shows the one final answer. On a wide
window and on a phone."""

from __future__ import annotations

import re
from typing import Literal

import pytest
from playwright.sync_api import BrowserContext, Page, ViewportSize, WebSocketRoute, expect

from tests.browser.chat_helpers import fresh_chat, send, wait_idle
from tests.browser.test_a11y import blocking_violations
from tests.fakellm import Reply

pytestmark = pytest.mark.browser

ANSWER = "# Release plan\n\nFirst the **build**, then the tests.\n\n" + "Then one more careful step. " * 40
SIZES: dict[str, ViewportSize] = {"wide": {"width": 1280, "height": 860}, "phone": {"width": 390, "height": 844}}
# Each test at both sizes, the two tests between them in both themes.
JOIN_MODES = [("wide", "light"), ("phone", "dark")]
STOP_MODES = [("wide", "dark"), ("phone", "light")]


def _mode(page: Page, size: str, scheme: Literal["light", "dark"]) -> None:
    page.set_viewport_size(SIZES[size])
    page.emulate_media(color_scheme=scheme)


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
        "n => { const md = document.querySelector('.msg-assistant.streaming .md');"
        " return !md || md.innerText.length > n + 40; }",
        arg=so_far,
    )  # more text arrives live (or the answer ended meanwhile)


@pytest.mark.parametrize(("size", "scheme"), JOIN_MODES)
def test_a_reload_and_a_second_tab_join_the_answer_and_end_with_one_answer(page, context, llm, size, scheme):
    session_id = fresh_chat(page)
    _mode(page, size, scheme)
    llm.push(Reply(text=ANSWER, chunk_delay=0.03))
    send(page, "how do we release the rejoin build?")
    expect(page.locator(".msg-assistant.streaming .md strong")).to_have_text("build")
    page.reload()
    _joins_mid_answer(page)
    other = _second_tab(context, session_id, size)
    other.emulate_media(color_scheme=scheme)
    _joins_mid_answer(other)
    assert blocking_violations(other, f"joined answer {size} {scheme}") == []
    for tab in (page, other):
        wait_idle(tab, 1)
        expect(tab.locator(".msg-user")).to_have_count(1)
        expect(tab.locator(".msg-assistant .msg-regenerate")).to_have_count(1)
        expect(tab.locator(".msg-assistant .md-tail")).to_have_count(0)
        expect(tab.locator(".turn-note")).to_have_count(0)
        expect(tab.locator(".msg-assistant .md")).to_contain_text("Then one more careful step.")
    assert page.locator(".msg-assistant .md").inner_html() == other.locator(".msg-assistant .md").inner_html()
    page.reload()  # and both are what the stored answer shows
    expect(page.locator(".msg-assistant .md h1")).to_have_text("Release plan")
    expect(page.locator(".msg-assistant")).to_have_count(1)
    assert page.locator(".msg-assistant .md").inner_html() == other.locator(".msg-assistant .md").inner_html()
    other.close()


@pytest.mark.parametrize(("size", "scheme"), STOP_MODES)
def test_stop_on_a_reloaded_page_stops_the_answer(page, llm, size, scheme):
    fresh_chat(page)
    _mode(page, size, scheme)
    llm.push(Reply(text=ANSWER * 4, chunk_delay=0.04))
    send(page, "a long rejoin plan please")
    expect(page.locator(".msg-assistant.streaming .md strong")).to_have_text("build")
    page.reload()
    _joins_mid_answer(page)
    page.click("#stop")
    wait_idle(page, 1)
    expect(page.locator(".turn-note.stopped")).to_contain_text("Stopped.")
    expect(page.locator("#stop")).to_be_hidden()
    expect(page.locator(".msg-assistant")).to_have_count(1)
    stopped = page.locator(".msg-assistant .md").inner_text()
    assert len(stopped) < len(ANSWER * 4)
    page.reload()
    expect(page.locator(".turn-note.stopped")).to_contain_text("Stopped.")
    expect(page.locator(".msg-assistant")).to_have_count(1)


def test_a_page_whose_socket_opens_after_the_answer_ended_shows_it_finished(page, llm):
    """Served while the answer was written (busy: Stop, no Regenerate), its socket connects only
    once the answer was stored: the stored answer replaces what the page showed of it, with no
    "Still being written…" left, and the page is free for the next message."""
    session_id = fresh_chat(page)
    llm.push(Reply(text=ANSWER, chunk_delay=0.03))
    send(page, "a rejoin plan, then a question")
    expect(page.locator(".msg-assistant.streaming .md strong")).to_have_text("build")
    held: list[WebSocketRoute] = []
    sent: list[str | bytes] = []

    def hold(socket: WebSocketRoute) -> None:  # the page's socket, not yet through to the server
        held.append(socket)
        socket.on_message(lambda message: sent.append(message))

    page.route_web_socket(re.compile(r"/ws/chat/"), hold)
    page.reload()
    expect(page.locator("#stop")).to_be_visible()
    expect(page.locator(".msg-regenerate")).to_have_count(0)
    for _ in range(300):  # until the answer is stored and its turn over
        if 'data-busy="0"' in page.request.get(f"/c/{session_id}/").text():
            break
        page.wait_for_timeout(100)
    (socket,) = held
    server = socket.connect_to_server()
    for message in sent:  # the page's join, held until now
        server.send(message)
    socket.on_message(lambda message: server.send(message))
    expect(page.locator("#chat")).to_have_attribute("data-busy", "0")
    expect(page.locator("#stop")).to_be_hidden()
    expect(page.locator(".turn-note")).to_have_count(0)
    expect(page.locator(".msg-assistant")).to_have_count(1)
    expect(page.locator(".msg-assistant .msg-regenerate")).to_have_count(1)
    expect(page.locator(".msg-assistant .md")).to_contain_text("Then one more careful step.")


def _second_tab(context: BrowserContext, session_id: str, size: str) -> Page:
    other = context.new_page()
    other.set_viewport_size(SIZES[size])
    other.goto(f"/c/{session_id}/")
    return other
