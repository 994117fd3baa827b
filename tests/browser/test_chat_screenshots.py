"""The chat at 1280 and 390 px, light and dark, as README shows it (docs/screenshots/ holds the
committed copies of these artifacts/screenshots/chat-*.png)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from tests.browser.chat_helpers import fresh_chat, send, wait_idle
from tests.fakellm import Reply

pytestmark = pytest.mark.browser

ANSWER = (
    "Use a context manager, so the file is closed even when the loop raises:\n\n"
    '```python\nwith open(path, encoding="utf-8") as f:\n    for line in f:\n        handle(line)\n```\n\n'
    "The `encoding` argument keeps the result the same on every system."
)


def test_chat_screenshots_at_both_widths_and_themes(page, browser: Browser, llm, daphne_server, screenshot):
    session_id = fresh_chat(page)
    llm.push(Reply(text=ANSWER, completion_tokens=48))
    send(page, "How do I read a file line by line in Python?\n\n```python\nfor line in open(path): ...\n```")
    wait_idle(page, 1)
    for scheme in ("light", "dark"):
        for width, height in ((1280, 760), (390, 780)):
            ctx = browser.new_context(
                base_url=daphne_server.url, viewport={"width": width, "height": height}, color_scheme=scheme
            )
            shot = ctx.new_page()
            shot.goto(daphne_server.login_url(f"/c/{session_id}/"))
            shot.wait_for_selector('#chat[data-connected="1"]')
            expect(shot.locator(".msg-assistant .feedback-good")).to_be_in_viewport()
            screenshot(f"chat-{width}-{scheme}", shot)
            ctx.close()
