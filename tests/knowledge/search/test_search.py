"""Full-text search over stored messages: ranking, snippets, filters, CJK, index consistency."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledge.models import ChatSession, Message
from knowledge.search import recent_sessions, search_messages, search_sessions
from knowledge.search import results as search_results
from knowledge.search.results import COUNT_CAP
from knowledge.search.snippets import HIGHLIGHT_END, HIGHLIGHT_START, snippet_segments

pytestmark = pytest.mark.django_db


def _session(title: str = "", source: str = "web", **kw: object) -> ChatSession:
    return ChatSession.objects.create(title=title, source=source, **kw)


def _msg(session: ChatSession, content: str, role: str = "user", **kw: object) -> Message:
    return Message.objects.create(session=session, role=role, content=content, **kw)


def _ids(page_results: list) -> list[int]:
    return [r.message_id for r in page_results]


def _integrity_check() -> None:
    """The index agrees with the messages (FTS5's own check; on PostgreSQL: every row indexed)."""
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute(
                "SELECT count(*) FROM knowledge_message m LEFT JOIN knowledge_message_search i ON i.id = m.id"
                " WHERE i.id IS NULL OR m.search_text IS NULL OR i.session_id <> m.session_id"
            )
            assert cur.fetchone()[0] == 0
            cur.execute(
                "SELECT count(*) FROM knowledge_message_search WHERE id NOT IN (SELECT id FROM knowledge_message)"
            )
            assert cur.fetchone()[0] == 0
            return
        cur.execute("INSERT INTO knowledge_message_fts(knowledge_message_fts, rank) VALUES('integrity-check', 1)")
        cur.execute(
            "INSERT INTO knowledge_message_trigram(knowledge_message_trigram, rank) VALUES('integrity-check', 1)"
        )


def _damage_index() -> None:
    """Empty the index and drop what keeps it current, as a bad restore or old migration would."""
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute("DROP TRIGGER knowledge_message_search ON knowledge_message")
            cur.execute("DROP TRIGGER knowledge_message_search_sync ON knowledge_message")
            cur.execute("UPDATE knowledge_message SET search_text = NULL")
            cur.execute("DELETE FROM knowledge_message_search")
            return
        cur.execute("INSERT INTO knowledge_message_fts(knowledge_message_fts) VALUES('delete-all')")
        cur.execute("DELETE FROM knowledge_message_trigram")
        cur.execute("DROP TRIGGER knowledge_message_search_ai")


def test_more_relevant_message_ranks_first() -> None:
    s = _session("docker notes")
    weak = _msg(s, "We talked about many things today, including a docker mention and lunch plans and the weather.")
    strong = _msg(s, "docker compose: docker networks, docker volumes and docker build caching")
    _msg(s, "nothing relevant here")
    page = search_messages("docker")
    assert _ids(page.results) == [strong.id, weak.id]
    assert page.total == 2 and not page.total_capped


def test_snippet_highlights_matched_words_without_html() -> None:
    s = _session("t")
    _msg(s, "Restart the <b>nginx</b> reverse proxy after editing the config")
    (hit,) = search_messages("nginx").results
    assert f"{HIGHLIGHT_START}nginx{HIGHLIGHT_END}" in hit.snippet
    segments = snippet_segments(hit.snippet)
    assert ("nginx", True) in segments
    # The raw text keeps its characters; escaping is the template's job, not ours.
    assert any("<b>" in text for text, marked in segments if not marked)


def test_stemmed_and_diacritic_insensitive_match() -> None:
    s = _session("t")
    m = _msg(s, "The café was running its deployments all night")
    assert _ids(search_messages("cafe deployment run").results) == [m.id]


def test_common_english_words_are_found_as_on_every_database() -> None:
    """No stop-word list: "other", "so" and "once" are words a person may look for."""
    s = _session("t")
    m = _msg(s, "once the other branch merged, so what?")
    _msg(s, "nothing in common here")
    for word in ("other", "so", "once", "what"):
        assert _ids(search_messages(word).results) == [m.id], word


def test_moving_a_message_moves_it_in_the_filters() -> None:
    first, second = _session("first"), _session("second")
    m = _msg(first, "a kubernetes rollout note")
    Message.objects.filter(id=m.id).update(session=second, role="assistant")
    assert _ids(search_messages("kubernetes", session_id=second.id, roles=["assistant"]).results) == [m.id]
    assert search_messages("kubernetes", session_id=first.id).results == []
    _integrity_check()


def test_phrase_and_hyphenated_terms() -> None:
    s = _session("t")
    yes = _msg(s, "use docker-compose up -d to start v1.2 of the stack")
    no = _msg(s, "compose a letter to docker workers about version 1 and 2")
    assert _ids(search_messages("docker-compose").results) == [yes.id]
    assert _ids(search_messages("v1.2").results) == [yes.id]
    assert _ids(search_messages('"start v1.2"').results) == [yes.id]
    assert set(_ids(search_messages("docker compose").results)) == {yes.id, no.id}


def test_tool_name_and_tool_call_arguments_are_searchable() -> None:
    s = _session("t")
    call = _msg(
        s,
        "",
        role="assistant",
        tool_calls=[
            {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": '{"cmd": "kubectl apply"}'}}
        ],
    )
    result = _msg(s, "deployment.apps/web configured", role="tool", tool_name="terminal")
    assert _ids(search_messages("kubectl").results) == [call.id]
    assert set(_ids(search_messages("terminal").results)) == {call.id, result.id}


def test_filters_by_role_source_and_date() -> None:
    web, cli = _session("w", source="web"), _session("c", source="cli")
    u = _msg(web, "postgres vacuum settings", role="user")
    a = _msg(web, "postgres vacuum answer", role="assistant")
    c = _msg(cli, "postgres from the terminal", role="user")
    old = _msg(cli, "postgres long ago", role="user")
    past = datetime(2020, 5, 1, 12, tzinfo=UTC)
    Message.objects.filter(id=old.id).update(created_at=past)

    assert set(_ids(search_messages("postgres", roles=["assistant"]).results)) == {a.id}
    assert set(_ids(search_messages("postgres", sources=["cli"]).results)) == {c.id, old.id}
    assert set(_ids(search_messages("postgres", date_to=date(2020, 5, 1)).results)) == {old.id}
    assert set(_ids(search_messages("postgres", date_from=past + timedelta(seconds=1)).results)) == {u.id, a.id, c.id}
    assert set(_ids(search_messages("postgres", date_from=date(2020, 5, 1), date_to=date(2020, 5, 1)).results)) == {
        old.id
    }


def test_current_session_is_excluded() -> None:
    here, other = _session("here"), _session("other")
    _msg(here, "terraform plan output")
    there = _msg(other, "terraform state lock")
    assert _ids(search_messages("terraform", exclude_session_id=here.id).results) == [there.id]
    assert [h.session_id for h in search_sessions("terraform", exclude_session_id=here.id)] == [other.id]


def test_results_carry_session_title_source_role_and_time() -> None:
    s = _session("Kafka tuning", source="cli")
    m = _msg(s, "kafka consumer lag", role="assistant")
    (hit,) = search_messages("kafka").results
    assert (hit.session_id, hit.session_title, hit.source, hit.role) == (s.id, "Kafka tuning", "cli", "assistant")
    assert hit.created_at == Message.objects.get(id=m.id).created_at


def test_paging_and_capped_count() -> None:
    s = _session("bulk")
    Message.objects.bulk_create([Message(session=s, role="user", content=f"widget number {i}") for i in range(1005)])
    page = search_messages("widget", limit=10, offset=20)
    assert len(page.results) == 10
    assert page.total == COUNT_CAP and page.total_capped and page.total_display == "1000+"


def test_chinese_and_japanese_text_found_by_substring() -> None:
    s = _session("cjk")
    zh = _msg(s, "我们今天用docker部署了新的服务器集群")
    ja = _msg(s, "東京の天気は晴れですが、明日は雨が降るでしょう")
    _msg(s, "plain english about servers")
    (hit,) = search_messages("服务器").results
    assert hit.message_id == zh.id and f"{HIGHLIGHT_START}服务器{HIGHLIGHT_END}" in hit.snippet
    assert _ids(search_messages("天気は").results) == [ja.id]
    assert _ids(search_messages("docker 部署").results) == [zh.id]  # mixed query
    # Two-character words are shorter than a trigram: found by the substring fallback.
    (short,) = search_messages("部署").results
    assert short.message_id == zh.id and f"{HIGHLIGHT_START}部署{HIGHLIGHT_END}" in short.snippet
    assert _ids(search_messages("明日").results) == [ja.id]
    assert [h.message_id for h in search_sessions("雨")] == [ja.id]


def test_edited_message_is_reindexed_and_deleted_message_disappears() -> None:
    s = _session("edits")
    m = _msg(s, "the old wording mentions ansible and 旧的配置文件")
    m.content = "rewritten to mention saltstack and 新的配置文件"
    m.save()
    assert search_messages("ansible").results == []
    assert search_messages("旧的配置").results == []
    assert _ids(search_messages("saltstack").results) == [m.id]
    assert _ids(search_messages("新的配置").results) == [m.id]
    m.token_count = 5  # a save that does not touch indexed columns leaves the index alone
    m.save()
    assert _ids(search_messages("saltstack").results) == [m.id]
    _integrity_check()

    m.delete()
    assert search_messages("saltstack").results == []
    assert search_messages("新的配置").results == []
    _integrity_check()


def test_deleting_a_session_removes_its_messages_from_both_indexes() -> None:
    s = _session("gone")
    _msg(s, "ephemeral zookeeper note 一次性的笔记")
    s.delete()
    assert search_messages("zookeeper").results == []
    assert search_messages("一次性").results == []
    _integrity_check()


def test_search_sessions_groups_best_match_with_context() -> None:
    a, b = _session("Alpha"), _session("Beta")
    before = [_msg(a, f"warmup line {i}") for i in range(3)]
    best = _msg(a, "grafana grafana dashboards for grafana alerts", role="assistant")
    after = [_msg(a, f"follow-up {i}") for i in range(3)]
    _msg(a, "grafana once more in a long sentence with many other words around it")
    other = _msg(b, "a single grafana mention inside a much longer message about other things entirely")
    hits = search_sessions("grafana", limit=5)
    assert [h.session_id for h in hits] == [a.id, b.id]
    top = hits[0]
    assert top.title == "Alpha" and top.message_id == best.id
    assert f"{HIGHLIGHT_START}grafana{HIGHLIGHT_END}" in top.snippet
    assert [c.message_id for c in top.context] == [before[1].id, before[2].id, best.id, after[0].id, after[1].id]
    assert [c.is_match for c in top.context] == [False, False, True, False, False]
    assert hits[1].message_id == other.id
    assert len(search_sessions("grafana", limit=1)) == 1


def test_recent_sessions_lists_active_sessions_newest_first() -> None:
    old, new, empty, current = _session("Old"), _session("New"), _session("Empty"), _session("Current")
    _msg(old, "first question")
    _msg(new, "newer question")
    _msg(new, "answer", role="assistant")
    _msg(current, "this chat")
    ChatSession.objects.filter(id=old.id).update(updated_at=datetime(2021, 1, 1, tzinfo=UTC))
    listed = recent_sessions(limit=10, exclude_session_id=current.id)
    assert [r.session_id for r in listed] == [new.id, old.id]
    assert listed[0].message_count == 2 and listed[0].preview == "newer question"
    assert empty.id not in {r.session_id for r in listed}


def test_rebuild_command_restores_a_damaged_index() -> None:
    s = _session("rebuild")
    m = _msg(s, "memcached eviction policy 缓存淘汰策略")
    _damage_index()
    assert search_messages("memcached").results == []
    call_command("rebuild_search_index", verbosity=0)
    assert _ids(search_messages("memcached").results) == [m.id]
    assert _ids(search_messages("淘汰策略").results) == [m.id]
    new = _msg(s, "memcached again")  # the dropped trigger is back
    assert new.id in _ids(search_messages("memcached").results)
    _integrity_check()


def test_query_with_nothing_searchable_returns_empty_page() -> None:
    page = search_messages('  " * ( ) ^ -- ')
    assert page.results == [] and page.total == 0 and not page.searchable
    assert search_sessions("***") == []


_QUERY_TEXT = st.one_of(
    st.text(max_size=80),
    st.lists(
        st.sampled_from(
            ['"', "AND", "OR", "NOT", "NEAR", "(", ")", "*", "^", ":", "-", "+", "{", "}", "docker", "部署"]
        ),
        max_size=12,
    ).map(" ".join),
    st.text(alphabet='"*^:()-+{}.ab部署 \x00\u200d\U0001f600', max_size=30),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_QUERY_TEXT)
def test_any_text_searches_without_error(text: str) -> None:
    if not ChatSession.objects.exists():
        s = _session("fuzz")
        _msg(s, 'docker "AND" NEAR(x y) 部署 v1.2 * ^ {col}: -minus +plus')
    page = search_messages(text, roles=["user"], sources=["web"], exclude_session_id="x")
    assert page.total >= len(page.results)
    search_sessions(text, limit=3)


def test_filters_stay_exact_when_there_are_many_hits(monkeypatch: pytest.MonkeyPatch) -> None:

    monkeypatch.setattr(search_results, "COUNT_CAP", 1)  # so even this small result counts as "many hits"
    here, other = _session("here"), _session("other")
    for _ in range(5):
        _msg(here, "rabbitmq rabbitmq rabbitmq queue", role="assistant")
    wanted = _msg(other, "a rabbitmq question among many other words in a long sentence", role="user")
    assert _ids(search_messages("rabbitmq", roles=["user"]).results) == [wanted.id]
    assert _ids(search_messages("rabbitmq", exclude_session_id=here.id).results) == [wanted.id]
    assert len(search_messages("rabbitmq", roles=["assistant"]).results) == 5
    assert search_messages("rabbitmq").results[-1].message_id == wanted.id  # the weakest hit ranks last
    assert [h.session_id for h in search_sessions("rabbitmq", limit=2)] == [here.id, other.id]
    assert [h.message_id for h in search_sessions("rabbitmq", roles=["user"])] == [wanted.id]


def test_ranking_is_exact_over_all_hits_not_just_the_newest(monkeypatch: pytest.MonkeyPatch) -> None:
    """An old strong match beats many newer weak ones, on every query path and every page."""

    old_session, new_session = _session("old"), _session("new")
    strong = _msg(old_session, "zookeeper zookeeper zookeeper ensemble")
    filler = " ".join(f"word{i}" for i in range(30))
    # Distinct lengths give distinct bm25 scores: shorter messages rank higher.
    weak = [_msg(new_session, f"zookeeper {filler} {'pad ' * i}") for i in range(40)]
    expected = [strong.id] + [m.id for m in weak]
    for cap in (1000, 5):  # streaming ORDER BY rank, then the top-N path for "many hits"
        monkeypatch.setattr(search_results, "COUNT_CAP", cap)
        assert _ids(search_messages("zookeeper", limit=50).results) == expected
        pages = [_ids(search_messages("zookeeper", limit=7, offset=o).results) for o in range(0, 41, 7)]
        assert sum(pages, []) == expected
        page = search_messages("zookeeper", limit=3)
        assert page.results[0].snippet.count(f"{HIGHLIGHT_START}zookeeper{HIGHLIGHT_END}") == 3
        assert all(HIGHLIGHT_START in hit.snippet for hit in page.results)
        assert [h.message_id for h in search_sessions("zookeeper", limit=2)] == [strong.id, weak[0].id]
        assert _ids(search_messages("zookeeper", roles=["user"], limit=50).results) == expected


@settings(max_examples=200, deadline=None)
@given(
    moment=st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)),
    zone=st.sampled_from(["UTC", "Asia/Kolkata", "America/St_Johns", "Pacific/Chatham"]),
)
def test_a_hits_time_is_written_as_the_date_filter_would(moment: datetime, zone: str) -> None:
    """The search page writes its times without Django's date filter (it costs more than the rest
    of a row), in the same words, in whatever time zone is current."""
    from django.template import Context, Template
    from django.utils import timezone

    written = Template("""{{ t|date:'c' }}|{{ t|date:"Y-m-d H:i" }}""")
    with timezone.override(zone):
        expected = written.render(Context({"t": moment}))
        assert f"{search_results.iso_time(moment)}|{search_results.shown_time(moment)}" == expected
    assert search_results.iso_time(None) == search_results.shown_time(None) == ""
    assert written.render(Context({"t": None})) == "|"
