"""The one sanitising renderer for everything a model or a person wrote.

Markdown is parsed as CommonMark by markdown-it-py with its raw-HTML switch off, so HTML a
model writes is escaped exactly once and shows as text (escaping before parsing, as the old
Python-Markdown renderer did, escaped code twice and killed blockquotes). Tables,
strikethrough and task lists come from the parser's plugins; fenced code with a known language
is highlighted by Pygments, and a fence whose info string names a language carries it as a small
label (a `code-fence` div holding a `code-lang` span before the `pre`). The output is then
cleaned by nh3 (an allow-list of tags, no event handlers, links only to http/https/mailto) as a
second line. Answers streaming in are rendered block by block through the same functions
(foundation/live_markdown.py). Templates never mark user or model
text safe themselves; they call `markdown` / `highlight` from `hermes_tags`, which go through here.
"""

from __future__ import annotations

import html
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from mdit_py_plugins.tasklists import tasklists_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

_TAGS = {
    "p", "br", "hr", "strong", "em", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "a", "table", "thead", "tbody", "tr", "th", "td",
    "span", "div", "sup", "sub",
}  # fmt: skip
_ATTRS = {
    "a": {"href", "title"},
    "span": {"class"},
    "div": {"class"},
    "code": {"class"},
    "pre": {"class"},
    "ol": {"start"},
    "ul": {"class"},
    "li": {"class"},
    "th": {"class"},
    "td": {"class"},
}
_SCHEMES = {"http", "https", "mailto"}
MAX_RENDER_CHARS = 200_000
_FORMATTER = HtmlFormatter(nowrap=True)


def _highlight(code: str, lang: str, attrs: str) -> str:
    """Pygments spans for a fenced block with a known language; "" lets the parser escape it."""
    name = (lang or "").strip().split(maxsplit=1)[0] if lang else ""
    if not name:
        return ""
    try:
        lexer = get_lexer_by_name(name)
    except ClassNotFound:
        return ""
    spans = highlight(code, lexer, _FORMATTER)
    return f'<pre class="codehilite"><code class="language-{html.escape(name)}">{spans}</code></pre>'


def fence_language(info: str) -> str:
    """The language a fence's info string names (its first word), or "" when it names none."""
    words = unescapeAll(info or "").split(maxsplit=1)
    return words[0] if words else ""


def _fence_with_label(renderer: RendererHTML, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """A fenced block under a label naming its language (escaped here, and text to nh3 after)."""
    block = RendererHTML.fence(renderer, tokens, idx, options, env)
    name = fence_language(tokens[idx].info)
    if not name:
        return block
    return f'<div class="code-fence"><span class="code-lang">{html.escape(name)}</span>{block}</div>\n'


# One parser for the process, built once (building it per call cost more than rendering a
# short answer): parsing keeps its state in the call, so threads can share it.
@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "highlight": _highlight})
    md.enable(["table", "strikethrough"])
    md.use(tasklists_plugin)
    md.add_render_rule("fence", _fence_with_label)
    return md


def _task_boxes_as_text(children: list[Token]) -> None:
    """Task-list boxes as ☑/☐ text instead of disabled form inputs, which have no label (an
    accessibility error) and are the only raw HTML the parser would otherwise emit."""
    for child in children:
        if child.type == "html_inline" and "task-list-item-checkbox" in child.content:
            child.type, child.content = "text", "☑" if "checked" in child.content else "☐"


def render_markdown(text: str) -> str:
    """Markdown to safe HTML. Raw HTML in the input is shown as text, never interpreted."""
    tokens, env = parse_markdown((text or "")[:MAX_RENDER_CHARS])
    return render_tokens(tokens, env)


def parse_markdown(text: str) -> tuple[list[Token], EnvType]:
    """The parser's tokens for `text`, made fit for the page (see render_tokens)."""
    env: EnvType = {}
    tokens = _parser().parse(text, env)
    for token in tokens:
        if token.type == "inline":
            _task_boxes_as_text(token.children or [])
        # The table plugin aligns columns with style="text-align:x", which the CSP (no inline
        # styles) would refuse: a class says the same.
        style = token.attrGet("style") if token.type in ("th_open", "td_open") else None
        if isinstance(style, str) and style.startswith("text-align:"):
            del token.attrs["style"]
            token.attrSet("class", "align-" + style.split(":", 1)[1])
    return tokens, env


def render_tokens(tokens: list[Token], env: EnvType) -> str:
    """Tokens of parse_markdown (all of them, or whole blocks of them) as safe HTML."""
    md = _parser()
    return clean_html(md.renderer.render(tokens, md.options, env))


# One cleaner, built once: `nh3.clean` builds one from these sets on every call, half its time
# on a short answer.
_CLEANER = nh3.Cleaner(tags=_TAGS, attributes=_ATTRS, url_schemes=_SCHEMES, link_rel="noopener noreferrer nofollow")


def clean_html(fragment: str) -> str:
    return _CLEANER.clean(fragment)


def plain_text(text: str, limit: int = 200) -> str:
    """Markdown reduced to one line of plain words (chat titles): no markup characters left."""
    tokens = _parser().parse((text or "")[:MAX_RENDER_CHARS])
    words: list[str] = []
    for token in tokens:
        if token.type == "inline":
            for child in token.children or []:
                if child.type in ("text", "code_inline"):
                    words.append(child.content)
                elif child.type in ("softbreak", "hardbreak"):
                    words.append(" ")
            words.append(" ")
        elif token.type in ("fence", "code_block"):
            words.append(token.content + " ")
    return " ".join("".join(words).split())[:limit]


def highlight_snippet(snippet: str, start: str = "\x02", end: str = "\x03") -> str:
    """A search snippet with match markers to HTML: escape everything, then add <mark>."""
    escaped = html.escape(snippet or "")
    return (
        escaped.replace(html.escape(start), "<mark>")
        .replace(html.escape(end), "</mark>")
        .replace(start, "<mark>")
        .replace(end, "</mark>")
    )
