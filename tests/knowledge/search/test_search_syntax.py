"""Search syntax as Hermes' users and models type it, with the same results on both databases:
`A OR B` finds either (in Latin and Chinese text), and `%` in Chinese text is matched literally."""

from __future__ import annotations

import pytest

from knowledge.models import ChatSession, Message
from knowledge.search import matching_ids_sql, search_messages, search_sessions

pytestmark = pytest.mark.django_db


def _msg(session: ChatSession, content: str) -> Message:
    return Message.objects.create(session=session, role="user", content=content)


def _ids(query: str) -> set[int]:
    return {hit.message_id for hit in search_messages(query).results}


def test_or_finds_either_word() -> None:
    s = ChatSession.objects.create()
    kafka, rabbit = _msg(s, "kafka consumer lag"), _msg(s, "rabbitmq queue depth")
    _msg(s, "nothing relevant here")
    assert _ids("kafka OR rabbitmq") == {kafka.id, rabbit.id}
    assert search_messages("kafka OR rabbitmq").total == 2
    assert _ids("kafka lag OR rabbitmq missing") == {kafka.id}  # each side's words all match
    assert _ids("kafka or rabbitmq") == set()  # lower-case "or" is a word, as in FTS5
    assert {h.message_id for h in search_sessions("kafka OR rabbitmq", limit=5)} <= {kafka.id, rabbit.id}


def test_or_finds_either_chinese_word() -> None:
    s = ChatSession.objects.create()
    deploy, income = _msg(s, "服务器部署失败了"), _msg(s, "今年的收入增长了")
    _msg(s, "完全无关的句子")
    assert _ids("部署失败 OR 收入增长") == {deploy.id, income.id}  # trigram-long terms
    assert _ids("部署 OR 收入") == {deploy.id, income.id}  # two-character terms: the substring scan
    assert _ids("部署 OR 天气") == {deploy.id}


def test_or_in_the_admins_message_filter() -> None:
    s = ChatSession.objects.create()
    a, b = _msg(s, "alpha release"), _msg(s, "beta release")
    sql, params = matching_ids_sql("alpha OR beta") or ("", [])
    assert set(Message.objects.extra(where=[f"id IN ({sql})"], params=params).values_list("id", flat=True)) == {
        a.id,
        b.id,
    }


def test_percent_in_chinese_text_is_matched_literally() -> None:
    s = ChatSession.objects.create()
    exact = _msg(s, "收入增长100%的目标")
    _msg(s, "收入增长100的目标")
    assert _ids("100%的") == {exact.id}
    assert _ids("增长100%的目标") == {exact.id}


def test_a_trailing_star_is_a_prefix_search() -> None:
    s = ChatSession.objects.create()
    deployment, deploying = _msg(s, "the deployment failed"), _msg(s, "Deploying again (redeploy later)")
    redeploy, deplore = _msg(s, "a redeploy only"), _msg(s, "I deplore this")
    debian, debug = _msg(s, "Debian bookworm"), _msg(s, "debugging the build")
    assert _ids("deploy*") == {deployment.id, deploying.id}  # not "redeploy", nor "deplore"
    assert deploying.id in _ids("deploy")  # the word itself, stemmed, as before
    assert _ids("Deb*") == {debian.id, debug.id}
    assert _ids("deb* bookworm") == {debian.id}
    # With OR the prefix is the index's own, asked one letter shorter: "deplore" may come too.
    assert {deployment.id, deploying.id, debian.id} <= _ids("deploy* OR debian") <= {
        deployment.id, deploying.id, debian.id, deplore.id,
    }  # fmt: skip
    assert redeploy.id not in _ids("deploy*")
    hit = search_messages("deploy*").results[0]
    assert "\x02" in hit.snippet  # the matched word is highlighted


def test_a_prefix_is_searched_in_tool_calls_too() -> None:
    s = ChatSession.objects.create()
    call = Message.objects.create(
        session=s, role="assistant", content="",
        tool_calls=[{"id": "c", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "kubectl rollout"}'}}],
    )  # fmt: skip
    assert _ids("kubect*") == {call.id}
    assert _ids("rollo*") == {call.id}


def test_a_session_whose_title_alone_matches_is_found() -> None:
    titled = ChatSession.objects.create(title="fingerprint-login")
    _msg(titled, "how do I make the sensor work")
    other = ChatSession.objects.create(title="lunch")
    said = _msg(other, "the fingerprint reader is broken")
    page = search_messages("fingerprint login")
    assert page.results == [] and [t.session_id for t in page.titles] == [titled.id]
    hits = search_sessions("fingerprint-login")
    assert [(h.session_id, h.matched, h.message_id) for h in hits] == [(titled.id, "title", 0)]
    assert hits[0].context[0].content == "how do I make the sensor work"  # the session's first messages
    # Title first, then the sessions ranked by their messages.
    assert [(h.session_id, h.matched) for h in search_sessions("fingerprint")] == [
        (titled.id, "title"),
        (other.id, "message"),
    ]
    assert search_sessions("fingerprint")[1].message_id == said.id


@pytest.mark.parametrize(
    "quoted", ['"fingerprint-login"', "'fingerprint-login'", "“fingerprint login”", '`"fingerprint"`']
)
def test_model_style_quotes_around_a_title_are_stripped(quoted: str) -> None:
    titled = ChatSession.objects.create(title="Fingerprint-Login")
    assert [h.session_id for h in search_sessions(quoted)] == [titled.id]
    assert [t.session_id for t in search_messages(quoted).titles] == [titled.id]


def test_titles_follow_or_and_the_filters() -> None:
    a = ChatSession.objects.create(title="kafka tuning", source="cli")
    b = ChatSession.objects.create(title="部署问题", source="web")
    assert {t.session_id for t in search_messages("kafka OR 部署").titles} == {a.id, b.id}
    assert [t.session_id for t in search_messages("kafka OR 部署", sources=["web"]).titles] == [b.id]
    assert search_messages("kafka", roles=["user"]).titles == []  # a title has no role
    assert search_sessions("kafka", exclude_session_id=a.id) == []


def test_exclusions_in_english_and_chinese() -> None:
    s = ChatSession.objects.create()
    plain, compose = _msg(s, "deploy to the cluster"), _msg(s, "deploy with docker compose")
    zh_ok, zh_failed = _msg(s, "服务器部署完成"), _msg(s, "服务器部署失败了")
    tool = Message.objects.create(
        session=s, role="assistant", content="deploy it",
        tool_calls=[{"id": "c", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "docker ps"}'}}],
    )  # fmt: skip
    assert _ids("deploy -docker") == {plain.id}  # also left out: "docker" in a tool call's arguments
    assert _ids("deploy NOT docker") == {plain.id}
    assert _ids('deploy -"docker compose"') == {plain.id, tool.id}  # a phrase left out
    assert _ids("deploy -dock*") == {plain.id}  # a prefix left out
    assert _ids("服务器部署 -失败") == {zh_ok.id}  # trigram-long terms
    assert _ids("部署 -失败") == {zh_ok.id}  # two-character terms: the substring scan
    assert _ids("部署 -失败 OR cluster") == {zh_ok.id, plain.id}
    assert search_messages("deploy -docker").total == 1
    sql, params = matching_ids_sql("deploy -docker") or ("", [])
    assert set(Message.objects.extra(where=[f"id IN ({sql})"], params=params).values_list("id", flat=True)) == {
        plain.id
    }
    assert zh_failed.id not in _ids("服务器 -失败") and compose.id not in _ids("deploy -compose")
