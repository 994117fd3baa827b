"""The images of a chat's messages as the model gets them: OpenAI content parts beside the text.

A user message with attached images carries their refs ({"id", "name"}) under "images" in the
runner's message list (knowledge/models.py `api_messages`, or the runner when the turn stores
it). Right before each model call they become `{"type": "image_url", ...}` parts with the bytes
inline (a data: URL), for the newest RESENT images of the conversation; older ones, and every
image when the model is known not to accept images, become the text "[image: name]", so the
model still knows something was shown. The stored message stays text: search, export and the
review read what was typed and attached as text, never the image bytes.
"""

from __future__ import annotations

import base64
import logging
from typing import Any

from agent.chat.versions import TurnRequest
from knowledge.attachments import MessageAttachment, copy, link

log = logging.getLogger(__name__)

# The newest images of a conversation sent again on each turn; older ones become a placeholder
# (each image is sent inline, so every one costs its bytes on every call).
RESENT = 8


def attach(message: dict[str, Any], request: TurnRequest, message_id: int, session_id: str) -> None:
    """Give the message `message_id` just stored its images and carry their refs on `message`
    (the runner's copy of it), so this turn's model call gets them: the request's uploads for
    this chat, or for an edit the images of the message edited (its new version keeps them)."""
    if request.kind == "edit" and request.message_id is not None:
        linked = copy(request.message_id, message_id)
    else:
        linked = link(list(request.images), message_id, session_id)
    if linked:
        message["images"] = [att.ref() for att in linked]


def placeholder(ref: dict[str, Any]) -> str:
    return f"[image: {ref.get('name') or 'image'}]"


def _data_url(att: MessageAttachment) -> str:
    return f"data:{att.mime};base64,{base64.b64encode(att.read()).decode('ascii')}"


def _parts(text: str, refs: list[dict[str, Any]], found: dict[int, MessageAttachment], sent: set[int]) -> Any:
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for ref in refs:
        att = found.get(int(ref["id"]))
        url = None
        if att is not None and att.pk in sent:
            try:
                url = _data_url(att)
            except OSError:
                log.warning("attached image %s is missing from the home", att.path)
        if url is None:
            parts.append({"type": "text", "text": placeholder(ref)})
        else:
            parts.append({"type": "image_url", "image_url": {"url": url}})
    if all(p["type"] == "text" for p in parts):
        return "\n\n".join(p["text"] for p in parts)  # no image: plain text, which every server takes
    return parts


def with_images(messages: list[dict[str, Any]], accepts: bool) -> list[dict[str, Any]]:
    """A copy of `messages` whose images are content parts (or placeholders when `accepts` is
    False); the list itself is returned when no message has images."""
    refs = [ref for m in messages for ref in m.get("images") or []]
    if not refs:
        return messages
    newest = {int(r["id"]) for r in refs[-RESENT:]} if accepts else set()
    found = {att.pk: att for att in MessageAttachment.objects.filter(pk__in=newest)}
    out = []
    for m in messages:
        if not m.get("images"):
            out.append(m)
            continue
        msg = {k: v for k, v in m.items() if k != "images"}
        msg["content"] = _parts(str(m.get("content") or ""), m["images"], found, newest)
        out.append(msg)
    return out
