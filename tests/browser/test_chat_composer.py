"""Writing and reading a chat in a real browser: attachments, Escape, following
the stream only at the bottom, and a refused socket sending the page to the login."""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest
from playwright.sync_api import Locator, expect

from tests.browser.chat_helpers import fresh_chat, send, wait_idle
from tests.fakellm import Reply, last_user_text

pytestmark = pytest.mark.browser

# The stopped note, followed by its Continue button.
STOPPED = re.compile(r"^Stopped\. What was written so far is kept\.(\s*Continue)?$")


def wait_until(locator: Locator, predicate: str, tries: int = 150) -> None:
    """Poll a predicate on an element (the CSP forbids the eval that wait_for_function uses)."""
    for _ in range(tries):
        if locator.evaluate(predicate):
            return
        locator.page.wait_for_timeout(100)
    raise AssertionError(f"never true: {predicate}")


LOG = "2026-11-30 12:00:01 ERROR worker crashed: zorbleflux overflow in queue <main>\n"


def test_attached_text_file_reaches_the_model_is_stored_and_searchable(page, llm, daphne_server):
    session_id = fresh_chat(page)
    llm.push(Reply(text="The worker overflowed its queue."))
    page.set_input_files(
        "#attach-input", files=[{"name": "crash.log", "mimeType": "text/plain", "buffer": LOG.encode()}]
    )
    expect(page.locator("#attachments .attachment-name")).to_have_text("📎 crash.log")
    send(page, "what broke?")
    wait_idle(page, 1)
    sent = last_user_text(llm.requests[-1])
    assert sent.startswith("what broke?") and LOG.strip() in sent
    expect(page.locator("#attachments .attachment")).to_have_count(0)  # sent, so no longer pending
    page.reload()
    card = page.locator(".msg-user .file-card")  # the file shows as a card that opens to its text
    expect(card.locator(".file-name")).to_have_text("crash.log")
    expect(card.locator(".file-facts")).to_contain_text("Log file")
    expect(page.locator(".msg-user pre")).to_contain_text("zorbleflux overflow in queue <main>")
    stored = daphne_server.query("select content from knowledge_message where session_id=? and role='user'", session_id)
    assert LOG.strip() in stored[0][0]
    page.fill("#chat-search", "zorbleflux")
    expect(page.locator(f'#session-list a[href^="/c/{session_id}/"]')).to_have_count(1)


def test_oversized_and_binary_files_are_refused_with_a_reason(page, llm):
    fresh_chat(page)
    limit = int(page.get_attribute("#chat", "data-attach-bytes") or "0")
    big = {"name": "huge.log", "mimeType": "text/plain", "buffer": b"x" * (limit + 1)}
    page.set_input_files("#attach-input", files=[big])
    expect(page.locator("#chat-alert")).to_contain_text("huge.log is")
    expect(page.locator("#chat-alert")).to_contain_text("It was not attached.")
    binary = {"name": "photo.txt", "mimeType": "text/plain", "buffer": b"\x89PNG\x00\x00data"}
    page.set_input_files("#attach-input", files=[binary])
    expect(page.locator("#chat-alert")).to_contain_text("photo.txt is not a text file")
    expect(page.locator("#attachments .attachment")).to_have_count(0)


def test_escape_stops_the_stream_and_reload_still_shows_it_stopped(page, llm, daphne_server):
    session_id = fresh_chat(page)
    llm.push(Reply(text="slow " * 400, chunk_delay=0.05))
    send(page, "write a lot")
    page.locator(".msg-assistant.streaming").wait_for()
    page.keyboard.press("Escape")
    expect(page.locator(".turn-note.stopped")).to_have_text(STOPPED)
    page.wait_for_selector('#chat[data-busy="0"]')
    assert daphne_server.query(
        "select finish_reason from knowledge_message where session_id=? and role='assistant'", session_id
    ) == [("interrupted",)]
    page.reload()
    expect(page.locator(".turn-note.stopped")).to_have_text(STOPPED)


def test_escape_cancels_an_edit_and_a_rename(page, llm):
    fresh_chat(page)
    send(page, "keep me as I am")
    wait_idle(page, 1)
    page.locator(".msg-user .msg-edit").click()
    page.locator(".edit-form textarea").fill("changed my mind")
    page.keyboard.press("Escape")
    expect(page.locator(".edit-form")).to_have_count(0)
    expect(page.locator(".msg-user .md")).to_have_text("keep me as I am")
    page.click("#chat-title button")
    page.locator(".rename-form input[name=title]").fill("not this title")
    page.keyboard.press("Escape")
    expect(page.locator(".rename-form")).to_have_count(0)
    expect(page.locator("#chat-title-text")).to_have_text("keep me as I am")


def test_scrolling_up_while_streaming_stays_put_and_jump_to_latest_returns(page, llm):
    fresh_chat(page)
    llm.push(Reply(text="\n\n".join(f"Paragraph {i} of a long answer." for i in range(80)), chunk_delay=0.01))
    send(page, "a long answer please")
    messages = page.locator("#messages")
    wait_until(messages, "m => m.scrollHeight > 2 * m.clientHeight")
    messages.evaluate("m => { m.scrollTop = 0; }")
    expect(page.locator("#jump-latest")).to_be_visible()
    height = messages.evaluate("m => m.scrollHeight")
    wait_until(messages, f"m => m.scrollHeight > {height} + 200")  # more of the answer arrived
    assert messages.evaluate("m => m.scrollTop") == 0  # the reader's place was kept
    page.click("#jump-latest")
    expect(page.locator("#jump-latest")).to_be_hidden()
    assert messages.evaluate("m => m.scrollHeight - m.scrollTop - m.clientHeight") <= 40
    wait_idle(page, 1)


def test_a_socket_refused_as_logged_out_goes_to_the_login_page(page, daphne_server):
    session_id = fresh_chat(page)
    page.route_web_socket("**/ws/chat/**", lambda ws: ws.close(code=4401, reason="login required"))
    page.goto(f"/c/{session_id}/")
    page.wait_for_url(lambda url: "/login?" in url and unquote(url).endswith(f"next=/c/{session_id}/"))


def test_a_socket_refused_for_good_says_why_and_stops_retrying(page, daphne_server):
    session_id = fresh_chat(page)
    attempts: list[str] = []

    def refuse(ws):
        attempts.append(ws.url)
        ws.close(code=4400, reason="Not a chat session id")

    page.route_web_socket("**/ws/chat/**", refuse)
    page.goto(f"/c/{session_id}/")
    expect(page.locator("#conn")).to_have_text("Not connected: Not a chat session id")
    page.wait_for_timeout(1500)  # longer than the first reconnect delay (0.5 s)
    assert len(attempts) == 1
