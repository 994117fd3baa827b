"""Thinking a model wrote inside its content because the server has no reasoning parser.

Qwen3, DeepSeek-R1 distills, MiniMax and others open each reply with `<think>…</think>` (or
`<thinking>`); served without a reasoning parser (vLLM, llama.cpp) that block arrives as
content. It is split off as it streams — only at the start of a reply, or after another such
block, so prose that merely mentions the tag is left alone — and becomes reasoning, never
part of the answer.
"""

from __future__ import annotations

TAGS = ("<think>", "<thinking>")


def _partial_suffix(text: str, tag: str) -> int:
    """How many trailing characters of `text` could be the start of `tag`."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:n]):
            return n
    return 0


class ThinkSplitter:
    """`feed` content pieces, get (answer, thinking) back; `flush` at the end of the reply."""

    def __init__(self) -> None:
        self.state = "start"  # start: only whitespace so far; think: inside a block; answer
        self.buf = ""
        self.close = ""
        self.thought = False  # a block was seen: the answer's leading whitespace is dropped

    def feed(self, text: str) -> tuple[str, str]:
        self.buf += text
        answer: list[str] = []
        thinking: list[str] = []
        while self.buf:
            if self.state == "answer":
                answer.append(self.buf)
                self.buf = ""
            elif self.state == "think":
                if not self._think(thinking):
                    break
            elif not self._start():
                break
        return "".join(answer), "".join(thinking)

    def _start(self) -> bool:
        """Decide what the start of the content is; False while it is still undecided."""
        stripped = self.buf.lstrip()
        if not stripped:
            return False
        for tag in TAGS:
            if stripped.startswith(tag):
                self.state, self.close, self.thought = "think", "</" + tag[1:], True
                self.buf = stripped[len(tag) :]
                return True
        if any(tag.startswith(stripped) for tag in TAGS):
            return False  # "<thi": the next piece decides
        self.state = "answer"
        if self.thought:
            self.buf = stripped
        return True

    def _think(self, thinking: list[str]) -> bool:
        idx = self.buf.find(self.close)
        if idx >= 0:
            thinking.append(self.buf[:idx])
            self.buf = self.buf[idx + len(self.close) :]
            self.state = "start"
            return True
        keep = _partial_suffix(self.buf, self.close)
        thinking.append(self.buf[: len(self.buf) - keep])
        self.buf = self.buf[len(self.buf) - keep :]
        return False

    def flush(self) -> tuple[str, str]:
        """What is still held: an unclosed block is thinking, anything else the answer."""
        rest, self.buf = self.buf, ""
        if self.state == "think":
            return "", rest
        if self.state == "start" and self.thought:
            rest = rest.lstrip()
        return rest, ""
