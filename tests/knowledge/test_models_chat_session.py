"""ChatSession's single-row changes: each sets exactly its columns in one UPDATE (counters added
in the database, so concurrent counts add up), and leaves the chat's place in the list
(`updated_at`) alone unless it is a new message or a continued answer."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from knowledge.models import ChatSession, Message

pytestmark = pytest.mark.django_db

WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _changed(change: Callable[[str], Any], **start: Any) -> dict[str, Any]:
    """The columns `change(pk)` changed on a new chat, checked to be one UPDATE."""
    chat = ChatSession.objects.create(**start)
    before = ChatSession.objects.filter(pk=chat.pk).values().get()
    with CaptureQueriesContext(connection) as queries:
        change(chat.pk)
    assert [q["sql"].split()[0] for q in queries.captured_queries] == ["UPDATE"]
    after = ChatSession.objects.filter(pk=chat.pk).values().get()
    return {k: v for k, v in after.items() if before[k] != v}


def test_the_persons_choices_change_only_their_columns() -> None:
    assert _changed(lambda pk: ChatSession.rename(pk, "Trip", "person")) == {"title": "Trip", "title_source": "person"}
    assert _changed(lambda pk: ChatSession.set_pinned(pk, True)) == {"pinned": True}
    assert _changed(lambda pk: ChatSession.set_archived(pk, WHEN)) == {"archived_at": WHEN}
    assert _changed(lambda pk: ChatSession.set_archived(pk, None), archived_at=WHEN) == {"archived_at": None}
    assert _changed(lambda pk: ChatSession.set_settings(pk, "Be brief.", 0.2)) == {
        "instructions": "Be brief.",
        "temperature": 0.2,
    }
    assert _changed(lambda pk: ChatSession.set_model(pk, "qwen3")) == {"model": "qwen3"}
    assert _changed(lambda pk: ChatSession.set_private(pk, True)) == {"private": True}
    assert not ChatSession.set_private("no-such-chat", True)


def test_a_turns_records_add_to_the_counters() -> None:
    message = {"message_count": F("message_count") + 1, "updated_at": WHEN}
    assert _changed(lambda pk: ChatSession.record_message(pk, message), message_count=4) == {
        "message_count": 5,
        "updated_at": WHEN,
    }
    usage = {"prompt_tokens": F("prompt_tokens") + 30, "last_prompt_tokens": 30, "turns_since_memory": 2}
    assert _changed(lambda pk: ChatSession.count_usage(pk, usage), prompt_tokens=100) == {
        "prompt_tokens": 130,
        "last_prompt_tokens": 30,
        "turns_since_memory": 2,
    }
    assert _changed(lambda pk: ChatSession.save_counters(pk, 3, 7)) == {"turns_since_memory": 3, "iters_since_skill": 7}
    assert _changed(lambda pk: ChatSession.mark_ended(pk, "new session", WHEN)) == {
        "ended_at": WHEN,
        "end_reason": "new session",
    }


def test_a_continued_answer_counts_as_a_revision_with_its_tokens() -> None:
    tokens = {"completion_tokens": F("completion_tokens") + 5}
    assert _changed(lambda pk: ChatSession.record_continued(pk, tokens, WHEN), completion_tokens=10, revision=2) == {
        "completion_tokens": 15,
        "revision": 3,
        "updated_at": WHEN,
    }


def test_the_live_context_and_the_chosen_version() -> None:
    def compress(pk: str) -> None:
        ChatSession.store_compression(pk, system_prompt="new", summary="S", head_to=3, cut_to=9, when=WHEN)

    assert _changed(compress, compression_count=1, last_prompt_tokens=900) == {
        "system_prompt": "new",
        "context_summary": "S",
        "context_head_to": 3,
        "context_cut_to": 9,
        "compression_count": 2,
        "last_compressed_at": WHEN,
        "last_prompt_tokens": 0,
    }
    summarised = {"context_summary": "S", "context_head_to": 3, "context_cut_to": 9}
    assert _changed(ChatSession.drop_summary, **summarised) == {
        "context_summary": "",
        "context_head_to": None,
        "context_cut_to": None,
    }

    chat = ChatSession.objects.create()
    first = Message.objects.create(session=chat, role="user", content="a")
    Message.objects.create(session=chat, role="assistant", content="b")
    ChatSession.choose_leaf(chat.pk, first.pk)
    ChatSession.choose_leaf(chat.pk, None)
    row = ChatSession.objects.get(pk=chat.pk)
    assert (row.leaf_id, row.revision) == (None, 2)
    assert _changed(lambda pk: ChatSession.choose_leaf(pk, None)) == {"revision": 1}
