"""The person's message is shown as it will stay (code blocks rendered at once), each chat has
its own address from its first message, and "/" starts a new chat."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.chat_helpers import wait_idle

pytestmark = pytest.mark.browser

CODE_MESSAGE = "Why does this fail?\n\n```python\nprint(1 / 0)\n```"


def test_own_code_block_renders_at_once_and_the_chat_gets_its_address(page, llm, daphne_server):
    page.goto("/")
    page.wait_for_selector('#chat[data-connected="1"]')
    session_id = page.get_attribute("#chat", "data-session")
    page.fill("#input", CODE_MESSAGE)
    page.click("#send")
    mine = page.locator(".msg-user").last
    expect(mine.locator("pre code")).to_have_text("print(1 / 0)")
    expect(mine).not_to_contain_text("```")
    expect(mine.get_by_role("button", name="Copy code")).to_be_visible()
    wait_idle(page, 1)
    assert page.url == f"{daphne_server.url}/c/{session_id}/"
    page.reload()
    expect(page.locator(".msg-user pre code")).to_have_text("print(1 / 0)")
    # "/" is a new chat; the one just used is in the sidebar.
    page.goto("/")
    page.wait_for_selector('#chat[data-connected="1"]')
    assert page.get_attribute("#chat", "data-session") != session_id
    expect(page.locator(".msg")).to_have_count(0)
    expect(page.locator(f'a[href="/c/{session_id}/"]')).to_be_visible()
    # Visiting "/" again offers the same unused chat rather than another empty one.
    fresh = page.get_attribute("#chat", "data-session")
    page.goto("/")
    assert page.get_attribute("#chat", "data-session") == fresh
