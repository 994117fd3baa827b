"""What a person does on the chat page, shared by the chat's browser tests."""

from __future__ import annotations

from playwright.sync_api import Page, expect


def fresh_chat(page: Page) -> str:
    """Start a new chat (the previous one is ended in the background) and wait for its socket."""
    page.goto("/")
    with page.expect_navigation():  # the chat page it lands on, not the one it leaves
        page.click("#new-chat")
    page.wait_for_selector('#chat[data-connected="1"]')
    return str(page.get_attribute("#chat", "data-session"))


def send(page: Page, text: str) -> None:
    page.fill("#input", text)
    page.press("#input", "Enter")


def wait_idle(page: Page, answers: int) -> None:
    """Wait until the turn is over and `answers` assistant blocks are on the page."""
    page.wait_for_selector('#chat[data-busy="0"]')
    expect(page.locator(".msg-assistant")).to_have_count(answers)
