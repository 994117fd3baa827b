"""The chat list's groups (by the day a chat was last used, pinned on top) and its views (tag, archived)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from agent.chat import chat_list
from knowledge.chat_tags import ChatTag
from knowledge.models import ChatSession

NOW = dt.datetime(2026, 12, 1, 15, 0, tzinfo=dt.UTC)


def _chat(title: str, days: float, **fields: object) -> ChatSession:
    s = ChatSession.objects.create(title=title, **fields)
    ChatSession.objects.filter(pk=s.pk).update(updated_at=NOW - dt.timedelta(days=days))
    s.refresh_from_db()
    return s


@pytest.mark.parametrize(
    ("ago", "label"),
    [
        (dt.timedelta(hours=14), "Today"),  # 01:00 the same day
        (dt.timedelta(hours=16), "Yesterday"),  # 23:00 the day before: a day boundary, not 24 hours
        (dt.timedelta(days=2), "Previous 7 days"),
        (dt.timedelta(days=7), "Previous 7 days"),
        (dt.timedelta(days=8), "Previous 30 days"),
        (dt.timedelta(days=30), "Previous 30 days"),
        (dt.timedelta(days=31), "October 2026"),
        (dt.timedelta(days=400), "October 2025"),
    ],
)
def test_day_labels(ago, label):
    assert chat_list.day_label(NOW - ago, NOW) == label


@pytest.mark.django_db
def test_pinned_chats_head_the_list_and_the_rest_follow_by_date():
    _chat("today", 0)
    _chat("old but pinned", 90, pinned=True)
    _chat("yesterday", 1)
    _chat("last month", 40)
    _chat("two months", 70)
    groups = chat_list.grouped(chat_list.listed(), now=NOW)
    assert [(g.label, [s.title for s in g.sessions]) for g in groups] == [
        ("Pinned", ["old but pinned"]),
        ("Today", ["today"]),
        ("Yesterday", ["yesterday"]),
        ("October 2026", ["last month"]),
        ("September 2026", ["two months"]),
    ]


@pytest.mark.django_db
def test_archived_chats_leave_the_list_and_make_a_view_of_their_own():
    _chat("kept", 0)
    _chat("archived", 0, archived_at=timezone.now(), pinned=True)
    assert [s.title for s in chat_list.listed()] == ["kept"]
    assert [s.title for s in chat_list.listed(archived=True)] == ["archived"]
    # An archived chat is listed by its date, not among the pinned ones.
    assert [g.label for g in chat_list.grouped(chat_list.listed(archived=True), now=NOW)] == ["Today"]
    assert chat_list.archived_count() == 1


@pytest.mark.django_db
def test_a_tag_filters_the_list_and_only_used_tags_are_offered():
    work, _ = ChatTag.objects.get_or_create(name="work")
    ChatTag.objects.create(name="unused")
    tagged = _chat("tagged", 0)
    tagged.tags.add(work)
    _chat("other", 0)
    assert [s.title for s in chat_list.listed(tag="work")] == ["tagged"]
    assert chat_list.tag_names() == ["work"]
