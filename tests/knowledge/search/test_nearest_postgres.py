"""Search by meaning through pgvector's index on PostgreSQL (the test script's PostgreSQL has
the extension: scripts/services.sh builds it), and what the person is told on SQLite or without it.
The vectors are real all-MiniLM-L6-v2 embeddings from the scripted server."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from django.db import connection
from django.urls import reverse

from agent import recall
from knowledge.models import ChatSession, Message
from knowledge.search import meaning as search_meaning
from knowledge.search import nearest_postgres, search_messages
from knowledge.search.filters import Filters
from knowledge.vectors import MessageVector, pack
from tests import dbs
from tests.conftest import write_config
from tests.fakellm import ScriptedLLM

pytestmark = pytest.mark.django_db

FLAKY = "We agreed to rerun the integration suite automatically because it keeps failing at random."
OTHER = [
    "For the birthday I will bake a lemon drizzle cake with poppy seeds.",
    "Please book a table for four at the ramen place on Friday evening.",
    "My bicycle's rear brake squeaks when it rains.",
]
QUERY = "what did we decide about the unreliable CI tests"
on_postgres = pytest.mark.skipif(not dbs.on_postgres(), reason="pgvector is PostgreSQL's")


@pytest.fixture
def embedding(llm: ScriptedLLM, home: Path) -> ScriptedLLM:
    llm.serve_embeddings()
    write_config(home, "embeddings:\n  model: all-minilm\n")
    return llm


def _chat(*texts: str) -> ChatSession:
    session = ChatSession.objects.create(title="")
    for text in texts:
        Message.objects.create(session=session, role="user", content=text)
    return session


def _space() -> str:
    return search_meaning.embedder().space


def _query(text: str) -> np.ndarray:
    found = search_meaning.query_vector(text)
    assert found is not None
    return found[1]


@on_postgres
def test_after_the_background_work_searches_go_through_pgvectors_index(embedding):
    chat = _chat(FLAKY)
    _chat(*OTHER)
    assert recall.embed_backlog().embedded == 4
    assert nearest_postgres.usable().usable, "the test PostgreSQL needs pgvector (scripts/services.sh builds it)"
    assert nearest_postgres.ready(_space()) is not None
    held = search_meaning.memory_bytes()  # of earlier tests' searches in this process, if any
    page = search_messages(QUERY)
    assert [h.session_id for h in page.results][:1] == [chat.id] and page.results[0].by_meaning
    # Through the index, the process does not load the vectors into its memory.
    assert search_meaning.memory_bytes() == held
    q = _query(QUERY)
    through_index = search_meaning.nearest(_space(), q, Filters(), 10)
    exact = search_meaning.nearest(_space(), q, Filters(), 10, exact=True)
    assert [n.message_id for n in through_index] == [n.message_id for n in exact]
    # The index holds half-precision vectors: the same cosines to about a thousandth.
    assert all(abs(a.similarity - b.similarity) < 2e-3 for a, b in zip(through_index, exact, strict=True))


@on_postgres
def test_a_filter_that_leaves_out_the_nearest_still_finds_the_chats_own(embedding, monkeypatch):
    # 150 messages nearer to the query than any other, in one chat: the nearest list is all of it
    # (one list probed first, as the first few of a large history's); the other chat's is found
    # by the scan probing on while the filter leaves too few (pgvector's iterative scan).
    monkeypatch.setattr(nearest_postgres, "EXACT_BELOW", 0)  # lists from the first row on
    monkeypatch.setattr(nearest_postgres, "PROBES", 1)
    monkeypatch.setattr(nearest_postgres, "MAX_PROBES_PER_PROBE", 1000)
    crowd = _chat(*[f"{QUERY}? ({i})" for i in range(150)])
    alone = _chat(FLAKY, *OTHER)
    recall.embed_backlog()
    assert nearest_postgres.ready(_space()) is not None
    q = _query(QUERY)
    own = search_meaning.nearest(_space(), q, Filters(session_id=alone.id), 5)
    assert own and own[0].session_id == alone.id
    assert all(n.session_id == alone.id for n in own)
    others = search_meaning.nearest(_space(), q, Filters(exclude_session_id=crowd.id), 5)
    assert [n.message_id for n in others][:1] == [own[0].message_id]


@on_postgres
def test_a_vector_written_without_its_column_falls_back_until_the_next_round_fills_it(embedding):
    _chat(*OTHER)
    recall.embed_backlog()
    assert nearest_postgres.ready(_space()) is not None
    late = _chat(FLAKY)
    message = late.messages.get()
    vector = search_meaning.query_vector(FLAKY)
    assert vector is not None
    MessageVector.objects.create(message=message, model=_space(), vector=pack(vector[1]))  # no `embedding`
    assert nearest_postgres.ready(_space()) is None  # incomplete: never searched through
    assert search_messages(QUERY).results[0].session_id == late.id  # found by the process's copy
    recall.embed_backlog()
    assert nearest_postgres.ready(_space()) is not None
    assert search_messages(QUERY).results[0].session_id == late.id


@on_postgres
def test_another_model_gets_its_own_index_and_the_old_one_is_dropped(embedding, home):
    _chat(FLAKY, *OTHER)
    recall.embed_backlog()
    first = nearest_postgres.index_name(_space())
    write_config(home, "embeddings:\n  model: all-minilm-again\n")
    recall.embed_backlog()
    second = nearest_postgres.index_name(_space())
    assert first != second
    with connection.cursor() as cur:
        cur.execute("SELECT relname FROM pg_class WHERE relname LIKE %s", [nearest_postgres.INDEX_PREFIX + "%"])
        names = {name for (name,) in cur.fetchall()}
    assert second in names and first not in names
    assert search_messages(QUERY).results[0].snippet == FLAKY


@on_postgres
def test_the_settings_page_says_where_nearest_messages_are_found(embedding, auth_client):
    _chat(FLAKY)
    recall.embed_backlog()
    page = auth_client.get(reverse("settings")).content.decode()
    assert "Nearest messages are found through pgvector&#x27;s index in PostgreSQL (pgvector 0.8" in page
    with connection.cursor() as cur:
        cur.execute("DROP EXTENSION vector CASCADE")  # a database where nobody enabled it
    assert nearest_postgres.ready(_space()) is None
    assert "pgvector extension is not enabled" in nearest_postgres.usable().why_not
    page = auth_client.get(reverse("settings")).content.decode()
    assert "holds in its memory: the pgvector extension is not enabled in this database" in page
    assert search_messages(QUERY).results[0].snippet == FLAKY  # found all the same


@pytest.mark.skipif(dbs.on_postgres(), reason="SQLite's answer")
def test_on_sqlite_the_process_holds_the_index(embedding, auth_client):
    _chat(FLAKY)
    recall.embed_backlog()
    assert nearest_postgres.ready(_space()) is None
    assert nearest_postgres.usable().why_not == "the database is SQLite"
    assert search_messages(QUERY).results[0].snippet == FLAKY
    assert search_meaning.memory_bytes() > 0  # the process's own copy of the vectors
    page = auth_client.get(reverse("settings")).content.decode()
    assert "Nearest messages are found through an index each server process holds in its memory." in page


@on_postgres
def test_a_role_that_may_not_enable_pgvector_is_told_how_and_search_goes_on(embedding):
    chat = _chat(FLAKY, *OTHER[:1])
    with connection.cursor() as cur:
        cur.execute("DROP EXTENSION IF EXISTS vector CASCADE")
        cur.execute("CREATE ROLE hermes_plain_test NOLOGIN")
        cur.execute("GRANT ALL ON ALL TABLES IN SCHEMA public TO hermes_plain_test")
        cur.execute("GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO hermes_plain_test")
        cur.execute("SET ROLE hermes_plain_test")  # the dashboard's role, not a superuser
    try:
        result = recall.embed_backlog()
        assert result.embedded == 2 and not result.error  # the embedding itself is unharmed
        state = nearest_postgres.enable()
        assert not state.usable
        assert "not enabled in this database" in state.why_not
        assert "a superuser enables it with CREATE EXTENSION vector" in state.why_not
        assert search_messages(QUERY).results[0].session_id == chat.id
    finally:
        with connection.cursor() as cur:
            cur.execute("RESET ROLE")


@on_postgres
def test_a_model_name_with_quotes_backslashes_and_percents_gets_its_index(embedding, home):
    write_config(home, 'embeddings:\n  model: "o\'brien\\\\mini 100%"\n')
    chat = _chat(FLAKY, *OTHER)
    recall.embed_backlog()
    assert _space().startswith("o'brien\\mini 100%")
    assert nearest_postgres.ready(_space()) is not None
    assert search_messages(QUERY).results[0].session_id == chat.id


@on_postgres
def test_the_index_is_built_again_when_the_history_has_grown(embedding, monkeypatch):
    monkeypatch.setattr(nearest_postgres, "EXACT_BELOW", 0)  # a large history in miniature
    _chat(FLAKY, *OTHER)
    recall.embed_backlog()
    name = nearest_postgres.index_name(_space())

    def lists() -> int:
        with connection.cursor() as cur:
            cur.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [name])
            (options,) = cur.fetchone()
        return int(dict(o.split("=") for o in options)["lists"])

    assert lists() == 2  # about the square root of 4 rows
    _chat(*[f"{text} ({i})" for i in range(3) for text in OTHER])  # 13 rows: not yet 4 times as many
    recall.embed_backlog()
    assert lists() == 2
    _chat(*[f"{text} [{i}]" for i in range(2) for text in OTHER])  # 19 rows
    recall.embed_backlog()
    assert lists() == 4
    assert nearest_postgres.ready(_space()) is not None
    assert search_messages(QUERY).results[0].snippet == FLAKY


@on_postgres
def test_a_history_below_the_exact_size_gets_one_list_read_whole(embedding):
    _chat(FLAKY, *OTHER, *[f"{text} ({i})" for i in range(8) for text in OTHER])  # 28 rows
    recall.embed_backlog()
    with connection.cursor() as cur:
        cur.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [nearest_postgres.index_name(_space())])
        (options,) = cur.fetchone()
    assert "lists=1" in options  # every search reads every vector: exact, as the process's copy is
    q = _query(QUERY)
    exact = search_meaning.nearest(_space(), q, Filters(), 40, exact=True)
    through_index = search_meaning.nearest(_space(), q, Filters(), 40)
    # The same messages (near-equal cosines may swap places: the index's are half precision).
    assert {n.message_id for n in through_index} == {n.message_id for n in exact}
    assert through_index[0].message_id == exact[0].message_id
