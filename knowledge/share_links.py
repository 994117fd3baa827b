"""A read-only link to one chat, for someone without the dashboard's login.

Its own token (unguessable, never the login token), revocable, optionally expiring. The
table is registered from knowledge/models.py. Nothing is shared until the person makes a link:
a chat has none to begin with.
"""

from __future__ import annotations

import hmac
import re
import secrets
from datetime import timedelta

from django.db import models
from django.utils import timezone

# What `secrets.token_urlsafe(32)` makes: 43 characters of the URL-safe alphabet. Anything else in
# the address is refused before the database is asked.
TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{43}")
# The lifetimes the share panel offers, in days (None: until revoked).
LIFETIMES: dict[str, int | None] = {"never": None, "1": 1, "7": 7, "30": 30}


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


def create(session_id: str, days: int | None) -> ShareLink:
    """A new link to the chat, live for `days` days (None: until revoked)."""
    expires = timezone.now() + timedelta(days=days) if days else None
    return ShareLink.objects.create(session_id=session_id, expires_at=expires)


def live(session_id: str) -> list[ShareLink]:
    """The chat's links that still show it, newest first."""
    now = timezone.now()
    rows = ShareLink.objects.filter(session_id=session_id, revoked_at__isnull=True)
    return list(rows.filter(models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now)))


def revoke(session_id: str, pk: int) -> bool:
    """Stop link `pk` of the chat from showing it; False when it is not one of the chat's live links."""
    return bool(
        ShareLink.objects.filter(pk=pk, session_id=session_id, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
    )


def find(token: str) -> ShareLink | None:
    """The live link whose token this is, or None (unknown, revoked and expired alike).

    The lookup is by the unique index; the stored token is then compared in constant time, so
    a database whose comparison folds case or trailing spaces cannot let a near-miss through."""
    if not TOKEN_RE.fullmatch(token):
        return None
    link = ShareLink.objects.select_related("session").filter(token=token).first()
    if link is None or not hmac.compare_digest(link.token.encode(), token.encode()):
        return None
    return link if link.is_live else None
