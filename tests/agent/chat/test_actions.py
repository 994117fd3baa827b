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


def _second_answer(chat: ChatSession) -> tuple[Message, Message]:
    """A regenerated answer beside the first: two versions of the answer to "question"."""
    question = chat.messages.get(role="user")
    first = chat.messages.get(role="assistant")
    second = Message.objects.create(session=chat, parent=question, role="assistant", content="better answer")
    return first, second


def test_choosing_a_version_shows_it_in_the_same_chat(auth_client, chat):
    first, second = _second_answer(chat)
    resp = auth_client.post(f"/c/{chat.pk}/version/", {"message_id": second.pk, "step": "-1"}, HTTP_HX_REQUEST="true")
    html = resp.content.decode()
    assert resp.status_code == 200 and resp["X-Shown-Message"] == str(first.pk)
    assert ">answer<" in html.replace("<p>", ">").replace("</p>", "<") and "better answer" not in html
    assert '<span class="version-count">1/2</span>' in html
    chat.refresh_from_db()
    assert chat.leaf_id == first.pk and ChatSession.objects.count() == 1
    # Without JavaScript the form posts and lands on the chat, at the version shown.
    resp = auth_client.post(f"/c/{chat.pk}/version/", {"message_id": first.pk, "step": "1"})
    assert resp.status_code == 302 and resp["Location"] == f"/c/{chat.pk}/#m{second.pk}"
    chat.refresh_from_db()
    assert chat.leaf_id is None  # the newest message again


@pytest.mark.parametrize(
    ("form", "error"),
    [
        ({"message_id": "", "step": "1"}, "message_id is missing"),
        ({"message_id": "abc", "step": "1"}, "not a number"),
        ({"message_id": "999999", "step": "1"}, "not part of this chat"),
        ({"message_id": "FIRST", "step": "2"}, "step is -1 or 1"),
        ({"message_id": "FIRST", "step": "-1"}, "no version 0"),
    ],
)
def test_choosing_a_version_refuses_bad_input_in_plain_words(auth_client, chat, form, error):
    first, _second = _second_answer(chat)
    form = {**form, "message_id": str(first.pk) if form["message_id"] == "FIRST" else form["message_id"]}
    resp = auth_client.post(f"/c/{chat.pk}/version/", form, HTTP_HX_REQUEST="true")
    assert resp.status_code == 400 and error in resp.json()["error"]
    chat.refresh_from_db()
    assert chat.leaf_id is None


def test_a_search_hit_in_another_version_opens_the_chat_on_it(auth_client, chat):
    first, _second = _second_answer(chat)
    resp = auth_client.get(f"/c/{chat.pk}/?m={first.pk}")
    assert resp.status_code == 302 and resp["Location"] == f"/c/{chat.pk}/#m{first.pk}"
    chat.refresh_from_db()
    assert chat.leaf_id == first.pk
    assert "better answer" not in auth_client.get(f"/c/{chat.pk}/").content.decode()
    # A hit in the version shown changes nothing; a message of no version of this chat says so.
    assert auth_client.get(f"/c/{chat.pk}/?m={first.pk}").status_code == 200
    assert "not part of this chat" in auth_client.get(f"/c/{chat.pk}/?m=999999").content.decode()


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
