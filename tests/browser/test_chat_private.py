"""Private chats in the browser, at 1280 and 390 px in light and dark, with axe on each state: "New
private chat" starts one marked Private in its header and in the chat list; a reload keeps it; its
words are not found by search; the chat menu's switch says what it means before it is used, turns
it back into an ordinary chat and private again."""

from __future__ import annotations

import pytest
from playwright.sync_api import Dialog, Page, expect

from tests.browser.chat_helpers import send, wait_idle
from tests.browser.test_a11y import blocking_violations
from tests.browser.test_chat_list import mode_page  # noqa: F401 - the fixture, at each width and theme
from tests.fakellm import Reply, ScriptedLLM

pytestmark = pytest.mark.browser


def _phone(width: int) -> bool:
    return width < 800


def _open_list(page: Page, width: int) -> None:
    if _phone(width):
        page.click("#drawer-toggle")
        page.wait_for_function("() => document.getElementById('chat-sidebar').getBoundingClientRect().left >= 0")


def _switch(page: Page, width: int, label: str, says: str) -> None:
    """Use the chat menu's switch, accepting its question once it says `says`."""
    asked: list[str] = []

    def answer(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.accept()

    if _phone(width):
        page.click("#chat-menu-toggle")
    switch = page.locator("#private-switch")
    expect(switch).to_have_text(label)
    page.once("dialog", answer)
    with page.expect_navigation():
        switch.click()
    page.wait_for_selector('#chat[data-connected="1"]')
    assert len(asked) == 1 and says in asked[0], asked


def _marked(page: Page, chat: str, width: int) -> None:
    expect(page.locator("#chat-title .private-mark")).to_have_text("Private")
    _open_list(page, width)
    expect(page.locator(f"#row-{chat} .private-mark")).to_be_visible()
    if _phone(width):
        page.keyboard.press("Escape")


def test_a_private_chat_is_marked_kept_over_a_reload_and_switched_from_the_menu(
    mode_page,  # noqa: F811
    llm: ScriptedLLM,
) -> None:
    mode, width, page = mode_page
    word = f"okapi{mode.replace('-', '')}"  # a word no other test writes, one per mode
    _open_list(page, width)
    with page.expect_navigation():
        page.click("#new-private-chat")
    page.wait_for_selector('#chat[data-connected="1"]')
    chat = str(page.get_attribute("#chat", "data-session"))
    expect(page.locator("#chat-title .private-mark")).to_be_visible()
    llm.push(Reply(text=f"Noted about the {word}."))
    send(page, f"Only between us: my {word} is called Kibo.")
    wait_idle(page, 1)
    problems = blocking_violations(page, f"private chat ({mode})")

    page.reload()  # stored with the chat
    page.wait_for_selector('#chat[data-connected="1"]')
    _marked(page, chat, width)
    if _phone(width):
        page.click("#chat-menu-toggle")
        expect(page.locator("#private-switch")).to_be_in_viewport()
        problems += blocking_violations(page, f"private chat's menu open ({mode})")
        page.keyboard.press("Escape")

    # Its words are not found by the search page.
    page.goto(f"/search/?q={word}")
    expect(page.locator(f'a[href^="/c/{chat}/"]')).to_have_count(0)
    page.goto(f"/c/{chat}/")
    page.wait_for_selector('#chat[data-connected="1"]')

    _switch(page, width, "Stop keeping private", "including what was said while it was private")
    expect(page.locator("#chat-title .private-mark")).to_have_count(0)
    expect(page.locator(f"#row-{chat} .private-mark")).to_have_count(0)
    problems += blocking_violations(page, f"chat no longer private ({mode})")

    _switch(page, width, "Make private", "What was already learned from it stays")
    page.reload()
    page.wait_for_selector('#chat[data-connected="1"]')
    _marked(page, chat, width)
    assert not problems, "\n".join(problems)
