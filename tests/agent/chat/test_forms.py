"""The chat pages' forms, through the real views: rename, fork and the chat's model refuse bad
input on the field, in plain words, keep what was typed and change nothing (the first-run panel's
model connection: tests/knowledge/views/test_model_key.py)."""

from __future__ import annotations

import pytest

from agent.chat import service as chat_service
from knowledge.models import ChatSession, Message

pytestmark = pytest.mark.django_db(transaction=True)
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def chat(home) -> ChatSession:
    session = chat_service.create_session()
    for role, content in [("user", "question"), ("assistant", "answer")]:
        Message.objects.create(session=session, role=role, content=content)
    return session


# --- rename -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("title", "words"), [("   ", "Give the chat a title"), ("x" * 201, "at most 200 characters")])
def test_rename_refuses_an_empty_or_long_title_in_the_form(auth_client, chat, title, words):
    ChatSession.objects.filter(pk=chat.pk).update(title="Kept")
    resp = auth_client.post(f"/c/{chat.pk}/rename/", {"title": title}, **HX)
    html = resp.content.decode()
    assert resp.status_code == 200 and 'class="rename-form"' in html and 'id="rename-error"' in html
    assert words in html and 'aria-invalid="true"' in html and "HX-Trigger" not in resp
    assert ChatSession.objects.get(pk=chat.pk).title == "Kept"


def test_rename_posted_without_htmx_shows_the_chat_with_the_form_and_its_error(auth_client, chat):
    resp = auth_client.post(f"/c/{chat.pk}/rename/", {"title": ""})
    html = resp.content.decode()
    assert resp.status_code == 400
    assert f'data-session="{chat.pk}"' in html and 'class="rename-form"' in html and "Give the chat a title" in html


# --- versions and model ------------------------------------------------------------------------


def test_choosing_a_version_answers_every_error_by_field(auth_client, chat):
    resp = auth_client.post(f"/c/{chat.pk}/version/", {"message_id": "abc", "step": "0"})
    data = resp.json()
    assert resp.status_code == 400 and set(data["fields"]) == {"message_id", "step"}
    assert "not a number" in data["error"] and "step is -1 or 1" in data["error"]


@pytest.mark.parametrize(("name", "words"), [("  ", "Give a model name"), ("a b", "one word"), ("m" * 201, "200")])
def test_model_choice_answers_the_fields_error(auth_client, chat, name, words):
    resp = auth_client.post(f"/c/{chat.pk}/model/", {"model": name})
    assert resp.status_code == 400 and words in resp.json()["fields"]["model"][0]
    chat.refresh_from_db()
    assert chat.model == ""


# --- new chat and delete ----------------------------------------------------------------------


def test_delete_from_a_page_showing_no_chat_keeps_that_page(auth_client, chat):
    resp = auth_client.post(f"/c/{chat.pk}/delete/", {"current": ""}, **HX)
    assert resp.status_code == 204 and not ChatSession.objects.filter(pk=chat.pk).exists()


def test_new_chat_from_an_unknown_chat_just_opens_a_new_one(auth_client, chat):
    resp = auth_client.post("/c/new/", {"from": "no-such-chat"})
    assert resp.status_code == 302 and resp["Location"] != f"/c/{chat.pk}/"
    assert ChatSession.objects.count() == 2
