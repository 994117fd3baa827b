"""The history search page: results, highlighting, filters, counts, pagination, hostile input."""

from __future__ import annotations

import re
from datetime import timedelta
from html import escape

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from knowledge import versions
from knowledge.models import ChatSession, Message
from knowledge.search import results as search_results

pytestmark = pytest.mark.django_db

HOSTILE_QUERIES = [
    '"', '"unbalanced', "a AND OR NOT", "NEAR(a b, 3)", "col:value", "*", "^start", "foo*", "(((", ")",
    "'; DROP TABLE knowledge_message; --", "\x00nul", "-", "--", "a-b.c/d", "🙂" * 50, "x" * 5000,
    "<script>alert(1)</script>", "{}[]", "%", "docker-compose", "嗯",
]  # fmt: skip
HOSTILE_CONTENT = '<script>alert("x")</script> <img src=x onerror=alert(2)> [x](javascript:alert(3)) zebrafish'


def _session(title: str = "", source: str = "web") -> ChatSession:
    return ChatSession.objects.create(title=title, source=source)


def _msg(session: ChatSession, content: str, role: str = "user") -> Message:
    return Message.objects.create(session=session, role=role, content=content)


def test_search_finds_word_and_highlights_it(auth_client) -> None:
    s = _session("Deploy notes")
    m = _msg(s, "we fixed the flaky kubernetes probe yesterday")
    resp = auth_client.get("/search/", {"q": "kubernetes"})
    assert resp.status_code == 200
    body = resp.content.decode()
    assert "<mark>kubernetes</mark>" in body
    assert f'href="/c/{s.pk}/?m={m.pk}#m{m.pk}"' in body
    assert "Deploy notes" in body
    assert 'id="search-count"' in body and "<strong>1</strong> matching message" in body


def test_htmx_request_returns_only_results(auth_client) -> None:
    _msg(_session("t"), "pelican migration")
    resp = auth_client.get("/search/", {"q": "pelican"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="search-results")
    body = resp.content.decode()
    assert "<mark>pelican</mark>" in body
    assert "<html" not in body and 'name="q"' not in body


def test_empty_query_shows_recent_sessions(auth_client) -> None:
    _msg(_session("Yesterday's chat"), "hello there")
    body = auth_client.get("/search/").content.decode()
    assert "Recent sessions" in body and "Yesterday&#x27;s chat" in body


def test_role_source_and_date_filters(auth_client) -> None:
    web, cli = _session("web one", "web"), _session("cli one", "cli")
    u = _msg(web, "walrus from the user")
    a = _msg(web, "walrus from the assistant", role="assistant")
    c = _msg(cli, "walrus in the terminal")
    old = _msg(cli, "walrus long ago")
    Message.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=40))

    def ids(**params: object) -> set[int]:
        ctx = auth_client.get("/search/", {"q": "walrus", **params}).context
        return {h.message_id for h in ctx["result"].results}

    assert ids() == {u.pk, a.pk, c.pk, old.pk}
    assert ids(role="assistant") == {a.pk}
    assert ids(role=["user", "assistant"]) == {u.pk, a.pk, c.pk, old.pk}
    assert ids(source="cli") == {c.pk, old.pk}
    recent = (timezone.localdate() - timedelta(days=7)).isoformat()
    assert ids(**{"from": recent}) == {u.pk, a.pk, c.pk}
    assert ids(to=recent) == {old.pk}
    # Nonsense filter values are ignored, never an error.
    assert ids(role="bogus", source="nope", **{"from": "yesterday", "to": "2024-13-45"}) == {u.pk, a.pk, c.pk, old.pk}


def test_pagination_and_counts(auth_client) -> None:
    s = _session("many")
    for i in range(45):
        _msg(s, f"narwhal number {i}")
    first = auth_client.get("/search/", {"q": "narwhal"})
    assert first.context["result"].total == 45 and len(first.context["result"].results) == 20
    body = first.content.decode()
    assert "<strong>45</strong> matching messages" in body and "page 1 of 3" in body
    assert 'rel="next"' in body and 'rel="prev"' not in body
    third = auth_client.get("/search/", {"q": "narwhal", "page": "3"})
    assert len(third.context["result"].results) == 5
    assert 'rel="next"' not in third.content.decode()
    seen = set()
    for page in ("1", "2", "3"):
        seen |= {
            h.message_id for h in auth_client.get("/search/", {"q": "narwhal", "page": page}).context["result"].results
        }
    assert len(seen) == 45
    assert auth_client.get("/search/", {"q": "narwhal", "page": "abc"}).context["f"]["page"] == 1


def test_count_shows_plus_when_capped(auth_client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_results, "COUNT_CAP", 5)
    s = _session("cap")
    for i in range(8):
        _msg(s, f"capybara {i}")
    body = auth_client.get("/search/", {"q": "capybara"}).content.decode()
    assert "<strong>5+</strong> matching messages" in body


@pytest.mark.parametrize("query", HOSTILE_QUERIES)
def test_hostile_query_never_errors(auth_client, query: str) -> None:
    _msg(_session("t"), "docker-compose up and a-b.c/d")
    resp = auth_client.get("/search/", {"q": query, "page": "2", "from": query, "role": query})
    assert resp.status_code == 200
    resp = auth_client.get("/search/", {"q": query}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="search-results")
    assert resp.status_code == 200
    assert "<script>alert" not in resp.content.decode()


def test_invalid_utf8_in_url_never_errors(auth_client) -> None:
    for raw in ("q=%ED%A0%80", "q=%FF%FE%00", "q=%22&from=%00&page=-1", "q=a&page=99999999999999999999"):
        assert auth_client.get(f"/search/?{raw}").status_code == 200


