"""The renderer: CommonMark cases compared as HTML, model-written HTML shown as text, XSS inert."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from foundation.rendering import plain_text, render_markdown
from tests.xss_corpus import PAYLOADS

CASES = [
    ("inline code keeps < & >", "if `k < 1 && x > 2`", "<p>if <code>k &lt; 1 &amp;&amp; x &gt; 2</code></p>"),
    ("fenced code without a language", "```\na < b && c\n```", "<pre><code>a &lt; b &amp;&amp; c\n</code></pre>"),
    (
        "fenced code highlighted, under its language's label",
        "```python\nx < 1\n```",
        '<div class="code-fence"><span class="code-lang">python</span>'
        '<pre class="codehilite"><code class="language-python"><span class="n">x</span> '
        '<span class="o">&lt;</span> <span class="mi">1</span>\n</code></pre>\n</div>',
    ),
    (
        "unknown language is plain, and still named",
        "```nosuchlang\n<b>\n```",
        '<div class="code-fence"><span class="code-lang">nosuchlang</span>'
        '<pre><code class="language-nosuchlang">&lt;b&gt;\n</code></pre>\n</div>',
    ),
    (
        "the label is the info string's first word, escaped",
        '```<img src=x onerror="a()"> more words\nx\n```',
        '<div class="code-fence"><span class="code-lang">&lt;img</span>'
        '<pre><code class="language-&lt;img">x\n</code></pre>\n</div>',
    ),
    ("blockquote", "> quoted\n> still", "<blockquote>\n<p>quoted\nstill</p>\n</blockquote>"),
    (
        "nested lists",
        "- a\n  - b\n    1. c\n- d",
        "<ul>\n<li>a\n<ul>\n<li>b\n<ol>\n<li>c</li>\n</ol>\n</li>\n</ul>\n</li>\n<li>d</li>\n</ul>",
    ),
    (
        "table with alignment as classes",
        "| a | b |\n|:--|--:|\n| 1 | 2 |",
        '<table>\n<thead>\n<tr>\n<th class="align-left">a</th>\n<th class="align-right">b</th>\n</tr>\n'
        '</thead>\n<tbody>\n<tr>\n<td class="align-left">1</td>\n<td class="align-right">2</td>\n</tr>\n'
        "</tbody>\n</table>",
    ),
    (
        "autolink",
        "<https://example.com/a?b=1&c=2>",
        '<p><a href="https://example.com/a?b=1&amp;c=2" rel="noopener noreferrer nofollow">'
        "https://example.com/a?b=1&amp;c=2</a></p>",
    ),
    ("strikethrough", "~~old~~ new", "<p><s>old</s> new</p>"),
    (
        "task list as text boxes",
        "- [x] done\n- [ ] todo",
        '<ul class="contains-task-list">\n<li class="task-list-item">☑ done</li>\n'
        '<li class="task-list-item">☐ todo</li>\n</ul>',
    ),
    (
        "model HTML is text",
        "<b>bold</b> <script>x()</script>",
        "<p>&lt;b&gt;bold&lt;/b&gt; &lt;script&gt;x()&lt;/script&gt;</p>",
    ),
    ("html block is text", "<div onclick=x>\nhi\n</div>", "<p>&lt;div onclick=x&gt;\nhi\n&lt;/div&gt;</p>"),
    ("javascript link is not a link", "[x](javascript:alert(1))", "<p>[x](javascript:alert(1))</p>"),
    ("emphasis", "**strong** and *em*", "<p><strong>strong</strong> and <em>em</em></p>"),
    ("entities stay once-escaped", "a &amp; b < c", "<p>a &amp; b &lt; c</p>"),
]


@pytest.mark.parametrize(("source", "expected"), [(s, e) for _, s, e in CASES], ids=[n for n, _, _ in CASES])
def test_commonmark_cases_render_as_expected(source: str, expected: str) -> None:
    assert render_markdown(source).strip() == expected


class _LiveMarkup(HTMLParser):
    """Collects every element and attribute that could run or load something."""

    SAFE_TAGS = {"p", "code", "pre", "span", "blockquote", "ul", "ol", "li", "strong", "em", "s", "a", "br", "hr"}
    SAFE_TAGS |= {"table", "thead", "tbody", "tr", "th", "td", "h1", "h2", "h3", "h4", "h5", "h6", "div"}

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.SAFE_TAGS:
            self.problems.append(tag)
        for name, value in attrs:
            if name.startswith("on") or name in ("style", "src", "srcdoc", "formaction"):
                self.problems.append(f"{tag}[{name}]")
            if name == "href" and not (value or "").startswith(("http://", "https://", "mailto:")):
                self.problems.append(f"href={value}")


@pytest.mark.parametrize("payload", PAYLOADS)
def test_xss_payloads_leave_no_live_markup(payload: str) -> None:
    checker = _LiveMarkup()
    checker.feed(render_markdown(payload))
    assert checker.problems == []


def test_titles_are_plain_words() -> None:
    assert plain_text("# **Fix** `k < 1` in [docs](http://x)\nnext line") == "Fix k < 1 in docs next line"
    assert plain_text("- one\n- two", limit=5) == "one t"
