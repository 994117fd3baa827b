"""A read-only link to one chat, for someone without the dashboard's login.

Its own token (unguessable, never the login token), revocable, optionally expiring. The
table is registered from knowledge/models.py."""

from __future__ import annotations

import secrets

from django.db import models
from django.utils import timezone


def _new_token() -> str:
    return secrets.token_urlsafe(32)


class ShareLink(models.Model):
    token = models.CharField(max_length=64, unique=True, default=_new_token, editable=False)
    session = models.ForeignKey("ChatSession", on_delete=models.CASCADE, related_name="share_links")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "knowledge"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"share of {self.session_id}"

    @property
    def is_live(self) -> bool:
        """Not revoked and not expired: the link shows the chat."""
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > timezone.now()