def test_hostile_content_renders_inert(auth_client) -> None:
    s = _session('<script>alert("title")</script><img src=x onerror=alert(1)>')
    _msg(s, HOSTILE_CONTENT)
    for params in ({"q": "zebrafish"}, {}):
        body = auth_client.get("/search/", params).content.decode()
        assert "<script>alert" not in body
        assert "<img" not in body and not re.search(r"<[^>]*onerror", body)
        assert 'href="javascript:' not in body
        assert "&lt;script&gt;" in body


def test_search_requires_login(client, db) -> None:
    resp = client.get("/search/", {"q": "x"})
    assert resp.status_code == 302 and resp["Location"].startswith("/login")


@pytest.mark.parametrize(
    ("query", "hint"),
    [
        ("Deb*", "word* finds words that start with it"),
        ("nginx -apache", "-word leaves out messages with that word"),
        ("kafka AND zookeeper", "AND adds nothing"),
        ("zzqx", 'a "quoted phrase"'),
    ],
)
def test_a_query_that_finds_nothing_gets_a_syntax_hint(auth_client, query: str, hint: str) -> None:
    html = auth_client.get("/search/", {"q": query}).content.decode()
    assert "No messages match" in html and 'id="search-hint"' in html and escape(hint) in html


@pytest.mark.parametrize("query", ["-nginx", "NOT nginx", "-部署", "kafka OR -nginx"])
def test_a_query_of_exclusions_alone_says_why_it_lists_nothing(auth_client, query: str) -> None:
    Message.objects.create(session=ChatSession.objects.create(), role="user", content="kafka broker")
    html = auth_client.get("/search/", {"q": query}).content.decode()
    assert 'id="search-hint"' in html and "only leaves words out" in html and "add a word to find" in html
    assert "search-hit" not in html and "matching message" not in html


def test_an_exclusion_leaves_messages_out(auth_client) -> None:
    session = ChatSession.objects.create()
    Message.objects.create(session=session, role="user", content="kafka broker")
    Message.objects.create(session=session, role="user", content="kafka with zookeeper")
    Message.objects.create(session=session, role="user", content="部署 kafka 失败")
    html = auth_client.get("/search/", {"q": "kafka -zookeeper -失败"}).content.decode()
    assert (
        "1</strong> matching message" in html and "broker" in html and "zookeeper" not in html.split("search-count")[1]
    )


def test_a_query_that_finds_something_gets_no_hint(auth_client) -> None:
    Message.objects.create(session=ChatSession.objects.create(), role="user", content="kafka broker")
    html = auth_client.get("/search/", {"q": "kafka OR zookeeper"}).content.decode()
    assert "1</strong> matching message" in html and "search-hint" not in html


def test_a_session_whose_title_alone_matches_is_listed_without_a_hint(auth_client) -> None:
    titled = ChatSession.objects.create(title="fingerprint-login")
    html = auth_client.get("/search/", {"q": "fingerprint"}).content.decode()
    assert "No messages match" in html and 'id="search-titles"' in html and "search-hint" not in html
    assert f'href="{reverse("chat", args=[titled.id])}"' in html and "fingerprint-login" in html


def test_a_hit_in_another_version_than_the_chat_shows_says_so(auth_client) -> None:
    """An edited question leaves the first wording in another version; a chat without versions
    and the version shown carry no such badge."""
    edited = _session("Edited chat")
    first = Message.objects.create(session=edited, role="user", content="quokka first wording")
    Message.objects.create(session=edited, role="assistant", content="an answer", parent=first)
    shown = Message(session=edited, role="user", content="quokka second wording")
    shown.starts_chat = True  # the edit of a chat's first message has no parent either
    shown.save()
    plain = _session("Plain chat")
    kept = Message.objects.create(session=plain, role="user", content="quokka plain question")
    Message.objects.create(session=plain, role="assistant", content="quokka plain answer", parent=kept)
    body = auth_client.get("/search/", {"q": "quokka"}).content.decode()
    hits = {int(pk): "another version" in li for pk, li in re.findall(r'#m(\d+)">(.*?)</li>', body, re.S)}
    assert hits[first.pk] is True
    assert hits[shown.pk] is False and hits[kept.pk] is False


def _regenerated_chat(word: str) -> tuple[Message, Message]:
    """A chat whose answer was written twice: (first answer, second answer)."""
    chat = _session(f"Regenerated {word}")
    question = Message.objects.create(session=chat, role="user", content=f"{word} question")
    first = Message.objects.create(session=chat, role="assistant", content=f"{word} first answer", parent=question)
    second = Message.objects.create(session=chat, role="assistant", content=f"{word} second answer", parent=question)
    return first, second


def test_a_version_chosen_by_hand_is_the_one_shown(auth_client) -> None:
    first, second = _regenerated_chat("wombat")
    versions.choose(first.session, first.pk)
    body = auth_client.get("/search/", {"q": "wombat"}).content.decode()
    hits = {int(pk): "another version" in li for pk, li in re.findall(r'#m(\d+)">(.*?)</li>', body, re.S)}
    assert hits == {first.pk: False, second.pk: True, first.parent_id: False}


def test_hits_in_many_chats_with_versions_cost_no_more_queries_than_in_one(auth_client) -> None:
    """Which hits lie in another version is found for the whole page at once, not chat by chat."""

    def queries(word: str, chats: int) -> int:
        for _ in range(chats):
            _regenerated_chat(word)
        with CaptureQueriesContext(connection) as seen:
            body = auth_client.get("/search/", {"q": word}).content.decode()
        assert body.count("another version</span>") == chats
        return len(seen.captured_queries)

    assert queries("capybara", 1) == queries("platypus", 6)  # 18 hits: one page
