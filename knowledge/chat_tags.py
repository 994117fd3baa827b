"""A tag a person puts on chats to find them again (the chat list filters by it).

Its own module so the records file stays readable; `knowledge.models` imports it, and the chats
hold the link (`ChatSession.tags`)."""

from __future__ import annotations

from django.db import models

TAG_CHARS = 40


class ChatTag(models.Model):
    name = models.CharField(max_length=TAG_CHARS, unique=True)

    class Meta:
        app_label = "knowledge"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name
