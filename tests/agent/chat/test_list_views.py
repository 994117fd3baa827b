"""The chat list's actions, a chat's settings panel and its share panel over HTTP, with htmx and
without JavaScript (plain form posts go back to the chat)."""

from __future__ import annotations

import pytest

from agent.chat import service as chat_service
from knowledge.models import ChatSession, Message

pytestmark = pytest.mark.django_db(transaction=True)
HX = {"HTTP_HX_REQUEST": "true"}


def _chat(title: str = "Deploy notes") -> ChatSession:
    session = chat_service.create_session()
    Message.objects.create(session=session, role="user", content="How do I roll back?")
    Message.objects.create(session=session, role="assistant", content="Run `make rollback`.")
    ChatSession.objects.filter(pk=session.pk).update(title=title, message_count=2, user_turn_count=1)
    session.refresh_from_db()
    return session


def test_pin_and_archive_answer_htmx_with_the_list_event_and_plain_posts_with_the_chat(auth_client, home):
    chat = _chat()
    resp = auth_client.post(f"/c/{chat.pk}/pin/", {"on": "1"}, **HX)
    assert resp.status_code == 204 and resp["HX-Trigger"] == "sessions-changed"
    resp = auth_client.post(f"/c/{chat.pk}/archive/", {"on": "1"})
    assert resp.status_code == 302 and resp["Location"] == f"/c/{chat.pk}/"
    row = ChatSession.objects.get(pk=chat.pk)
    assert row.pinned and row.archived_at is not None
    listing = auth_client.get("/c/sessions/").content.decode()
    assert "Deploy notes" not in listing and "Archived (1)" in listing
    archived = auth_client.get("/c/sessions/?archived=1").content.decode()
    assert "Deploy notes" in archived and "Unarchive" in archived
    assert auth_client.get(f"/c/{chat.pk}/pin/").status_code == 405


def test_the_tag_editor_adds_refuses_and_filters(auth_client, home):
    chat, other = _chat(), _chat("Other chat")
    resp = auth_client.post(f"/c/{chat.pk}/tags/", {"add": "ops"}, **HX)
    assert resp.status_code == 200 and "#ops" in resp.content.decode()
    refused = auth_client.post(f"/c/{chat.pk}/tags/", {"add": "x" * 41}, **HX).content.decode()
    assert "at most 40 characters" in refused and 'aria-invalid="true"' in refused
    assert auth_client.post(f"/c/{chat.pk}/tags/", {"add": ""}).status_code == 400
    listing = auth_client.get("/c/sessions/?tag=ops").content.decode()
    assert "Deploy notes" in listing and "Other chat" not in listing and "Chats tagged #ops" in listing
    assert other.pk not in listing


def test_renaming_from_the_list_updates_the_list_and_the_header(auth_client, home):
    chat = _chat()
    assert 'name="in" value="list"' in auth_client.get(f"/c/{chat.pk}/list-rename/").content.decode()
    resp = auth_client.post(f"/c/{chat.pk}/rename/", {"title": "Rollbacks", "in": "list"}, **HX)
    assert resp.status_code == 204 and resp["HX-Trigger"] == "sessions-changed, chat-renamed"
    assert ChatSession.objects.get(pk=chat.pk).title == "Rollbacks"
    refused = auth_client.post(f"/c/{chat.pk}/rename/", {"title": " ", "in": "list"}, **HX).content.decode()
    assert "Give the chat a title" in refused and 'class="list-rename"' in refused


def test_deleting_another_chat_from_the_list_keeps_the_page(auth_client, home):
    open_chat, other = _chat(), _chat("Delete me")
    resp = auth_client.post(f"/c/{other.pk}/delete/", {"current": open_chat.pk}, **HX)
    assert resp.status_code == 204 and resp["HX-Trigger"] == "sessions-changed"
    assert not ChatSession.objects.filter(pk=other.pk).exists()
    resp = auth_client.post(f"/c/{open_chat.pk}/delete/", {"current": open_chat.pk}, **HX)
    assert resp["HX-Redirect"] == "/"  # the open chat itself: to a new one


def test_the_settings_panel_saves_and_refuses_with_what_was_typed(auth_client, home):
    chat = _chat()
    resp = auth_client.post(f"/c/{chat.pk}/settings/", {"instructions": "Be brief.", "temperature": "9"}, **HX)
    body = resp.content.decode()
    assert resp.status_code == 200 and "from 0 to 2 (got 9)" in body and "Be brief." in body
    assert ChatSession.objects.get(pk=chat.pk).instructions == ""
    resp = auth_client.post(f"/c/{chat.pk}/settings/", {"instructions": "Be brief.", "temperature": "0.2"}, **HX)
    assert "The next answer uses these settings." in resp.content.decode()
    row = ChatSession.objects.get(pk=chat.pk)
    assert (row.instructions, row.temperature) == ("Be brief.", 0.2)
    page = auth_client.get(f"/c/{chat.pk}/").content.decode()
    assert 'id="chat-settings-custom"' in page and 'value="0.2"' in page
    assert auth_client.post(f"/c/{chat.pk}/settings/", {"temperature": "x"}).status_code == 400


def test_the_share_panel_is_behind_the_login(client, auth_client, home):
    chat = _chat()
    body = auth_client.get(f"/c/{chat.pk}/share/").content.decode()
    assert "Share “Deploy notes”" in body and 'id="share-create"' in body
    assert auth_client.get("/c/nosuchchat/share/").status_code == 404
    auth_client.logout()
    resp = client.get(f"/c/{chat.pk}/share/")
    assert resp.status_code == 302 and resp["Location"].startswith("/login")
