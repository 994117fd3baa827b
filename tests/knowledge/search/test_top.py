"""Top lists for common words (knowledge/search/top.py, with the SQL of knowledge/search/top_sqlite.py
and knowledge/search/top_postgres.py): a one-word search with more hits than the count cap ranks the
word's kept best hits plus the newer ones — and the page a person sees is still the exact order
over every hit (bm25 on SQLite, ts_rank on PostgreSQL), also after new, deleted and re-ranked
messages. Every test runs on both databases."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.db import connection

from knowledge import search
from knowledge.models import ChatSession, Message
from knowledge.search import results as search_results
from knowledge.search import search_messages, search_sessions
from knowledge.search import top as search_top
from knowledge.search import top_postgres as search_top_pg
from knowledge.search import top_sqlite as search_top_fts
from knowledge.search.plan import FTS_TABLE
from knowledge.search.snippets import HIGHLIGHT_END, HIGHLIGHT_START
from tests import dbs

pytestmark = pytest.mark.django_db

_FILLER = " ".join(f"word{i}" for i in range(30))


@pytest.fixture
def many_hits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_results, "COUNT_CAP", 5)  # so a few dozen messages count as "many hits"


def _weak_hits(session: ChatSession, word: str, n: int) -> list[int]:
    """`n` matches of decreasing bm25 (longer and longer messages)."""
    return [
        Message.objects.create(session=session, role="user", content=f"{word} {_FILLER} {'pad ' * i}").pk
        for i in range(n)
    ]


def _exact(word: str, n: int = 1000) -> list[int]:
    """Every hit ranked, in the order search_messages promises (ties to the newest on PostgreSQL)."""
    with connection.cursor() as cur:
        if dbs.on_postgres():
            cur.execute(
                "SELECT id FROM knowledge_message_search, phraseto_tsquery('hermes', %s) q WHERE search_vector @@ q"
                " ORDER BY ts_rank(search_vector, q, 1) DESC, id DESC LIMIT %s",
                [word, n],
            )
        else:
            cur.execute(
                f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s ORDER BY bm25({FTS_TABLE}) LIMIT %s",
                [f'"{word}"', n],
            )
        return [r[0] for r in cur.fetchall()]


def _page(word: str, limit: int = 50, offset: int = 0) -> list[int]:
    return [h.message_id for h in search_messages(word, limit=limit, offset=offset).results]


def _listed(token: str) -> tuple[int, list[int]] | None:
    with connection.cursor() as cur:
        if dbs.on_postgres():
            cur.execute(f"SELECT upto, ids FROM {search_top_pg.TOP_TABLE} WHERE token = %s", [token])
            row = cur.fetchone()
            return (row[0], list(row[1])) if row else None
        cur.execute(f"SELECT upto, ids FROM {search_top_fts.TOP_TABLE} WHERE token = %s", [token])
        row = cur.fetchone()
    return (row[0], json.loads(row[1])) if row else None


def test_a_common_word_gets_a_list_and_pages_stay_exact(many_hits: None) -> None:
    s = ChatSession.objects.create(title="t")
    strong = Message.objects.create(session=s, role="user", content="kafka kafka kafka broker").pk
    weak = _weak_hits(s, "kafka", 40)
    assert _page("kafka") == [strong, *weak] == _exact("kafka")
    upto, ids = _listed("kafka") or (0, [])
    assert ids == [strong, *weak] and upto == weak[-1]
    pages = [_page("kafka", limit=7, offset=o) for o in range(0, 41, 7)]
    assert sum(pages, []) == [strong, *weak]
    first = search_messages("kafka", limit=3).results[0]
    assert first.snippet.count(f"{HIGHLIGHT_START}kafka{HIGHLIGHT_END}") == 3


def test_new_messages_rank_among_the_listed_ones(many_hits: None) -> None:
    s = ChatSession.objects.create(title="t")
    weak = _weak_hits(s, "kafka", 20)
    _page("kafka")  # makes the list
    best = Message.objects.create(session=s, role="user", content="kafka kafka kafka kafka").pk
    middle = Message.objects.create(session=s, role="user", content=f"kafka {_FILLER} pad").pk
    assert _page("kafka") == _exact("kafka")
    assert _page("kafka")[0] == best and middle in _page("kafka")
    assert _listed("kafka") == (weak[-1], weak)  # the newer hits were ranked beside the list, not added to it


def test_deleted_messages_leave_the_page_and_the_list_is_remade(many_hits: None) -> None:
    s = ChatSession.objects.create(title="t")
    weak = _weak_hits(s, "kafka", 40)
    _page("kafka")
    Message.objects.filter(pk__in=weak[:2]).delete()
    assert _page("kafka", limit=20) == weak[2:22] == _exact("kafka")[:20]
    assert _listed("kafka") == (weak[-1], weak)  # enough entries left for the page: kept
    Message.objects.filter(pk__in=weak[2:30]).delete()
    assert _page("kafka", limit=20) == weak[30:] == _exact("kafka")
    assert _listed("kafka") == (weak[-1], weak[30:])  # too few of its entries left: ranked again


def test_too_many_newer_hits_remake_the_list(many_hits: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_top, "TAIL_MAX", 3)
    s = ChatSession.objects.create(title="t")
    _weak_hits(s, "kafka", 10)
    _page("kafka")
    newer = _weak_hits(s, "kafka", 5)
    assert _page("kafka") == _exact("kafka")
    upto, ids = _listed("kafka") or (0, [])
    assert upto == newer[-1] and set(newer) <= set(ids)


def test_pages_beyond_the_list_are_ranked_over_every_hit(many_hits: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_top, "TOP_SIZE", 10)
    s = ChatSession.objects.create(title="t")
    weak = _weak_hits(s, "kafka", 30)
    assert _page("kafka", limit=5, offset=20) == weak[20:25]
    assert _page("kafka", limit=5, offset=5) == weak[5:10]
    assert len(_listed("kafka")[1]) == 10  # type: ignore[index]


def test_words_with_the_same_token_share_a_list_and_phrases_do_not_use_one(many_hits: None) -> None:
    s = ChatSession.objects.create(title="t")
    _weak_hits(s, "connections", 10)
    assert _page("Connecting") == _exact("connect")
    assert _listed("connect") is not None and _page("connected") == _exact("connect")
    phrase = Message.objects.create(session=s, role="user", content="connect the service now").pk
    assert _page('"connect the"') == [phrase]
    with connection.cursor() as cur:
        token = search.backend().top.token
        assert token(cur, "as") == "as"  # the database's stemmer keeps short words (a Python porter says "a")
        assert token(cur, "technology") == "technolog"
        assert token(cur, "docker-compose") is None  # several tokens: a phrase, ranked exactly
        assert token(cur, "kafka kafka") is None


@pytest.mark.skipif(dbs.on_postgres(), reason="FTS5's tokenizer")
def test_the_tokenizer_is_the_word_index_one() -> None:
    with connection.cursor() as cur:
        cur.execute("SELECT sql FROM sqlite_master WHERE name = %s", [FTS_TABLE])
        assert f"tokenize='{search_top_fts.TOKENIZE}'" in cur.fetchone()[0]


@pytest.mark.skipif(not dbs.on_postgres(), reason="PostgreSQL's index")
def test_the_token_is_the_lexeme_the_index_stores() -> None:
    m = Message.objects.create(session=ChatSession.objects.create(), role="user", content="Connections Élan")
    with connection.cursor() as cur:
        cur.execute("SELECT tsvector_to_array(search_vector) FROM knowledge_message_search WHERE id = %s", [m.pk])
        stored = set(cur.fetchone()[0])
        assert {search_top_pg.token(cur, "connecting"), search_top_pg.token(cur, "elan")} == stored


@pytest.mark.skipif(not dbs.on_postgres(), reason="PostgreSQL counts through the list (FTS5 counts from its index)")
def test_the_count_stays_exact_when_a_listed_word_loses_messages(many_hits: None) -> None:
    s = ChatSession.objects.create(title="t")
    weak = _weak_hits(s, "connections", 8)
    page = search_messages("connecting")  # makes the list, which knows the word had 8 hits
    assert (page.total_display, _listed("connect")) == ("5+", (weak[-1], weak))
    with connection.cursor() as cur:
        assert search_top_pg.hits_at_least(cur, "Connected") == 8  # any word with the same lexeme
    Message.objects.filter(pk__in=weak[:2]).delete()
    assert search_messages("connecting").total_display == "5+"  # 6 left
    Message.objects.filter(pk=weak[2]).delete()
    page = search_messages("connecting")
    assert (page.total_display, [h.message_id for h in page.results]) == ("5", weak[3:])
    Message.objects.filter(session=s).update(content="something else")  # edits may take the word away too
    assert search_messages("connecting").total_display == "0"


def test_rebuilding_the_index_lists_every_word_past_the_count_cap(many_hits: None) -> None:
    s = ChatSession.objects.create(title="t")
    weak = _weak_hits(s, "kafka", 8)
    Message.objects.create(session=s, role="user", content="rare words only")
    for _ in range(6):  # one token of the word index, but searched through the substring index
        Message.objects.create(session=s, role="user", content="配置文件")
    out = io.StringIO()
    call_command("rebuild_search_index", stdout=out)
    assert "top lists for" in out.getvalue()
    assert _listed("kafka") == (weak[-1] + 7, weak)  # upto: the newest message when the list was made
    assert _listed("rare") is None and _listed("配置文件") is None
    assert _listed("word1") is not None  # every filler word is in more than 5 messages
    assert _page("kafka") == weak


def test_filtered_searches_and_sessions_rank_through_the_list(many_hits: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_top, "TOP_SIZE", 32)  # filters read its best 12 (32 - SLACK)
    one, two, three = (
        ChatSession.objects.create(title=t, source=src) for t, src in (("1", "web"), ("2", "web"), ("3", "cli"))
    )
    strong = Message.objects.create(session=one, role="assistant", content="kafka kafka kafka broker").pk
    weak = [
        Message.objects.create(session=(two, three)[i % 2], role="user", content=f"kafka {_FILLER} {'pad ' * i}").pk
        for i in range(40)
    ]
    tool = Message.objects.create(session=one, role="tool", content=f"kafka {_FILLER} {'pad ' * 40}").pk
    assert _page("kafka", limit=10) == [strong, *weak[:9]]
    assert _page("kafka", limit=50) == [strong, *weak, tool] == _exact("kafka")
    assert _listed("kafka") == (tool, [strong, *weak[:31]])
    user = [h.message_id for h in search_messages("kafka", roles=["user"], limit=5).results]
    cli = [h.message_id for h in search_messages("kafka", sources=["cli"], limit=4).results]
    assert user == weak[:5] and cli == weak[1:9:2]
    # Beyond the list: ranked over every hit.
    assert [h.message_id for h in search_messages("kafka", roles=["tool"]).results] == [tool]
    assert [(h.session_id, h.message_id) for h in search_sessions("kafka", limit=3)] == [
        (one.id, strong),
        (two.id, weak[0]),
        (three.id, weak[1]),
    ]
    assert [h.message_id for h in search_sessions("kafka", limit=2, exclude_session_id=one.id)] == weak[:2]
    assert [h.message_id for h in search_sessions("kafka", limit=3, exclude_session_id=two.id)] == [strong, weak[1]]
    assert [h.message_id for h in search_sessions("kafka", roles=["tool"])] == [tool]
