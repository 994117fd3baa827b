"""Images attached to a person's message: the bytes in the home, a row linking them to the message.

The bytes are stored once per content as HERMES_HOME/attachments/<sha256>.<ext>, created
owner-only (0600) like every other file of the home. A row without a message is an upload not
sent yet, made for one chat; sending a message of that chat links it (agent/chat/runner.py),
so a reload shows the image and later turns of the chat send it to the model again. An edit
of the message gets rows of its own for the same files. Uploads never sent are removed after
UNSENT_KEPT, and files no row names any more after the same time (`sweep`, run by the periodic
round of agent/reclaim.py; docs/BEHAVIOUR.md, "Files on disk"). The type is read from the bytes
themselves, never from the name or what the browser said, and only raster types that a
browser cannot execute are kept (no SVG).
"""

from __future__ import annotations

import hashlib
import logging
import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.db import models
from django.utils import timezone

from foundation.config import hermes_home
from foundation.fileio import create_private

# Extension -> content type, for the types the model's image parts accept.
IMAGE_TYPES = {"png": "image/png", "jpg": "image/jpeg", "webp": "image/webp", "gif": "image/gif"}
# How long an upload not sent with a message is kept (the person may send it later in the day).
UNSENT_KEPT = timedelta(hours=24)
GONE = (
    "An attached image is no longer on the server (images not sent within a day are removed). "
    "Remove it and attach it again. Nothing was sent."
)

log = logging.getLogger(__name__)


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
    # The chat it was uploaded for: only a message of that chat may take it (None: uploaded
    # before uploads recorded their chat).
    session = models.ForeignKey(
        "knowledge.ChatSession", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
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


def store_image(name: str, data: bytes, ext: str, session_id: str) -> MessageAttachment:
    """Keep the bytes in the home (once per content) and record an unsent upload of them for the chat."""
    digest = hashlib.sha256(data).hexdigest()
    target = folder() / f"{digest}.{ext}"
    if not target.exists() or not _touched(target):
        create_private(target, data)  # False when another upload of the same bytes won the race: same content
    return MessageAttachment.objects.create(
        name=name[:255], sha256=digest, ext=ext, size=len(data), session_id=session_id
    )


def _touched(path: Path) -> bool:
    """Mark a kept file as used now, so a sweep does not take it as left over; False when it is gone."""
    try:
        os.utime(path)
    except FileNotFoundError:
        return False
    return True


def refusal(ids: list[int], session_id: str) -> str | None:
    """Why the uploads `ids` cannot go with a new message of chat `session_id`, or None."""
    found = {att.pk: att for att in MessageAttachment.objects.filter(pk__in=ids)}
    for pk in ids:
        att = found.get(pk)
        if att is None:
            return GONE
        if att.session_id != session_id:
            return f"{att.name} was attached in another chat. Attach it again in this one. Nothing was sent."
        if att.message_id is not None:
            return f"{att.name} was sent with an earlier message already. Attach it again. Nothing was sent."
    return None


def link(ids: list[int], message_id: int, session_id: str) -> list[MessageAttachment]:
    """Attach the unsent uploads `ids` made for chat `session_id` to its stored message; the ones
    linked, in order (an upload of another chat or already sent is left alone)."""
    if not ids:  # most turns carry none: building the two queries alone cost a tenth of a turn's CPU
        return []
    MessageAttachment.objects.filter(pk__in=ids, message__isnull=True, session_id=session_id).update(
        message_id=message_id
    )
    return list(MessageAttachment.objects.filter(pk__in=ids, message_id=message_id))


def copy(from_message: int, to_message: int) -> list[MessageAttachment]:
    """The images of message `from_message` attached to `to_message` too (an edit keeps them):
    new rows naming the same files."""
    return [
        MessageAttachment.objects.create(
            message_id=to_message,
            session_id=att.session_id,
            name=att.name,
            sha256=att.sha256,
            ext=att.ext,
            size=att.size,
        )
        for att in MessageAttachment.objects.filter(message_id=from_message)
    ]


def sweep(now: datetime | None = None) -> int:
    """Remove the uploads not sent within UNSENT_KEPT, then the files of this home no row names
    (their uploads removed, or their chat deleted) unused as long; how many uploads went.
    A file another message still names is kept."""
    cutoff = (now or timezone.now()) - UNSENT_KEPT
    removed, _ = MessageAttachment.objects.filter(message__isnull=True, created_at__lt=cutoff).delete()
    try:
        _remove_unnamed(cutoff.timestamp())
    except OSError as exc:  # the periodic round goes on; the next one tries again
        log.warning("could not clear attached images no message names: %s", exc)
    return removed


def _remove_unnamed(before: float) -> None:
    kept = hermes_home() / "attachments"  # not created here: a home without images has no folder
    old: dict[str, Path] = {}
    for path in kept.iterdir() if kept.is_dir() else ():
        try:
            if path.suffix[1:] in IMAGE_TYPES and path.stat().st_mtime < before:
                old[path.stem] = path
        except FileNotFoundError:
            continue  # taken by another process's sweep meanwhile
    named = set(MessageAttachment.objects.filter(sha256__in=list(old)).values_list("sha256", flat=True))
    for digest, path in old.items():
        if digest not in named:
            path.unlink(missing_ok=True)
            log.info("removed attached image %s: no message names it any more", path.name)


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
