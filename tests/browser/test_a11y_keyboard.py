"""Keyboard use: the skip link, the message list reached and scrolled from the keyboard,
the "?" list of shortcuts, and the chat list drawer on a phone-sized window."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import LiveServer
from tests.fakellm import Reply

pytestmark = pytest.mark.browser

LONG_ANSWER = "\n\n".join(f"Step {i}: check the log line for request {i} and note the latency." for i in range(1, 60))
ACTIVE_ID = "() => document.activeElement && document.activeElement.id"


def test_skip_link_is_the_first_tab_stop_and_jumps_to_the_content(page: Page) -> None:
    page.goto("/memory/")
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    page.keyboard.press("Enter")
    assert page.evaluate(ACTIVE_ID) == "main"
    page.keyboard.press("Tab")  # the next stop is inside the page, past the navigation
    assert page.evaluate("() => document.getElementById('main').contains(document.activeElement)")


def test_messages_are_reached_and_scrolled_with_the_keyboard(page: Page, llm) -> None:
    with page.expect_navigation():  # the chat page it lands on, not the one it leaves
        page.click("#new-chat")
    page.wait_for_selector('#chat[data-connected="1"]')
    llm.push(Reply(text=LONG_ANSWER))
    page.fill("#input", "Walk me through the latency check")
    page.press("#input", "Enter")
    page.wait_for_selector('#chat[data-busy="0"]')
    messages = page.get_by_role("region", name="Messages")
    expect(messages).to_contain_text("Step 59")

    # Tab from the chat list (its last control: the list may hold many chats) reaches the messages.
    page.locator("#session-list summary").last.focus()  # the last chat's menu button
    for _ in range(20):
        page.keyboard.press("Tab")
        if page.evaluate(ACTIVE_ID) == "messages":
            break
    expect(messages).to_be_focused()

    page.keyboard.press("Home")
    page.wait_for_function("() => document.getElementById('messages').scrollTop === 0")
    page.keyboard.press("End")
    page.wait_for_function("() => document.getElementById('messages').scrollTop > 0")

    page.focus("#send")
    page.keyboard.press("m")  # the documented shortcut
    expect(messages).to_be_focused()
    page.keyboard.press("i")
    expect(page.locator("#input")).to_be_focused()


def test_question_mark_lists_the_shortcuts_but_not_while_typing(page: Page, screenshot) -> None:
    page.goto("/memory/")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    page.keyboard.press("?")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Stop a streaming answer")
    screenshot("shortcuts", page)
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    page.get_by_role("button", name="Keyboard shortcuts").click()
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()

    page.goto("/")
    page.locator("#input").press_sequentially("why? /")
    expect(page.locator("#input")).to_have_value("why? /")
    expect(dialog).to_be_hidden()
    page.keyboard.press("Escape")  # let the composer drop its slash menu
    page.focus("#send")
    page.keyboard.press("/")
    expect(page.locator("#chat-search")).to_be_focused()


def test_chat_list_is_a_drawer_on_a_phone(browser: Browser, daphne_server: LiveServer, screenshot) -> None:
    ctx = browser.new_context(base_url=daphne_server.url, viewport={"width": 390, "height": 844})
    try:
        page = ctx.new_page()
        page.goto(daphne_server.login_url("/"))
        page.wait_for_url(f"{daphne_server.url}/")
        sidebar = page.get_by_role("complementary", name="Chats")
        expect(sidebar).to_be_hidden()  # off-canvas: not visible, and not in the Tab order
        toggle = page.get_by_role("button", name="Chats")
        toggle.click()
        expect(sidebar).to_be_visible()
        expect(page.locator("#new-chat")).to_be_focused()  # focus moves into the drawer
        page.keyboard.press("Escape")
        expect(sidebar).to_be_hidden()
        expect(toggle).to_be_focused()
        page.focus("#send")
        page.keyboard.press("c")
        expect(sidebar).to_be_visible()
        page.mouse.click(370, 400)  # a click beside the drawer closes it
        expect(sidebar).to_be_hidden()
    finally:
        ctx.close()
