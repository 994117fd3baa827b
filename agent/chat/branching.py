"""Forking a chat: edit-and-resend and regenerate.

Both start a new chat whose `parent` is the old one and which holds the old chat's messages
up to (not including) a user message; the browser then sends the new (or the same) text there.
The old chat is never changed, so its answer stays reachable through the branch links.
"""

from __future__ import annotations

from django.db import transaction

from knowledge.models import ChatSession, Message

_COPIED_FIELDS = ("role", "content", "tool_calls", "tool_call_id", "tool_name", "token_count", "finish_reason")


class ForkError(ValueError):
    """A fork the person asked for cannot be made; the message says why in plain words."""


def last_user_message(session: ChatSession) -> Message:
    message = Message.objects.filter(session=session, role="user").order_by("-id").first()
    if message is None:
        raise ForkError("This chat has no message to answer again yet.")
    return message


def fork_point(session: ChatSession, message_id: int) -> Message:
    """The user message of `session` a fork starts before; ForkError when it is not one."""
    at = Message.objects.filter(session=session, pk=message_id).first()
    if at is None or at.role != "user":
        raise ForkError("Only your own messages in this chat can be edited and sent again.")
    return at


def fork_before(session: ChatSession, message_id: int) -> ChatSession:
    """A new chat (child of `session`) with every message before the user message `message_id`."""
    at = fork_point(session, message_id)
    earlier = list(Message.objects.filter(session=session, id__lt=at.pk).order_by("id"))
    with transaction.atomic():
        fork = ChatSession.objects.create(
            title=session.title,
            source="web",
            model=session.model,
            system_prompt=session.system_prompt,
            parent=session,
        )
        Message.objects.bulk_create(
            [Message(session=fork, **{name: getattr(m, name) for name in _COPIED_FIELDS}) for m in earlier]
        )
        ChatSession.objects.filter(pk=fork.pk).update(
            message_count=len(earlier),
            user_turn_count=sum(1 for m in earlier if m.role == "user"),
            tool_call_count=sum(len(m.tool_calls or []) for m in earlier),
        )
    fork.refresh_from_db()
    return fork


def branches(session: ChatSession) -> dict[str, object]:
    """The chats this one was branched from and into, for the links above the conversation."""
    return {
        "parent": session.parent,
        "children": list(ChatSession.objects.filter(parent=session).order_by("started_at")),
    }
