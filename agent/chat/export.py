"""One chat as a file a person can keep: Markdown to read, JSON to process.

A message's attached images are named in both ("[image: name]" in Markdown, with the address
the dashboard serves it at; name, type, size and address in JSON), never left out silently:
the bytes stay in the home (knowledge/attachments.py).
"""

from __future__ import annotations

import json
from typing import Any

from django.urls import reverse

from knowledge import versions
from knowledge.attachments import MessageAttachment, of_messages
from knowledge.models import ChatSession, Message

ROLE_HEADINGS = {"user": "You", "assistant": "Hermes", "system": "System", "tool": "Tool result"}


def _messages(session: ChatSession) -> list[Message]:
    """The version of the conversation the chat shows (other versions stay in the chat)."""
    return versions.path_messages(session)


def _image(att: MessageAttachment) -> dict[str, Any]:
    return {"name": att.name, "type": att.mime, "size": att.size, "url": reverse("chat_attachment", args=[att.pk])}


def as_json(session: ChatSession) -> str:
    messages = _messages(session)
    images = of_messages([m.pk for m in messages if m.role == "user"])
    data: dict[str, Any] = {
        "id": session.pk,
        "title": session.display_title,
        "model": session.model,
        "started_at": session.started_at.isoformat(),
        "messages": [
            {
                "id": m.pk,
                "role": m.role,
                "content": m.content,
                "tool_calls": m.tool_calls,
                "tool_call_id": m.tool_call_id or None,
                "tool_name": m.tool_name or None,
                "finish_reason": m.finish_reason or None,
                "created_at": m.created_at.isoformat(),
                **({"images": [_image(att) for att in images[m.pk]]} if m.pk in images else {}),
            }
            for m in messages
        ],
    }
    return json.dumps(data, ensure_ascii=False, indent=2)


def _fence(text: str, info: str = "") -> str:
    """A code fence longer than any run of backticks inside, so the text cannot close it."""
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def _section(m: Message, images: list[MessageAttachment]) -> str:
    parts = [f"## {ROLE_HEADINGS.get(m.role, m.role)}"]
    if images:
        parts.append("\n".join(f"[image: {att.name}]({reverse('chat_attachment', args=[att.pk])})" for att in images))
    if m.role == "tool":
        parts[0] += f" ({m.tool_name})" if m.tool_name else ""
        parts.append(_fence(m.content))
    elif m.content:
        parts.append(m.content)
    for call in m.tool_calls or []:
        fn = call.get("function") or {}
        parts.append(f"Tool call `{fn.get('name', '?')}`:\n\n" + _fence(str(fn.get("arguments", "")), "json"))
    if m.finish_reason == "interrupted":
        parts.append("*(stopped)*")
    return "\n\n".join(parts)


def as_markdown(session: ChatSession) -> str:
    head = f"# {session.display_title}\n\nStarted {session.started_at:%Y-%m-%d %H:%M} UTC"
    if session.model:
        head += f" · model `{session.model}`"
    messages = [m for m in _messages(session) if m.role != "system"]
    images = of_messages([m.pk for m in messages if m.role == "user"])
    sections = [_section(m, images.get(m.pk, [])) for m in messages]
    return "\n\n".join([head, *sections]) + "\n"
