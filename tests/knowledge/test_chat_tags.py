"""Tags on chats: one row per name, shared by the chats that carry it."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from knowledge.chat_tags import ChatTag
from knowledge.models import ChatSession

pytestmark = pytest.mark.django_db


def test_a_tag_is_shared_by_its_chats_and_its_name_is_unique():
    tag = ChatTag.objects.create(name="work")
    a, b = ChatSession.objects.create(), ChatSession.objects.create()
    a.tags.add(tag)
    b.tags.add(tag)
    assert set(tag.sessions.values_list("pk", flat=True)) == {a.pk, b.pk} and str(tag) == "work"
    with pytest.raises(IntegrityError), transaction.atomic():
        ChatTag.objects.create(name="work")
    a.delete()  # deleting a chat leaves the tag on the others
    assert list(tag.sessions.all()) == [b]
