"""The message box at 1280 px in light and on a phone (390×844) in dark: it stays editable while an answer
streams and Send queues the message for when the answer ends (editable, cancellable, sent
after Stop too); it grows with its text up to 40% of the window; an unsent draft is kept per
chat across chat switches and reloads. axe stays clean with a message queued."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.chat_helpers import send, wait_idle
from tests.browser.conftest import LiveServer
from tests.browser.test_a11y import blocking_violations
from tests.browser.test_chat_versions import start_chat
from tests.fakellm import Reply, last_user_text

pytestmark = pytest.mark.browser

SIZES = [(1280, 860, "light"), (390, 844, "dark")]


@pytest.fixture(params=SIZES, ids=["1280-light", "390-dark"])
def sized_page(request, browser: Browser, daphne_server: LiveServer) -> Iterator[Page]:
    width, height, scheme = request.param
    ctx = browser.new_context(
        base_url=daphne_server.url, viewport={"width": width, "height": height}, color_scheme=scheme
    )
    ctx.set_default_timeout(15_000)
    page = ctx.new_page()
    page.goto(daphne_server.login_url("/"))
    page.wait_for_url(f"{daphne_server.url}/")
    yield page
    ctx.close()


def held_answer() -> Reply:
    """An answer that streams slowly until the test sets its chunk_delay to 0: the scripted
    server reads the delay before each chunk, so the answer then ends at once."""
    return Reply(text="A slowly written answer. " * 40, chunk_delay=0.2)


def open_chat(page: Page, session_id: str) -> None:
    """Switch to another chat through the chat list (in the drawer on a phone)."""
    if page.locator("#drawer-toggle").is_visible():
        page.click("#drawer-toggle")
    with page.expect_navigation():
        page.locator(f'#session-list a[href^="/c/{session_id}/"]').first.click()
    page.wait_for_selector('#chat[data-connected="1"]')


def box_height(page: Page) -> float:
    return float(page.locator("#input").evaluate("t => t.getBoundingClientRect().height"))


def test_a_message_typed_while_an_answer_streams_is_queued_editable_and_sent_when_it_ends(
    sized_page: Page, llm, screenshot
):
    page = sized_page
    start_chat(page)
    answer = held_answer()
    llm.push(answer)
    llm.default = lambda body: Reply(text=f"answer to {last_user_text(body)}")
    send(page, "first question")
    page.locator(".msg-assistant.streaming").wait_for()
    box = page.locator("#input")
    expect(box).to_be_editable()
    expect(page.locator("#send")).to_have_text("Queue")
    box.press_sequentially("second question")
    box.press("Enter")
    expect(page.locator("#send")).to_have_text("Queued")
    expect(page.locator("#queue-note-text")).to_have_text(
        "Queued: your message goes when the answer ends. You can still change it."
    )
    expect(page.locator("#queue-cancel")).to_be_visible()
    width = (page.viewport_size or {"width": 0})["width"]
    screenshot(f"composer-queued-{width}", page)
    problems = blocking_violations(page, f"a queued message while an answer streams at {width}")
    box.press_sequentially(", edited")  # a queued message can still be changed
    expect(page.locator(".msg-assistant.streaming")).to_have_count(1)  # all of it happened while streaming
    expect(page.locator(".msg-user")).to_have_count(1)
    answer.chunk_delay = 0
    wait_idle(page, 2)
    expect(page.locator(".msg-user .md").last).to_have_text("second question, edited")
    expect(page.locator(".msg-assistant .md").last).to_have_text("answer to second question, edited")
    expect(page.locator(".msg-user")).to_have_count(2)  # sent once
    expect(box).to_have_value("")
    expect(page.locator("#send")).to_have_text("Send")
    expect(page.locator("#queue-cancel")).to_be_hidden()
    assert not problems, "\n".join(problems)


def test_a_queued_message_can_be_taken_back_and_stays_in_the_box(sized_page: Page, llm):
    page = sized_page
    start_chat(page)
    answer = held_answer()
    llm.push(answer)
    send(page, "first question")
    page.locator(".msg-assistant.streaming").wait_for()
    page.fill("#input", "not yet")
    page.click("#send")
    expect(page.locator("#send")).to_have_text("Queued")
    page.click("#queue-cancel")
    expect(page.locator("#send")).to_have_text("Queue")
    expect(page.locator("#queue-cancel")).to_be_hidden()
    answer.chunk_delay = 0
    wait_idle(page, 1)
    expect(page.locator(".msg-user")).to_have_count(1)  # not sent
    expect(page.locator("#input")).to_have_value("not yet")  # and not lost
    expect(page.locator("#send")).to_have_text("Send")


def test_stop_ends_the_answer_and_the_queued_message_goes(sized_page: Page, llm):
    page = sized_page
    start_chat(page)
    llm.push(held_answer())
    llm.default = lambda body: Reply(text=f"answer to {last_user_text(body)}")
    send(page, "write a lot")
    page.locator(".msg-assistant.streaming").wait_for()
    send(page, "never mind, this instead")
    expect(page.locator("#send")).to_have_text("Queued")
    page.click("#stop")
    expect(page.locator(".turn-note.stopped")).to_be_visible()
    expect(page.locator(".msg-assistant .md").last).to_have_text("answer to never mind, this instead")
    wait_idle(page, 2)
    expect(page.locator(".msg-user .md")).to_have_text(["write a lot", "never mind, this instead"])
    expect(page.locator("#input")).to_have_value("")


def test_the_box_grows_for_eight_lines_is_capped_and_shrinks_after_send(sized_page: Page, llm):
    page = sized_page
    start_chat(page)
    box = page.locator("#input")
    empty = box_height(page)
    box.fill("\n".join(f"line {i}" for i in range(1, 9)))
    grown = box_height(page)
    assert grown > 2 * empty
    # All eight lines show without scrolling.
    assert box.evaluate("t => t.scrollHeight <= t.clientHeight + 1")
    box.fill("\n".join(f"line {i}" for i in range(1, 80)))
    viewport = page.viewport_size or {"height": 0}
    capped = box_height(page)
    assert viewport["height"] * 0.4 - 2 <= capped <= viewport["height"] * 0.4 + 1
    assert box.evaluate("t => t.scrollHeight > t.clientHeight")  # the rest scrolls
    # The conversation keeps room above the box.
    assert page.locator("#messages").evaluate("m => m.getBoundingClientRect().height") > 100
    box.press("Enter")
    wait_idle(page, 1)
    assert box_height(page) == pytest.approx(empty, abs=1)


def test_a_draft_survives_switching_chats_and_a_reload(sized_page: Page, llm):
    page = sized_page
    first = start_chat(page)
    send(page, "hello")
    wait_idle(page, 1)
    draft = "half-written thought\nwith a second line"
    page.fill("#input", draft)
    second = start_chat(page)  # a new chat
    assert second != first
    expect(page.locator("#input")).to_have_value("")  # each chat has its own draft
    page.locator("#input").press_sequentially("the new chat's draft")
    open_chat(page, first)
    expect(page.locator("#input")).to_have_value(draft)
    page.reload()
    expect(page.locator("#input")).to_have_value(draft)
    # The restored draft sizes the box: taller than one line, and both its lines show without scrolling.
    assert box_height(page) > 44
    assert page.locator("#input").evaluate("t => t.scrollHeight <= t.clientHeight")
    page.goto("/")  # the unused new chat again
    assert page.get_attribute("#chat", "data-session") == second
    expect(page.locator("#input")).to_have_value("the new chat's draft")
    page.wait_for_selector('#chat[data-connected="1"]')
    page.press("#input", "Enter")
    wait_idle(page, 1)
    page.reload()
    expect(page.locator("#input")).to_have_value("")  # sent, so no draft any more
    open_chat(page, first)
    expect(page.locator("#input")).to_have_value(draft)
