"""The stored conversation shaped for the chat page: messages in order, each tool call a card
joined to its result, how an answer ended, the person's verdicts, and the review counters."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime

from django.urls import reverse

from agent.chat.frames import estimate_tokens
from agent.tools.results import MAX_RESULT_CHARS, stored_ok
from foundation import config as hermes_config
from knowledge import versions
from knowledge.attachments import MessageAttachment, of_messages
from knowledge.models import AnswerFeedback, ChatSession, Message


@dataclass
class ToolCard:
    call_id: str
    name: str
    arguments: str
    result: str = ""
    ok: bool = True
    duration: float | None = None
    pending: bool = True


# How an answer ended, when it did not end normally: kept with the message (finish_reason),
# so a reload shows a stopped answer as stopped.
ENDINGS = {
    "interrupted": "Stopped. What was written so far is kept.",
    "error": "Cut off by an error. What was written so far is kept.",
}
# The last answer of a chat whose turn is still running is its checkpoint (agent/chat/records.py),
# stored as interrupted in case its server dies: while the turn lives, it is not "Stopped".
STILL_WRITING = "Still being written…"


@dataclass(frozen=True)
class Image:
    url: str
    name: str


def _images(atts: list[MessageAttachment]) -> list[Image]:
    return [Image(reverse("chat_attachment", args=[a.pk]), a.name) for a in atts]


# An attached file as the chat's attach button puts it in the message (static/js/chat/attach.js):
# "📎 **name**", an optional "(note)" (a PDF's pages), a blank line and the text in a fence whose
# backticks outnumber any run inside it, so the first line of those backticks closes it.
_ATTACHED = re.compile(
    r"(?:^|\n\n)📎 \*\*(?P<name>[^\n]+?)\*\*(?: \((?P<note>[^\n]*)\))?\n\n"
    r"(?P<fence>(?P<ticks>`{3,})[^\n`]*\n(?P<body>.*?)\n?(?P=ticks))(?=\n\n|\Z)",
    re.S,
)
_KINDS = {
    "pdf": "PDF",
    "md": "Markdown",
    "txt": "Text file",
    "log": "Log file",
    "csv": "CSV",
    "json": "JSON",
    "yaml": "YAML",
    "yml": "YAML",
    "toml": "TOML",
    "py": "Python",
    "js": "JavaScript",
    "ts": "TypeScript",
    "html": "HTML",
    "css": "CSS",
    "sql": "SQL",
    "sh": "Shell script",
}


@dataclass(frozen=True)
class FileCard:
    """A file attached to a person's message, shown as a card that opens to its text."""

    name: str
    kind: str  # "PDF", "Python", … from the name's extension
    facts: str  # a PDF's pages (and where its text was cut), or a text file's size and lines
    fence: str  # the fenced block as stored, rendered inside the card


@dataclass(frozen=True)
class Part:
    """A piece of a person's message: what they typed (Markdown) or one attached file."""

    text: str = ""
    file: FileCard | None = None


def _kb(text: str) -> str:
    return f"{max(1, -(-len(text.encode()) // 1000))} KB"


def _card(match: re.Match[str]) -> FileCard:
    name, body = match["name"], match["body"]
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    kind = _KINDS.get(ext) or (f"{ext.upper()} file" if ext else "Text file")
    lines = body.count("\n") + 1 if body else 0
    facts = match["note"] or (f"{_kb(body)} · {lines} line{'s' if lines != 1 else ''}" if body else "empty")
    return FileCard(name, kind, facts, match["fence"])


def parts(content: str) -> list[Part]:
    """A person's message split into what they typed and the files attached to it, in order.
    The stored text is untouched (the model and search read it whole); only its display changes."""
    out: list[Part] = []
    at = 0
    for match in _ATTACHED.finditer(content):
        if content[at : match.start()].strip():
            out.append(Part(text=content[at : match.start()]))
        out.append(Part(file=_card(match)))
        at = match.end()
    if content[at:].strip() or not out:
        out.append(Part(text=content[at:]))
    return out


@dataclass
class Item:
    kind: str  # "user" | "assistant" | "tool"
    content: str = ""
    message_id: int = 0
    tool: ToolCard | None = None
    reasoning: str = ""  # the model's thinking, for a collapsed "Thinking" block
    ending: str = ""  # how an answer ended when it did not end normally (ENDINGS)
    verdict: str = ""  # the person's 👍/👎 on an answer: "good" | "bad"
    at: datetime | None = None  # when it was written
    tokens: int = 0  # an answer's tokens, as reported by the server
    estimated: bool = False  # `tokens` estimated from the text (the server reported none)
    versions: versions.Position | None = None  # which version of its turn this message is, if it has others
    can_continue: bool = False  # a stopped answer at the end of the chat, which Continue extends
    images: list[Image] = field(default_factory=list)  # images attached to a user message
    parts: list[Part] = field(default_factory=list)  # a user message: its text and attached files


