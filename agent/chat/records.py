"""A chat's stored rows: the session opened or made, and a turn's messages, each stored with its
session's counters in one transaction.

The runner calls this as the agent loop produces messages, so each exists as soon as it is made.
An answer still streaming is checkpointed into one row (`checkpoint`), marked interrupted until
the model call ends and `finish_draft` turns the same row into the finished message: a server
that dies mid-answer leaves what the person saw stored, and a finished answer is one row.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from agent.llm.types import provider_fields
from agent.loop import ModelCalled
from foundation.config import Config
from foundation.rendering import plain_text
from knowledge.models import ChatSession, Message, without_nul
from knowledge.prompt import build_system_prompt

TITLE_CHARS = 60
# How often an answer being streamed is stored (seconds): what a crash can lose of it.
CHECKPOINT_EVERY = 1.0


def open_session(config: Config, *, session_id: str | None, name: str | None, source: str) -> ChatSession:
    """The session with this id or name, or a new one (with its system prompt)."""
    session: ChatSession | None = None
    if session_id:
        session = ChatSession.objects.get(pk=session_id)
    elif name:
        session = ChatSession.objects.filter(name=name).first()
    if session is None:
        session = ChatSession.objects.create(
            name=name or None,
            title=name or "",
            title_source="person" if name else "",  # a terminal chat's --session name
            source=source,
            model=config.model_name,
            system_prompt=build_system_prompt(config),
        )
    return session


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
    sources: list[dict[str, Any]] | None = None,
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
            provider_fields=provider_fields(msg) if msg["role"] == "assistant" else None,
            tool_call_id=msg.get("tool_call_id", ""),
            tool_name=tool_name,
            finish_reason=finish_reason,
            token_count=tokens,
            sources=sources,
        )
        m.starts_chat = parent_id is None  # an edit of the first message has no parent either
        m.save()
        updates: dict[str, Any] = {"leaf": None, **_session_updates(msg, session_updates, new=True)}
        if first_user and not session.title:
            # Plain words: a title shows no Markdown markup.
            title = without_nul(plain_text(str(msg.get("content") or ""), TITLE_CHARS)) or "New chat"
            updates["title"], updates["title_source"] = title, "message"
            session.title, session.title_source = title, "message"
        ChatSession.record_message(session.pk, updates)
    session.leaf_id = None
    return m


def _session_updates(msg: dict[str, Any], extra: dict[str, Any] | None, *, new: bool) -> dict[str, Any]:
    """The session columns one stored message changes (`new`: a row added, not one rewritten)."""
    updates: dict[str, Any] = {**(extra or {}), "updated_at": timezone.now()}
    if new:
        updates["message_count"] = F("message_count") + 1
    if msg.get("tool_calls"):
        updates["tool_call_count"] = F("tool_call_count") + len(msg["tool_calls"])
    return updates


# What a checkpointed answer is until its model call ends: a reload after the server died
# shows it as the presenter shows a stopped answer (agent/chat/presenter.py, ENDINGS).
DRAFT_REASON = "interrupted"


def checkpoint(
    session: ChatSession, draft: Message | None, text: str, store: Callable[[dict[str, Any]], Message] | None = None
) -> Message:
    """Store the answer streamed so far: a new row marked interrupted (by `store`, which places it
    after the message it answers, or as the newest message), or `draft` rewritten."""
    if draft is None:
        msg = {"role": "assistant", "content": text}
        return store(msg) if store is not None else store_message(session, msg, finish_reason=DRAFT_REASON)
    draft.content = without_nul(text)
    Message.objects.filter(pk=draft.pk).update(content=draft.content)
    return draft


def finish_draft(
    session: ChatSession,
    draft: Message,
    msg: dict[str, Any],
    *,
    finish_reason: str = "",
    tokens: int = 0,
    session_updates: dict[str, Any] | None = None,
    sources: list[dict[str, Any]] | None = None,
) -> Message:
    """Make the checkpointed row the finished message `msg` (as `store_message` would have stored
    it, written now), and update its session row, in one transaction."""
    draft.content = without_nul(msg.get("content") or "")
    draft.tool_calls = msg.get("tool_calls") or None
    draft.reasoning = without_nul(msg.get("reasoning_content") or "")
    draft.provider_fields = provider_fields(msg)
    draft.finish_reason, draft.token_count, draft.created_at = finish_reason, tokens, timezone.now()
    draft.sources = sources  # what was recalled for the turn, in the same UPDATE
    with transaction.atomic():
        # save() (not update()) so the tool calls get the same NUL cleaning as a new row's.
        draft.save(
            update_fields=[
                "content",
                "tool_calls",
                "reasoning",
                "provider_fields",
                "finish_reason",
                "token_count",
                "created_at",
                "sources",
            ]
        )
        ChatSession.record_message(session.pk, _session_updates(msg, session_updates, new=False))
    return draft


class StreamedAnswer:
    """One model call's answer as it streams, checkpointed about every `every` seconds (of
    `clock`, injected by tests) into one row, which `finish` makes the finished message."""

    def __init__(
        self,
        session: ChatSession,
        *,
        clock: Callable[[], float] = time.monotonic,
        every: float = CHECKPOINT_EVERY,
        store: Callable[[dict[str, Any]], Message] | None = None,
    ) -> None:
        self.session, self.clock, self.every, self.store = session, clock, every, store
        self.row: Message | None = None
        self.text: list[str] = []
        self._since: float | None = None  # when the text stored last (or the first chunk) arrived

    def add(self, chunk: str) -> bool:
        """Take a streamed chunk; True when this made the row (a new message of the session)."""
        self.text.append(chunk)
        now = self.clock()
        if self._since is None:
            self._since = now  # a short answer is stored once, when it ends
            return False
        if now - self._since < self.every:
            return False
        self._since = now
        made = self.row is None
        self.row = checkpoint(self.session, self.row, "".join(self.text), self.store)
        return made

    def finish(self, msg: dict[str, Any], **kw: Any) -> Message | None:
        """The checkpointed row made the finished message `msg` (None: nothing was checkpointed,
        the caller stores `msg` as a new row); ready for the next model call."""
        row, self.row, self.text, self._since = self.row, None, [], None
        return finish_draft(self.session, row, msg, **kw) if row is not None else None

    def shown(self, final_text: str) -> str:
        """The answer the page shows when the turn ends: what the model wrote."""
        return final_text


def usage_updates(session: ChatSession, event: ModelCalled) -> dict[str, Any]:
    """The session columns a model call changes (written with its message, if any)."""
    u = event.usage
    session.last_prompt_tokens = u.prompt_tokens if u.reported else 0
    return {
        "prompt_tokens": F("prompt_tokens") + u.prompt_tokens,
        "completion_tokens": F("completion_tokens") + u.completion_tokens,
        "last_prompt_tokens": session.last_prompt_tokens,
    }
