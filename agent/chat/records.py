"""A turn's messages as stored rows: one message and its session's counters in one transaction.

The runner calls this as the agent loop produces messages, so each exists as soon as it is made.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from agent.loop import ModelCalled
from hermes_site.rendering import plain_text
from knowledge.models import ChatSession, Message, without_nul

TITLE_CHARS = 60


def store_message(
    session: ChatSession,
    msg: dict[str, Any],
    *,
    parent_id: int | None = None,
    finish_reason: str = "",
    tokens: int = 0,
    tool_name: str = "",
    first_user: bool = False,
    session_updates: dict[str, Any] | None = None,
) -> Message:
    """Store one message after message `parent_id` (None: it starts the chat) and update its
    session row, in one transaction (`session_updates`: more columns of the session to set in the
    same UPDATE). The newest message is the version the chat shows. The first user message of an
    untitled session titles it, in plain words."""
    with transaction.atomic():
        m = Message(
            session=session,
            parent_id=parent_id,
            role=msg["role"],
            content=msg.get("content") or "",
            tool_calls=msg.get("tool_calls") or None,
            reasoning=msg.get("reasoning_content") or "",
            tool_call_id=msg.get("tool_call_id", ""),
            tool_name=tool_name,
            finish_reason=finish_reason,
            token_count=tokens,
        )
        m.starts_chat = parent_id is None  # an edit of the first message has no parent either
        m.save()
        updates: dict[str, Any] = {
            "leaf": None,
            **(session_updates or {}),
            "message_count": F("message_count") + 1,
            "updated_at": timezone.now(),
        }
        if msg.get("tool_calls"):
            updates["tool_call_count"] = F("tool_call_count") + len(msg["tool_calls"])
        if first_user and not session.title:
            # Plain words: a title shows no Markdown markup.
            title = without_nul(plain_text(str(msg.get("content") or ""), TITLE_CHARS)) or "New chat"
            updates["title"], updates["title_source"] = title, "message"
            session.title, session.title_source = title, "message"
        ChatSession.objects.filter(pk=session.pk).update(**updates)
    session.leaf_id = None
    return m


def usage_updates(session: ChatSession, event: ModelCalled) -> dict[str, Any]:
    """The session columns a model call changes (written with its message, if any)."""
    u = event.usage
    session.last_prompt_tokens = u.prompt_tokens if u.reported else 0
    return {
        "prompt_tokens": F("prompt_tokens") + u.prompt_tokens,
        "completion_tokens": F("completion_tokens") + u.completion_tokens,
        "last_prompt_tokens": session.last_prompt_tokens,
    }
