"""Private chats are never found (knowledge/private_chats.py): not their messages, not their titles,
not in the recent sessions — by any kind of query, on both databases (the suite runs on SQLite and
on PostgreSQL). Switched back, a chat is found again."""

from __future__ import annotations

import pytest

from knowledge import private_chats
from knowledge.models import ChatSession, Message
from knowledge.search import SORTS, recent_sessions, search_messages, search_sessions
from knowledge.search import results as search_results
from knowledge.search.filters import Filters, filter_sql

pytestmark = pytest.mark.django_db


def _chat(title: str, *lines: str, private: bool = False) -> ChatSession:
    session = ChatSession.objects.create(title=title, private=private)
    for line in lines:
        Message.objects.create(session=session, role="user", content=line)
    return session


@pytest.fixture
def chats() -> dict[str, ChatSession]:
    return {
        "open": _chat("Axolotl tank", "my axolotl tank needs a chiller", "水族箱 温度"),
        "private": _chat("Axolotl secrets", "the axolotl diagnosis I keep to myself", "水族箱 秘密", private=True),
    }


QUERIES = ["axolotl", "axolotl*", '"axolotl diagnosis"', "axolotl -chiller", "axolotl OR 水族箱", "水族箱", "水"]


@pytest.mark.parametrize("query", QUERIES)
def test_no_query_finds_a_private_chat(chats: dict[str, ChatSession], query: str) -> None:
    private = chats["private"].id
    page = search_messages(query, limit=50)
    assert private not in {hit.session_id for hit in page.results}
    assert private not in {t.session_id for t in page.titles}
    for sort in SORTS:
        assert private not in {hit.session_id for hit in search_sessions(query, limit=10, sort=sort)}


def test_the_count_leaves_the_private_chat_out(chats: dict[str, ChatSession]) -> None:
    assert search_messages("axolotl").total == 1
    assert search_messages("diagnosis").results == [] and search_messages("diagnosis").total == 0


def test_its_title_alone_finds_nothing(chats: dict[str, ChatSession]) -> None:
    assert search_messages("secrets").titles == []
    assert search_sessions("secrets") == []


def test_it_is_not_listed_among_the_recent_sessions(chats: dict[str, ChatSession]) -> None:
    assert [s.session_id for s in recent_sessions(limit=10)] == [chats["open"].id]


def test_a_common_word_ranked_through_its_top_list_leaves_it_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_results, "COUNT_CAP", 3)  # a dozen hits count as many: the word's top list
    open_chat = _chat("Open", *[f"quokka sighting number {i}" for i in range(6)])
    private = _chat("Hidden", *[f"quokka quokka sighting {i}" for i in range(6)], private=True)
    page = search_messages("quokka", limit=20)
    assert {hit.session_id for hit in page.results} == {open_chat.id} and len(page.results) == 6
    assert [hit.session_id for hit in search_sessions("quokka", limit=5)] == [open_chat.id]
    assert private.id not in {hit.session_id for hit in search_messages("quokka", limit=3, offset=3).results}


def test_switched_back_it_is_found_again(chats: dict[str, ChatSession]) -> None:
    private_chats.set_private(chats["private"].id, False)
    assert chats["private"].id in {hit.session_id for hit in search_sessions("diagnosis")}
    assert search_messages("secrets").titles[0].session_id == chats["private"].id


def test_without_a_private_chat_the_search_has_no_filter() -> None:
    # A home without private chats keeps the unfiltered plans (the fast ones for common words).
    assert filter_sql(Filters()) == ([], [])
    where, params = filter_sql(Filters(without_private=True))
    assert where == ["m.session_id NOT IN (SELECT id FROM knowledge_chatsession WHERE private)"] and params == []
