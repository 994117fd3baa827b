"""Markdown rendered as it streams (foundation/live_markdown.py): blocks rendered once each when
complete, equal to the final render; the open tail kept as text; an open fence shown as code."""

from __future__ import annotations

import pytest
from markdown_it.token import Token
from markdown_it.utils import EnvType

from foundation import live_markdown
from foundation.live_markdown import LiveMarkdown, Update
from foundation.rendering import render_markdown
from tests.foundation.test_rendering import _LiveMarkup
from tests.xss_corpus import PAYLOADS

DOCUMENTS = {
    "headings, list and fence": (
        "# A long answer\n\nSome *text*.\n\n- one\n- two\n\n```python\ndef f():\n    return 1\n```\n\nEnd."
    ),
    "nested lists": "- a\n  - b\n    1. c\n\n    2. d\n- e\n\nAfter the list.\n",
    "loose list across a blank line": "1. first\n\n2. second\n\n   still second\n3. third\nlazy\n",
    "setext headings and rules": "Title\n===\ntext\n---\n\n***\n\nSub\n-\n",
    "quotes, tables, indented code": "> q\n> q2\n\n> other\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n\n    code\n\n    more\nx",
    "fences interrupting paragraphs": "para\n```\nplain\n```\n~~~~ js\n```\nnot a close\n~~~~~\n# h",
    "fence never closed": "Look:\n\n```bash\nrm -rf build\n\nmake\n",
    "task list": "- [x] done\n- [ ] todo\n\nthen",
    "model HTML": "<div onclick=x>\n<script>window.__xss=1</script>\n</div>\n\n```html\n<script>x()</script>\n```\n",
}


def stream(text: str, step: int) -> tuple[str, list[Update | None]]:
    """The HTML of every block the stream rendered, chunk by chunk and at its close."""
    live = LiveMarkdown()
    updates = [live.feed(text[i : i + step]) for i in range(0, len(text), step)]
    updates.append(live.close())
    return "".join(u.html for u in updates if u is not None), updates


@pytest.mark.parametrize("step", [1, 4, 13, 10_000])
@pytest.mark.parametrize("name", DOCUMENTS)
def test_streamed_blocks_are_the_final_render(name: str, step: int) -> None:
    text = DOCUMENTS[name]
    assert stream(text, step)[0] == render_markdown(text)


def test_a_heading_streamed_char_by_char_is_rendered_when_its_line_ends() -> None:
    live = LiveMarkdown()
    for char in "# Title":
        assert live.feed(char) is None  # the page shows the characters as text meanwhile
    update = live.feed("\n- o")
    assert update == Update("<h1>Title</h1>\n", "- o", None)
    assert live.feed("ne\n- two\n") is None  # a list waits for the block after it


def test_a_list_is_rendered_once_when_the_block_after_it_begins() -> None:
    live = LiveMarkdown()
    assert live.feed("- a\n  - b\n\n- c\n\n") is None
    update = live.feed("After.\n")
    assert update is not None
    assert update.html == render_markdown("- a\n  - b\n\n- c\n")
    assert update.tail == "After.\n"


def test_a_half_open_fence_streams_as_code_under_its_label() -> None:
    live = LiveMarkdown()
    assert live.feed("Here:\n\n") == Update("<p>Here:</p>\n", "", None)
    assert live.feed("```py") is None
    assert live.feed("thon\nprint(1)") == Update("", "print(1)", "python")  # the page shows a code block
    assert live.feed("\n``") is None  # not closed yet: the page appends the text to the code
    closed = live.feed("`\n\nDone.")  # the closing line: the block, rendered once
    assert closed == Update(render_markdown("```python\nprint(1)\n```"), "Done.", None)
    assert '<span class="code-lang">python</span>' in closed.html
    _, updates = stream("Here:\n\n```python\nprint(1)\n```\nx", 1)
    html = [u.html for u in updates if u is not None and u.html]
    assert html[1] == render_markdown("```python\nprint(1)\n```")  # streamed char by char, the same


def test_a_fence_without_a_language_streams_without_a_label() -> None:
    live = LiveMarkdown()
    assert live.feed("```\n") == Update("", "", "")


def test_text_after_a_block_is_the_tail_the_page_shows_as_text() -> None:
    live = LiveMarkdown()
    update = live.feed("# A\n\n<b>bold</b> and <script>")
    assert update == Update("<h1>A</h1>\n", "<b>bold</b> and <script>", None)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_hostile_markup_stays_text_through_the_stream(payload: str) -> None:
    text = f"# Note\n\n{payload}\n\n- {payload}\n\n```js\n{payload}\n```\n\n{payload}"
    html, _ = stream(text, 3)
    assert html == render_markdown(text)
    checker = _LiveMarkup()
    checker.feed(html)
    assert checker.problems == []


def _count_parsed_lines(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    parsed: list[int] = []
    real = live_markdown.parse_markdown

    def counting(text: str) -> tuple[list[Token], EnvType]:
        parsed.append(text.count("\n"))
        return real(text)

    monkeypatch.setattr(live_markdown, "parse_markdown", counting)
    return parsed


@pytest.mark.parametrize(
    "text",
    [
        "".join(f"- item {i}\n" for i in range(2000)) + "\nend\n",
        "```python\n" + "".join(f"x = {i}\n" for i in range(2000)) + "```\n",
        "".join(f"Paragraph {i}.\n\n" for i in range(1000)),
    ],
    ids=["long list", "long fence", "many paragraphs"],
)
def test_the_work_is_linear_in_the_answers_length(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    parsed = _count_parsed_lines(monkeypatch)
    html, _ = stream(text, 4)
    assert html == render_markdown(text)
    # Each line is parsed a bounded number of times (the open region, re-read as it grows).
    assert sum(parsed) <= 25 * text.count("\n")
