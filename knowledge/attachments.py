"""Images attached to a person's message: the bytes in the home, a row linking them to the message.

The bytes are stored once per content as HERMES_HOME/attachments/<sha256>.<ext>, created
owner-only (0600) like every other file of the home. A row without a message is an upload not
sent yet; sending the message links it (agent/chat/runner.py), so a reload shows the image
and later turns of the chat send it to the model again. The type is read from the bytes
themselves, never from the name or what the browser said, and only raster types that a
browser cannot execute are kept (no SVG).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from django.db import models

from hermes_site.config import hermes_home
from knowledge.fileio import create_private

# Extension -> content type, for the types the model's image parts accept.
IMAGE_TYPES = {"png": "image/png", "jpg": "image/jpeg", "webp": "image/webp", "gif": "image/gif"}


def sniff(data: bytes) -> str | None:
    """The extension of an image by its first bytes, or None when it is none of IMAGE_TYPES."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def folder() -> Path:
    path = hermes_home() / "attachments"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


class MessageAttachment(models.Model):
    """One image attached to a user message (or uploaded and not sent yet: message is None)."""

    message = models.ForeignKey(
        "knowledge.Message", null=True, blank=True, on_delete=models.CASCADE, related_name="attachments"
    )
    name = models.CharField(max_length=255)  # the file's name as the person's browser gave it
    sha256 = models.CharField(max_length=64)
    ext = models.CharField(max_length=8)  # one of IMAGE_TYPES
    size = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name

    @property
    def mime(self) -> str:
        return IMAGE_TYPES[self.ext]

    @property
    def path(self) -> Path:
        return folder() / f"{self.sha256}.{self.ext}"

    def read(self) -> bytes:
        return self.path.read_bytes()

    def ref(self) -> dict[str, Any]:
        """What a message of the model's context carries for it (agent/chat/attachments.py)."""
        return {"id": self.pk, "name": self.name}


def store_image(name: str, data: bytes, ext: str) -> MessageAttachment:
    """Keep the bytes in the home (once per content) and record an unsent upload of them."""
    digest = hashlib.sha256(data).hexdigest()
    target = folder() / f"{digest}.{ext}"
    if not target.exists():
        create_private(target, data)  # False when another upload of the same bytes won the race: same content
    return MessageAttachment.objects.create(name=name[:255], sha256=digest, ext=ext, size=len(data))


def link(ids: list[int], message_id: int) -> list[MessageAttachment]:
    """Attach the unsent uploads `ids` to the stored message; the ones linked, in order."""
    MessageAttachment.objects.filter(pk__in=ids, message__isnull=True).update(message_id=message_id)
    return list(MessageAttachment.objects.filter(pk__in=ids, message_id=message_id))


def of_messages(message_ids: list[int]) -> dict[int, list[MessageAttachment]]:
    """The attachments of these messages, by message id, in the order they were attached."""
    out: dict[int, list[MessageAttachment]] = {}
    for att in MessageAttachment.objects.filter(message_id__in=message_ids):
        out.setdefault(int(att.message_id or 0), []).append(att)
    return out


def api_dicts(messages: list[Any]) -> list[dict[str, Any]]:
    """The messages' chat-completions dicts (`Message.to_api`), a user message's images under
    "images" as refs, made into image parts right before a model call (agent/chat/image_parts.py)."""
    images = of_messages([m.pk for m in messages if m.role == "user"])
    out = []
    for m in messages:
        msg = m.to_api()
        if m.pk in images:
            msg["images"] = [att.ref() for att in images[m.pk]]
        out.append(msg)
    return out
