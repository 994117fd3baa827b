"""Per-turn reads and writes whose SQL the ORM compiles once: the same rows as the queryset, for any id."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.models import F, signals
from django.test.utils import CaptureQueriesContext

from knowledge.compiled_query import NEW_ROW, RowInsert, RowUpdate, SessionRowQuery
from knowledge.models import ChatSession, Message

pytestmark = pytest.mark.django_db


def test_it_reads_each_chats_row_as_the_queryset_would_in_one_query():
    titles = SessionRowQuery(
        ChatSession, lambda pk: ChatSession.objects.filter(pk=pk).values_list("title", "pinned")[:1]
    )
    a = ChatSession.objects.create(title="Kayaks")
    b = ChatSession.objects.create(title="Tide tables", pinned=True)
    with CaptureQueriesContext(connection) as queries:
        assert titles.row(a.pk) == ("Kayaks", False)
        assert titles.row(b.pk) == ("Tide tables", True)
        assert titles.row("no-such-chat") is None
    assert len(queries) == 3


def test_an_update_sets_what_the_querysets_update_would_and_counts_the_rows_it_changed():
    holder = RowUpdate(("pk", "turn_worker"))
    a = ChatSession.objects.create(title="Kayaks", message_count=2)
    b = ChatSession.objects.create(title="Tide tables", turn_worker="other:1")
    when = datetime(2026, 5, 1, 12, 30, tzinfo=UTC)
    for chat in (a, b):  # the second run of each shape reuses the SQL compiled by the first
        taken = {"turn_worker": "me:1", "turn_started_at": when, "turn_lease_until": when + timedelta(minutes=1)}
        assert holder.run(ChatSession, (chat.pk, ""), taken) == (1 if chat is a else 0)
    a.refresh_from_db()
    assert (a.turn_worker, a.turn_started_at, a.turn_lease_until) == ("me:1", when, when + timedelta(minutes=1))
    assert ChatSession.objects.get(pk=b.pk).turn_worker == "other:1"  # held by another: not taken
    freed = {"turn_worker": "", "turn_lease_until": None, "turn_started_at": None}
    assert holder.run(ChatSession, (a.pk, "me:1"), freed) == 1
    a.refresh_from_db()
    assert (a.turn_worker, a.turn_started_at, a.turn_lease_until) == ("", None, None)


def test_counts_add_to_what_the_row_holds_and_other_expressions_still_go_through_the_orm():
    by_pk = RowUpdate()
    chat = ChatSession.objects.create(title="Kayaks", message_count=2, prompt_tokens=10)
    with CaptureQueriesContext(connection) as queries:
        for n in (1, 3):
            by_pk.run(
                ChatSession,
                (chat.pk,),
                {"message_count": F("message_count") + 1, "prompt_tokens": F("prompt_tokens") + n},
            )
        by_pk.run(ChatSession, (chat.pk,), {"completion_tokens": F("prompt_tokens") * 2, "title": "Sea kayaks"})
    assert len(queries) == 3  # one statement each
    chat.refresh_from_db()
    assert (chat.message_count, chat.prompt_tokens, chat.completion_tokens, chat.title) == (4, 14, 28, "Sea kayaks")


def _columns(message: Message) -> dict[str, object]:
    return {f.attname: getattr(message, f.attname) for f in Message._meta.concrete_fields if f.attname != "id"}


def test_a_new_message_is_stored_as_the_orms_save_stores_it_each_value_converted_and_its_id_read_back():
    chat = ChatSession.objects.create(title="Kayaks")
    first = Message(session=chat, role="user", content="Which paddle?")
    first.starts_chat = True
    first.save()
    # Arguments holding the six characters \u0000 (code the model wrote) and a real NUL.
    arguments = '{"code": "s.split(\\"\\\\u0000\\")", "note": "b\x00"}'
    calls = [{"id": "c1", "type": "function", "function": {"name": "memory", "arguments": arguments}}]
    fields = {"tool_calls": calls, "provider_fields": {"reasoning_details": [{"text": "ü\x00"}]}, "sources": []}
    fast = Message(session=chat, parent=first, role="assistant", content="A 220 cm\x00 one.", token_count=7, **fields)
    with CaptureQueriesContext(connection) as queries:
        fast.save()  # what storing a turn's message does
    assert len(queries) == 1 and queries[0]["sql"].startswith("INSERT")
    assert NEW_ROW.sql(Message, "default") is not None  # compiled, and checked against the ORM's own
    assert fast.pk is not None and not fast._state.adding and fast._state.db == "default"
    assert fast.created_at is not None  # stamped as save() stamps it
    # The same message through the ORM's own INSERT: the rows read back match column for column.
    orm = Message(session=chat, parent=first, role="assistant", content="A 220 cm\x00 one.", token_count=7, **fields)
    orm.save(force_insert=True)  # arguments: save() does not take the compiled INSERT
    assert orm.pk == fast.pk + 1
    stored_fast, stored_orm = Message.objects.get(pk=fast.pk), Message.objects.get(pk=orm.pk)
    assert {**_columns(stored_fast), "created_at": None} == {**_columns(stored_orm), "created_at": None}
    assert stored_fast.created_at == fast.created_at
    assert stored_fast.content == "A 220 cm\ufffd one." and stored_fast.tool_calls == stored_orm.tool_calls
    kept = stored_fast.tool_calls[0]["function"]["arguments"]
    assert kept == arguments.replace("\x00", "\ufffd") and "\\u0000" in kept
    assert stored_fast.provider_fields == {"reasoning_details": [{"text": "ü\ufffd"}]}
    assert [m.pk for m in chat.messages.all()] == [first.pk, fast.pk, orm.pk]  # it counts in the chat's order


def test_a_message_the_compiled_insert_cannot_write_goes_through_save():
    chat = ChatSession.objects.create(title="Kayaks")
    counted = Message(session=chat, role="user", content="x", token_count=F("token_count"))
    assert not NEW_ROW.run(counted) and counted.pk is None  # an expression: the ORM writes it
    heard: list[int] = []

    def listener(sender: type[Message], instance: Message, **kwargs: object) -> None:
        heard.append(instance.pk)

    signals.post_save.connect(listener, sender=Message)
    try:
        message = Message(session=chat, role="user", content="Which paddle?")
        message.starts_chat = True
        message.save()  # a save signal is listened to: save() runs and sends it
    finally:
        signals.post_save.disconnect(listener, sender=Message)
    assert heard == [message.pk] and message.pk is not None


def test_an_insert_first_compiled_for_a_message_with_json_values_is_used_on_every_database():
    # On PostgreSQL a JSON value is bound wrapped (psycopg's Jsonb), and two wrappers of the same
    # value are not equal: the check must compare what they wrap, or the compiled INSERT is never used.
    chat = ChatSession.objects.create(title="Kayaks")
    inserter = RowInsert()
    calls = [{"id": "c1", "type": "function", "function": {"name": "memory", "arguments": "{}"}}]
    message = Message(session=chat, role="assistant", content="Saved.", tool_calls=calls, sources=[{"p": 1}])
    message.starts_chat = True
    assert inserter.run(message)
    assert inserter.sql(Message, "default") is not None
    stored = Message.objects.get(pk=message.pk)
    assert (stored.tool_calls, stored.sources, stored.provider_fields) == (calls, [{"p": 1}], None)


def test_a_server_on_sqlite_does_not_load_the_postgresql_driver(tmp_path):
    # Recognising the driver's JSON wrapper must not import it: that costs every start ~0.1 s.
    script = (
        "import os, sys; os.environ['DJANGO_SETTINGS_MODULE'] = 'hermes_site.settings'\n"
        "import django; django.setup()\n"
        "import agent.chat.consumers, knowledge.compiled_query\n"
        "print('psycopg' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
    env["HERMES_HOME"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
