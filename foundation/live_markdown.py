"""Markdown rendered while it streams: each block once, when it is complete.

An answer arrives a few characters at a time. Rendering the whole text again for every chunk
costs time quadratic in the answer's length, and a half-written fence or list turns the page
upside down on every chunk. Here the text is cut into CommonMark blocks as it comes:

- Everything before the last complete line is the *open region*, the text after the last block
  already rendered. When a line completes, the region is parsed (by the same parser as the final
  render, rendering.parse_markdown). Every top-level block but the last is complete, since a later
  block has begun; the last one is complete when nothing can extend it any more: an ATX or setext
  heading or a rule at its line's end, a closed fence, a paragraph, table or quote followed by a
  blank line. Lists and indented code wait for the block after them (a blank line does not end
  a list). Complete blocks are rendered and sanitised (rendering.render_tokens) once and leave the
  region.
- The rest is the *tail*, shown by the page as text (never as HTML). When the region is an open
  fence, the page shows it as a code block under its label, and each further line is only checked
  for the closing fence (no parse) until it comes.

Cost per answer: a chunk without a line break is an append. A complete line parses the open
region when it has at most 16 lines, and past that after every quarter of its length grows
again, so each line is parsed a bounded number of times (about 20 at most) whatever the answer's
length; inside an open fence a line costs one pattern match. Every block is rendered and
sanitised once. The work is linear in the answer's length.

The concatenated blocks equal render_markdown of the whole text (the final render), except where
a link's reference definition stands in another block than the link: the page swaps the final
render in once at the end, which then differs only there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it.token import Token

from foundation.rendering import MAX_RENDER_CHARS, fence_language, parse_markdown, render_tokens

# Below this many lines the open region is parsed at every line; above, at every quarter of growth.
EAGER_LINES = 16
_DONE_AT_LINE_END = {"heading_open", "hr"}  # nothing after their line can change them
_DONE_AT_BLANK = {"paragraph_open", "table_open", "blockquote_open"}  # ended by a blank line


@dataclass(frozen=True)
class Update:
    """What the page changes: `html` (blocks completed since the last update) goes after the
    blocks shown; `tail` (text) replaces the open text after them. `fence` is None when the tail
    is ordinary text, else the open fence's language ("" when it names none) and `tail` its code."""

    html: str
    tail: str
    fence: str | None


@dataclass(frozen=True)
class _Fence:
    closing: re.Pattern[str]
    language: str


def _block_spans(tokens: list[Token]) -> list[tuple[int, int]]:
    """[start, end) token indexes of each top-level block."""
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(tokens):
        token, j = tokens[i], i
        if token.nesting == 1:
            while not (tokens[j].nesting == -1 and tokens[j].level == token.level):
                j += 1
        spans.append((i, j + 1))
        i = j + 1
    return spans


def _closing_fence(opening: Token) -> re.Pattern[str]:
    mark = opening.markup
    return re.compile(rf"^ {{0,3}}{re.escape(mark[0])}{{{len(mark)},}}[ \t\r]*\n?$")


class LiveMarkdown:
    """One answer's text, fed chunk by chunk; not thread-safe (one turn's thread feeds it)."""

    def __init__(self) -> None:
        self._lines: list[str] = []  # the open region's complete lines, each ending with "\n"
        self._partial: list[str] = []  # the line being written
        self._parsed_at = 0  # len(self._lines) at the region's last parse
        self._fence: _Fence | None = None  # the region is this open fence
        self._fed = 0
        self._changed = False  # the region lost lines or became a fence since the last update

    def feed(self, text: str) -> Update | None:
        """Take the next chunk. None: nothing completed, the page appends `text` to the tail."""
        self._fed += len(text)
        if self._fed > MAX_RENDER_CHARS:
            return None  # past what the final render renders: the rest stays text until then
        *complete, last = text.split("\n")
        html: list[str] = []
        self._changed = False
        for piece in complete:
            self._partial.append(piece + "\n")
            self._lines.append("".join(self._partial))
            self._partial = []
            html.append(self._line_done())
        if last:
            self._partial.append(last)
        if not self._changed:
            return None
        return self._update("".join(html))

    def close(self) -> Update | None:
        """The answer ended: render what is left. None when nothing was left."""
        if not self._lines and not self._partial:
            return None
        rest = "".join(self._lines) + "".join(self._partial)
        self._lines, self._partial, self._fence, self._parsed_at, self._fed = [], [], None, 0, 0
        return Update(render_tokens(*parse_markdown(rest)), "", None)

    def _update(self, html: str) -> Update:
        if self._fence is not None:
            return Update(html, "".join(self._lines[1:]) + "".join(self._partial), self._fence.language)
        return Update(html, "".join(self._lines) + "".join(self._partial), None)

    def _line_done(self) -> str:
        """HTML of the blocks the line just completed ("" for none)."""
        if self._fence is not None:
            if len(self._lines) < 2 or not self._fence.closing.match(self._lines[-1]):
                return ""
            self._fence, self._changed = None, True
            return self._settle()
        grown = len(self._lines) - self._parsed_at
        if grown < max(1, (len(self._lines) - EAGER_LINES) // 4):
            return ""
        return self._settle()

    def _settle(self) -> str:
        """Parse the region, render its complete blocks and drop them from it."""
        text = "".join(self._lines)
        tokens, env = parse_markdown(text)
        spans = _block_spans(tokens)
        done = len(spans) if spans and self._complete(tokens[spans[-1][0]]) else max(0, len(spans) - 1)
        html, before = "", len(self._lines)
        if done > 0:
            html = render_tokens(tokens[: spans[done - 1][1]], env)
            end = max((t.map[1] for t in tokens[: spans[done - 1][1]] if t.map), default=0)
            del self._lines[:end]
        open_block = tokens[spans[-1][0]] if done < len(spans) else None
        if open_block is not None and open_block.type == "fence" and open_block.map is not None:
            # The region becomes the open fence alone, its opening line first.
            del self._lines[: open_block.map[0] - (before - len(self._lines))]
            self._fence = _Fence(_closing_fence(open_block), fence_language(open_block.info))
        while self._fence is None and self._lines and not self._lines[0].strip():
            del self._lines[0]  # blank lines between blocks belong to none
        self._parsed_at = len(self._lines)
        self._changed = self._changed or len(self._lines) < before or self._fence is not None
        return html

    def _complete(self, block: Token) -> bool:
        """Whether the region's last block can no longer be extended by text after it."""
        end = block.map[1] if block.map else len(self._lines)
        if block.type in _DONE_AT_LINE_END:
            return True
        if block.type in _DONE_AT_BLANK:
            return end < len(self._lines)  # the lines after it are blank (else they would be in it)
        if block.type == "fence" and block.map is not None:
            return end - block.map[0] >= 2 and bool(_closing_fence(block).match(self._lines[end - 1]))
        return False
