"""The one sanitising renderer for everything a model or a person wrote (issue 8).

Markdown is rendered, then cleaned by nh3 (no raw HTML survives except an allow-list of tags,
no event handlers, links only to http/https/mailto). Templates never mark user or model text
safe themselves; they call `markdown` / `highlight` from `hermes_tags`, which go through here.
"""

from __future__ import annotations

import html
import threading

import markdown as md
import nh3

_TAGS = {
    "p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "a", "table", "thead", "tbody", "tr", "th", "td",
    "span", "div", "sup", "sub",
}  # fmt: skip
_ATTRS = {"a": {"href", "title"}, "span": {"class"}, "div": {"class"}, "code": {"class"}, "pre": {"class"}}
_SCHEMES = {"http", "https", "mailto"}
_EXTENSIONS = ["fenced_code", "tables", "sane_lists", "codehilite"]
_EXT_CONFIG = {"codehilite": {"guess_lang": False, "css_class": "codehilite"}}
MAX_RENDER_CHARS = 200_000
# A Markdown instance per thread, reset for each text: building one (loading its extensions)
# cost 4x the rendering of a short answer, once per chat turn (issue 16). Not shared across
# threads: an instance keeps state while it converts.
_local = threading.local()


def _markdown() -> md.Markdown:
    renderer: md.Markdown | None = getattr(_local, "markdown", None)
    if renderer is None:
        renderer = md.Markdown(extensions=_EXTENSIONS, extension_configs=_EXT_CONFIG, output_format="html")
        _local.markdown = renderer
    return renderer


def render_markdown(text: str) -> str:
    """Markdown to safe HTML. Raw HTML in the input is escaped, not interpreted."""
    text = (text or "")[:MAX_RENDER_CHARS]
    # Escaping first means any HTML the model wrote shows as text; Markdown still applies.
    source = html.escape(text, quote=False)
    rendered = _markdown().reset().convert(source)
    return clean_html(rendered)


def clean_html(fragment: str) -> str:
    return nh3.clean(
        fragment,
        tags=_TAGS,
        attributes=_ATTRS,
        url_schemes=_SCHEMES,
        link_rel="noopener noreferrer nofollow",
    )


def highlight_snippet(snippet: str, start: str = "\x02", end: str = "\x03") -> str:
    """A search snippet with match markers to HTML: escape everything, then add <mark>."""
    escaped = html.escape(snippet or "")
    return (
        escaped.replace(html.escape(start), "<mark>")
        .replace(html.escape(end), "</mark>")
        .replace(start, "<mark>")
        .replace(end, "</mark>")
    )
