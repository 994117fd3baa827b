"""The chat at 1280 and 390 px, light and dark, as README shows it (docs/screenshots/ holds the
committed copies of these artifacts/screenshots/chat-*.png): a few turns, one with an attached
chart (drawn by the browser itself, so no binary file is kept in the repository), one answer with
a code block."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, FilePayload, Page, expect

from tests.browser.chat_helpers import fresh_chat, send, wait_idle
from tests.fakellm import Reply

pytestmark = pytest.mark.browser

CHART_ANSWER = (
    "The p95 rises on **Thursday** only, while the median stays flat — a few slow requests, not a "
    "slower service. That pattern usually means a weekly job competing for the database: check what "
    "the scheduler runs on Thursdays around the peak."
)
ANSWER = (
    "Use a context manager, so the file is closed even when the loop raises:\n\n"
    '```python\nwith open(path, encoding="utf-8") as f:\n    for line in f:\n        handle(line)\n```\n\n'
    "The `encoding` argument keeps the result the same on every system."
)
BARS = [("Mon", 42), ("Tue", 45), ("Wed", 40), ("Thu", 88), ("Fri", 47)]


def chart_png(browser: Browser) -> bytes:
    """A small bar chart of p95 latency by day, as a person would attach a screenshot of one."""
    bars = "".join(
        f'<div class="bar" style="height:{h * 1.6:.0f}px"><span>{h}</span></div><b>{day}</b>' for day, h in BARS
    )
    html = (
        "<style>body{margin:0;font:13px sans-serif;background:#fff}"
        "#c{width:300px;height:190px;padding:10px;display:grid;grid-template-columns:repeat(5,1fr);"
        "grid-template-rows:1fr auto;grid-auto-flow:column;align-items:end;gap:4px 10px}"
        ".bar{background:#3b82f6;border-radius:3px 3px 0 0;position:relative}"
        ".bar span{position:absolute;top:-16px;width:100%;text-align:center;color:#333}"
        "b{text-align:center;font-weight:normal;color:#555}</style>"
        f'<div id="c">{bars}</div>'
    )
    ctx = browser.new_context(viewport={"width": 320, "height": 210})
    page = ctx.new_page()
    page.set_content(html)
    data = page.locator("#c").screenshot(type="png")
    ctx.close()
    return data


def _conversation(page: Page, browser: Browser, llm) -> None:
    llm.push(Reply(text=ANSWER, completion_tokens=48))
    send(page, "How do I read a file line by line in Python?\n\n```python\nfor line in open(path): ...\n```")
    wait_idle(page, 1)
    chart = chart_png(browser)
    page.set_input_files(
        "#attach-input", files=[FilePayload(name="p95-latency.png", mimeType="image/png", buffer=chart)]
    )
    expect(page.locator("#attachments img.thumb")).to_be_visible()
    llm.push(Reply(text=CHART_ANSWER, completion_tokens=52))
    send(page, "Our p95 latency jumps on Thursday — why?")
    wait_idle(page, 2)


def test_chat_screenshots_at_both_widths_and_themes(page, browser: Browser, llm, daphne_server, screenshot):
    session_id = fresh_chat(page)
    _conversation(page, browser, llm)
    for scheme in ("light", "dark"):
        for width, height in ((1280, 860), (390, 844)):
            ctx = browser.new_context(
                base_url=daphne_server.url, viewport={"width": width, "height": height}, color_scheme=scheme
            )
            shot = ctx.new_page()
            shot.goto(daphne_server.login_url(f"/c/{session_id}/"))
            shot.wait_for_selector('#chat[data-connected="1"]')
            expect(shot.locator(".msg-assistant .feedback-good").last).to_be_in_viewport()
            thumb = shot.locator(".msg-user .msg-images img")
            shot.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=thumb.element_handle())
            screenshot(f"chat-{width}-{scheme}", shot)
            ctx.close()
