"""The model's title: one plain completion over the opening exchange, plain words back; on the
"Suggest" button, and on its own after a chat's first exchange (chat.auto_title)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agent.chat import service as chat_service
from agent.chat import titles
from agent.chat.runner import AgentSession
from agent.llm import LLMError
from agent.loop import TurnError
from foundation import config as hermes_config
from knowledge.history.waiting import poll_until
from knowledge.models import ChatSession, Message
from tests.conftest import write_config
from tests.fakellm import Reply, ScriptedLLM

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_opening_exchange_goes_to_the_model_without_tools_and_markup_is_dropped(llm):
    session = chat_service.create_session()
    for role, content in [
        ("user", "how do I ship to staging?"),
        ("assistant", "Run the deploy script."),
        ("user", "later"),
    ]:
        Message.objects.create(session=session, role=role, content=content)
    llm.push(Reply(text="'**Shipping** to `staging`.'"))
    assert titles.suggest_title(session) == "Shipping to staging"
    sent = llm.requests[-1]
    assert "tools" not in sent and not sent.get("stream")
    assert sent["messages"][1]["content"].startswith("user: how do I ship to staging?\n\nassistant: Run the deploy")


def test_no_messages_or_an_empty_answer_is_said_plainly(llm):
    session = chat_service.create_session()
    with pytest.raises(titles.NothingToTitle, match="send a message first"):
        titles.suggest_title(session)
    Message.objects.create(session=session, role="user", content="hello")
    llm.push(Reply(text="  "))
    with pytest.raises(titles.NothingToTitle, match="type one instead"):
        titles.suggest_title(session)
    llm.default = lambda body: Reply(status=400, error_message="bad model")
    with pytest.raises(LLMError):
        titles.suggest_title(session)


def test_a_title_answered_as_server_sent_events_or_an_html_page(llm):
    # Some servers answer a plain request with an SSE stream (KAITO), some proxies with a sign-in page.
    from tests.fakellm import Raw
    from tests.wire import chunk, sse

    session = chat_service.create_session()
    Message.objects.create(session=session, role="user", content="how do I ship to staging?")
    llm.push(
        Reply(raw=sse(chunk({"role": "assistant", "content": "Shipping "}), chunk({"content": "to staging"}, "stop")))
    )
    assert titles.suggest_title(session) == "Shipping to staging"
    llm.push(Reply(raw=Raw(body="<html><title>Sign in</title></html>", headers={"Content-Type": "text/html"})))
    with pytest.raises(LLMError, match="HTML page"):
        titles.suggest_title(session)


# -- the automatic title after a chat's first exchange (chat.auto_title) --------------------------

AUTO_TITLE = "model:\n  max_retries: 0\nchat:\n  auto_title: true\n"


def is_title_request(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or [{}]
    return messages[0].get("content") == titles.TITLE_PROMPT


def _title_requests(llm: ScriptedLLM) -> list[dict[str, Any]]:
    return [body for body in llm.chat_requests() if is_title_request(body)]


def _turn(agent: AgentSession, text: str) -> None:
    events = list(agent.run_turn(text))
    assert not any(isinstance(e, TurnError) for e in events), events


def _stored(session_id: str) -> tuple[str, str]:
    session = ChatSession.objects.get(pk=session_id)
    return session.title, session.title_source


def _settled(predicate: Callable[[], bool]) -> None:
    assert poll_until(predicate, 30), "the title job did not finish"


def test_the_model_titles_a_chat_after_its_first_exchange_and_never_again(llm, home):
    write_config(home, AUTO_TITLE)
    llm.when(is_title_request, Reply(text="Shipping to staging"))
    agent = AgentSession.open(source="web")
    _turn(agent, "how do I **ship** to `staging`?")
    _settled(lambda: _stored(agent.session.pk) == ("Shipping to staging", "model"))
    sent = _title_requests(llm)
    assert len(sent) == 1 and "tools" not in sent[0] and not sent[0].get("stream")
    assert sent[0]["messages"][1]["content"] == "user: how do I **ship** to `staging`?\n\nassistant: ok"

    _turn(agent, "and to production?")
    _turn(agent, "thanks")
    assert len(_title_requests(llm)) == 1  # later exchanges never ask again
    assert _stored(agent.session.pk) == ("Shipping to staging", "model")


def test_a_failed_title_keeps_the_first_message_and_is_not_asked_again(llm, home, caplog):
    write_config(home, AUTO_TITLE)
    llm.when(is_title_request, Reply(status=503, error_message="model is loading"))
    agent = AgentSession.open(source="web")
    with caplog.at_level(logging.WARNING, logger="agent.chat.titles"):
        _turn(agent, "# Fix the *flaky* test")
        _settled(lambda: "keeps its first message as title" in caplog.text)
    assert _stored(agent.session.pk) == ("Fix the flaky test", "message")
    _turn(agent, "still flaky")
    assert len(_title_requests(llm)) == 1


def test_an_empty_answer_keeps_the_first_message(llm, home, caplog):
    write_config(home, AUTO_TITLE)
    llm.when(is_title_request, Reply(text=" '' "))
    agent = AgentSession.open(source="web")
    with caplog.at_level(logging.WARNING, logger="agent.chat.titles"):
        _turn(agent, "hello there")
        _settled(lambda: "type one instead" in caplog.text)
    assert _stored(agent.session.pk) == ("hello there", "message")


def test_a_title_the_person_gave_is_never_replaced(llm, home, auth_client, caplog):
    write_config(home, AUTO_TITLE)
    asked, answer = threading.Event(), threading.Event()

    def slow_title(body: dict[str, Any]) -> Reply:
        asked.set()
        answer.wait(30)  # the person renames the chat while the model thinks
        return Reply(text="Model title")

    llm.when(is_title_request, slow_title)
    agent = AgentSession.open(source="web")
    _turn(agent, "first question")
    assert asked.wait(30)
    resp = auth_client.post(f"/c/{agent.session.pk}/rename/", {"title": "My own name"}, HTTP_HX_REQUEST="true")
    assert resp.status_code == 200
    with caplog.at_level(logging.INFO, logger="agent.chat.titles"):
        answer.set()
        _settled(lambda: "renamed meanwhile" in caplog.text)
    assert _stored(agent.session.pk) == ("My own name", "person")
    assert titles.retitle(agent.session.pk) is None  # and a job delivered again changes nothing
    assert len(_title_requests(llm)) == 1


def test_a_chat_renamed_before_its_first_answer_and_terminal_chats_are_not_retitled(llm, home, auth_client):
    write_config(home, AUTO_TITLE)
    llm.when(is_title_request, Reply(text="Model title"))
    renamed = chat_service.create_session()
    auth_client.post(f"/c/{renamed.pk}/rename/", {"title": "Named first"})
    _turn(AgentSession.open(session_id=renamed.pk, source="web"), "a question")
    _turn(AgentSession.open(name="deploy-notes"), "another question")  # chat --session deploy-notes
    terminal = AgentSession.open(source="cli")  # `chat -m` must not wait for a title call to exit
    _turn(terminal, "a terminal question")
    assert _title_requests(llm) == []
    assert _stored(renamed.pk) == ("Named first", "person")
    assert _stored(ChatSession.objects.get(name="deploy-notes").pk) == ("deploy-notes", "person")
    assert _stored(terminal.session.pk) == ("a terminal question", "message")


def test_with_auto_title_off_no_model_call_is_made(llm, home):
    write_config(home, "chat:\n  auto_title: false\n")
    agent = AgentSession.open(source="web")
    _turn(agent, "what is a monad?")
    assert len(llm.chat_requests()) == 1  # the answer only
    assert _stored(agent.session.pk) == ("what is a monad?", "message")


def test_without_a_model_configured_no_title_is_asked(home):
    write_config(home, AUTO_TITLE)
    session = chat_service.create_session()
    ChatSession.objects.filter(pk=session.pk).update(title="hi", title_source="message")
    session.refresh_from_db()
    first = Message.objects.create(session=session, role="user", content="hi")
    Message.objects.create(session=session, role="assistant", content="hello")
    assert not titles.after_turn(session, hermes_config.get(), first.pk)


@pytest.mark.parametrize(
    ("answer", "title"),
    [
        ("SUMMARY: Debugging Docker Compose ports", "Debugging Docker Compose ports"),
        ('"Fixing the CI cache"', "Fixing the CI cache"),
        ("**Title:** 'Release notes for 2.1'", "Release notes for 2.1"),
        ("Title - Rust lifetimes\nThis chat is about lifetimes.", "Rust lifetimes"),
        ("「部署到生产环境」", "部署到生产环境"),
        ("标题：部署到生产环境", "部署到生产环境"),
        ("# Planning the Berlin trip.", "Planning the Berlin trip"),
    ],
)
def test_model_titles_are_cleaned_of_labels_quotes_and_markup(answer, title):
    assert titles.clean_title(answer) == title


def test_a_long_model_title_is_cut_at_a_word_within_sixty_characters():
    answer = "SUMMARY: " + "A conversation about configuring reverse proxies for several daphne workers behind nginx"
    title = titles.clean_title(answer)
    assert len(title) <= 60 and title.endswith("…")
    assert title.startswith("A conversation about configuring reverse proxies")
    assert not title[:-1].endswith(" ")


def test_an_agent_asks_once_whether_its_chat_was_answered_before_a_question():
    session = chat_service.create_session()
    q1 = Message.objects.create(session=session, role="user", content="hi")
    Message.objects.create(session=session, role="assistant", content="hello", parent=q1)
    q2 = Message.objects.create(session=session, role="user", content="and then?", parent_id=q1.pk + 1)
    q3 = Message.objects.create(session=session, role="user", content="and after?", parent=q2)
    answered = titles.AnsweredBefore()
    with CaptureQueriesContext(connection) as queries:
        assert answered.has_answer_before(session, q2.pk)
        assert answered.has_answer_before(session, q3.pk)  # later: known without asking
        assert not answered.has_answer_before(session, q1.pk)  # the first question (a regenerated answer)
    assert len(queries) == 2