def _pretty(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except (json.JSONDecodeError, TypeError):
        return arguments


def _answer(msg: Message, verdict: str, position: versions.Position | None, last: bool) -> Item:
    tokens = msg.token_count or estimate_tokens(msg.content)
    # The stored count does not say whether the server reported it; the client's
    # estimate (agent/llm/assemble.py) is exactly this, so that is taken for one.
    estimated = tokens == estimate_tokens(msg.content)
    return Item(
        "assistant",
        msg.content,
        msg.pk,
        reasoning=msg.reasoning,
        ending=ENDINGS.get(msg.finish_reason, ""),
        verdict=verdict,
        at=msg.created_at,
        tokens=tokens,
        estimated=estimated,
        versions=position,
        can_continue=bool(msg.content) and msg.finish_reason in ENDINGS and last,
    )


def conversation(session: ChatSession, writing: bool = False) -> list[Item]:
    """The chosen version's user and assistant messages in order, each tool call a card joined to
    its result, each message with other versions marked with where it stands among them.
    `writing`: a turn of the session is running (its last answer may still be streaming)."""
    items: list[Item] = []
    cards: dict[str, tuple[ToolCard, Message]] = {}
    verdicts = dict(AnswerFeedback.objects.filter(message__session=session).values_list("message_id", "verdict"))
    rows = list(Message.objects.filter(session=session).order_by("id"))
    tree = versions.Tree.of([(m.pk, m.parent_id, m.role) for m in rows])
    path = tree.path(tree.leaf(session.leaf_id))
    marks, on_path = versions.positions(tree, path), set(path)
    images = of_messages([m.pk for m in rows if m.pk in on_path and m.role == "user"])
    for msg in (m for m in rows if m.pk in on_path):
        if msg.pk in marks and msg.role == "assistant" and not msg.content:
            items.append(Item("versions", message_id=msg.pk, versions=marks[msg.pk]))  # the answer began with tools
        if msg.role == "user":
            shown = _images(images.get(msg.pk, []))
            items.append(
                Item(
                    "user",
                    msg.content,
                    msg.pk,
                    at=msg.created_at,
                    versions=marks.get(msg.pk),
                    images=shown,
                    parts=parts(msg.content),
                )
            )
        elif msg.role == "assistant":
            if msg.content or msg.finish_reason == "interrupted":
                items.append(_answer(msg, verdicts.get(msg.pk, ""), marks.get(msg.pk), msg.pk == path[-1]))
            for call in msg.tool_calls or []:
                fn = call.get("function") or {}
                card = ToolCard(str(call.get("id", "")), str(fn.get("name", "?")), _pretty(fn.get("arguments", "")))
                cards[card.call_id] = (card, msg)
                items.append(Item("tool", message_id=msg.pk, tool=card))
        elif msg.role == "tool" and msg.tool_call_id in cards:
            card, asked = cards[msg.tool_call_id]
            card.result = _pretty(msg.content[:MAX_RESULT_CHARS])
            card.ok = stored_ok(msg.content)
            # Durations are not stored; the gap between the call and its result is close to it.
            card.duration = max(0.0, (msg.created_at - asked.created_at).total_seconds())
            card.pending = False
    if writing and items and items[-1].kind == "assistant" and items[-1].ending == ENDINGS["interrupted"]:
        items[-1].ending, items[-1].can_continue = STILL_WRITING, False
    return items


def counters(session: ChatSession) -> dict[str, int | None]:
    """Turns until the next memory review / model calls until the next skill review (none in a
    private chat, which counts nothing)."""
    if session.private:
        return {"turns_until_memory_review": None, "iters_until_skill_review": None}
    config = hermes_config.get()
    # As the runner's counters: no memory tool (both targets off), no memory review.
    mem = config.memory.nudge_interval if config.memory_on else 0
    skill = config.skills.creation_nudge_interval
    return {
        "turns_until_memory_review": mem - session.turns_since_memory if mem > 0 else None,
        "iters_until_skill_review": skill - session.iters_since_skill if skill > 0 else None,
    }
