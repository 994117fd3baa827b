"""Thinking a model wrote inside its content because the server has no reasoning parser.

Qwen3, DeepSeek-R1 distills, MiniMax and others open each reply with `<think>…</think>` (or
`<thinking>`; Magistral writes `[THINK]…[/THINK]`, Seed-OSS `<seed:think>…</seed:think>`, Kimi-VL
`◁think▷…◁/think▷`); served without a reasoning parser (vLLM, llama.cpp) that block arrives as
content. It is split off as it streams — only at the start of a reply, or after another such
block, so prose that merely mentions the tag is left alone — and becomes reasoning, never
part of the answer.
"""

from __future__ import annotations

# Each opening tag and the tag that closes it.
BLOCKS = {
    "<think>": "</think>",
    "<thinking>": "</thinking>",
    "[THINK]": "[/THINK]",
    "<seed:think>": "</seed:think>",
    "◁think▷": "◁/think▷",
}
TAGS = tuple(BLOCKS)
CLOSERS = tuple(BLOCKS.values())
# A piece of a closing tag at the end of the answer so far starts with one of these, within the
# last characters a tag could span: most chunks have none, and are passed on without checking
# each tag's every prefix.
_CLOSER_STARTS = tuple({close[0] for close in CLOSERS})
_CLOSER_SPAN = max(len(close) for close in CLOSERS) - 1


def _partial_suffix(text: str, tag: str) -> int:
    """How many trailing characters of `text` could be the start of `tag`."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:n]):
            return n
    return 0


def _closer_suffix(text: str) -> int:
    """How many trailing characters of `text` could be the start of any closing tag."""
    tail = text[-_CLOSER_SPAN:]
    if not any(start in tail for start in _CLOSER_STARTS):
        return 0
    return max(_partial_suffix(text, close) for close in CLOSERS)


class ThinkSplitter:
    """`feed` content pieces, get (answer, thinking) back; `flush` at the end of the reply."""

    def __init__(self, opened: str = "") -> None:
        """`opened`: the closing tag, when this model's chat template opens the block in the
        prompt (DeepSeek-R1 and Qwen3-Thinking templates): its replies start inside the block,
        and only the close arrives."""
        self.state = "think" if opened else "start"  # start: only whitespace so far; think; answer
        self.buf = ""
        self.close = opened
        self.thought = bool(opened)  # a block was seen: the answer's leading whitespace is dropped
        # Inside a block the reply did not open: if it never closes, the model did not think
        # this time and what was taken for thinking is the answer (`unclosed` at the end).
        self.implicit = bool(opened)
        self.implicit_text: list[str] = []
        self.unclosed = ""
        # The closing tag of a block the reply never opened, once it came: everything before it
        # was thinking (the template opened the block in the prompt). Only the first answer of
        # a reply without blocks is watched for one.
        self.orphan = ""
        self.orphan_thought = ""  # the part of the thinking in the piece that closed it

    def feed(self, text: str) -> tuple[str, str]:
        self.buf += text
        answer: list[str] = []
        thinking: list[str] = []
        while self.buf:
            if self.state == "answer":
                if not self._answer(answer):
                    break
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
                self.state, self.close, self.thought = "think", BLOCKS[tag], True
                self.buf = stripped[len(tag) :]
                return True
        if any(tag.startswith(stripped) for tag in TAGS):
            return False  # "<thi": the next piece decides
        self.state = "answer"
        if self.thought:
            self.buf = stripped
        return True

    def _answer(self, answer: list[str]) -> bool:
        """Pass the answer on; while no block was seen, watch it for a closing tag (held back
        while a piece could still become one)."""
        if self.thought or self.orphan:
            answer.append(self.buf)
            self.buf = ""
            return True
        found = [(self.buf.find(close), close) for close in CLOSERS if close in self.buf]
        if found:
            at, close = min(found)
            self.orphan, self.orphan_thought = close, self.buf[:at]
            self.buf = self.buf[at + len(close) :]
            self.state, self.thought = "start", True  # what follows is read like after any block
            return True
        keep = _closer_suffix(self.buf)
        answer.append(self.buf[: len(self.buf) - keep])
        self.buf = self.buf[len(self.buf) - keep :]
        return False

    def _think(self, thinking: list[str]) -> bool:
        idx = self.buf.find(self.close)
        if idx >= 0:
            self._thinking(thinking, self.buf[:idx])
            self.buf = self.buf[idx + len(self.close) :]
            self.state, self.implicit = "start", False
            return True
        keep = _partial_suffix(self.buf, self.close)
        self._thinking(thinking, self.buf[: len(self.buf) - keep])
        self.buf = self.buf[len(self.buf) - keep :]
        return False

    def _thinking(self, thinking: list[str], text: str) -> None:
        thinking.append(text)
        if self.implicit:
            self.implicit_text.append(text)

    def flush(self) -> tuple[str, str]:
        """What is still held: an unclosed block is thinking, anything else the answer."""
        rest, self.buf = self.buf, ""
        if self.state == "think" and self.implicit:
            self.unclosed = "".join(self.implicit_text)  # streamed as thinking, but the answer
            return (self.unclosed + rest).lstrip(), ""
        if self.state == "think":
            return "", rest
        if self.state == "start" and self.thought:
            rest = rest.lstrip()
        return rest, ""
