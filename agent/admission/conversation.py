"""The part of the conversation the verifier reads with a batch of proposed writes.

A quote alone hides what changes its meaning: a revision later in the chat ("actually, make it 2
spaces"), a role-play set up earlier, the question it answered. The verifier is shown, within
CONVERSATION_CHARS (about 3,000 tokens), turns chosen in this order: the quoted messages; the two
turns either side of each; every later turn of the person's that shares a word with a proposed
entry; then the rest, nearest to a quote first. They are shown in the order they were said, each
numbered by its place in the whole conversation (so gaps show), a message cut at MESSAGE_CHARS, and
what the person pasted marked as a document.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from knowledge import versions
from knowledge.models import Message
from knowledge.verification.documents import mark_documents
from knowledge.verification.lexicon import content_terms

CONVERSATION_CHARS = 12_000
MESSAGE_CHARS = 2_000
NEIGHBOURS = 2
# The newest messages a session's excerpt is chosen from.
WINDOW = 400

Turn = tuple[int | None, str, str]  # (stored message id, role, text)


def speaker(role: str) -> str:
    return {"user": "the person", "tool": "tool output", "assistant": "the assistant"}.get(role, role)


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def turns(session_id: str | None, seen: Sequence[dict[str, Any]]) -> list[Turn]:
    """The conversation as stored (what the person typed, on the chosen versions), or, without a
    session, the messages the writer saw."""
    if session_id:
        rows = Message.objects.filter(session_id=session_id, role__in=("user", "assistant", "tool"))
        rows = rows.exclude(id__in=versions.off_path_of(session_id))
        newest = list(rows.order_by("-id").values_list("id", "role", "content")[:WINDOW])
        return [(int(i), role, c) for i, role, c in reversed(newest) if c and c.strip()]
    return [
        (None, str(m.get("role")), _text(m))
        for m in seen
        if m.get("role") in ("user", "assistant", "tool") and _text(m).strip()
    ]


def _shown(turn: Turn) -> str:
    _id, role, text = turn
    text = mark_documents(text) if role == "user" else text
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + " […]"


def _order(all_turns: Sequence[Turn], quoted: set[int], subjects: Iterable[str]) -> list[int]:
    """Indexes of `all_turns` in the order they earn a place."""
    wanted = set().union(*(content_terms(s, framing=False) for s in subjects))
    first = min(quoted) if quoted else len(all_turns)
    near = {j for i in quoted for j in range(i - NEIGHBOURS, i + NEIGHBOURS + 1) if 0 <= j < len(all_turns)}
    later = {
        i
        for i, (_id, role, text) in enumerate(all_turns)
        if i > first and role == "user" and wanted & content_terms(text)
    }
    rest = sorted(
        (i for i in range(len(all_turns)) if i not in quoted | near | later),
        key=lambda i: (min((abs(i - q) for q in quoted), default=len(all_turns) - i), i),
    )
    tiers = [sorted(quoted), sorted(near - quoted), sorted(later - near - quoted), rest]
    return [i for tier in tiers for i in tier]


def excerpt(
    all_turns: Sequence[Turn], quoted_ids: Iterable[int | None], subjects: Iterable[str]
) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """The turns shown (each {"n", "speaker", "text"}) and, for each quoted message id, its "n"."""
    ids = set(quoted_ids)
    quoted = {i for i, turn in enumerate(all_turns) if turn[0] is not None and turn[0] in ids}
    chosen: list[int] = []
    used = 0
    for i in _order(all_turns, quoted, subjects):
        size = len(_shown(all_turns[i]))
        if used + size > CONVERSATION_CHARS and i not in quoted:
            continue
        chosen.append(i)
        used += size
    shown = [{"n": i + 1, "speaker": speaker(all_turns[i][1]), "text": _shown(all_turns[i])} for i in sorted(chosen)]
    numbers = {turn[0]: i + 1 for i, turn in enumerate(all_turns) if turn[0] is not None and i in quoted}
    return shown, numbers
