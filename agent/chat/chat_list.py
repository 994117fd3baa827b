"""The sidebar's chat list: which chats it shows (by tag, archived or not) and how it groups them.

Pinned chats come first, then the rest by when they were last used, as other chat apps group
them: Today, Yesterday, Previous 7 days, Previous 30 days, then one group per month. Days are
counted in the server's time zone (settings.TIME_ZONE) from the `now` given, so a test can say
what day it is.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import QuerySet
from django.utils import timezone

from knowledge.chat_tags import ChatTag
from knowledge.models import ChatSession

LIMIT = 100
PINNED = "Pinned"


@dataclass
class Group:
    label: str
    sessions: list[ChatSession] = field(default_factory=list)


def listed(*, tag: str = "", archived: bool = False, limit: int = LIMIT) -> list[ChatSession]:
    """The chats the list shows: the archived ones or the others, with `tag` if given; pinned first."""
    chats: QuerySet[ChatSession] = ChatSession.objects.filter(archived_at__isnull=not archived)
    if tag:
        chats = chats.filter(tags__name=tag)
    chats = chats.order_by("-pinned", "-updated_at").prefetch_related("tags")
    return list(chats[:limit])


def day_label(when: dt.datetime, now: dt.datetime) -> str:
    """The group of a chat last used at `when`, seen at `now`."""
    days = (timezone.localtime(now).date() - timezone.localtime(when).date()).days
    if days <= 0:
        return "Today"
    if days == 1:
        return "Yesterday"
    if days <= 7:
        return "Previous 7 days"
    if days <= 30:
        return "Previous 30 days"
    local = timezone.localtime(when)
    return local.strftime("%B %Y")


def grouped(sessions: Iterable[ChatSession], now: dt.datetime | None = None) -> list[Group]:
    """Pinned chats (when not archived) in a group on top, the others under their day's label, in order."""
    now = now or timezone.now()
    groups: list[Group] = []
    for session in sessions:
        label = PINNED if session.pinned and session.archived_at is None else day_label(session.updated_at, now)
        if not groups or groups[-1].label != label:
            groups.append(Group(label))
        groups[-1].sessions.append(session)
    return groups


def tag_names() -> list[str]:
    """Every tag that is on at least one chat, by name (the filter's choices)."""
    return list(ChatTag.objects.filter(sessions__isnull=False).distinct().values_list("name", flat=True))


def archived_count() -> int:
    return ChatSession.objects.filter(archived_at__isnull=False).count()
