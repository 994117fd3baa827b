"""An answer's Markdown takes shape while it streams: blocks appear rendered as they complete, a
code block names its language, and the answer ends as a reload shows it. Each test at 1280 px and
on a phone (390×844), the two between them in light and dark, axe clean while streaming."""

from __future__ import annotations

from typing import Literal

import pytest
from playwright.sync_api import Page, expect

from tests.browser.chat_helpers import fresh_chat, send, wait_idle
from tests.browser.test_a11y import blocking_violations
from tests.fakellm import Reply

pytestmark = pytest.mark.browser

ANSWER = (
    "# Release plan\n\n"
    "- build\n  - run the <b>tests</b>\n- ship\n\n"
    "Then check it:\n\n"
    "```python\nprint('<script>window.__xss=1</script>')\nfor step in plan:\n    run(step)\n```\n\n"
    + "That is all for now, "
    + "one more word " * 25
)


SHAPE_MODES = [((1280, 860), "light"), ((390, 844), "dark")]
FENCE_MODES = [((1280, 860), "dark"), ((390, 844), "light")]


def _mode(page: Page, size: tuple[int, int], scheme: Literal["light", "dark"]) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.emulate_media(color_scheme=scheme)


@pytest.mark.parametrize(("size", "scheme"), SHAPE_MODES)
def test_an_answer_takes_shape_while_it_streams_and_ends_as_a_reload_shows_it(page, llm, screenshot, size, scheme):
    fresh_chat(page)
    _mode(page, size, scheme)
    llm.push(Reply(text=ANSWER, chunk_delay=0.04))
    send(page, "how do we release?")
    streaming = page.locator(".msg-assistant.streaming .md")
    # The heading is a heading before the answer ends, and the fenced block is labelled while open.
    expect(streaming.locator("h1")).to_have_text("Release plan")
    expect(streaming.locator(":scope > ul > li")).to_have_count(2)  # the list, once the block after it began
    expect(streaming.locator("ul ul > li")).to_have_text("run the <b>tests</b>")  # model HTML stays text
    expect(streaming.locator(".code-fence .code-lang")).to_have_text("python")
    expect(streaming.locator("pre.codehilite")).to_have_count(1)  # the closed fence, highlighted
    assert blocking_violations(page, f"streaming answer {size} {scheme}") == []
    screenshot(f"chat-live-markdown-{size[0]}-{scheme}", page)
    wait_idle(page, 1)
    answer = page.locator(".msg-assistant .md")
    expect(answer.locator(".code-fence .code-lang")).to_have_text("python")
    expect(answer.locator(".md-tail")).to_have_count(0)
    streamed = answer.inner_html().strip()
    assert page.evaluate("window.__xss") is None
    page.reload()
    expect(answer.locator("h1")).to_have_text("Release plan")
    reloaded = answer.inner_html().strip()
    assert reloaded == streamed


@pytest.mark.parametrize(("size", "scheme"), FENCE_MODES)
def test_an_open_fence_shows_as_code_without_its_markup(page, llm, size, scheme):
    fresh_chat(page)
    _mode(page, size, scheme)
    llm.push(Reply(text="Run:\n\n```bash\n" + "make test\n" * 40 + "```\n\nDone.", chunk_delay=0.04))
    send(page, "how do I test?")
    tail = page.locator(".msg-assistant.streaming .md-tail.code-fence")
    expect(tail.locator(".code-lang")).to_have_text("bash")
    expect(tail.locator("pre code")).to_contain_text("make test")
    assert "```" not in tail.inner_text()
    wait_idle(page, 1)
    expect(page.locator(".msg-assistant .md .code-fence pre")).to_contain_text("make test")
    expect(page.locator(".msg-assistant .md p").last).to_have_text("Done.")
