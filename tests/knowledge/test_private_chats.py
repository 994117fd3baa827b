"""The private flag as every reader sees it: stored on the chat's row, read fresh each time."""

from __future__ import annotations

import pytest

from knowledge import private_chats
from knowledge.models import ChatSession

pytestmark = pytest.mark.django_db


def test_the_flag_is_stored_and_read_from_the_row() -> None:
    chat = ChatSession.objects.create(title="Planning")
    assert not private_chats.is_private(chat.pk)
    assert private_chats.set_private(chat.pk, True)
    assert private_chats.is_private(chat.pk) and ChatSession.objects.get(pk=chat.pk).private
    assert private_chats.set_private(chat.pk, False) and not private_chats.is_private(chat.pk)


def test_no_chat_is_not_private() -> None:
    assert not private_chats.is_private(None) and not private_chats.is_private("")
    assert not private_chats.is_private("no-such-chat")
    assert not private_chats.set_private("no-such-chat", True)


def test_switching_leaves_when_the_chat_was_last_used() -> None:
    chat = ChatSession.objects.create(title="Planning")
    before = ChatSession.objects.get(pk=chat.pk).updated_at
    private_chats.set_private(chat.pk, True)
    assert ChatSession.objects.get(pk=chat.pk).updated_at == before  # its place in the chat list stays
