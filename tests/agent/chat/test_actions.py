"""The chat's action endpoints over HTTP: bad input gets a clear error and changes nothing."""

from __future__ import annotations

import pytest

from agent.chat import service as chat_service
from agent.chat import titles
from knowledge.models import ChatSession, Message
from tests.fakellm import Reply

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def chat(home) -> ChatSession:
    session = chat_service.create_session()
    for role, content in [("user", "question"), ("assistant", "answer")]:
        Message.objects.create(session=session, role=role, content=content)
    return session


def test_fork_answers_with_the_new_chat_and_the_text_to_send(auth_client, chat):
    question = chat.messages.get(role="user")
    resp = auth_client.post(f"/c/{chat.pk}/fork/", {"message_id": question.pk, "text": "better question"})
    assert resp.status_code == 200
    data = resp.json()
    fork = ChatSession.objects.get(pk=data["session"])
    assert data["url"] == f"/c/{fork.pk}/" and data["text"] == "better question" and fork.parent_id == chat.pk


@pytest.mark.parametrize(
    ("form", "error"),
    [
        ({"message_id": "", "text": "x"}, "message_id is missing"),
        ({"message_id": "abc", "text": "x"}, "not a number"),
        ({"message_id": "999999", "text": "x"}, "Only your own messages"),
        ({"message_id": "1", "text": "   "}, "empty"),
    ],
)
def test_fork_refuses_bad_input_in_plain_words(auth_client, chat, form, error):
    resp = auth_client.post(f"/c/{chat.pk}/fork/", form)
    assert resp.status_code == 400 and error in resp.json()["error"]
    assert ChatSession.objects.count() == 1


def test_regenerate_forks_before_the_last_question(auth_client, chat):
    data = auth_client.post(f"/c/{chat.pk}/regenerate/").json()
    assert data["text"] == "question"
    assert ChatSession.objects.get(pk=data["session"]).messages.count() == 0


def test_model_choice_is_saved_and_nonsense_refused(auth_client, chat):
    assert auth_client.post(f"/c/{chat.pk}/model/", {"model": "org/model:7b"}).json() == {"model": "org/model:7b"}
    chat.refresh_from_db()
    assert chat.model == "org/model:7b"
    for bad in ["", "two words", "x" * 201]:
        resp = auth_client.post(f"/c/{chat.pk}/model/", {"model": bad})
        assert resp.status_code == 400 and resp.json()["error"]
    chat.refresh_from_db()
    assert chat.model == "org/model:7b"


def test_models_lists_what_the_server_lists_or_says_why_not(auth_client, llm):
    llm.models = ["b-model", "a-model"]
    assert auth_client.get("/api/models").json() == {"models": ["a-model", "b-model"]}
    llm.models = None
    resp = auth_client.get("/api/models")
    assert resp.status_code == 502 and "did not list its models" in resp.json()["error"]


def test_exports_are_downloads_named_after_the_chat(auth_client, chat):
    ChatSession.objects.filter(pk=chat.pk).update(title="Deploy: staging?")
    resp = auth_client.get(f"/c/{chat.pk}/export.md")
    assert resp["Content-Disposition"] == 'attachment; filename="deploy-staging.md"'
    assert "question" in resp.content.decode() and "answer" in resp.content.decode()
    resp = auth_client.get(f"/c/{chat.pk}/export.json")
    assert resp["Content-Type"].startswith("application/json") and resp.json()["messages"][1]["content"] == "answer"


def test_the_model_suggests_a_plain_title_without_saving_it(auth_client, chat, llm):
    llm.push(Reply(text='"**Deploying** to staging."'))
    html = auth_client.post(f"/c/{chat.pk}/suggest-title/").content.decode()
    assert 'value="Deploying to staging"' in html
    request = llm.requests[-1]
    assert "tools" not in request and request["messages"][0]["content"] == titles.TITLE_PROMPT
    assert "user: question" in request["messages"][1]["content"]
    chat.refresh_from_db()
    assert chat.title == ""  # only Save saves


def test_a_title_suggestion_failure_is_said_in_the_form(auth_client, chat, llm):
    llm.default = lambda body: Reply(status=500, error_message="model down")  # retries fail too
    html = auth_client.post(f"/c/{chat.pk}/suggest-title/").content.decode()
    assert 'role="alert">No suggestion:' in html and 'value="New chat"' in html
    empty = chat_service.create_session()
    assert "Nothing to title yet" in auth_client.post(f"/c/{empty.pk}/suggest-title/").content.decode()
