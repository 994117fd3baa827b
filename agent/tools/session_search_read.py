"""Reading sessions for `session_search` (agent/tools/session_search.py): the messages around one
message (Hermes' scroll), a session's first and last messages (Hermes' read: up to 30), and
results fitted to the tool's budget — messages shortened, never the JSON cut.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from agent.tools.results import ToolResult
from knowledge.models import ChatSession, Message
from knowledge.search import ContextMessage
from knowledge.verification.threat_scan import masked

MESSAGE_CHARS = 600  # per message of a search result, when the budget allows
READ_HEAD = 20  # a long session is read as its first 20 and last 10 messages, as Hermes reads it
READ_TAIL = 10
# Characters per message tried, longest first, until the result fits its budget.
_LENGTHS = (4000, 2000, 1200, MESSAGE_CHARS, 400, 250, 150, 80)


def iso(value: datetime | None) -> str | None:
    return value.isoformat(timespec="seconds") if value else None


def clip(text: str, limit: int) -> str:
    text = masked(text.strip())  # a past message is quoted whole or withheld, never cut to pass the scan
    return text if len(text) <= limit else text[: limit - 1] + "…"


def message_dicts(messages: Sequence[ContextMessage], chars: int = MESSAGE_CHARS) -> list[dict[str, Any]]:
    """Messages as the model reads them; a shortened one says its whole length (`chars`)."""
    shown: list[dict[str, Any]] = []
    for m in messages:
        text = masked(m.content.strip())
        entry: dict[str, Any] = {"id": m.message_id, "role": m.role, "content": clip(text, chars), "match": m.is_match}
        if m.tool_name:
            entry["tool_name"] = m.tool_name
        if len(text) > chars:
            entry["chars"] = len(text)
        shown.append(entry)
    return shown


def fitted(make: Callable[[int], ToolResult], budget: int, *, longest: int = _LENGTHS[0]) -> ToolResult:
    """The result `make(chars)` with the longest messages that keep it within `budget` characters
    (the shortest tried if none does: the registry then cuts it, still as JSON)."""
    result = ToolResult.failure("nothing to show")
    for chars in [n for n in _LENGTHS if n <= longest]:
        result = make(chars)
        if len(result.to_json()) <= budget:
            break
    return result


def find_session(session_id: str) -> ChatSession | None:
    """A session by its id or its name; a private chat is never read (knowledge/private_chats.py)."""
    shown = ChatSession.objects.filter(private=False)
    return shown.filter(id=session_id).first() or shown.filter(name=session_id).first()


def _context(rows: Sequence[Message], match: int | None = None) -> list[ContextMessage]:
    return [ContextMessage(m.id, m.role, m.content, m.created_at, m.tool_name, is_match=m.id == match) for m in rows]


def _in_session(session_id: str) -> Any:
    return Message.objects.filter(session_id=session_id).only("id", "role", "content", "tool_name", "created_at")


def read_window(session: ChatSession) -> tuple[list[ContextMessage], int]:
    """A session's messages: all of them up to READ_HEAD + READ_TAIL, else its first READ_HEAD and
    last READ_TAIL; and how many it has."""
    base = _in_session(session.id)
    count = base.count()
    if count <= READ_HEAD + READ_TAIL:
        return _context(list(base.order_by("id"))), count
    rows = list(base.order_by("id")[:READ_HEAD]) + list(reversed(base.order_by("-id")[:READ_TAIL]))
    return _context(rows), count


def session_fields(session: ChatSession) -> dict[str, Any]:
    return {
        "session_id": session.id,
        "title": masked(session.display_title),
        "source": session.source,
        "when": iso(session.started_at),
        "last_active": iso(session.updated_at),
    }


def around(message_id: int, session_id: str | None, window: int) -> tuple[dict[str, Any], list[ContextMessage]]:
    """The session fields of `message_id`'s session and the messages up to `window` either side
    of it; ValueError with the message for the model when there is no such message (there)."""
    anchor = Message.objects.filter(id=message_id, session__private=False).select_related("session").first()
    if anchor is None:
        raise ValueError(f"No message with id {message_id}. Use a message_id from a search result or a window.")
    if session_id:
        named = find_session(session_id)
        if named is None:
            raise ValueError(f"No session with id '{session_id}'. Call session_search without a query to list them.")
        if named.id != anchor.session_id:
            raise ValueError(f"Message {message_id} is in session '{anchor.session_id}', not '{session_id}'.")
    base = _in_session(anchor.session_id)
    before = list(reversed(base.filter(id__lt=message_id).order_by("-id")[:window]))
    after = list(base.filter(id__gt=message_id).order_by("id")[:window])
    rows = [*before, anchor, *after]
    fields = session_fields(anchor.session) | {
        "around_message_id": message_id,
        "messages_before": len(before),
        "messages_after": len(after),
        # Messages beyond the window: 0 means this is the session's start / end.
        "earlier": base.filter(id__lt=rows[0].id).count(),
        "later": base.filter(id__gt=rows[-1].id).count(),
    }
    return fields, _context(rows, match=message_id)
